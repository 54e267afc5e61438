/**
 * `npm run nats-config -- --servers host-a,host-b,host-c [--out ./nats-cluster] ...`: everything a
 * secured NATS cluster of N machines needs (README "Running a cluster", several machines): a CA, a
 * certificate per server (client and route TLS; a server without one cannot join), the node and
 * subscriber nkeys, and each server's nats-server.conf. Writes one folder per server to copy to its
 * machine, plus `node/` (what every node needs) and `subscriber/` (read-only access to the event log).
 * Run it again with the same --out to add servers: the CA and keys are kept.
 */
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { MAX_PAYLOAD } from '../actors/embeddedNats';
import { clusterServerConfig, ensureClusterFiles, type ServerSpec } from '../actors/bus/clusterFiles';
import { SUBSCRIBER_INBOX_PREFIX } from '../streams/busPermissions';
import { num, parseOrExit, str, UsageError } from './cli/args';

const USAGE = `usage: npm run nats-config -- --servers <host[:client-port[:route-port]]>,... [--out DIR]
       [--client-port 4222] [--route-port 6222] [--install-dir /etc/nats] [--store /var/lib/nats/jetstream]
       [--listen 0.0.0.0] [--cluster-name es-nats]
Writes a CA, a certificate and config per server, and the node and subscriber nkeys, under --out
(default ./nats-cluster): DIR/<server>/ goes to that server's machine (into --install-dir), DIR/node/
to every node's machine, DIR/subscriber/ to whoever reads the event log. DIR/ca/ keeps the CA key:
keep it off the servers. --install-dir and --store may contain {name} (the server's name).`;

const args = parseOrExit('nats-config', USAGE, process.argv.slice(2), {
  options: {
    servers: { type: 'string' }, out: { type: 'string' }, 'client-port': { type: 'string' }, 'route-port': { type: 'string' },
    'install-dir': { type: 'string' }, store: { type: 'string' }, listen: { type: 'string' }, 'cluster-name': { type: 'string' },
  },
}, (p) => {
  const list = str(p, 'servers');
  if (!list) throw new UsageError('--servers is required');
  const clientPort = num(str(p, 'client-port'), '--client-port', 4222);
  const routePort = num(str(p, 'route-port'), '--route-port', 6222);
  const specs: ServerSpec[] = list.split(',').map((x, i) => {
    const [host, c, r] = x.trim().split(':');
    if (!host) throw new UsageError(`--servers: empty server at position ${i + 1}`);
    return { name: `nats-${host.replace(/[^A-Za-z0-9-]/g, '-')}${c ? `-${c}` : ''}`, host, clientPort: c ? Number(c) : clientPort, routePort: r ? Number(r) : routePort };
  });
  if (new Set(specs.map((s) => s.name)).size !== specs.length) throw new UsageError('--servers: a server is listed twice');
  return { ...p, specs };
});

const out = resolve(str(args, 'out') ?? './nats-cluster');
const installDir = str(args, 'install-dir') ?? '/etc/nats';
const store = str(args, 'store') ?? '/var/lib/nats/jetstream';
const at = (tpl: string, name: string) => tpl.replaceAll('{name}', name);
const files = await ensureClusterFiles(join(out, 'ca'), args.specs);
const copy = (from: string, to: string, mode = 0o644) => {
  copyFileSync(from, to);
  chmodSync(to, mode);
};

for (const s of args.specs) {
  const dir = join(out, s.name);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const cert = files.certOf(s.name);
  const target = at(installDir, s.name);
  const inTarget = (f: string) => join(target, f === files.caFile ? 'ca.crt' : f === cert.cert ? 'server.crt' : f === cert.key ? 'server.key' : basename(f));
  copyFileSync(files.caFile, join(dir, 'ca.crt'));
  copyFileSync(cert.cert, join(dir, 'server.crt'));
  copy(cert.key, join(dir, 'server.key'), 0o600);
  writeFileSync(join(dir, 'nats-server.conf'), clusterServerConfig(files, s, args.specs, {
    clusterName: str(args, 'cluster-name') ?? 'es-nats',
    storeDir: at(store, s.name),
    maxPayload: MAX_PAYLOAD,
    listenHost: str(args, 'listen') ?? '0.0.0.0',
    path: inTarget,
  }));
}
const nodeDir = join(out, 'node');
const subDir = join(out, 'subscriber');
for (const d of [nodeDir, subDir]) mkdirSync(d, { recursive: true, mode: 0o700 });
copyFileSync(files.caFile, join(nodeDir, 'ca.crt'));
copyFileSync(files.caFile, join(subDir, 'ca.crt'));
copy(files.keys.node.file, join(nodeDir, 'node.nk'), 0o600);
copy(files.keys.subscriber.file, join(subDir, 'subscriber.nk'), 0o600);
const natsUrl = args.specs.map((s) => `tls://${s.host}:${s.clientPort}`).join(',');

const say = (l = '') => process.stdout.write(l + '\n');
say(`wrote a secured ${args.specs.length}-server NATS cluster under ${out}:`);
for (const s of args.specs) say(`  ${s.name}/   copy to ${s.host}:${at(installDir, s.name)}, then: nats-server -c ${join(at(installDir, s.name), 'nats-server.conf')}`);
say(`  node/        every node's machine: node.nk (0600) and ca.crt`);
say(`  subscriber/  read-only access to the event log: subscriber.nk and ca.crt`);
say(`  ca/          the CA key and every generated file: keep it, off the servers (run again with --out ${out} to add a server)`);
say('');
say('each node (its own DATA_DIR; HOST other than loopback needs HTTPS):');
say(`  NATS_URL=${natsUrl} ES_SETTING_NATS_NKEY__SEED__FILE=node/node.nk ES_SETTING_NATS_TLS_CA=node/ca.crt \\`);
say('    ES_SETTING_CLUSTER_STREAM__REPLICAS=3 ES_SETTING_XPACK_SECURITY_HTTP_SSL_ENABLED=true HOST=0.0.0.0 npm start');
say('the event log, read-only:');
say(`  NATS_URL=${natsUrl} NATS_NKEY=subscriber/subscriber.nk NATS_CA=subscriber/ca.crt npm run events -- tail`);
say(`  (any NATS client: nkey subscriber.nk, CA ca.crt, inbox prefix ${SUBSCRIBER_INBOX_PREFIX}; \`npm run -s events -- credentials --json\` with those variables prints it as JSON)`);
