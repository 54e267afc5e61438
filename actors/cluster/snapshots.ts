import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { jetstreamManager, type StreamInfo } from '@nats-io/jetstream';
import { DATA_STREAM } from '../../streams';
import type { Settings } from '../config';
import type { NodeContext } from '../nodeContext';
import type { FrozenStore, LoadedStore, ShardStore } from '../shard/engine/shardStore';
import { SnapshotWriter, listSnapshots, pruneSnapshots, readSnapshot, type IndexImage, type SnapshotHeader } from '../shard/snapshot';
import type { DocumentLog } from './documentLog';
import type { MetadataImage } from './clusterMetadata';

/**
 * Snapshot settings (node settings, YAML or `ES_SETTING_*`; also dynamic via PUT _cluster/settings):
 *
 * - `snapshot.enabled` (true): take snapshots and start from them; false = always replay the whole log.
 * - `snapshot.interval_ms` (300000): how often to check; a snapshot is taken when at least
 *   `snapshot.min_ops` (10000) ops were applied since the last one. A clean shutdown always takes
 *   one when anything changed.
 * - `snapshot.purge_log` (false): after a snapshot is durable, purge ES_DATA messages before the S
 *   of the oldest snapshot kept (2 are kept), so every kept snapshot still has its log tail.
 */
export interface SnapshotSettings {
  enabled: boolean;
  intervalMs: number;
  minOps: number;
  purgeLog: boolean;
}

export function snapshotSettings(s: Settings): SnapshotSettings {
  return {
    enabled: s.bool('snapshot.enabled', true),
    intervalMs: s.num('snapshot.interval_ms', 300_000),
    minOps: s.num('snapshot.min_ops', 10_000),
    purgeLog: s.bool('snapshot.purge_log', false),
  };
}

/** Snapshots kept on disk. */
export const KEEP_SNAPSHOTS = 2;

/** What the cluster hands over at the quiet instant (cheap: O(tombstones) per shard). */
export interface ClusterImage {
  indices: IndexImage[];
  clusterSettings: Record<string, unknown>;
  shards: Array<{ uuid: string; n: number; store: ShardStore; frozen: FrozenStore }>;
  /** Aliases and templates (absent in snapshots written before they existed). */
  metadata?: MetadataImage;
}

/** A snapshot decoded and verified, ready to install. */
export interface RestoredCluster {
  seq: number;
  path: string;
  indices: IndexImage[];
  clusterSettings: Record<string, unknown>;
  metadata?: MetadataImage;
  /** uuid -> shard images by shard number. */
  shards: Map<string, LoadedStore[]>;
}

/** Figures of one snapshot, as logged. */
export interface SnapshotResult {
  seq: number;
  path: string;
  bytes: number;
  shards: number;
  docs: number;
  /** Writers held back while the state was frozen. */
  pauseMs: number;
  /** Longest synchronous stretch while encoding (steps of a string chunk or a column). */
  maxBlockMs: number;
  ms: number;
  purgedBelow?: number;
}

const round = (ms: number) => Math.round(ms * 10) / 10;

/**
 * Takes, keeps, loads and (optionally) purges behind snapshots of the document projection.
 * ClusterState owns one; `capture` is its synchronous image at a quiet instant.
 */
export class Snapshotter {
  private timer?: NodeJS.Timeout;
  private running?: Promise<SnapshotResult | undefined>;
  private opsAtLast = 0;
  private seqAtLast = -1;

  constructor(
    private readonly ctx: NodeContext,
    private readonly docLog: DocumentLog,
    private readonly capture: () => ClusterImage,
  ) {}

  get dir(): string {
    return join(this.ctx.dataDir, 'snapshots');
  }
  get settings(): SnapshotSettings {
    return snapshotSettings(this.ctx.settings);
  }

