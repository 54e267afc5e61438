/**
 * Issue 11 item 7: `npm run cluster` (scripts/cluster.ts), run as a shell runs it (its own process
 * group, Ctrl-C as SIGINT to that group): a 3-server NATS cluster and 2 node processes that answer
 * and see each other, with R3 streams, each node preferring another NATS server, one generated
 * `elastic` password printed once; Ctrl-C stops the nodes (each snapshots) before the nats-servers
 * and leaves no child behind; a second start on the same folder needs no password and keeps the data;
 * bad settings and taken ports stop it before anything starts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { alive, freePort, killGroup, spawnGroup, type GroupProcess } from '../../support/processGroup';
import { DATA_STREAM, EVENT_STREAM } from '../../../streams';
import { connectBus } from '../../../streams/busConnection';

jest.setTimeout(300_000);

let tmp: string;
let dir: string;
let configDir: string;
const groups: number[] = [];

/** Two consecutive free loopback ports (the nodes' HTTP ports). */
async function portPair(): Promise<number> {
  for (let i = 0; i < 20; i++) {
    const p = await freePort();
    if (p >= 65535) continue;
    const ok = await new Promise<boolean>((res) => {
      const s = createServer();
      s.once('error', () => res(false));
      s.listen(p + 1, '127.0.0.1', () => s.close(() => res(true)));
    });
    if (ok) return p;
  }
  throw new Error('no two consecutive free ports');
}

function runCluster(args: string[], env: Record<string, string | undefined> = {}): GroupProcess {
  const g = spawnGroup(process.execPath, ['--import', 'tsx', 'scripts/cluster.ts', ...args], { CONFIG_DIR: configDir, LOG_LEVEL: 'info', ...env });
  groups.push(g.pgid);
  return g;
}

