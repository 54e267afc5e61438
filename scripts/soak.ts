/**
 * `npm run soak -- [--nodes 1|3] [--minutes 5] [--concurrency 3] [--seed 1]`: a soak of one node (its
 * own nats-server) or of a 3-node cluster on a 3-server NATS cluster (`scripts/cluster.ts`), each in
 * child processes on temp directories. For the whole time it sends the mixed traffic of
 * scripts/soakLoad.ts through every node, then reports each node's log followers (stalls: the
 * watchdog finding one idle with messages pending), the "stalled" lines of the node logs, the event
 * loop's worst delay and every 5xx or unanswered request. Exits 1 on any stall or failure.
 *
 *   npm run soak                    # one node, 5 minutes
 *   npm run soak -- --nodes 3       # a 3-node cluster, 5 minutes
 *   npm run soak -- --minutes 0.5   # a short run
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { num, parseOrExit, str, UsageError } from './cli/args';
import { formatSoak, runSoak } from './soakLoad';

const USAGE = `usage: npm run soak -- [--nodes 1|3] [--minutes M] [--concurrency N] [--seed S]
Soaks one node (its own nats-server) or a 3-node cluster (3 nats-servers) with mixed traffic for M
minutes (default 5), then reports log follower stalls, the event loop's delay and any 5xx; exit 1 on
any stall or failure.`;

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const PASSWORD = 'soak-elastic-password-1';
const auth = `Basic ${Buffer.from(`elastic:${PASSWORD}`).toString('base64')}`;

const opts = parseOrExit('soak', USAGE, process.argv.slice(2), {
  options: { nodes: { type: 'string' }, minutes: { type: 'string' }, concurrency: { type: 'string' }, seed: { type: 'string' } },
}, (p) => {
  const nodes = num(str(p, 'nodes'), '--nodes', 1);
  if (nodes !== 1 && nodes !== 3) throw new UsageError(`--nodes must be 1 or 3, got [${str(p, 'nodes')}]`);
  const minutes = num(str(p, 'minutes'), '--minutes', 5);
  if (!(minutes > 0)) throw new UsageError(`--minutes must be positive, got [${str(p, 'minutes')}]`);
  return { nodes, minutes, concurrency: num(str(p, 'concurrency'), '--concurrency', 3), seed: num(str(p, 'seed'), '--seed', 1) };
});

const freePort = () =>
  new Promise<number>((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });

async function healthy(url: string, nodes: number, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      const r = await fetch(`${url}/_cluster/health`, { headers: { authorization: auth } });
      const j = (await r.json()) as { number_of_nodes?: number; status?: string };
      if (r.ok && j.number_of_nodes === nodes && j.status !== 'red') return true;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

interface Deployment {
  urls: string[];
  logs: string[];
  stop(): Promise<void>;
}

async function oneNode(dir: string): Promise<Deployment> {
  const port = await freePort();
  const log = join(dir, 'node.log');
  const out = createWriteStream(log);
  const env = { ...process.env, DATA_DIR: join(dir, 'data'), CONFIG_DIR: join(dir, 'config'), PORT: String(port), ELASTIC_PASSWORD: PASSWORD, LOG_LEVEL: 'info' };
  const proc = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'start.ts')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout!.pipe(out);
  proc.stderr!.pipe(out);
  const url = `http://127.0.0.1:${port}`;
  if (!(await healthy(url, 1, 120_000))) throw new Error(`the node did not start (see ${log})`);
  return { urls: [url], logs: [log], stop: () => stopChild(proc, 'SIGTERM') };
}

async function cluster(dir: string): Promise<Deployment> {
  const port = await freePort();
  const env = { ...process.env, ELASTIC_PASSWORD: PASSWORD, LOG_LEVEL: 'info' };
  const proc = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'cluster.ts'), '--nodes', '3', '--port', String(port), '--data-dir', dir], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const end = Date.now() + 300_000;
  while (!/Ctrl-C stops everything/.test(out)) {
    if (proc.exitCode !== null || Date.now() > end) throw new Error(`the cluster did not start:\n${out.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const urls = [0, 1, 2].map((i) => `http://127.0.0.1:${port + i}`);
  const logs = readdirSync(dir).filter((f) => /^node-\d+\.log$/.test(f)).map((f) => join(dir, f));
  return { urls, logs, stop: () => stopChild(proc, 'SIGINT') };
}

function stopChild(proc: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  return new Promise((res) => {
    if (proc.exitCode !== null) return res();
    const hard = setTimeout(() => proc.kill('SIGKILL'), 60_000);
    proc.once('exit', () => {
      clearTimeout(hard);
      res();
    });
    proc.kill(signal);
  });
}

const dir = mkdtempSync(join(tmpdir(), 'soak-'));
let d: Deployment | undefined;
let code = 0;
try {
  process.stdout.write(`starting ${opts.nodes === 1 ? 'one node' : 'a 3-node cluster'} in ${dir} ...\n`);
  d = opts.nodes === 1 ? await oneNode(dir) : await cluster(dir);
  process.stdout.write(`soaking ${d.urls.join(', ')} for ${opts.minutes} min, ${opts.concurrency} workers ...\n`);
  const report = await runSoak({
    urls: d.urls, auth, seconds: Math.round(opts.minutes * 60), concurrency: opts.concurrency, seed: opts.seed,
    onTick: (r) => process.stdout.write(`  ${r.requests} steps, ${r.failures.length} failures\n`),
  });
  const stalledLines = d.logs.flatMap((l) => readFileSync(l, 'utf8').split('\n').filter((x) => /follower stalled/.test(x)));
  process.stdout.write(`${formatSoak(report)}\n  "follower stalled" lines in the node logs: ${stalledLines.length}\n`);
  for (const l of stalledLines.slice(0, 10)) process.stdout.write(`    ${l.slice(0, 300)}\n`);
  if (report.stalls || report.failures.length || stalledLines.length) code = 1;
} catch (e) {
  process.stderr.write(`soak failed: ${(e as Error).message}\n`);
  code = 1;
} finally {
  await d?.stop();
  if (code === 0) rmSync(dir, { recursive: true, force: true });
  else process.stdout.write(`kept ${dir} (node logs)\n`);
}
process.exit(code);
