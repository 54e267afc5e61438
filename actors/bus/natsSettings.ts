import { readFileSync } from 'node:fs';
import type { Settings } from '../config';
import type { BusConnection } from '../../streams/busConnection';
import { readSeedFile } from './credentials';

/** The node settings of its NATS login and TLS (actors/knownSettings.ts). */
export const NATS_SETTING_KEYS = ['nats.user', 'nats.password', 'nats.nkey_seed_file', 'nats.creds_file', 'nats.tls.ca', 'nats.tls.cert', 'nats.tls.key'] as const;

const read = (file: string, key: string) => {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`cannot read [${file}] of setting [${key}]: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { cause: e });
  }
};

/**
 * The node's connection to an external NATS (`NATS_URL`) from its settings: one of `nats.user` +
 * `nats.password`, `nats.nkey_seed_file` or `nats.creds_file`, and `nats.tls.ca` (to trust the
 * servers), `nats.tls.cert` + `nats.tls.key` (when they verify clients). Files are read now, so a
 * wrong path stops the start with its name.
 */
export function natsConnectionFromSettings(servers: string[], s: Settings): BusConnection {
  const get = (k: (typeof NATS_SETTING_KEYS)[number]) => {
    const v = s.get<unknown>(k, undefined);
    return v === undefined || v === null || v === '' ? undefined : String(v);
  };
  const user = get('nats.user');
  const password = get('nats.password');
  const seedFile = get('nats.nkey_seed_file');
  const credsFile = get('nats.creds_file');
  const given = [user && 'nats.user', seedFile && 'nats.nkey_seed_file', credsFile && 'nats.creds_file'].filter(Boolean);
  if (given.length > 1) throw new Error(`settings [${given.join('], [')}] exclude each other: give one way to log into NATS`);
  if (password && !user) throw new Error('setting [nats.password] needs [nats.user]');
  if (user && !password) throw new Error('setting [nats.user] needs [nats.password]');
  const ca = get('nats.tls.ca');
  const cert = get('nats.tls.cert');
  const key = get('nats.tls.key');
  if (!!cert !== !!key) throw new Error('settings [nats.tls.cert] and [nats.tls.key] go together');
  const tls = ca || cert ? { ...(ca ? { ca: read(ca, 'nats.tls.ca') } : {}), ...(cert ? { cert: read(cert, 'nats.tls.cert'), key: read(key!, 'nats.tls.key') } : {}) } : undefined;
  return {
    servers,
    ...(user ? { user, pass: password } : {}),
    ...(seedFile ? { nkeySeed: readSeedFile(seedFile) } : {}),
    ...(credsFile ? { creds: read(credsFile, 'nats.creds_file') } : {}),
    ...(tls ? { tls } : {}),
  };
}