async function waitFor(g: GroupProcess, text: string, ms = 240_000): Promise<void> {
  const end = Date.now() + ms;
  while (!g.out().includes(text)) {
    if (g.proc.exitCode !== null) throw new Error(`npm run cluster exited with ${g.proc.exitCode}:\n${g.out()}`);
    if (Date.now() > end) throw new Error(`no [${text}] in ${ms} ms:\n${g.out()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Every process below `pid` (children detached into their own groups included). */
function descendants(pid: number): Array<{ pid: number; args: string }> {
  const rows = spawnSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .stdout.split('\n')
    .map((l) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => !!m)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] }));
  const out: Array<{ pid: number; args: string }> = [];
  const walk = (p: number) => {
    for (const r of rows) if (r.ppid === p) {
      out.push({ pid: r.pid, args: r.args });
      walk(r.pid);
    }
  };
  walk(pid);
  return out;
}

async function get(url: string, password?: string): Promise<{ status: number; json: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const res = await fetch(url, { headers: password ? { authorization: `Basic ${Buffer.from(`elastic:${password}`).toString('base64')}` } : {} });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

const environ = (pid: number) =>
  Object.fromEntries(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'npm-run-cluster-'));
  dir = join(tmp, 'cluster');
  configDir = join(tmp, 'config');
});

afterAll(async () => {
  for (const g of groups) killGroup(g);
  // A failed test may leave detached children (own groups): stop whatever runs on this suite's folder.
  for (const l of spawnSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' }).stdout.split('\n')) {
    if (l.includes(`${tmp}/`)) process.kill(Number(l.trim().split(/\s+/)[0]), 'SIGKILL');
  }
  await rm(tmp, { recursive: true, force: true });
});

describe('npm run cluster -- --nodes 2', () => {
  let port: number;
  let g: GroupProcess;
  let password: string;
  let children: Array<{ pid: number; args: string }>;
  const url = (i: number) => `http://127.0.0.1:${port + i}`;

  beforeAll(async () => {
    port = await portPair();
    g = runCluster(['--nodes', '2', '--port', String(port), '--data-dir', dir]);
    await waitFor(g, 'Ctrl-C stops everything');
    password = /Password for the elastic user[^\n]*\n\s+(\S+)/.exec(g.out())![1];
    children = descendants(g.proc.pid!);
  });

  it('prints both URLs, the NATS_URL of three servers and the generated password exactly once', () => {
    expect(g.out()).toContain(`node-1   ${url(0)}`);
    expect(g.out()).toContain(`node-2   ${url(1)}`);
    expect(g.out()).toMatch(/NATS_URL=tls:\/\/127\.0\.0\.1:\d+,tls:\/\/127\.0\.0\.1:\d+,tls:\/\/127\.0\.0\.1:\d+ /);
    expect(password).toMatch(/^\S{20}$/);
    expect(g.out().split(password)).toHaveLength(3); // the banner line and the curl example below it
    expect(g.out()).toMatch(/cluster \[elasticsearch\] is (green|yellow) with 2 nodes/);
  });

  it('runs 3 nats-servers and 2 nodes, each in its own process group', () => {
    const nats = children.filter((c) => /nats-server -c .*\/nats\/n\d\/nats-server\.conf/.test(c.args));
    const nodes = children.filter((c) => c.args.includes('scripts/start.ts'));
    expect(nats).toHaveLength(3);
    expect(nodes).toHaveLength(2);
    for (const c of [...nats, ...nodes]) expect(Number(spawnSync('ps', ['-o', 'pgid=', '-p', String(c.pid)], { encoding: 'utf8' }).stdout.trim())).toBe(c.pid);
  });

  it('gives every node all three servers, a different one first, R3 and its own DATA_DIR', () => {
    const envs = children.filter((c) => c.args.includes('scripts/start.ts')).map((c) => environ(c.pid));
    const urls = envs.map((e) => e.NATS_URL.split(','));
    for (const u of urls) expect(new Set(u).size).toBe(3);
    expect(new Set(urls.map((u) => u.join(','))).size).toBe(2);
    expect(urls[0][0]).not.toBe(urls[1][0]);
    expect(envs.map((e) => e.ES_SETTING_CLUSTER_STREAM__REPLICAS)).toEqual(['3', '3']);
    expect(envs.map((e) => e.DATA_DIR).sort()).toEqual([join(dir, 'node-1'), join(dir, 'node-2')]);
    expect(envs.map((e) => e.ELASTIC_PASSWORD)).toEqual([password, password]);
  });

  it('connects each node to the first server of its NATS_URL', () => {
    const established = spawnSync('ss', ['-tnpH'], { encoding: 'utf8' }).stdout.split('\n');
    for (const c of children.filter((x) => x.args.includes('scripts/start.ts'))) {
      const [first, ...others] = environ(c.pid).NATS_URL.split(',').map((u: string) => new URL(u).port);
      const peers = established.filter((l) => l.includes(`pid=${c.pid},`)).map((l) => l.trim().split(/\s+/)[4]?.split(':').pop());
      expect(peers).toContain(first);
      for (const o of others) expect(peers).not.toContain(o);
    }
  });

  it('has nodes that answer with one cluster uuid and see each other', async () => {
    const infos = await Promise.all([0, 1].map((i) => get(`${url(i)}/`, password)));
    expect(infos.map((r) => r.status)).toEqual([200, 200]);
    expect(infos[0].json.cluster_uuid).toBe(infos[1].json.cluster_uuid);
    for (const i of [0, 1]) {
      const h = await get(`${url(i)}/_cluster/health`, password);
      expect(h.json.number_of_nodes).toBe(2);
      expect(['green', 'yellow']).toContain(h.json.status);
    }
    expect((await get(`${url(0)}/`)).status).toBe(401);
  });

  it('secures every nats-server: TLS with the generated CA, no anonymous client, the subscriber printed', async () => {
    const natsUrl = /NATS_URL=(\S+)/.exec(g.out())![1];
    const ca = readFileSync(join(dir, 'nats', 'bus', 'certs', 'ca.crt'), 'utf8');
    for (const server of natsUrl.split(',')) {
      expect(server).toMatch(/^tls:\/\/127\.0\.0\.1:\d+$/);
      await expect(connect({ servers: server, tls: { ca }, reconnect: false })).rejects.toThrow('Authorization Violation');
    }
    const [, nkeyFile, caFile] = /NATS_NKEY=(\S+) NATS_CA=(\S+)/.exec(g.out())!;
    const creds = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/events.ts', 'credentials', '--json'], {
      env: { ...process.env, NATS_URL: natsUrl, NATS_NKEY: nkeyFile, NATS_CA: caFile }, encoding: 'utf8',
    });
    const c = JSON.parse(creds.stdout) as { servers: string[]; nkey_seed: string; inbox_prefix: string; tls: { ca: string } };
    expect(c.servers).toEqual(natsUrl.split(','));
    expect(c.tls.ca).toBe(ca);
    const sub = await connectBus({ servers: c.servers, nkeySeed: c.nkey_seed, inboxPrefix: c.inbox_prefix, tls: { ca: c.tls.ca } });
    const jsm = await jetstreamManager(sub);
    expect((await jsm.streams.info(EVENT_STREAM)).state.messages).toBeGreaterThan(0);
    await expect(jsm.streams.info(DATA_STREAM)).rejects.toThrow('Permissions Violation');
    await sub.close();
  });

  it('keeps the document and lifecycle streams with 3 replicas', async () => {
    const natsUrl = /NATS_URL=(\S+)/.exec(g.out())![1];
    const nc = await connectBus({ servers: natsUrl.split(','), nkeySeed: readFileSync(join(dir, 'nats', 'bus', 'auth', 'node.nk'), 'utf8'), tls: { ca: readFileSync(join(dir, 'nats', 'bus', 'certs', 'ca.crt'), 'utf8') } });
    try {
      const jsm = await jetstreamManager(nc);
      for (const s of [DATA_STREAM, EVENT_STREAM]) expect((await jsm.streams.info(s)).config.num_replicas).toBe(3);
    } finally {
      await nc.close();
    }
  });

  it('on Ctrl-C stops the nodes (each snapshots), then the nats-servers, and leaves no child running', async () => {
    const put = await fetch(`${url(1)}/books/_doc/1?refresh=true`, {
      method: 'PUT',
      headers: { authorization: `Basic ${Buffer.from(`elastic:${password}`).toString('base64')}`, 'content-type': 'application/json' },
      body: '{"title":"Dune"}',
    });
    expect(put.status).toBe(201);
    // The terminal sends SIGINT to the foreground group (the script); npm/tsx relay a second one.
    process.kill(-g.pgid, 'SIGINT');
    setTimeout(() => g.proc.exitCode === null && g.proc.kill('SIGINT'), 200);
    expect(await g.exited).toBe(0);
    const out = g.out();
    const natsStopped = out.indexOf('nats-servers stopped');
    for (const n of ['node-1', 'node-2']) {
      expect(out).toContain(`${n} stopped (exit 0)`);
      expect(out.indexOf(`${n} stopped (exit 0)`)).toBeLessThan(natsStopped);
      expect(readFileSync(join(dir, `${n}.log`), 'utf8')).toMatch(/"reason":"shutdown","msg":"snapshot written"/);
    }
    expect(natsStopped).toBeGreaterThan(0);
    expect(children.length).toBeGreaterThanOrEqual(6); // 3 nats-servers, 2 nodes, the watchdog
    for (const c of children) expect([c.pid, alive(c.pid)]).toEqual([c.pid, false]);
  });

  it('starts again on the same folder without a password, with the data of the first run', async () => {
    const again = runCluster(['--nodes', '1', '--port', String(port), '--data-dir', dir]);
    await waitFor(again, 'Ctrl-C stops everything');
    expect(again.out()).toContain('the one printed when this cluster first started');
    expect(again.out()).not.toContain(password);
    const count = await get(`${url(0)}/books/_count`, password);
    expect(count.json.count).toBe(1);
    // The temporary file-realm user that read the health is gone (the files did not exist before).
    expect(existsSync(join(configDir, 'users'))).toBe(false);
    expect(existsSync(join(configDir, 'users_roles'))).toBe(false);
    const kids = descendants(again.proc.pid!);
    process.kill(-again.pgid, 'SIGINT');
    expect(await again.exited).toBe(0);
    for (const c of kids) expect([c.pid, alive(c.pid)]).toEqual([c.pid, false]);
  });
});

describe('checks before anything starts', () => {
  it('refuses an unknown setting with exit 78 and starts nothing', async () => {
    const other = join(tmp, 'bad-setting');
    const g = runCluster(['--nodes', '2', '--port', String(await portPair()), '--data-dir', other], { ES_SETTING_SEARCH_MAX_KEEP_ALIVE: '1h' });
    expect(await g.exited).toBe(78);
    expect(g.out()).toContain('error: unknown setting [search.max.keep.alive]');
    expect(existsSync(other)).toBe(false);
  });

  it('refuses a taken port, naming it and --port, and starts nothing', async () => {
    const p = await portPair();
    const busy: Server = createServer();
    await new Promise<void>((r) => busy.listen(p + 1, '127.0.0.1', () => r()));
    try {
      const other = join(tmp, 'taken-port');
      const g = runCluster(['--nodes', '2', '--port', String(p), '--data-dir', other]);
      expect(await g.exited).toBe(1);
      expect(g.out()).toContain(`port ${p + 1} on 127.0.0.1 is already in use`);
      expect(g.out()).toContain('start the cluster with another --port');
      expect(existsSync(other) ? readdirSync(other) : []).toEqual([]);
    } finally {
      busy.close();
    }
  });
});
