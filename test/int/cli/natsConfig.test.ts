/**
 * Issue 18: `npm run nats-config` writes what the README's several-machines recipe installs: the
 * configs, certificates and credentials of N servers. Run here for three servers on loopback (own
 * ports, `{name}` folders standing in for the machines), started as written with Debian's
 * nats-server: they form one JetStream cluster over TLS routes, take the node's nkey and refuse
 * anonymous clients.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { freePort, waitForJetStream } from '../../../actors/natsCluster';
import { connectBus, type BusConnection } from '../../../streams/busConnection';
import { runCli } from '../../support/cli';
import { poll } from '../../support/poll';

jest.setTimeout(120_000);
let out: string;
let url: string;
let routePort: number;
const procs: ChildProcess[] = [];

afterAll(async () => {
  for (const p of procs) p.kill('SIGTERM');
  await Promise.all(procs.map((p) => (p.exitCode === null ? new Promise((r) => p.once('exit', r)) : undefined)));
  await rm(out, { recursive: true, force: true });
});

it('writes N servers\' configs, certificates and credentials that form a secured JetStream cluster', async () => {
  out = await mkdtemp(join(tmpdir(), 'nats-config-'));
  const ports = await Promise.all(Array.from({ length: 6 }, () => freePort()));
  const servers = [0, 1, 2].map((i) => `127.0.0.1:${ports[i]}:${ports[i + 3]}`).join(',');
  const r = await runCli('natsConfig', ['--servers', servers, '--out', out, '--install-dir', join(out, '{name}'), '--store', join(out, '{name}', 'js'), '--listen', '127.0.0.1']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const names = [0, 1, 2].map((i) => `nats-127-0-0-1-${ports[i]}`);
  for (const n of names) {
    expect((await stat(join(out, n, 'server.key'))).mode & 0o777).toBe(0o600);
    const conf = await readFile(join(out, n, 'nats-server.conf'), 'utf8');
    expect(conf).toMatch(/cluster \{[\s\S]*tls \{[\s\S]*verify: true/); // routes: mutual TLS
    expect(conf).not.toMatch(/SU[A-Z2-7]{50,}/); // public keys only
    procs.push(spawn('nats-server', ['-c', join(out, n, 'nats-server.conf')], { stdio: 'ignore' }));
  }
  expect((await stat(join(out, 'node', 'node.nk'))).mode & 0o777).toBe(0o600);
  url = /NATS_URL=(\S+) ES_SETTING/.exec(r.stdout)![1];
  routePort = ports[3];
  const ca = await readFile(join(out, 'node', 'ca.crt'), 'utf8');
  const node: BusConnection = { servers: url.split(','), nkeySeed: await readFile(join(out, 'node', 'node.nk'), 'utf8'), tls: { ca } };
  await waitForJetStream(url, 60_000, node);
  for (const s of url.split(',')) await expect(connect({ servers: s, tls: { ca }, reconnect: false })).rejects.toThrow('Authorization Violation');
  const nc = await connectBus(node);
  const jsm = await jetstreamManager(nc);
  const si = await jsm.streams.add({ name: 'ES_EVT', subjects: ['es.v1.evt.>'], num_replicas: 3 });
  expect(si.config.num_replicas).toBe(3);
  expect(si.cluster?.replicas?.length).toBe(2);
  await nc.close();
});

it('lets no node in without the node\'s credentials: it refuses to start, naming the refusal', async () => {
  const dataDir = join(out, 'stranger-node');
  const env = { NATS_URL: url, ES_SETTING_NATS_TLS_CA: join(out, 'node', 'ca.crt'), DATA_DIR: dataDir, CONFIG_DIR: join(dataDir, 'config'), CONFIG: '/dev/null', HOST: '127.0.0.1', PORT: String(await freePort()), ELASTIC_PASSWORD: 'stranger-password-1' };
  const noKey = await runCli('start', [], env, 90_000);
  expect(noKey.code).not.toBe(0);
  expect(noKey.stdout + noKey.stderr).toMatch(/Authorization Violation/);
  // the subscriber's key is not a node's: it cannot even create the streams
  const asSubscriber = await runCli('start', [], { ...env, ES_SETTING_NATS_NKEY__SEED__FILE: join(out, 'subscriber', 'subscriber.nk') }, 90_000);
  expect(asSubscriber.code).not.toBe(0);
  expect(asSubscriber.stdout + asSubscriber.stderr).toMatch(/Permissions Violation/);
});

it('lets no nats-server into the routes without the route certificate', async () => {
  const [client, cluster, monitor] = await Promise.all([freePort(), freePort(), freePort()]);
  const rogue = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(client), '-m', String(monitor), '-js', '-sd', join(out, 'rogue-js'), '-n', 'rogue', '--cluster_name', 'es-nats', '--cluster', `nats://127.0.0.1:${cluster}`, '--routes', `nats://127.0.0.1:${routePort}`], { stdio: 'ignore' });
  procs.push(rogue);
  const routez = async () => (await (await fetch(`http://127.0.0.1:${monitor}/routez`)).json()) as { num_routes: number };
  await poll(async () => (await routez().catch(() => undefined)) !== undefined, 20_000, 'rogue monitor up', 100);
  await new Promise((r) => setTimeout(r, 4_000)); // several connect attempts (the route retries every second)
  expect((await routez()).num_routes).toBe(0);
  // and the cluster still has its three members, the rogue not among them
  const nc = await connectBus({ servers: url.split(','), nkeySeed: await readFile(join(out, 'node', 'node.nk'), 'utf8'), tls: { ca: await readFile(join(out, 'node', 'ca.crt'), 'utf8') } });
  const si = await (await jetstreamManager(nc)).streams.info('ES_EVT');
  expect(si.cluster?.replicas?.length).toBe(2);
  await nc.close();
});
