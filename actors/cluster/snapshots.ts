import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { jetstreamManager, type StreamInfo } from '@nats-io/jetstream';
import { DATA_STREAM, subjects } from '../../streams';
import { Kvm } from '@nats-io/kv';
import { CLUSTER_BUCKET } from './identity';
import type { Settings } from '../config';
import type { NodeContext } from '../nodeContext';
import type { FrozenStore, LoadedStore, ShardStore } from '../shard/engine/store/shardStore';
import { SnapshotWriter, listSnapshots, pruneSnapshots, readSnapshot, type IndexImage, type SnapshotHeader } from '../shard/snapshot';
import type { ShardAllocation } from './allocation';
import type { MetadataImage } from './clusterMetadata';

/**
 * Snapshot settings (node settings, YAML or `ES_SETTING_*`; also dynamic via PUT _cluster/settings):
 *
 * - `snapshot.enabled` (true): take snapshots and start from them; false = always replay the whole log.
 * - `snapshot.interval_ms` (300000): how often to check; a snapshot is taken when at least
 *   `snapshot.min_ops` (10000) ops were applied since the last one. A clean shutdown always takes
 *   one when anything changed.
 * - `snapshot.purge_log` (false): after a snapshot is durable, purge the metadata facts of ES_DATA
 *   before the oldest snapshot kept (2 are kept), so every kept snapshot still has its tail. (Shard
 *   messages are trimmed behind each copy's commits, whatever this says.)
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

/**
 * What the cluster hands over at one instant (cheap: O(tombstones) per copy). Every copy and the
 * metadata are each exactly the log up to their own point: applying is synchronous, so any
 * instant between two turns of the event loop is consistent, with no write to hold back.
 */
export interface ClusterImage {
  metaSeq: number;
  /**
   * The last metadata fact's sequence: the message that fingerprints the snapshot (shard messages
   * are trimmed behind commits, metadata facts are not, so it is still there at the next start).
   */
  lastMetaMessage?: number;
  /** The last metadata fact applied (facts name the one they were decided after). */
  metaAccepted: number;
  indices: Array<IndexImage & { allocation?: ShardAllocation[] }>;
  clusterSettings: Record<string, unknown>;
  copies: Array<{ uuid: string; n: number; applied: number; store: ShardStore; frozen: FrozenStore }>;
  /** Aliases and templates. */
  metadata?: MetadataImage;
}

/** A snapshot decoded and verified, ready to install. */
export interface RestoredCluster {
  seq: number;
  path: string;
  metaSeq: number;
  metaAccepted: number;
  indices: Array<IndexImage & { allocation?: ShardAllocation[] }>;
  clusterSettings: Record<string, unknown>;
  copies: Array<{ uuid: string; n: number; applied: number; image: LoadedStore }>;
  metadata?: MetadataImage;
}