  /**
   * Loads the newest snapshot that is intact, belongs to this stream and is not behind the log's
   * first message; a damaged one is skipped with a warning (older one, or a full replay).
   */
  async restore(info: StreamInfo): Promise<RestoredCluster | undefined> {
    if (!this.settings.enabled) return undefined;
    const { log } = this.ctx;
    for (const file of await listSnapshots(this.dir)) {
      if (file.seq + 1 < info.state.first_seq) {
        log.warn({ snapshot: file.path, seq: file.seq, firstSeq: info.state.first_seq }, 'snapshot is older than the start of the document log; not usable');
        break; // older ones are older still
      }
      try {
        const r = await this.load(file.path, info);
        if (r) return r;
      } catch (e) {
        log.warn({ snapshot: file.path, err: (e as Error).message }, 'snapshot unreadable; ignored');
      }
    }
    return undefined;
  }

  private async load(path: string, info: StreamInfo): Promise<RestoredCluster | undefined> {
    let out: RestoredCluster | undefined;
    for await (const s of readSnapshot(path)) {
      if (s.kind === 'header') {
        const h = s.header;
        const why = await this.mismatch(h, info);
        if (why) {
          this.ctx.log.warn({ snapshot: path, seq: h.seq, stream: h.stream, lastSeq: info.state.last_seq, why }, 'snapshot belongs to another document log; ignored');
          return undefined;
        }
        out = { seq: h.seq, path, indices: h.indices, clusterSettings: h.clusterSettings, metadata: h.metadata as MetadataImage | undefined, shards: new Map(h.indices.map((i) => [i.uuid, new Array<LoadedStore>(i.shards)])) };
        continue;
      }
      const slots = out!.shards.get(s.indexUuid);
      if (!slots || s.n >= slots.length || slots[s.n]) throw new Error(`unexpected shard [${s.indexUuid}][${s.n}]`);
      slots[s.n] = s.image;
    }
    if (!out) throw new Error('snapshot without a header');
    for (const [uuid, slots] of out.shards) {
      for (let n = 0; n < slots.length; n++) if (!slots[n]) throw new Error(`shard [${uuid}][${n}] missing`);
    }
    return out;
  }

  /** Why a snapshot header does not match this stream, or undefined when it does. */
  private async mismatch(h: SnapshotHeader, info: StreamInfo): Promise<string | undefined> {
    if (h.stream.name !== info.config.name) return `stream ${h.stream.name}`;
    if (h.seq > info.state.last_seq) return `S=${h.seq} is ahead of the log (last ${info.state.last_seq})`;
    if (h.seq === 0 || h.seq < info.state.first_seq) return undefined; // nothing to compare: empty, or purged up to S
    const at = await this.messageAt(h.seq);
    if (!at || !h.stream.at) return `message ${h.seq} is missing`;
    if (at.subject !== h.stream.at.subject || at.timestamp !== h.stream.at.timestamp) return `message ${h.seq} differs`;
    return undefined;
  }

  /** Subject and publish timestamp of ES_DATA message `seq` (null when gone). */
  private async messageAt(seq: number): Promise<{ subject: string; timestamp: string } | null> {
    try {
      const m = await (await jetstreamManager(this.ctx.nc)).streams.getMessage(DATA_STREAM, { seq });
      return m ? { subject: m.subject, timestamp: m.timestamp } : null;
    } catch {
      return null;
    }
  }

  /** After start-up: the restored snapshot (if any) is the baseline; the replayed tail counts as new ops. */
  started(restoredSeq: number | undefined, opsBeforeTail: number): void {
    this.opsAtLast = opsBeforeTail;
    this.seqAtLast = restoredSeq ?? -1;
    this.schedule();
  }

