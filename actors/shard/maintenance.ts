/**
 * The node's segment housekeeping (ES's IndexingMemoryController, MergeScheduler and flush
 * policy): one cache of segment data for every copy, the indexing buffer budget that decides when
 * a copy's buffer is written to disk, flushes of idle copies, and merges after each flush.
 *
 * - `indices.memory.index_buffer_size` (ES: 10% of the heap): when the copies' buffers together
 *   hold more, the largest is flushed.
 * - `indices.memory.shard_inactive_time` (ES: 5m): a copy with no write for that long is flushed.
 * - merges follow `index.merge.policy.*` (segments/mergePolicy.ts), one at a time per copy, at most
 *   `indices.merge.scheduler.max_thread_count` (1) at a time on the node (ES sets it per index).
 */
import { getHeapStatistics } from 'node:v8';
import type { Logger } from 'pino';
import type { ShardStore } from './engine';
import { SegmentCache } from './engine/segments';
import { DEFAULT_MERGE_POLICY, findForcedDeletesMerges, findForcedMerges, findMerges, type MergePolicySettings } from './engine/segments/mergePolicy';
import { type MergeRunner } from './engine/store/shardStore';
import { MergeScheduler } from './engine/segments/mergeScheduler';
import { parseBytes, parseMemorySize } from '../wire/byteSize';
import { parseTimeValue } from '../wire/timeValue';
import type { Settings } from '../config';

/** What maintenance needs of a copy. */
export interface MaintainedCopy {
  readonly store: ShardStore;
  /** The copy's index settings, flat (`index.merge.policy.segments_per_tier`, …). */
  indexSettings(): Record<string, string>;
  /** Time of the last write applied. */
  lastWriteAt: number;
  /** A commit is durable: the log behind it may be trimmed. */
  committed(): void;
  readonly label: string;
}


export interface ForceMergeOptions {
  maxNumSegments?: number;
  onlyExpungeDeletes?: boolean;
  flush?: boolean;
}

export class SegmentMaintenance {
  readonly cache: SegmentCache;
  private readonly copies = new Set<MaintainedCopy>();
  private readonly merging = new Map<MaintainedCopy, Promise<void>>();
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private timer?: NodeJS.Timeout;
  /** Totals for `_stats` merges/flush sections. */
  readonly stats = { flushes: 0, flushMs: 0, merges: 0, mergeMs: 0, mergeDocs: 0, mergeBytes: 0, current: 0 };

  /** Merges run in worker threads (ES's ConcurrentMergeScheduler), auto-throttled. */
  readonly scheduler: MergeScheduler;
  private readonly runMerge: MergeRunner;
  /** A `_forcemerge` is running: its merges are not throttled. */
  private forced = 0;

  constructor(
    private readonly settings: Settings,
    private readonly log: Logger,
    runMerge?: MergeRunner,
  ) {
    this.cache = new SegmentCache({ maxBytes: parseBytes(settings.str('indices.segments.cache.size', '256mb'), 'indices.segments.cache.size') });
    this.scheduler = new MergeScheduler({ maxThreadCount: Math.max(1, settings.num('indices.merge.scheduler.max_thread_count', 1)) });
    this.runMerge = runMerge ?? (async (r) => {
      const res = await this.scheduler.merge({
        dir: r.dir,
        name: r.name,
        inputs: r.inputs.map((i) => ({ path: i.path, keep: i.keep.words })),
        tombstones: { minSeqNo: r.tombstoneFloor + 1 },
        forced: this.forced > 0,
      });
      return res.meta;
    });
  }

  start(): void {
    this.timer = setInterval(() => this.tick(), 1000);
    this.timer.unref();
  }

  /** Stops the timer, waits for flushes under way, stops the merges (a merge cut short leaves its inputs). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await Promise.all(this.flushes);
    await this.scheduler.close();
    await Promise.all(this.merging.values());
  }
  private stopped = false;
  private readonly flushes = new Set<Promise<void>>();

  add(c: MaintainedCopy): void {
    this.copies.add(c);
  }

  remove(c: MaintainedCopy): void {
    this.copies.delete(c);
  }

  private bufferBudget(): number {
    return parseMemorySize(this.settings.str('indices.memory.index_buffer_size', '10%'), 'indices.memory.index_buffer_size', getHeapStatistics().heap_size_limit);
  }

  private inactiveMs(): number {
    return parseTimeValue(this.settings.str('indices.memory.shard_inactive_time', '5m'), 'indices.memory.shard_inactive_time');
  }

  /** After a copy applied writes: flush the largest buffers while the node is over its budget. */
  afterWrite(): void {
    if (this.stopped) return;
    // a buffer's heap is a few times its source text (postings, columns, parsed values)
    const held = (c: MaintainedCopy) => c.store.bufferChars() * 2 * 3;
    let total = 0;
    for (const c of this.copies) if (!c.store.flushing) total += held(c);
    const budget = this.bufferBudget();
    if (total <= budget) return;
    const biggest = [...this.copies].filter((c) => !c.store.flushing).sort((a, b) => held(b) - held(a))[0];
    if (biggest && biggest.store.bufferDocs() > 0) void this.flush(biggest);
  }

