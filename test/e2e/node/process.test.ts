/**
 * Issue 10, a new user's first hour, with real processes: `npx tsx scripts/start.ts` in its own
 * process group (as a shell runs `npm start`), its embedded nats-server, and the CLIs around it.
 *
 * - item 15: a signal to the group (Ctrl-C) stops the node with a snapshot in a few seconds, the
 *   embedded nats-server last, and leaves no nats-server behind; a node killed with SIGKILL takes its
 *   nats-server with it (watchdog), and one left running anyway is reclaimed by the next start;
 * - item 24: `npm test` in the clone where the node ran still passes (jest looks only in test/);
 * - item 25: an unknown setting stops the start before anything is bootstrapped;
 * - item 27: a taken port stops the start before the password is generated; a lost generated
 *   password is reset with `npm run reset-password`, which says what to do when the node is stopped;
 * - item 29: `npm run replay` and `npm run events -- export` read a stopped node's DATA_DIR without
 *   changing a byte of it.
 */
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { alive, freePort, killGroup, pgidOf, ROOT, spawnGroup, until, waitGroupGone, type GroupProcess } from '../../support/processGroup';

jest.setTimeout(180_000);

let tmp: string;
let clone: string;
let dataDir: string;
let configDir: string;
let port: number;
let node: GroupProcess | undefined;
const started: number[] = [];