  private schedule(): void {
    const { enabled, intervalMs } = this.settings;
    if (!enabled || !(intervalMs > 0)) return;
    this.timer = setTimeout(() => {
      const { minOps } = this.settings;
      const due = this.docLog.appliedOps - this.opsAtLast >= minOps;
      void (due ? this.take('interval') : Promise.resolve()).finally(() => {
        if (this.timer) this.schedule();
      });
    }, intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and takes a last snapshot if anything changed since the previous one. */
  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    if (this.settings.enabled && this.docLog.appliedOps > this.opsAtLast) await this.take('shutdown');
  }

  /** Takes a snapshot now (one at a time: a second call joins the running one). Never throws. */
  take(reason: 'interval' | 'shutdown' | 'request'): Promise<SnapshotResult | undefined> {
    this.running ??= this.write(reason)
      .catch((e: Error) => {
        this.ctx.log.warn({ err: e.message, reason }, 'snapshot failed; the document log is intact');
        return undefined;
      })
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async write(reason: string): Promise<SnapshotResult | undefined> {
    const { log } = this.ctx;
    if (this.docLog.diverged) {
      log.warn('a document log append failed since start-up: memory may differ from the log, no snapshot until restart');
      return undefined;
    }
    const t0 = performance.now();
    // The consistent instant: nothing in flight, so memory == log[1..seq]. Deep-copy the metadata
    // now; shard data is bounded by the frozen refs and encoded afterwards.
    const { seq, ops, image } = await this.docLog.quiet(() => {
      const img = this.capture();
      return { seq: this.docLog.lastSeq, ops: this.docLog.appliedOps, image: { ...img, indices: structuredClone(img.indices), clusterSettings: structuredClone(img.clusterSettings) } };
    });
    const pauseMs = performance.now() - t0;
    if (seq === this.seqAtLast) {
      this.opsAtLast = ops;
      return undefined; // nothing reached the log since the last snapshot
    }
    const at = seq > 0 ? await this.messageAt(seq) : null;
    if (seq > 0 && !at) throw new Error(`cannot read ${DATA_STREAM} message ${seq} to fingerprint the snapshot`);
    const header: SnapshotHeader = {
      seq,
      stream: { name: DATA_STREAM, ...(at && { at }) },
      node: this.ctx.node.id,
      takenAt: new Date().toISOString(),
      indices: image.indices,
      clusterSettings: image.clusterSettings,
      ...(image.metadata ? { metadata: image.metadata } : {}),
    };
    const w = await SnapshotWriter.create(this.dir, header);
    let maxBlockMs = 0;
    let docs = 0;
    try {
      for (const s of image.shards) {
        // Encode in steps; give the event loop a turn whenever ~10 ms have passed.
        const steps = w.encodeShardSteps(s.uuid, s.n, s.store, s.frozen);
        let t = performance.now();
        let r = steps.next();
        while (!r.done) {
          const now = performance.now();
          if (now - t >= 10) {
            maxBlockMs = Math.max(maxBlockMs, now - t);
            await yieldToLoop();
            t = performance.now();
          }
          r = steps.next();
        }
        maxBlockMs = Math.max(maxBlockMs, performance.now() - t);
        await w.append(r.value);
        docs += s.frozen.maxDoc;
      }
    } catch (e) {
      await w.abort();
      throw e;
    }
    const { path, bytes } = await w.commit();
    this.opsAtLast = ops;
    this.seqAtLast = seq;
    const kept = await pruneSnapshots(this.dir, KEEP_SNAPSHOTS);
    const result: SnapshotResult = { seq, path, bytes, shards: image.shards.length, docs, pauseMs: round(pauseMs), maxBlockMs: round(maxBlockMs), ms: 0 };
    if (this.settings.purgeLog) result.purgedBelow = await this.purge(kept.map((k) => k.seq));
    result.ms = Math.round(performance.now() - t0);
    log.info({ ...result, reason }, 'snapshot written');
    return result;
  }

  /**
   * Purges ES_DATA below the oldest kept snapshot's S, so every kept snapshot keeps its tail (and
   * message S itself, whose fingerprint identifies the log).
   */
  private async purge(keptSeqs: number[]): Promise<number | undefined> {
    if (!keptSeqs.length) return undefined;
    const below = Math.min(...keptSeqs);
    const jsm = await jetstreamManager(this.ctx.nc);
    await jsm.streams.purge(DATA_STREAM, { seq: below });
    return below;
  }
}
