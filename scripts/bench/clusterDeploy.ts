/**
 * Deployments for the `cluster` and `contexts` bench sections: a 3-server NATS cluster on loopback
 * (actors/natsCluster.ts) and N node processes (`scripts/start.ts`, as `npm start` and
 * `npm run cluster` run them) with a given `cluster.stream_replicas`, security off, in a temp folder.
 * Nodes are real processes so that two of them use two cores and one can be killed with SIGKILL.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, fstatSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { envNameOfSetting } from '../../actors/config';
import { freePort, startNatsCluster, type NatsCluster } from '../../actors/natsCluster';
import { onAbort } from './cleanup';

const START = fileURLToPath(new URL('../start.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface BenchNode {
  name: string;
  url: string;
  port: number;
  proc?: ChildProcess;
  /** Starts the process (again, on the same data and port) and resolves once it answers. */
  start(): Promise<void>;
  /** SIGKILL, and waits for the exit. */
  kill(): Promise<void>;
  /** SIGTERM (SIGKILL after 30 s), and waits for the exit. */
  stop(): Promise<void>;
  /** CPU time its current process used so far (user + system, ms; 0 when none runs or no /proc). */
  cpuMs(): number;
}

export interface Deployment {
  name: string;
  nats: NatsCluster;
  nodes: BenchNode[];
  /** CPU time used so far by its node processes and nats-servers (user + system, ms; Linux /proc). */
  cpuMs(): number;
  /** Health through the first live node, waiting for `nodes` nodes and `status`. */
  health(status: 'green' | 'yellow', nodes?: number, timeoutS?: number): Promise<void>;
  stop(): Promise<void>;
}

/** Env of a bench node: no inherited node variables, security off, logs at warn to a file. */
function nodeEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(NATS_URL|DATA_DIR|CONFIG|CONFIG_DIR|PORT|HOST|ELASTIC_PASSWORD|NODE_NAME|CLUSTER_NAME|LOG_LEVEL|ES_SETTING_.*)$/.test(k)) env[k] = v;
  }
  return { ...env, ...extra };
}

/** Clock ticks per second of /proc/<pid>/stat times. */
let ticks: number | undefined;
/** CPU ms (user + system) a process has used, from /proc; 0 when it is gone or there is no /proc. */
function cpuOf(pid: number | undefined): number {
  if (!pid) return 0;
  ticks ??= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from 3 (state) on
    return ((Number(f[11]) + Number(f[12])) / ticks) * 1000; // utime (14), stime (15)
  } catch {
    return 0;
  }
}

const exited = (p: ChildProcess) => (p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise<void>((r) => p.once('exit', () => r())));

