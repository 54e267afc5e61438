/**
 * Issue 18 with real processes: a fresh `npm start` (scripts/start.ts) and its embedded nats-server,
 * as the issue tried it, and a node given an open NATS.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { connectBus } from '../../../streams/busConnection';
import { freePort } from '../../../actors/natsCluster';
import { runCli, spawnCli } from '../../support/cli';
import { poll } from '../../support/poll';

jest.setTimeout(120_000);

let dir: string;
const PASSWORD = 'bus-test-password-1';

async function startNode(env: Record<string, string>): Promise<{ proc: ChildProcess; out: () => string; url: string }> {
  const port = await freePort();
  let out = '';
  const proc = spawnCli('start', [], { CONFIG: '/dev/null', HOST: '127.0.0.1', PORT: String(port), ELASTIC_PASSWORD: PASSWORD, LOG_LEVEL: 'info', ...env });
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const url = `http://127.0.0.1:${port}`;
  await poll(async () => {
    if (proc.exitCode !== null) throw new Error(`node exited with ${proc.exitCode}: ${out}`);
    return (await fetch(url).catch(() => undefined))?.status === 401;
  }, 60_000, 'node up', 100);
  return { proc, out: () => out, url };
}

async function stopNode(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const gone = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  await gone;
}

/** The embedded server's client URL, from the ports file it writes under DATA_DIR/nats. */
async function portsUrl(dataDir: string): Promise<string> {
  const f = (await readdir(join(dataDir, 'nats'))).filter((n) => /^nats-server_\d+\.ports$/.test(n)).sort().pop()!;
  return (JSON.parse(await readFile(join(dataDir, 'nats', f), 'utf8')) as { nats: string[] }).nats[0];
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bus-e2e-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('a fresh npm start', () => {
  it('lets no anonymous client into its nats-server, keeps its credentials 0600 across a restart, and hands the subscriber its connection', async () => {
    const dataDir = join(dir, 'fresh');
    const env = { DATA_DIR: dataDir, CONFIG_DIR: join(dataDir, 'config') };
    let node = await startNode(env);
    try {
      const natsUrl = await portsUrl(dataDir);
      await expect(connect({ servers: natsUrl, reconnect: false })).rejects.toThrow('Authorization Violation');
      const auth = join(dataDir, 'nats', 'auth');
      expect((await stat(auth)).mode & 0o777).toBe(0o700);
      for (const f of ['node.nk', 'subscriber.nk']) expect((await stat(join(auth, f))).mode & 0o777).toBe(0o600);
      // The server config names public keys only.
      const conf = await readFile(join(dataDir, 'nats', 'nats-server.conf'), 'utf8');
      expect(conf).toMatch(/nkey: "U[A-Z2-7]{55}"/);
      expect(conf).not.toMatch(/SU[A-Z2-7]{50,}/);
      const seeds = await Promise.all(['node.nk', 'subscriber.nk'].map((f) => readFile(join(auth, f), 'utf8')));

      await stopNode(node.proc);
      node = await startNode(env);
      expect(await Promise.all(['node.nk', 'subscriber.nk'].map((f) => readFile(join(auth, f), 'utf8')))).toEqual(seeds);
      await expect(connect({ servers: await portsUrl(dataDir), reconnect: false })).rejects.toThrow('Authorization Violation');

      const creds = await runCli('events', ['credentials', '--json'], env);
      expect(creds.code).toBe(0);
      const c = JSON.parse(creds.stdout) as { servers: string[]; nkey_seed: string; inbox_prefix: string };
      expect(c.nkey_seed).toBe(seeds[1].trim());
      const sub = await connectBus({ servers: c.servers, nkeySeed: c.nkey_seed, inboxPrefix: c.inbox_prefix });
      const m = await (await jetstream(sub).consumers.get('ES_EVT')).next({ expires: 5_000 });
      expect(m?.seq).toBe(1);
      await sub.close();
      // events and replay run as the subscriber by default: they work with the node's key out of
      // reach, and not without the subscriber's
      await rename(join(auth, 'node.nk'), join(auth, 'node.nk.away'));
      try {
        const exported = await runCli('events', ['export'], env);
        expect(exported.code).toBe(0);
        const facts = exported.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string });
        expect(facts.map((f) => f.type)).toContain('node.joined');
        const replay = await runCli('replay', ['--json'], env);
        expect(replay.code).toBe(0);
      } finally {
        await rename(join(auth, 'node.nk.away'), join(auth, 'node.nk'));
      }
      await rename(join(auth, 'subscriber.nk'), join(auth, 'subscriber.nk.away'));
      try {
        for (const [cli, args] of [['events', ['export']], ['replay', ['--json']]] as const) {
          const r = await runCli(cli, [...args], env);
          expect([cli, r.code]).not.toEqual([cli, 0]);
        }
      } finally {
        await rename(join(auth, 'subscriber.nk.away'), join(auth, 'subscriber.nk'));
      }
    } finally {
      await stopNode(node.proc);
    }
  });
});

describe('a node on a NATS that lets anonymous clients in', () => {
  it('warns at start-up, naming the risk', async () => {
    const natsDir = join(dir, 'open-nats');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(natsDir, { recursive: true });
    const open = spawn('nats-server', ['-a', '127.0.0.1', '-p', '-1', '-js', '-sd', join(natsDir, 'js'), '--ports_file_dir', natsDir], { stdio: 'ignore' });
    try {
      const ports = await poll(() => readdirSync(natsDir).find((f) => f.endsWith('.ports')), 10_000, 'ports file', 50);
      const url = (JSON.parse(await readFile(join(natsDir, ports), 'utf8')) as { nats: string[] }).nats[0];
      const dataDir = join(dir, 'on-open');
      const node = await startNode({ DATA_DIR: dataDir, CONFIG_DIR: join(dataDir, 'config'), NATS_URL: url });
      try {
        await poll(() => node.out().includes('let clients in without credentials'), 10_000, 'the warning', 100);
        expect(node.out()).toMatch(/forge lifecycle facts and credentials/);
      } finally {
        await stopNode(node.proc);
      }
    } finally {
      open.kill('SIGTERM');
    }
  });
});