  private tick(): void {
    if (this.stopped) return;
    const idle = this.inactiveMs();
    const now = Date.now();
    for (const c of this.copies) {
      if (!c.store.flushing && c.store.bufferDocs() > 0 && now - c.lastWriteAt >= idle) void this.flush(c);
    }
  }

  /** Writes a copy's buffer to disk and commits, then merges what the policy asks for. */
  flush(c: MaintainedCopy): Promise<void> {
    const p = this.flushAndMerge(c);
    this.flushes.add(p);
    return p.finally(() => this.flushes.delete(p));
  }

  private async flushAndMerge(c: MaintainedCopy): Promise<void> {
    const t0 = Date.now();
    try {
      await c.store.flushAsync();
      this.stats.flushes++;
      this.stats.flushMs += Date.now() - t0;
      c.committed();
    } catch (e) {
      this.log.error({ err: e, shard: c.label }, 'flush failed; the document log still holds the writes');
      return;
    }
    this.scheduleMerges(c);
  }

  private policy(c: MaintainedCopy): MergePolicySettings {
    const raw = c.indexSettings();
    const num = (k: string, d: number) => (raw[k] !== undefined && Number.isFinite(Number(raw[k])) ? Number(raw[k]) : d);
    const bytes = (k: string, d: number) => (raw[k] !== undefined ? parseBytes(raw[k], k) : d);
    return {
      segmentsPerTier: num('index.merge.policy.segments_per_tier', DEFAULT_MERGE_POLICY.segmentsPerTier),
      maxMergeAtOnce: num('index.merge.policy.max_merge_at_once', DEFAULT_MERGE_POLICY.maxMergeAtOnce),
      maxMergedSegmentBytes: bytes('index.merge.policy.max_merged_segment', DEFAULT_MERGE_POLICY.maxMergedSegmentBytes),
      floorSegmentBytes: bytes('index.merge.policy.floor_segment', DEFAULT_MERGE_POLICY.floorSegmentBytes),
      deletesPctAllowed: num('index.merge.policy.deletes_pct_allowed', DEFAULT_MERGE_POLICY.deletesPctAllowed),
      expungeDeletesAllowed: num('index.merge.policy.expunge_deletes_allowed', DEFAULT_MERGE_POLICY.expungeDeletesAllowed),
    };
  }

  /** Runs the merges the policy finds, one at a time for this copy (a later call joins the running chain). */
  scheduleMerges(c: MaintainedCopy): Promise<void> {
    if (this.stopped) return Promise.resolve(); // the next start merges what is left
    const running = this.merging.get(c);
    if (running) return running;
    const p = (async () => {
      for (let round = 0; round < 50; round++) {
        const runs = findMerges(c.store.mergeCandidates(), this.policy(c));
        if (!runs.length) return;
        for (const run of runs) await this.runOne(c, run);
      }
    })()
      .catch((e) => {
        if (this.stopped) this.log.debug({ err: e, shard: c.label }, 'merge stopped with the node; the segments it read are intact');
        else this.log.error({ err: e, shard: c.label }, 'merge failed; the segments it read are intact');
      })
      .finally(() => this.merging.delete(c));
    this.merging.set(c, p);
    return p;
  }

  /** `_forcemerge`: flush (unless told not to), then merge down to `maxNumSegments`, or expunge deletes. */
  async forceMerge(c: MaintainedCopy, o: ForceMergeOptions): Promise<void> {
    if (o.flush !== false) await this.flush(c);
    await this.merging.get(c);
    this.forced++;
    try {
      await this.forcedRuns(c, o);
    } finally {
      this.forced--;
    }
  }

  private async forcedRuns(c: MaintainedCopy, o: ForceMergeOptions): Promise<void> {
    for (let round = 0; round < 64; round++) {
      const cands = c.store.mergeCandidates();
      const runs = o.onlyExpungeDeletes
        ? findForcedDeletesMerges(cands, this.policy(c).expungeDeletesAllowed)
        : findForcedMerges(cands, o.maxNumSegments ?? 1);
      if (!runs.length) return;
      for (const run of runs) await this.runOne(c, run);
    }
  }

  private async slot(): Promise<void> {
    const max = Math.max(1, this.settings.num('indices.merge.scheduler.max_thread_count', 1));
    while (this.running >= max) await new Promise<void>((r) => this.waiting.push(r));
    this.running++;
  }

  private release(): void {
    this.running--;
    this.waiting.shift()?.();
  }

  private async runOne(c: MaintainedCopy, run: string[]): Promise<void> {
    await this.slot();
    const t0 = Date.now();
    this.stats.current++;
    try {
      const before = c.store.mergeStats.docs;
      const beforeBytes = c.store.mergeStats.bytes;
      if (await c.store.merge(run, this.runMerge)) {
        this.stats.merges++;
        this.stats.mergeDocs += c.store.mergeStats.docs - before;
        this.stats.mergeBytes += c.store.mergeStats.bytes - beforeBytes;
        c.committed();
      }
    } finally {
      this.stats.current--;
      this.stats.mergeMs += Date.now() - t0;
      this.release();
    }
  }
}