/** JSON over HTTP to a node (setup calls; load goes through the child loaders). */
export async function call<T = Record<string, unknown>>(url: string, method: string, path: string, body?: unknown, timeoutMs = 60_000): Promise<T> {
  const res = await fetch(url + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url}${path}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/**
 * Starts a deployment under `root/<name>`: the NATS cluster, then the first node alone (it creates
 * the replicated streams and buckets), then the others together; resolves once health shows them all.
 */
export async function startDeployment(o: { root: string; name: string; nodes: number; replicas: number; settings?: Record<string, string | number> }): Promise<Deployment> {
  const dir = join(o.root, o.name);
  await mkdir(dir, { recursive: true });
  const config = join(dir, 'node.yml');
  writeFileSync(config, '# bench node: settings come from ES_SETTING_*\n');
  const nodes: BenchNode[] = [];
  let nats: NatsCluster | undefined;
  const stop = async (hard = false) => {
    await Promise.all(nodes.map((n) => (hard ? n.kill() : n.stop()).catch(() => undefined)));
    await nats?.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  // On Ctrl-C the terminal's SIGINT has reached the nats-servers too: a node's graceful stop would
  // wait for NATS until the 30 s SIGKILL, so an interrupted run kills its nodes at once.
  const off = onAbort(() => stop(true));
  try {
    nats = await startNatsCluster({ dir: join(dir, 'nats'), name: `bench-${o.name}` });
    const servers = nats.servers.map((s) => s.url);
    for (let i = 0; i < o.nodes; i++) nodes.push(await benchNode(dir, `${o.name}-${i + 1}`, config, [...servers.slice(i % 3), ...servers.slice(0, i % 3)].join(','), o.replicas, o.settings ?? {}));
    await nodes[0].start();
    await Promise.all(nodes.slice(1).map((n) => n.start()));
    const dep: Deployment = {
      name: o.name,
      nats,
      nodes,
      cpuMs: () => [...nodes.map((n) => n.proc?.pid), ...nats!.servers.map((sv) => sv.proc.pid)].reduce<number>((a, pid) => a + cpuOf(pid), 0),
      async health(status, want = nodes.length, timeoutS = 120) {
        const end = Date.now() + timeoutS * 1000;
        for (;;) {
          const live = nodes.find((n) => n.proc && n.proc.exitCode === null && n.proc.signalCode === null);
          const h: { status: string; number_of_nodes: number } | undefined = live && (await call<{ status: string; number_of_nodes: number }>(live.url, 'GET', `/_cluster/health?wait_for_status=${status}&wait_for_nodes=${want}&timeout=10s`, undefined, 15_000).catch(() => undefined));
          if (h && h.number_of_nodes === want && (h.status === 'green' || h.status === status)) return;
          if (Date.now() > end) throw new Error(`${o.name}: health did not reach ${status} with ${want} nodes in ${timeoutS} s (last: ${JSON.stringify(h)})`);
          await new Promise((r) => setTimeout(r, 200));
        }
      },
      async stop() {
        off();
        await stop();
      },
    };
    await dep.health('yellow');
    return dep;
  } catch (e) {
    off();
    await stop();
    throw e;
  }
}

async function benchNode(dir: string, name: string, config: string, natsUrl: string, replicas: number, settings: Record<string, string | number>): Promise<BenchNode> {
  const port = await freePort();
  const log = join(dir, `${name}.log`);
  const env = nodeEnv({
    NATS_URL: natsUrl,
    DATA_DIR: join(dir, name),
    CONFIG: config,
    CONFIG_DIR: join(dir, `${name}-config`),
    HOST: '127.0.0.1',
    PORT: String(port),
    NODE_NAME: name,
    LOG_LEVEL: 'warn',
    [envNameOfSetting('xpack.security.enabled')]: 'false',
    [envNameOfSetting('cluster.stream_replicas')]: String(replicas),
    [envNameOfSetting('snapshot.interval_ms')]: '3600000',
    ...Object.fromEntries(Object.entries(settings).map(([k, v]) => [envNameOfSetting(k), String(v)])),
  });
  const n: BenchNode = {
    name,
    port,
    url: `http://127.0.0.1:${port}`,
    async start() {
      const fd = openSync(log, 'a');
      const from = fstatSync(fd).size;
      const p = spawn(process.execPath, ['--import', 'tsx', START], { cwd: ROOT, env, stdio: ['ignore', fd, fd] });
      closeSync(fd);
      n.proc = p;
      const tail = () => readFileSync(log).subarray(from).toString().trim().split('\n').slice(-10).join('\n');
      const end = Date.now() + 120_000;
      for (;;) {
        if (p.exitCode !== null || p.signalCode !== null) throw new Error(`${name} exited during start-up (${p.exitCode ?? p.signalCode}): ${tail()}`);
        if (await call(n.url, 'GET', '/', undefined, 5_000).then(() => true, () => false)) return;
        if (Date.now() > end) throw new Error(`${name} did not answer in 120 s: ${tail()}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    async kill() {
      if (!n.proc) return;
      n.proc.kill('SIGKILL');
      await exited(n.proc);
    },
    async stop() {
      const p = n.proc;
      if (!p || p.exitCode !== null || p.signalCode !== null) return;
      const hard = setTimeout(() => p.kill('SIGKILL'), 30_000);
      p.kill('SIGTERM');
      await exited(p);
      clearTimeout(hard);
    },
    cpuMs: () => cpuOf(n.proc?.pid),
  };
  return n;
}
