/**
 * A merge worker thread: runs the merges its scheduler posts, one at a time, each throttled by the
 * rate the scheduler keeps in shared memory, with its own segment cache.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SegmentCache } from './cache';
import { executeMerge, type MergeSpec } from './mergeTask';
import { RateLimiter } from './throttle';

export interface WorkerInit {
  /** Float64Array over a SharedArrayBuffer: [0] = current MB/s limit. */
  rate: SharedArrayBuffer;
  cacheBytes: number;
}

export type WorkerRequest = { id: number; spec: MergeSpec; throttled: boolean };
export type WorkerReply =
  | { id: number; ok: true; outcome: ReturnType<typeof executeMerge>; ms: number; throttledMs: number; bytesWritten: number }
  | { id: number; ok: false; error: string };

const init = workerData as WorkerInit;
const rate = new Float64Array(init.rate);
const cache = new SegmentCache({ maxBytes: init.cacheBytes });

parentPort!.on('message', (req: WorkerRequest) => {
  const t0 = performance.now();
  const limiter = new RateLimiter(() => (req.throttled ? rate[0] : Infinity));
  let bytesWritten = 0;
  let reply: WorkerReply;
  try {
    const outcome = executeMerge(req.spec, cache, (n) => {
      bytesWritten += n;
      limiter.wrote(n);
    });
    reply = { id: req.id, ok: true, outcome, ms: performance.now() - t0, throttledMs: limiter.throttledMs, bytesWritten };
  } catch (e) {
    reply = { id: req.id, ok: false, error: (e as Error)?.stack ?? String(e) };
  }
  parentPort!.postMessage(reply);
});
