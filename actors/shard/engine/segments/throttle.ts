/**
 * Merge IO throttling, as Lucene's ConcurrentMergeScheduler does it for ES
 * (`index.merge.scheduler.auto_throttle`, on by default):
 * - a rate limiter in the merging thread pauses after each write so the merge's writes stay under
 *   the current MB/s (the rate lives in shared memory: a change applies to running merges);
 * - the scheduler adjusts the rate when a big merge (>= 50 MB) starts: up 20% when another merge
 *   of similar size has run for more than 3 s (merges are falling behind), unchanged while merges
 *   queue, down 10% otherwise; between 5 MB/s and 10 GB/s, starting at 20 MB/s. Smaller merges and
 *   forced merges are not throttled.
 */

const MB = 1024 * 1024;

export const THROTTLE = Object.freeze({ startMBps: 20, minMBps: 5, maxMBps: 10240, minBigMergeBytes: 50 * MB });

/** Pauses a writer to keep it under `rate()` MB/s; counts the time paused. */
export class RateLimiter {
  private last = performance.now();
  throttledMs = 0;
  private readonly sleeper = new Int32Array(new SharedArrayBuffer(4));

  /** @param rate current limit in MB/s (Infinity = none), read before every pause */
  constructor(private readonly rate: () => number) {}

  /** Called after `bytes` were written. */
  wrote(bytes: number): void {
    const mbps = this.rate();
    const now = performance.now();
    if (!(mbps > 0) || mbps === Infinity) {
      this.last = now;
      return;
    }
    const target = this.last + (1000 * bytes) / (mbps * MB);
    if (target <= now) {
      // behind the allowance: no credit is carried over (a burst after a slow stretch stays bounded)
      this.last = now;
      return;
    }
    const wait = target - now;
    if (wait >= 1) {
      Atomics.wait(this.sleeper, 0, 0, wait);
      this.throttledMs += performance.now() - now;
    }
    this.last = target;
  }
}

/** A merge the scheduler runs, as the throttle judges it. */
export interface RunningMerge {
  bytes: number;
  startedAt: number;
}

/**
 * The new rate when a merge of `bytes` starts, given the merges running and whether more are
 * queued (ConcurrentMergeScheduler.updateIOThrottle's rule).
 */
export function nextRate(rate: number, bytes: number, running: RunningMerge[], queued: number, now = performance.now()): number {
  if (bytes < THROTTLE.minBigMergeBytes) return rate;
  const backlogOf = (m: { bytes: number }, others: RunningMerge[]) =>
    others.some((o) => o !== m && o.bytes >= THROTTLE.minBigMergeBytes && now - o.startedAt > 3000 && o.bytes / m.bytes > 0.3 && o.bytes / m.bytes < 3);
  if (backlogOf({ bytes }, running)) return Math.min(THROTTLE.maxMBps, rate * 1.2);
  if (queued > 0 || running.some((m) => backlogOf(m, running))) return rate;
  return Math.max(THROTTLE.minMBps, rate / 1.1);
}