const env = (extra: Record<string, string | undefined> = {}) => ({ DATA_DIR: dataDir, CONFIG_DIR: configDir, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info', ...extra });
const url = () => `http://127.0.0.1:${port}`;
const basic = (pw: string) => ({ authorization: `Basic ${Buffer.from(`elastic:${pw}`).toString('base64')}` });

async function http(method: string, path: string, pw?: string, body?: unknown): Promise<{ status: number; json: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const res = await fetch(url() + path, {
    method,
    headers: { ...(pw ? basic(pw) : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

function startNode(extra: Record<string, string | undefined> = {}): GroupProcess {
  const p = spawnGroup('npx', ['tsx', 'scripts/start.ts'], env(extra));
  started.push(p.pgid);
  return p;
}

async function waitListening(p: GroupProcess): Promise<void> {
  const end = Date.now() + 60_000;
  for (;;) {
    if (p.proc.exitCode !== null) throw new Error(`node exited with ${p.proc.exitCode}:\n${p.out()}`);
    if ((await http('GET', '/').catch(() => undefined))?.status === 401) return;
    if (Date.now() > end) throw new Error(`the node on port ${port} did not start:\n${p.out()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The embedded nats-server's pid, from the ports file it writes under DATA_DIR/nats. */
function natsPid(): number {
  const f = readdirSync(join(dataDir, 'nats')).find((n) => /^nats-server_\d+\.ports$/.test(n) && alive(Number(/\d+/.exec(n)![0])));
  if (!f) throw new Error('no live nats-server ports file');
  return Number(/\d+/.exec(f)![0]);
}

/** Runs a CLI to completion (tsx in this process's group; nothing detached). */
function cli(script: string, args: string[], extra: Record<string, string | undefined> = {}, input?: string) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', `scripts/${script}.ts`, ...args], {
    cwd: ROOT,
    env: { ...process.env, NATS_URL: undefined, ...env(extra) } as NodeJS.ProcessEnv,
    encoding: 'utf8',
    input,
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function hashTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else out[p.slice(dir.length)] = `${statSync(p).mtimeMs}:${createHash('sha256').update(readFileSync(p)).digest('hex')}`;
    }
  };
  walk(dir);
  return out;
}

let generated: string;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'node-process-'));
  // A minimal clone: the repository's jest config, one test, its node_modules, and the node's data dir in it.
  clone = join(tmp, 'clone');
  await mkdir(join(clone, 'test', 'unit'), { recursive: true });
  await copyFile(join(ROOT, 'jest.config.cjs'), join(clone, 'jest.config.cjs'));
  await writeFile(join(clone, 'test', 'unit', 'sum.test.ts'), "it('adds', () => expect(1 + 1).toBe(2));\n");
  await symlink(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
  dataDir = join(clone, 'data');
  configDir = join(tmp, 'config');
  await mkdir(configDir);
  port = await freePort();
});

afterAll(async () => {
  for (const g of started) killGroup(g);
  // A failed test may leave a nats-server of this suite's store running (its own group): stop it.
  for (const l of spawnSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' }).stdout.split('\n')) {
    if (l.includes('nats-server') && l.includes(`${tmp}/`)) process.kill(Number(l.trim().split(/\s+/)[0]), 'SIGKILL');
  }
  await rm(tmp, { recursive: true, force: true });
});

describe('npm start as a process group', () => {
  it('refuses an unknown setting before bootstrapping anything', async () => {
    const p = startNode({ ES_SETTING_SEARCH_MAX_KEEP_ALIVE: '1h' });
    expect(await p.exited).toBe(78);
    expect(p.out()).toContain('error: unknown setting [search.max.keep.alive] (from ES_SETTING_SEARCH_MAX_KEEP_ALIVE: did you mean ES_SETTING_SEARCH_MAX__KEEP__ALIVE?');
    expect(existsSync(dataDir)).toBe(false);
  });

  it('refuses a port in use before generating a password, and says which port and what to do', async () => {
    const other: Server = createServer();
    const busy = await freePort();
    await new Promise<void>((r) => other.listen(busy, '127.0.0.1', () => r()));
    try {
      const p = startNode({ PORT: String(busy) });
      expect(await p.exited).toBe(1);
      expect(p.out()).toContain(`port ${busy} on 127.0.0.1 is already in use`);
      expect(p.out()).toContain(`PORT=${busy + 1} npm start`);
      expect(p.out()).not.toContain('Password for the elastic user');
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      other.close();
    }
  });

  it('starts, generates the elastic password once, and opens a scroll', async () => {
    node = startNode();
    await waitListening(node);
    generated = /Password for the elastic user[^\n]*\n\s+(\S+)/.exec(node.out())![1];
    expect((await http('PUT', '/books/_doc/1?refresh=true', generated, { title: 'Dune' })).status).toBe(201);
    const s = await http('POST', '/books/_search?scroll=10m', generated, { size: 1 });
    expect(s.status).toBe(200);
  });

  it('on a signal to the group: stops within 10 s, writes a snapshot, and leaves no nats-server (item 15)', async () => {
    const nats = natsPid();
    const natsGroup = pgidOf(nats);
    const t0 = Date.now();
    process.kill(-node!.pgid, 'SIGINT'); // what Ctrl-C in the terminal does
    const ms = await waitGroupGone(node!.pgid, 60_000);
    expect(ms).toBeLessThan(10_000);
    expect(Date.now() - t0).toBeLessThan(10_000);
    await until(() => (alive(nats) ? undefined : true), 5_000, 'the nats-server to be gone');
    const snaps = existsSync(join(dataDir, 'snapshots')) ? (await readdir(join(dataDir, 'snapshots'))).filter((f) => f.endsWith('.snap')) : [];
    if (!snaps.length) throw new Error(`no snapshot written; node output:\n${node!.out()}`);
    expect(node!.out()).toContain('"msg":"stopped"');
    expect(natsGroup).not.toBe(node!.pgid); // its own group: the group signal did not reach it
  });

  it('leaves a clone where `npm test` still passes (item 24)', () => {
    expect(readdirSync(join(dataDir, 'snapshots')).some((f) => f.endsWith('.snap'))).toBe(true);
    const r = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), '--selectProjects', 'unit'], { cwd: clone, encoding: 'utf8', timeout: 120_000 });
    expect(r.stderr).toContain('Tests:       1 passed, 1 total');
    expect(r.stderr).not.toContain('obsolete');
    expect(r.status).toBe(0);
  });

  it('replays and exports a stopped node’s log from its DATA_DIR without changing it (item 29)', async () => {
    const before = hashTree(dataDir);
    const r = cli('replay', ['--json']);
    expect(r.stderr).toContain(`the node whose DATA_DIR is ${dataDir} is stopped`);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { states: Array<{ aggregate: string; status: string }> };
    expect(out.states).toEqual(expect.arrayContaining([expect.objectContaining({ aggregate: 'scroll', status: 'open' }), expect.objectContaining({ aggregate: 'user' })]));
    const file = join(tmp, 'events.jsonl');
    const ex = cli('events', ['export', '--file', file]);
    expect(ex.code).toBe(0);
    expect((await readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l).type)).toEqual(expect.arrayContaining(['user.password_changed', 'scroll.opened']));
    expect(hashTree(dataDir)).toEqual(before);
  });

  it('events tail on a stopped node says it is stopped', () => {
    const r = cli('events', ['tail']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the node whose DATA_DIR is ${dataDir} is not running: start it (npm start)`);
  });

  it('reset-password on a stopped node says to start it (item 27)', () => {
    const r = cli('resetPassword', ['-b']);
    expect(r.code).toBe(69);
    expect(r.stderr).toContain(`Failed to determine the health of the cluster running at ${url()}`);
    expect(r.stderr).toContain('start it (`npm start`');
  });

  it('after a restart, reset-password replaces the lost generated password (item 27)', async () => {
    node = startNode();
    await waitListening(node);
    expect(node.out()).not.toContain('Password for the elastic user'); // printed once, at the first start
    const r = cli('resetPassword', ['-b', '-u', 'elastic']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const pw = /^Password for the \[elastic\] user successfully reset\.\nNew value: (\S+)\n$/.exec(r.stdout)![1];
    expect((await http('GET', '/_security/_authenticate', pw)).status).toBe(200);
    expect((await http('GET', '/_security/_authenticate', generated)).status).toBe(401);
    expect(readdirSync(configDir)).toEqual([]); // the temporary file-realm user is gone
  });

  it('a node killed with SIGKILL takes its nats-server with it (item 15)', async () => {
    const nats = natsPid();
    const nodePid = Number(readFileSync(join(dataDir, 'nats', 'node.pid'), 'utf8'));
    process.kill(nodePid, 'SIGKILL');
    killGroup(node!.pgid); // npx and tsx
    await until(() => (alive(nats) ? undefined : true), 10_000, 'the nats-server of the killed node to stop');
  });

  it('a nats-server left running (its node and watchdog killed) is reclaimed by the next start (item 15)', async () => {
    node = startNode();
    await waitListening(node);
    const nats = natsPid();
    const dog = spawnSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
      .stdout.split('\n')
      .find((l) => l.includes(`kill -TERM ${nats} `));
    expect(dog).toBeDefined();
    process.kill(Number(dog!.trim().split(/\s+/)[0]), 'SIGKILL');
    process.kill(Number(readFileSync(join(dataDir, 'nats', 'node.pid'), 'utf8')), 'SIGKILL');
    killGroup(node.pgid);
    await new Promise((r) => setTimeout(r, 300));
    expect(alive(nats)).toBe(true); // its own group and no watchdog: left running
    node = startNode();
    await waitListening(node);
    expect(alive(nats)).toBe(false);
    expect(natsPid()).not.toBe(nats);
    process.kill(-node.pgid, 'SIGTERM');
    expect(await waitGroupGone(node.pgid, 60_000)).toBeLessThan(10_000);
  });
});
