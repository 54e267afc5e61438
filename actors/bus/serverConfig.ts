import { ADMIN_PERMISSIONS, ROLES, type BusPermissions, type KeyRole } from '../../streams/busPermissions';

/** A user of the server config: an nkey public key and its role's permissions. */
export interface ConfigUser {
  nkey: string;
  permissions: BusPermissions;
}

/** TLS files of a `tls {}` block (paths). `verify` asks the peer for a certificate signed by `ca`. */
export interface TlsFiles {
  cert: string;
  key: string;
  ca: string;
  verify?: boolean;
}

export interface ServerConfigOptions {
  serverName?: string;
  /** `host:port` of the client listener. */
  listen: string;
  maxPayload: number;
  storeDir: string;
  /** JetStream's store limit in bytes (nats-server's default: 75% of the disk free at each start). */
  maxFileStore?: number;
  logFile?: string;
  portsFileDir?: string;
  /** Users allowed in; none at all leaves the server open to anonymous clients (never done by this project). */
  users: ConfigUser[];
  tls?: TlsFiles;
  cluster?: { name: string; listen: string; routes: string[]; tls?: TlsFiles };
}

/** The users of each role's public key. */
export const roleUsers = (keys: Partial<Record<KeyRole, { publicKey: string }>>): ConfigUser[] =>
  (Object.keys(keys) as KeyRole[]).map((role) => ({ nkey: keys[role]!.publicKey, permissions: role === 'admin' ? ADMIN_PERMISSIONS : ROLES[role] }));

const q = (s: string) => JSON.stringify(s);
const tlsBlock = (t: TlsFiles, indent: string) => [
  `${indent}tls {`,
  `${indent}  cert_file: ${q(t.cert)}`,
  `${indent}  key_file: ${q(t.key)}`,
  `${indent}  ca_file: ${q(t.ca)}`,
  ...(t.verify ? [`${indent}  verify: true`] : []),
  `${indent}  timeout: 5`,
  `${indent}}`,
];

/**
 * A nats-server 2.9 config: client listener, JetStream store, the users with their permissions
 * (`authorization { users = [...] }`: an anonymous client gets `Authorization Violation`), TLS for
 * clients and routes. Values are JSON, which the NATS config syntax reads as is.
 */
export function renderServerConfig(o: ServerConfigOptions): string {
  if (!o.users.length) throw new Error('a server config needs at least one user');
  const users = o.users.map((u) => `    { nkey: ${q(u.nkey)}, permissions: ${JSON.stringify(u.permissions)} }`);
  return [
    ...(o.serverName ? [`server_name: ${q(o.serverName)}`] : []),
    `listen: ${q(o.listen)}`,
    `max_payload: ${o.maxPayload}`,
    // Logs go to a file: a server outliving its node must not die of SIGPIPE on a closed stderr.
    ...(o.logFile ? [`log_file: ${q(o.logFile)}`, 'logfile_size_limit: 10MB'] : []),
    ...(o.portsFileDir ? [`ports_file_dir: ${q(o.portsFileDir)}`] : []),
    'jetstream {',
    `  store_dir: ${q(o.storeDir)}`,
    ...(o.maxFileStore ? [`  max_file_store: ${Math.floor(o.maxFileStore)}`] : []),
    '}',
    'authorization {',
    '  users = [',
    ...users,
    '  ]',
    '}',
    ...(o.tls ? tlsBlock(o.tls, '') : []),
    ...(o.cluster
      ? [
          'cluster {',
          `  name: ${q(o.cluster.name)}`,
          `  listen: ${q(o.cluster.listen)}`,
          ...(o.cluster.tls ? tlsBlock(o.cluster.tls, '  ') : []),
          '  routes: [',
          ...o.cluster.routes.map((r) => `    ${q(r)}`),
          '  ]',
          '}',
        ]
      : []),
    '',
  ].join('\n');
}
