/**
 * One node as a real process (`scripts/start.ts`) on a test nats-server that outlives it, for the
 * kill -9 tests: start it with extra environment (an `ES_CRASH_POINT`, actors/wire/crashPoint.ts),
 * wait for a line of its output, `kill -9` it, start it again on the same DATA_DIR and port.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnCli } from './cli';
import { envKey } from './cluster';
import { freePort } from './processGroup';
import type { TestNats } from './natsServer';

export interface ProcessNode {
  url: string;
  dataDir: string;
  proc?: ChildProcess;
  /** Output (stdout and stderr) of the current process. */
  out(): string;
  /** Starts the node (environment added to the base one; none carried over from the last start). */
  start(env?: Record<string, string>): Promise<void>;
  /** Resolves once the output has `text` (rejects after `ms`, or when the process exits first). */
  waitFor(text: string, ms?: number): Promise<void>;
  /** SIGKILL, and waits for the exit. */
  kill(): Promise<void>;
  /** SIGTERM, and waits for the exit. */
  stop(): Promise<void>;
  /** Stops and removes the data dir. */
  remove(): Promise<void>;
}

export async function startProcessNode(nats: TestNats, settings: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<ProcessNode> {
  const dataDir = await mkdtemp(join(tmpdir(), 'esproc-'));
  const port = await freePort();
  let out = '';
  const base: Record<string, string> = {
    ...nats.env('node'), DATA_DIR: dataDir, CONFIG: '/dev/null', CONFIG_DIR: join(dataDir, 'config'), HOST: '127.0.0.1', PORT: String(port),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
  };
  for (const [k, v] of Object.entries({ 'xpack.security.enabled': false, ...settings })) base[envKey(k)] = String(v);
  const running = () => !!n.proc && n.proc.exitCode === null && n.proc.signalCode === null;
  const exit = (p: ChildProcess) => new Promise((r) => (p.exitCode !== null || p.signalCode !== null ? r(undefined) : p.once('exit', r)));
  const n: ProcessNode = {
    url: `http://127.0.0.1:${port}`,
    dataDir,
    out: () => out,
    async start(more = {}) {
      out = '';
      const p = (n.proc = spawnCli('start', [], { ...base, ...more }));
      p.stdout!.on('data', (d) => (out = (out + d).slice(-50_000)));
      p.stderr!.on('data', (d) => (out = (out + d).slice(-50_000)));
      const deadline = Date.now() + 90_000;
      for (;;) {
        if (!running()) throw new Error(`node exited (${p.exitCode ?? p.signalCode}): ${out}`);
        const up = await fetch(`${n.url}/`).then((r) => r.status === 200, () => false);
        if (up) return;
        if (Date.now() > deadline) throw new Error(`node at ${n.url} did not start: ${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async waitFor(text, ms = 60_000) {
      const deadline = Date.now() + ms;
      while (!out.includes(text)) {
        if (!running()) throw new Error(`node exited before [${text}]: ${out.slice(-3000)}`);
        if (Date.now() > deadline) throw new Error(`no [${text}] in ${ms} ms: ${out.slice(-3000)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async kill() {
      if (!n.proc || !running()) return;
      const gone = exit(n.proc);
      n.proc.kill('SIGKILL');
      await gone;
    },
    async stop() {
      if (!n.proc || !running()) return;
      const gone = exit(n.proc);
      n.proc.kill('SIGTERM');
      await gone;
    },
    async remove() {
      await n.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  await n.start(env);
  return n;
}