/** The lowest log point a snapshot needs the log after (its metadata or one of its copies). */
export const lowestPoint = (h: { seq: number; metaSeq?: number; copies?: Array<{ applied: number }> }) =>
  Math.min(h.metaSeq ?? h.seq, ...(h.copies ?? []).map((c) => c.applied));

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
    private readonly counters: { appliedOps: number },
    private readonly capture: () => ClusterImage,
  ) {}

  /** Set by the system: purging the log is refused while other nodes share it (they may need it). */
  mayPurge: () => boolean = () => true;

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
    let expected = new Map<string, number>();
    for await (const s of readSnapshot(path)) {
      if (s.kind === 'header') {
        const h = s.header;
        const why = await this.mismatch(h, info);
        if (why) {
          this.ctx.log.warn({ snapshot: path, seq: h.seq, stream: h.stream, lastSeq: info.state.last_seq, why }, 'snapshot belongs to another document log; ignored');
          return undefined;
        }
        if (h.metaAccepted === undefined || !h.copies) {
          // Written by a version without per-copy points: the fold's refusal checks need them.
          this.ctx.log.warn({ snapshot: path, seq: h.seq }, 'snapshot from an older version; replaying the log instead');
          return undefined;
        }
        if (lowestPoint(h) + 1 < info.state.first_seq) {
          this.ctx.log.warn({ snapshot: path, seq: h.seq, firstSeq: info.state.first_seq }, 'snapshot is older than the start of the document log; not usable');
          return undefined;
        }
        expected = new Map(h.copies.map((c) => [`${c.uuid}/${c.n}`, c.applied]));
        out = { seq: h.seq, path, metaSeq: h.metaSeq ?? h.seq, metaAccepted: h.metaAccepted, indices: h.indices as RestoredCluster['indices'], clusterSettings: h.clusterSettings, metadata: h.metadata as MetadataImage | undefined, copies: [] };
        continue;
      }
      const key = `${s.indexUuid}/${s.n}`;
      const applied = expected.get(key);
      if (applied === undefined) throw new Error(`unexpected shard [${s.indexUuid}][${s.n}]`);
      expected.delete(key);
      out!.copies.push({ uuid: s.indexUuid, n: s.n, applied, image: s.image });
    }
    if (!out) throw new Error('snapshot without a header');
    if (expected.size) throw new Error(`shard ${[...expected.keys()][0]} missing`);
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
      const due = this.counters.appliedOps - this.opsAtLast >= minOps;
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
    if (this.settings.enabled && this.counters.appliedOps > this.opsAtLast) await this.take('shutdown');
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
    const t0 = performance.now();
    // The consistent instant: metadata is copied now, copies are bounded by their frozen refs and
    // encoded afterwards.
    const image = this.capture();
    const ops = this.counters.appliedOps;
    const seq = image.lastMetaMessage ?? Math.max(image.metaSeq, ...image.copies.map((c) => c.applied));
    const pauseMs = performance.now() - t0;
    if (seq === this.seqAtLast) {
      this.opsAtLast = ops;
      return undefined; // nothing reached the log since the last snapshot
    }
    const at = seq > 0 ? await this.messageAt(seq) : null;
    if (seq > 0 && !at) throw new Error(`cannot read ${DATA_STREAM} message ${seq} to fingerprint the snapshot`);
    const header: SnapshotHeader = {
      seq,
      metaSeq: image.metaSeq,
      metaAccepted: image.metaAccepted,
      copies: image.copies.map((c) => ({ uuid: c.uuid, n: c.n, applied: c.applied })),
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
      for (const s of image.copies) {
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
    const result: SnapshotResult = { seq, path, bytes, shards: image.copies.length, docs, pauseMs: round(pauseMs), maxBlockMs: round(maxBlockMs), ms: 0 };
    if (this.settings.purgeLog) {
      if (this.mayPurge()) result.purgedBelow = await this.purge(kept.map((k) => k.path));
      else log.warn('snapshot.purge_log is ignored while other nodes share the document log (they rebuild copies from it)');
    }
    result.ms = Math.round(performance.now() - t0);
    log.info({ ...result, reason }, 'snapshot written');
    return result;
  }

  /**
   * Purges ES_DATA below the lowest point of the kept snapshots, so every kept snapshot keeps its
   * tail (and message S itself, whose fingerprint identifies the log).
   */
  private async purge(keptPaths: string[]): Promise<number | undefined> {
    if (!keptPaths.length) return undefined;
    const points: number[] = [];
    for (const path of keptPaths) {
      for await (const s of readSnapshot(path)) {
        if (s.kind === 'header') points.push(Math.min(lowestPoint(s.header) + 1, s.header.seq));
        break;
      }
    }
    const below = Math.min(...points);
    // only metadata facts: shard messages are trimmed behind each copy's commits (ClusterState.trim)
    const kv = await new Kvm(this.ctx.nc).open(CLUSTER_BUCKET);
    await kv.put('trim.meta', String(below - 1));
    const jsm = await jetstreamManager(this.ctx.nc);
    await jsm.streams.purge(DATA_STREAM, { filter: subjects.dataMeta, seq: below });
    return below;
  }
}
