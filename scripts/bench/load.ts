/**
 * Typed callers of the child load generator (scripts/bench/loader.mjs). Each call spawns one child
 * process, hands it its config on stdin and resolves with the JSON it prints.
 */
import type { BusConnection } from '../../streams/busConnection';
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const LOADER = fileURLToPath(new URL('./loader.mjs', import.meta.url));
// tsx's loader, so the child can import the shared seeded PRNG (test/support/rng.ts)
const TSX = createRequire(import.meta.url).resolve('tsx/esm');
const running = new Set<ChildProcess>();

/** Runs one loader mode in a child process. */
export function runLoader<T>(cfg: Record<string, unknown> & { mode: string }): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', TSX, LOADER], { stdio: ['pipe', 'pipe', 'pipe'] });
    running.add(child);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) => {
      running.delete(child);
      if (code !== 0) return reject(new Error(`loader ${cfg.mode} exited with ${code}: ${Buffer.concat(err).toString().trim().slice(0, 2000)}`));
      try {
        resolve(JSON.parse(Buffer.concat(out).toString()) as T);
      } catch (e) {
        reject(e);
      }
    });
    child.stdin.end(JSON.stringify(cfg));
  });
}

/** Kills the loaders still running (on an error or Ctrl-C), by their own pids. */
export function killLoaders(): void {
  for (const c of running) c.kill('SIGKILL');
  running.clear();
}

export const portOf = (url: string) => Number(new URL(url).port);

export interface HttpSpec {
  method?: string;
  path: string;
  body?: string;
  auth?: string;
}
export interface NatsSpec {
  nats: string;
  bytes?: number;
}

/** Bulk-loads `docs` generated documents through `POST /_bulk`. */
export const loadBulk = (port: number, o: { index: string; docs: number; batch?: number; conc?: number; refresh?: boolean }) =>
  runLoader<{ docs: number; ms: number; bytes: number; errorBatches: number }>({ mode: 'bulk', port, ...o });

/** The same NDJSON batches published straight into a scratch JetStream stream (deleted after). */
export const publishBatches = (nats: BusConnection, o: { stream: string; docs: number; batch?: number; window?: number }) =>
  runLoader<{ docs: number; ms: number; bytes: number }>({ mode: 'jspub', nats, ...o });

/** Requests/s of one request, `conc` in flight for `seconds`. */
export const httpRate = (port: number, o: HttpSpec & { seconds?: number; conc?: number; ca?: string }) =>
  runLoader<{ n: number; ms: number; rate: number; bad: number }>({ mode: 'rate', port, ...o });

/** Latencies (ms) of interleaved requests, one in flight: ms[spec][sample]. */
export const timeRequests = (port: number, o: { specs: Array<HttpSpec | NatsSpec>; rounds: number; perRound?: number; warmup?: number; nats?: BusConnection }) =>
  runLoader<{ ms: number[][] }>({ mode: 'times', port, ...o });

/** Scrolls an index to the end with `max` slices at once (1 = not sliced). */
export const scrollAll = (port: number, o: { index: string; size?: number; max?: number; keepAlive?: string; sliceIds?: number[] }) =>
  runLoader<{ docs: number; pages: number; bytes: number; ms: number }>({ mode: 'scroll', port, ...o, conc: o.sliceIds?.length ?? o.max ?? 1 });

/** Latencies (ms) of `pages` scroll next pages (size, sort `_doc`), one request in flight. */
export const scrollPages = (port: number, o: { index: string; size?: number; pages?: number; keepAlive?: string; pagePort?: number }) =>
  runLoader<{ ms: number[] }>({ mode: 'scrollpages', port, ...o });

/** Walks a PIT with search_after to the end; `after[depth]` is the raw search_after there. */
export const pitWalk = (port: number, o: { index: string; pitId: string; size?: number; sortField?: string; marks?: number[] }) =>
  runLoader<{ docs: number; bytes: number; ms: number; pageMs: number[]; after: Record<string, string | null> }>({ mode: 'pitwalk', port, ...o });

/** Opens `n` contexts and returns the ids cut out of the `extract` field. */
export const openMany = (port: number, o: { path: string; body?: string; n: number; conc?: number; extract: string }) =>
  runLoader<{ ids: string[]; ms: number }>({ mode: 'open', port, ...o });

/** DELETE `path` with `{key: id}` for each id. */
export const freeMany = (port: number, o: { path: string; key: string; ids: string[]; conc?: number }) =>
  runLoader<{ ms: number; bad: number }>({ mode: 'close', port, ...o });

/** `n` open+free pairs of PITs or scrolls. */
export const openFreePairs = (port: number, o: { kind: 'pit' | 'scroll'; index: string; n: number; conc?: number }) =>
  runLoader<{ n: number; ms: number }>({ mode: 'pairs', port, ...o });

/** `n` cycles of a scroll open + `pages` continuations + clear, or of the same searches without a context (`context: false`). */
export const contextCycles = (port: number, o: { index: string; n: number; pages?: number; size?: number; context: boolean; conc?: number }) =>
  runLoader<{ n: number; ms: number; rate: number; latency: { first: number; page: number; clear: number } }>({ mode: 'ctxcycle', port, ...o });

/** Open, extend, free `scrolls` scroll contexts and `pits` PITs. */
export const lifecycles = (port: number, o: { index: string; scrolls: number; pits: number; conc?: number }) =>
  runLoader<{ ms: number; phase: { open: number; extend: number; free: number } }>({ mode: 'lifecycle', port, ...o });
