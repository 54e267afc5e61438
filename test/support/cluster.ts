/**
 * Several nodes on a real 3-server NATS cluster (JetStream R3), for the cluster suites: nodes run
 * in this process (`startSystem`) or as real processes (`scripts/start.ts`, to kill -9 them).
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import pino from 'pino';
import { Client as Client8 } from 'es8';
import { startNatsCluster, freePort, type NatsCluster } from '../../actors/natsCluster';
import { startSystem, type System } from '../../actors/system';
import { Settings } from '../../actors/config';
import { spawnCli } from './cli';
import { poll } from './poll';
import { startConsole } from '../../actors/console';

export const CLUSTER_PASSWORD = 'cluster-test-pw';

export interface ClusterNode {
  name: string;
  url: string;
  dataDir: string;
  es: Client8;
  /** In-process nodes. */
  sys?: System;
  /** Process nodes. */
  proc?: ChildProcess;
  /** Stops cleanly (SIGTERM for a process). */
  stop(): Promise<void>;
  /** SIGKILL (process nodes only). */
  kill(): Promise<void>;
  /** The last output of a process node (stdout and stderr). */
  out(): string;
  /** Starts again on the same data dir and port (process nodes: with `env` added, none kept from an earlier start). */
  start(env?: Record<string, string>): Promise<void>;
}

export interface TestCluster {
  nats: NatsCluster;
  dir: string;
  nodes: ClusterNode[];
  /** Adds a node (empty data dir); a process node with `env` added to its environment. */
  addNode(opts?: { process?: boolean; env?: Record<string, string> }): Promise<ClusterNode>;
  stop(): Promise<void>;
}

export interface TestClusterOptions {
  nodes?: number;
  /** Run nodes as real processes (needed to kill -9 them). */
  process?: boolean;
  security?: boolean;
  settings?: Record<string, unknown>;
  /** Each node connects to its own NATS server only (so stopping that server cuts the node off). */
  pinNats?: boolean;
  /** The credential and compaction clock of in-process nodes (tests move it forward). */
  clock?: { now(): number };
}

const BASE_SETTINGS = {
  'cluster.stream_replicas': 3,
  'cluster.heartbeat_interval_ms': 250,
  'cluster.node_timeout_ms': 2_000,
  'snapshot.interval_ms': 3_600_000,
};

/** `ES_SETTING_<KEY>` form of a setting (`.` as `_`, `_` as `__`). */
export const envKey = (k: string) => `ES_SETTING_${k.replace(/_/g, '__').replace(/\./g, '_').toUpperCase()}`;

async function untilUp(url: string, proc: ChildProcess | undefined, out: () => string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc && (proc.exitCode !== null || proc.signalCode !== null)) throw new Error(`node exited with ${proc.exitCode}: ${out()}`);
    try {
      const r = await fetch(`${url}/`, { headers: { authorization: `Basic ${Buffer.from(`elastic:${CLUSTER_PASSWORD}`).toString('base64')}` } });
      if (r.status === 200) return;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`node at ${url} did not start: ${out()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startTestCluster(opts: TestClusterOptions = {}): Promise<TestCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'escluster-'));
  const nats = await startNatsCluster({ dir: join(dir, 'nats') });
  const settings = { 'xpack.security.enabled': opts.security ?? false, 'bootstrap.password': CLUSTER_PASSWORD, ...BASE_SETTINGS, ...(opts.settings ?? {}) };
  const auth = opts.security ? { username: 'elastic', password: CLUSTER_PASSWORD } : undefined;
  const nodes: ClusterNode[] = [];

  const makeNode = async (i: number, asProcess: boolean, firstEnv: Record<string, string> = {}): Promise<ClusterNode> => {
    // Each node prefers its own NATS server (as nodes on several machines would).
    const servers = nats.servers;
    const natsUrl = opts.pinNats
      ? servers[i % servers.length].url
      : [...servers.slice(i % servers.length), ...servers.slice(0, i % servers.length)].map((s) => s.url).join(',');
    const dataDir = join(dir, `node${i}`);
    const port = await freePort();
    const name = `node-${i}`;
    let out = '';
    const n: ClusterNode = {
      name,
      url: `http://127.0.0.1:${port}`,
      dataDir,
      es: new Client8({ node: `http://127.0.0.1:${port}`, ...(auth ? { auth } : {}) }),
      out: () => out,
      async start(extra: Record<string, string> = {}) {
        if (asProcess) {
          out = '';
          const env: Record<string, string> = {
            ...extra,
            NATS_URL: natsUrl, DATA_DIR: dataDir, CONFIG: '/dev/null', CONFIG_DIR: join(dataDir, 'config'),
            HOST: '127.0.0.1', PORT: String(port), ELASTIC_PASSWORD: CLUSTER_PASSWORD, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
          };
          for (const [k, v] of Object.entries({ ...settings, 'node.name': name })) if (k !== 'bootstrap.password') env[envKey(k)] = String(v);
          n.proc = spawnCli('start', [], env);
          n.proc.stdout!.on('data', (d) => (out = (out + d).slice(-20_000)));
          n.proc.stderr!.on('data', (d) => (out = (out + d).slice(-20_000)));
          // TEST_NODE_LOG_DIR=<dir>: every node's output also goes to <dir>/<name>.log (failover post-mortems).
          const logDir = process.env.TEST_NODE_LOG_DIR;
          if (logDir) {
            const file = createWriteStream(join(logDir, `${name}.log`), { flags: 'a' });
            n.proc.stdout!.pipe(file);
            n.proc.stderr!.pipe(file);
          }
          await untilUp(n.url, n.proc, () => out);
        } else {
          n.sys = await startSystem({
            host: '127.0.0.1', port, natsUrl, natsPinned: opts.pinNats, dataDir, configDir: join(dataDir, 'config'),
            settings: new Settings({ ...settings, 'node.name': name }),
            log: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
            extensions: [startConsole],
            ...(opts.clock ? { clock: opts.clock } : {}),
          });
        }
      },
      async stop() {
        if (n.sys) {
          const s = n.sys;
          n.sys = undefined;
          await s.stop();
        }
        if (n.proc && n.proc.exitCode === null && n.proc.signalCode === null) {
          const p = n.proc;
          const gone = new Promise((r) => p.once('exit', r));
          p.kill('SIGTERM');
          await gone;
        }
      },
      async kill() {
        if (!n.proc) throw new Error('only process nodes can be killed');
        const p = n.proc;
        if (p.exitCode !== null || p.signalCode !== null) return;
        const gone = new Promise((r) => p.once('exit', r));
        p.kill('SIGKILL');
        await gone;
      },
    };
    await n.start(firstEnv);
    return n;
  };

  const stopAll = async () => {
    for (const n of [...nodes].reverse()) {
      await n.es.close().catch(() => undefined);
      await n.stop().catch(() => undefined);
    }
    await nats.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < (opts.nodes ?? 3); i++) nodes.push(await makeNode(i, opts.process ?? false));
  } catch (e) {
    await stopAll();
    throw e;
  }
  return {
    nats,
    dir,
    nodes,
    async addNode(o = {}) {
      const n = await makeNode(nodes.length, o.process ?? opts.process ?? false, o.env);
      nodes.push(n);
      return n;
    },
    stop: stopAll,
  };
}

/** Polls `check` until it returns a value (not undefined/false), or fails after `timeoutMs`. */
export const until = <T>(check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 20_000, what = 'condition'): Promise<T> =>
  poll(check, timeoutMs, what, 100);
