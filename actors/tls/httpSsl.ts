import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { hostname, networkInterfaces } from 'node:os';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import type { Settings } from '../config';
import { writeFileAtomic } from '../checksummedFile';
import { fingerprint, makeCa, makeLeaf, sansOf } from './certificates';

/**
 * HTTPS on the edge, as Elasticsearch 8 (`xpack.security.http.ssl.*`, PEM files):
 *
 * - `enabled: true` with `key` + `certificate` (+ `certificate_authorities`, `key_passphrase`): those.
 * - `enabled: true` without them: a CA and a node certificate generated at the first start into
 *   `CONFIG_DIR/certs` (`http_ca.crt` as ES 8 writes it; keys 0600), the node certificate re-issued
 *   when its names (the bound host, localhost, 127.0.0.1, ::1, the host name) change.
 * - not set: plain HTTP on a loopback HOST (nothing leaves the machine, and curl and the clients work
 *   without a CA); any other HOST refuses to start, unless `enabled: false` says plain HTTP is meant.
 * - `enabled: false`: plain HTTP; the token service then follows ES's default (off without TLS).
 */
export interface HttpTls {
  key: string;
  /** The node certificate followed by its CA (clients checking `caFingerprint` look for the CA in the chain). */
  cert: string;
  passphrase?: string;
  /** The CA file to give clients (`curl --cacert`), when known. */
  caFile?: string;
  /** SHA-256 of the CA certificate (hex), or of the node certificate when no CA is known. */
  fingerprint: string;
  generated: boolean;
}

const PREFIX = 'xpack.security.http.ssl.';

/** Whether `host` is a loopback address (or name). */
export const isLoopback = (host: string): boolean => {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
};

/** `xpack.security.http.ssl.enabled` as set (undefined when not set). */
export function sslSetting(s: Settings): boolean | undefined {
  const v = s.get<unknown>(`${PREFIX}enabled`, undefined);
  return v === undefined || v === null || v === '' ? undefined : v === true || String(v) === 'true';
}

/** ES ties the token service's default to HTTP TLS; here the loopback default keeps it on (README Differences). */
export const tokenServiceDefault = (s: Settings): boolean => sslSetting(s) ?? true;

/** Why a node may not start with these settings on `host`, or undefined. */
export function httpSslRefusal(s: Settings, host: string): string | undefined {
  const enabled = sslSetting(s);
  const given = [s.get<unknown>(`${PREFIX}key`, undefined) !== undefined && 'key', s.get<unknown>(`${PREFIX}certificate`, undefined) !== undefined && 'certificate', s.get<unknown>(`${PREFIX}certificate_authorities`, undefined) !== undefined && 'certificate_authorities'].filter(Boolean);
  if (enabled === undefined && given.length) return `[${PREFIX}${given[0]}] is set but [${PREFIX}enabled] is not: set it to true to serve HTTPS`;
  if (enabled === undefined && !isLoopback(host)) {
    return `refusing to serve plain HTTP on [${host}]: credentials would cross the network in clear. Set [${PREFIX}enabled] to true (a CA and a node certificate are generated into CONFIG_DIR/certs when no key and certificate are given), or to false to serve plain HTTP anyway`;
  }
  const key = s.get<unknown>(`${PREFIX}key`, undefined);
  const cert = s.get<unknown>(`${PREFIX}certificate`, undefined);
  if (enabled && (key === undefined) !== (cert === undefined)) return `[${PREFIX}key] and [${PREFIX}certificate] go together`;
  return undefined;
}

const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : v === undefined || v === null || v === '' ? [] : String(v).split(',').map((x) => x.trim()));

function read(file: string, key: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`cannot read [${file}] of setting [${key}]: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { cause: e });
  }
}

/** Names the generated node certificate carries. */
function nodeNames(host: string): string[] {
  const names = ['localhost', '127.0.0.1', '::1', hostname()];
  const h = host.replace(/^\[|\]$/g, '');
  if (h === '0.0.0.0' || h === '::') {
    for (const addrs of Object.values(networkInterfaces())) for (const a of addrs ?? []) if (!a.internal) names.push(a.address);
  } else names.push(h);
  return [...new Set(names.filter((n) => !isIP(n) || !n.startsWith('fe80')))];
}

/** The edge's TLS material, or undefined for plain HTTP (see the file comment). */
export async function httpTls(s: Settings, host: string, configDir: string): Promise<HttpTls | undefined> {
  const refusal = httpSslRefusal(s, host);
  if (refusal) throw new Error(refusal);
  if (!sslSetting(s)) return undefined;
  const keyFile = s.get<unknown>(`${PREFIX}key`, undefined);
  if (keyFile !== undefined) {
    const certFile = String(s.get(`${PREFIX}certificate`, ''));
    const cas = list(s.get(`${PREFIX}certificate_authorities`, undefined)).map((f) => resolve(configDir, f));
    const cert = read(resolve(configDir, certFile), `${PREFIX}certificate`);
    const caPem = cas.map((f) => read(f, `${PREFIX}certificate_authorities`)).join('');
    const pass = s.get<unknown>(`${PREFIX}key_passphrase`, undefined);
    return {
      key: read(resolve(configDir, String(keyFile)), `${PREFIX}key`),
      cert: cert + (caPem && !cert.includes(caPem.trim()) ? caPem : ''),
      ...(pass !== undefined ? { passphrase: String(pass) } : {}),
      ...(cas.length ? { caFile: cas[0] } : {}),
      fingerprint: fingerprint(caPem || cert),
      generated: false,
    };
  }
  const dir = join(configDir, 'certs');
  mkdirSync(dir, { recursive: true });
  const caFile = join(dir, 'http_ca.crt');
  const caKeyFile = join(dir, 'http_ca.key');
  const certFile = join(dir, 'http.crt');
  const keyFile2 = join(dir, 'http.key');
  if (!existsSync(caFile) || !existsSync(caKeyFile)) {
    const ca = await makeCa('Elasticsearch security auto-configuration HTTP CA');
    writeFileAtomic(caKeyFile, ca.key, 0o600);
    writeFileAtomic(caFile, ca.cert, 0o644);
  }
  const ca = { cert: readFileSync(caFile, 'utf8'), key: readFileSync(caKeyFile, 'utf8') };
  const want = nodeNames(host);
  const have = existsSync(certFile) && existsSync(keyFile2) ? sansOf(readFileSync(certFile, 'utf8')) : [];
  const norm = (n: string) => (n === '0:0:0:0:0:0:0:1' ? '::1' : n);
  if (!want.every((n) => have.map(norm).includes(n))) {
    const leaf = await makeLeaf(ca, { name: hostname(), sans: want });
    writeFileAtomic(keyFile2, leaf.key, 0o600);
    writeFileAtomic(certFile, leaf.cert, 0o644);
  }
  return { key: readFileSync(keyFile2, 'utf8'), cert: readFileSync(certFile, 'utf8') + ca.cert, caFile, fingerprint: fingerprint(ca.cert), generated: true };
}
