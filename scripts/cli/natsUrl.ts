import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EVENT_STREAM } from '../../streams';
import { serverList, type BusConnection } from '../../streams/busConnection';
import { SUBSCRIBER_INBOX_PREFIX } from '../../streams/busPermissions';
import { alive, authDirOf } from '../../actors/embeddedNats';
import { readSeedFile, seedFile } from '../../actors/bus/credentials';

/** Where the URL came from, for the one line the CLIs print to stderr. */
export interface NatsUrl {
  url: string;
  source: 'NATS_URL' | 'ports file' | 'default';
  /** Ports file only: its nats-server process is still running. */
  live?: boolean;
}


/** The embedded server's folder of the node whose data is in `DATA_DIR` (default `./data`). */
export const natsDirOf = (env: NodeJS.ProcessEnv) => join(resolve(env.DATA_DIR ?? './data'), 'nats');

/** The folder of a JetStream stream in an embedded server's store (nats-server adds `jetstream/$G`). */
export const streamDirOf = (natsDir: string, stream = EVENT_STREAM) => join(natsDir, 'jetstream', 'jetstream', '$G', 'streams', stream);

/**
 * The NATS server to read the event log from: `NATS_URL` when set; else the embedded server a node
 * started under `DATA_DIR` (default `./data`), found through the `nats-server_<pid>.ports` file it
 * writes in `DATA_DIR/nats` (a live pid first, then the newest file); else nats://127.0.0.1:4222.
 */
export function resolveNatsUrl(env: NodeJS.ProcessEnv = process.env): NatsUrl {
  if (env.NATS_URL) return { url: env.NATS_URL, source: 'NATS_URL' };
  const dir = natsDirOf(env);
  if (existsSync(dir)) {
    const files = readdirSync(dir)
      .map((f) => /^nats-server_(\d+)\.ports$/.exec(f))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ path: join(dir, m[0]), live: alive(Number(m[1])), mtime: statSync(join(dir, m[0])).mtimeMs }))
      .sort((a, b) => Number(b.live) - Number(a.live) || b.mtime - a.mtime);
    for (const f of files) {
      try {
        const url = (JSON.parse(readFileSync(f.path, 'utf8')) as { nats?: string[] }).nats?.[0];
        if (url) return { url, source: 'ports file', live: f.live };
      } catch {
        /* partially written or stale: try the next */
      }
    }
  }
  return { url: 'nats://127.0.0.1:4222', source: 'default' };
}

/** Where the event log is: a running server, or the store of a stopped node under `DATA_DIR`. */
export type LogLocation = { kind: 'server'; url: string; source: NatsUrl['source']; conn: BusConnection } | { kind: 'stopped'; natsDir: string; dataDir: string };

const readEnvFile = (file: string, name: string) => {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`cannot read ${name}=${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { cause: e });
  }
};

/**
 * How a CLI logs in, with the NATS CLI's variables: with `NATS_URL`, `NATS_USER` + `NATS_PASSWORD`,
 * `NATS_NKEY` (a seed file), `NATS_CREDS` (a .creds file), `NATS_CA` / `NATS_CERT` / `NATS_KEY` (PEM
 * files); else, for the embedded server of the node under `DATA_DIR`, its subscriber's seed
 * (`DATA_DIR/nats/auth/subscriber.nk`). The CLIs read only, so they use the subscriber's inbox prefix.
 */
export function cliConnection(url: string, source: NatsUrl['source'], env: NodeJS.ProcessEnv = process.env, role: 'subscriber' | 'node' = 'subscriber'): BusConnection {
  const c: BusConnection = { servers: serverList(url), ...(role === 'subscriber' ? { inboxPrefix: SUBSCRIBER_INBOX_PREFIX } : {}) };
  if (source === 'NATS_URL') {
    if (env.NATS_USER) Object.assign(c, { user: env.NATS_USER, pass: env.NATS_PASSWORD ?? '' });
    if (env.NATS_NKEY) c.nkeySeed = readSeedFile(env.NATS_NKEY);
    if (env.NATS_CREDS) c.creds = readEnvFile(env.NATS_CREDS, 'NATS_CREDS');
    if (env.NATS_CA || env.NATS_CERT) {
      c.tls = {
        ...(env.NATS_CA ? { ca: readEnvFile(env.NATS_CA, 'NATS_CA') } : {}),
        ...(env.NATS_CERT ? { cert: readEnvFile(env.NATS_CERT, 'NATS_CERT'), key: readEnvFile(env.NATS_KEY ?? '', 'NATS_KEY') } : {}),
      };
    }
    return c;
  }
  const file = seedFile(authDirOf(natsDirOf(env)), role);
  if (existsSync(file)) c.nkeySeed = readSeedFile(file);
  return c;
}

/**
 * A running server when there is one (NATS_URL, or a live ports file); else the event log of a
 * stopped node when `DATA_DIR` holds one (read through a private server on a copy,
 * scripts/cli/stoppedNode.ts); else the default URL.
 */
export function locateLog(env: NodeJS.ProcessEnv = process.env): LogLocation {
  const r = resolveNatsUrl(env);
  const natsDir = natsDirOf(env);
  const stopped = { kind: 'stopped' as const, natsDir, dataDir: resolve(env.DATA_DIR ?? './data') };
  if ((r.source === 'default' || (r.source === 'ports file' && !r.live)) && existsSync(streamDirOf(natsDir))) return stopped;
  return { kind: 'server', url: r.url, source: r.source, conn: cliConnection(r.url, r.source, env) };
}

/**
 * The servers of a NATS_URL for nats.js: `npm run cluster` prints one listing every server of the
 * NATS cluster, comma-separated (nats.js would take the whole string for one URL).
 */
export const natsServers = serverList;
