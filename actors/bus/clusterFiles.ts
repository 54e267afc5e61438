import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../checksummedFile';
import { makeCa, makeLeaf, sansOf } from '../tls/certificates';
import { SUBSCRIBER_INBOX_PREFIX, type BusRole } from '../../streams/busPermissions';
import type { BusConnection } from '../../streams/busConnection';
import { ensureBusKeys, type RoleKey } from './credentials';
import { renderServerConfig, roleUsers, type TlsFiles } from './serverConfig';

/**
 * What a secured NATS cluster needs, made once under one folder and kept: a CA (`certs/ca.crt`,
 * `ca.key`), a certificate per server (`certs/<name>.crt`, `.key`; used for clients and for routes,
 * so a server without one signed by the CA cannot join), and the roles' nkeys (`auth/node.nk`,
 * `auth/subscriber.nk`). Keys are mode 0600. `npm run cluster` and `npm run nats-config` use it.
 */
export interface ServerSpec {
  name: string;
  /** Host name or address clients and routes reach this server at (goes into its certificate). */
  host: string;
  clientPort: number;
  routePort: number;
}

export interface ClusterFiles {
  dir: string;
  caFile: string;
  keys: Record<BusRole, RoleKey>;
  certOf(name: string): { cert: string; key: string };
}

/** Makes (or reuses) the CA, each server's certificate and the role keys under `dir`. */
export async function ensureClusterFiles(dir: string, servers: ServerSpec[]): Promise<ClusterFiles> {
  const certs = join(dir, 'certs');
  mkdirSync(certs, { recursive: true, mode: 0o700 });
  const caFile = join(certs, 'ca.crt');
  const caKey = join(certs, 'ca.key');
  if (!existsSync(caFile) || !existsSync(caKey)) {
    const ca = await makeCa('es-paging-tokens NATS CA');
    writeFileAtomic(caKey, ca.key, 0o600);
    writeFileAtomic(caFile, ca.cert, 0o644);
  }
  const ca = { cert: readFileSync(caFile, 'utf8'), key: readFileSync(caKey, 'utf8') };
  const certOf = (name: string) => ({ cert: join(certs, `${name}.crt`), key: join(certs, `${name}.key`) });
  for (const s of servers) {
    const f = certOf(s.name);
    const want = [...new Set([s.host, 'localhost', '127.0.0.1'])];
    const have = existsSync(f.cert) && existsSync(f.key) ? sansOf(readFileSync(f.cert, 'utf8')) : [];
    if (want.every((n) => have.includes(n))) continue;
    const leaf = await makeLeaf(ca, { name: s.name, sans: want });
    writeFileAtomic(f.key, leaf.key, 0o600);
    writeFileAtomic(f.cert, leaf.cert, 0o644);
  }
  return { dir, caFile, keys: ensureBusKeys(join(dir, 'auth')), certOf };
}

/**
 * The config of one server of `all`: clients over TLS (any client trusting the CA; logins are the
 * role nkeys), routes over mutual TLS (only a server with a certificate of the CA joins).
 * `path` maps the files of `files` to where the server will read them (another machine's folder).
 */
export function clusterServerConfig(
  files: ClusterFiles,
  me: ServerSpec,
  all: ServerSpec[],
  o: { clusterName: string; storeDir: string; maxPayload: number; logFile?: string; listenHost?: string; path?: (f: string) => string },
): string {
  const p = o.path ?? ((f: string) => f);
  const cert = files.certOf(me.name);
  const tls = (verify: boolean): TlsFiles => ({ cert: p(cert.cert), key: p(cert.key), ca: p(files.caFile), verify });
  return renderServerConfig({
    serverName: me.name,
    listen: `${o.listenHost ?? me.host}:${me.clientPort}`,
    maxPayload: o.maxPayload,
    storeDir: o.storeDir,
    ...(o.logFile ? { logFile: o.logFile } : {}),
    users: roleUsers(files.keys),
    tls: tls(false),
    cluster: {
      name: o.clusterName,
      listen: `${o.listenHost ?? me.host}:${me.routePort}`,
      tls: tls(true),
      routes: all.filter((s) => s !== me).map((s) => `nats-route://${s.host}:${s.routePort}`),
    },
  });
}

/** How `role` connects to the cluster (TLS trusting its CA, the role's nkey, the subscriber's inbox prefix). */
export function clusterConnection(files: ClusterFiles, servers: ServerSpec[], role: BusRole): BusConnection {
  return {
    servers: servers.map((s) => `tls://${s.host}:${s.clientPort}`),
    nkeySeed: files.keys[role].seed,
    tls: { ca: readFileSync(files.caFile, 'utf8') },
    ...(role === 'subscriber' ? { inboxPrefix: SUBSCRIBER_INBOX_PREFIX } : {}),
  };
}
