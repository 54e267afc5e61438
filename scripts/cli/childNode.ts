/**
 * A node under test in a child process (its own nats-server and temp DATA_DIR, port 0): the script
 * runs itself with `--serve <dataDir>`, the child prints `{"url": …}` once it listens. Shared by
 * `npm run fuzz` (scripts/fuzz.ts) and the breakers run (scripts/breakers.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ChildNode {
  proc: ChildProcess;
  url: string;
  dataDir: string;
  logFile: string;
  exited: () => boolean;
}

/**
 * The child side: starts the whole node (the console included, as `npm start`) with `settings` and
 * prints its URL; SIGTERM stops it.
 * @param settings node settings (the Settings constructor's values)
 * @param natsUrl a nats-server to use instead of the node's own
 */
export async function serveChild(dataDir: string, settings: Record<string, unknown>, natsUrl?: string): Promise<void> {
  const { startSystem } = await import('../../actors/system');
  const { Settings } = await import('../../actors/config');
  const { startConsole } = await import('../../actors/console');
  const pino = (await import('pino')).default;
  const sys = await startSystem({
    host: '127.0.0.1',
    port: 0,
    ...(natsUrl ? { natsUrl } : {}),
    dataDir,
    configDir: join(dataDir, 'config'),
    settings: new Settings(settings),
    log: pino({ level: process.env.LOG_LEVEL ?? 'info' }, pino.destination(2)),
    extensions: [startConsole],
  });
  process.stdout.write(`${JSON.stringify({ url: sys.url })}\n`);
  const stop = () => void sys.stop().then(() => process.exit(0), () => process.exit(1));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  // The benches' heap figures: SIGUSR2 asks for a full collection (v8Heap.collect, as the
  // real-memory breaker does before it refuses), so an idle sample is not garbage left by the load.
  const { v8Heap } = await import('../../actors/wire/circuitBreaker');
  process.on('SIGUSR2', () => v8Heap.collect?.());
}

export interface ChildOptions {
  /** The script to run with `--serve <dataDir>` (a .ts file, run through tsx). */
  script: string;
  /** Prefix of the temp DATA_DIR. */
  prefix: string;
  /** An existing DATA_DIR to start on instead of a new one (a restart). */
  dataDir?: string;
  /** More arguments after `--serve <dataDir>`. */
  args?: string[];
  /** Extra environment (e.g. NODE_OPTIONS=--max-old-space-size=512). */
  env?: NodeJS.ProcessEnv;
  startTimeoutMs?: number;
}

/** The parent side: spawns the child, its stderr (the node's log) to `<dataDir>/node.log`. */
export async function startChildNode(o: ChildOptions): Promise<ChildNode> {
  const dataDir = o.dataDir ?? mkdtempSync(join(tmpdir(), o.prefix));
  const logFile = join(dataDir, 'node.log');
  const proc = spawn(process.execPath, ['--import', 'tsx', o.script, '--serve', dataDir, ...(o.args ?? [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...(o.env ?? {}) },
  });
  const log = createWriteStream(logFile, { flags: 'a' });
  proc.stderr!.pipe(log);
  let exited = false;
  proc.once('exit', () => (exited = true));
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    const ms = o.startTimeoutMs ?? 60_000;
    const timer = setTimeout(() => reject(new Error(`the node did not start within ${ms / 1000} s`)), ms);
    proc.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const line = buf.split('\n').find((l) => l.startsWith('{"url"'));
      if (line) {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { url: string }).url);
      }
    });
    proc.once('exit', (code) => reject(new Error(`the node exited during start-up (${code}); log: ${logFile}`)));
  });
  return { proc, url, dataDir, logFile, exited: () => exited };
}

/** SIGTERM (SIGKILL after 30 s), then the node's own nats-server should it outlive it. */
export async function stopChildNode(c: ChildNode): Promise<void> {
  if (!c.exited()) {
    c.proc.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const gone = await Promise.race([
      new Promise((r) => c.proc.once('exit', () => r(true))),
      new Promise((r) => (timer = setTimeout(() => r(false), 30_000))),
    ]);
    clearTimeout(timer);
    if (!gone) c.proc.kill('SIGKILL');
  }
  const natsDir = join(c.dataDir, 'nats');
  for (const f of existsSync(natsDir) ? readdirSync(natsDir) : []) {
    const m = /^nats-server_(\d+)\.ports$/.exec(f);
    if (m) {
      try {
        process.kill(Number(m[1]), 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  }
}

/** Resident set size of a process, MB (Linux /proc). */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}
