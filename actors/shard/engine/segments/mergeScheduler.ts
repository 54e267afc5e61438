/**
 * Runs merges in worker threads (ES's ConcurrentMergeScheduler, `index.merge.scheduler.*`): at
 * most `maxThreadCount` at once (default 1), the rest queued in order; the main thread only posts
 * and receives small messages, so it never blocks on a merge. Big merges (>= 50 MB) are
 * IO-throttled with the auto-throttle of throttle.ts; forced merges are not.
 *
 * @example
 * const merges = new MergeScheduler();
 * const { meta } = await merges.merge({ dir, name: '_9', inputs: [{ path: a }, { path: b, keep: bits }] });
 * merges.stats(); // { current, total, totalDocs, totalSizeBytes, totalTimeMs, totalThrottledTimeMs, autoThrottleMBps, ... }
 * await merges.close();
 */
import { statSync, unlinkSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { SegmentMeta } from './format';
import type { MergeOutcome, MergeSpec } from './mergeTask';
import type { WorkerInit, WorkerReply, WorkerRequest } from './mergeWorkerMain';
import { nextRate, THROTTLE, type RunningMerge } from './throttle';
import { tmpFile } from './writer';

export interface MergeSchedulerOptions {
  /** `index.merge.scheduler.max_thread_count`: merges running at once (one worker each). Default 1. */
  maxThreadCount?: number;
  /** `index.merge.scheduler.auto_throttle`. Default true. */
  autoThrottle?: boolean;
  /** Starting rate of the auto-throttle (MB/s). Default 20. */
  initialMBps?: number;
  /** Merges at least this big (input bytes) are throttled and move the rate. Default 50 MB. */
  minBigMergeBytes?: number;
  /** Each worker's segment cache. Default 32 MB. */
  cacheBytes?: number;
}

/** What one merge did. */
export interface MergeResult extends MergeOutcome {
  ms: number;
  throttledMs: number;
  bytesWritten: number;
}

/** ES `_stats` `merges` section, in this scheduler's words. */
export interface MergeStats {
  current: number;
  currentDocs: number;
  currentSizeBytes: number;
  queued: number;
  total: number;
  totalTimeMs: number;
  totalDocs: number;
  totalSizeBytes: number;
  totalBytesWritten: number;
  totalStoppedTimeMs: number;
  totalThrottledTimeMs: number;
  /** Current auto-throttle rate (MB/s; Infinity when auto-throttle is off). */
  autoThrottleMBps: number;
}

interface Job extends RunningMerge {
  id: number;
  spec: MergeSpec;
  docs: number;
  throttled: boolean;
  resolve: (r: MergeResult) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  job: Job | undefined;
}

export class MergeScheduler {
  private readonly shared = new SharedArrayBuffer(8);
  private readonly rate = new Float64Array(this.shared);
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private maxThreads: number;
  private auto: boolean;
  private readonly minBig: number;
  private readonly cacheBytes: number;
  private nextId = 1;
  private closed = false;
  private totals = { total: 0, timeMs: 0, docs: 0, sizeBytes: 0, bytesWritten: 0, throttledMs: 0 };

  constructor(o: MergeSchedulerOptions = {}) {
    this.maxThreads = Math.max(1, o.maxThreadCount ?? 1);
    this.auto = o.autoThrottle ?? true;
    this.minBig = o.minBigMergeBytes ?? THROTTLE.minBigMergeBytes;
    this.cacheBytes = o.cacheBytes ?? 32 << 20;
    this.rate[0] = this.auto ? o.initialMBps ?? THROTTLE.startMBps : Infinity;
  }

  /** Queues a merge; resolves with the written segment once the output file is durable. */
  merge(spec: MergeSpec): Promise<MergeResult> {
    if (this.closed) return Promise.reject(new Error('merge scheduler is closed'));
    return new Promise<MergeResult>((resolve, reject) => {
      const bytes = spec.inputs.reduce((s, i) => s + statSync(i.path).size, 0);
      this.queue.push({ id: this.nextId++, spec, bytes, docs: 0, startedAt: 0, throttled: false, resolve, reject });
      this.dispatch();
    });
  }

  /** `index.merge.scheduler.max_thread_count` changed (takes effect as merges finish). */
  setMaxThreadCount(n: number): void {
    this.maxThreads = Math.max(1, n);
    this.dispatch();
  }

  /** `index.merge.scheduler.auto_throttle` changed. */
  setAutoThrottle(on: boolean): void {
    this.auto = on;
    this.rate[0] = on ? (Number.isFinite(this.rate[0]) ? this.rate[0] : THROTTLE.startMBps) : Infinity;
  }

  /** Current IO rate limit of big merges, MB/s. */
  get currentMBps(): number {
    return this.rate[0];
  }

  stats(): MergeStats {
    const running = this.slots.flatMap((s) => (s.job ? [s.job] : []));
    const t = this.totals;
    return {
      current: running.length, currentDocs: running.reduce((s, j) => s + j.docs, 0), currentSizeBytes: running.reduce((s, j) => s + j.bytes, 0),
      queued: this.queue.length, total: t.total, totalTimeMs: t.timeMs, totalDocs: t.docs, totalSizeBytes: t.sizeBytes,
      totalBytesWritten: t.bytesWritten, totalStoppedTimeMs: 0, totalThrottledTimeMs: t.throttledMs, autoThrottleMBps: this.rate[0],
    };
  }

  /** Stops every worker: queued and running merges fail, their partial files are removed. */
  async close(): Promise<void> {
    this.closed = true;
    const err = new Error('merge scheduler closed');
    for (const j of this.queue.splice(0)) j.reject(err);
    await Promise.all(this.slots.splice(0).map(async (s) => {
      const job = s.job;
      s.job = undefined; // the exit that terminate() causes is not a crash
      await s.worker.terminate();
      if (job) {
        removeTmp(job.spec);
        job.reject(err);
      }
    }));
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => !s.job);
      if (!slot) {
        if (this.slots.length >= this.maxThreads || this.running() >= this.maxThreads) return;
        slot = this.spawn();
      } else if (this.running() >= this.maxThreads) return;
      this.start(slot, this.queue.shift()!);
    }
  }

  private running(): number {
    return this.slots.filter((s) => s.job).length;
  }

  private start(slot: Slot, job: Job): void {
    job.startedAt = performance.now();
    job.throttled = this.auto && !job.spec.forced && job.bytes >= this.minBig;
    if (job.throttled) {
      const big = this.slots.flatMap((s) => (s.job && s.job.throttled ? [s.job] : []));
      this.rate[0] = nextRate(this.rate[0], job.bytes, big, this.queue.length, job.startedAt);
    }
    slot.job = job;
    slot.worker.ref();
    slot.worker.postMessage({ id: job.id, spec: job.spec, throttled: job.throttled } satisfies WorkerRequest);
  }

  private spawn(): Slot {
    const init: WorkerInit = { rate: this.shared, cacheBytes: this.cacheBytes };
    const worker = new Worker(new URL('./mergeWorker.mjs', import.meta.url), { workerData: init });
    const slot: Slot = { worker, job: undefined };
    worker.on('message', (r: WorkerReply) => this.finished(slot, r));
    worker.on('error', (e) => this.crashed(slot, e));
    worker.on('exit', (code) => {
      if (slot.job) this.crashed(slot, new Error(`merge worker exited with code ${code}`));
    });
    this.slots.push(slot);
    return slot;
  }

  private finished(slot: Slot, r: WorkerReply): void {
    const job = slot.job;
    slot.job = undefined;
    slot.worker.unref();
    if (!job || job.id !== r.id) return;
    if (r.ok) {
      const t = this.totals;
      t.total++;
      t.timeMs += r.ms;
      t.docs += r.outcome.inputDocs;
      t.sizeBytes += r.outcome.inputBytes;
      t.bytesWritten += r.bytesWritten;
      t.throttledMs += r.throttledMs;
      job.resolve({ ...r.outcome, ms: r.ms, throttledMs: r.throttledMs, bytesWritten: r.bytesWritten });
    } else job.reject(new Error(`merge into ${job.spec.name} failed: ${r.error}`));
    this.dispatch();
  }

  private crashed(slot: Slot, e: Error): void {
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    const job = slot.job;
    slot.job = undefined;
    if (job) {
      removeTmp(job.spec);
      job.reject(e);
    }
    if (!this.closed) this.dispatch();
  }
}

function removeTmp(spec: MergeSpec): void {
  try {
    unlinkSync(tmpFile(spec.dir, spec.name));
  } catch {
    // not there
  }
}

export type { MergeSpec, SegmentMeta };
