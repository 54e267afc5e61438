import { EsError } from '../../../wire/esErrors';
import { crashPoint } from '../../../wire/crashPoint';
import type { DocWrite, LoggedOp, SearcherRef, ShardQueryRequest, ShardQueryResult, WriteOutcome } from '../types';
import type { ParsedDoc } from '../index/docParser';
import type { MappingView } from '../index/fieldDef';
import type { IndexMapping } from '../index/mapping';
import type { ShardSettings } from '../index/storeView';
import { IndexBuffer, parseSource, type BufferOptions, type Tombstone } from '../index/indexBuffer';
import type { QueryOptions } from '../query/search';
import { mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Leaf } from './leaf';
import { SegmentLeaf } from './segmentLeaf';
import { Deletions } from './deletions';
import { deleteUnreferenced, readCommit, writeCommit, writeDurable, type CommitPoint, type CommittedSegment } from './commitPoint';
import { SegmentCache, openSegment, segmentFile, writeSegmentAsync, type DiskSegment, type SegmentMeta } from '../segments';
import { Bitset } from '../base/bits';
import { countLeaves, queryLeaves, type LeafSearcher } from './shardSearch';

export type { ShardSettings } from '../index/storeView';
export type { Tombstone, FrozenStore, LoadedStore } from '../index/indexBuffer';

/** Constructor options of a ShardStore. */
export interface ShardStoreOptions extends BufferOptions {
  /** The copy's directory: segments are written there and it opens from its commit. Absent: segments stay in memory (tests, tools). */
  dir?: string;
  /** Reads of every segment of the node go through one bounded cache. */
  cache?: SegmentCache;
  /** Docs deleted more recently than this (ms) stay in merged segments (contexts opened elsewhere may still need them). Default 60 s. */
  retentionMs?: number;
  /** Identity of the document log the commits follow (its creation time): a commit of another log is discarded. */
  logId?: string;
}

export type { MergeCandidate } from '../segments/mergePolicy';
import type { MergeCandidate } from '../segments/mergePolicy';

/** What a merge writes: the run's segments with the docs each keeps, and the tombstones above the floor. */
export interface MergeRequest {
  dir: string;
  /** The merged segment's name. */
  name: string;
  inputs: Array<{ path: string; leaf: DiskSegment; keep: Bitset }>;
  /** Tombstones (delete ops) at or below this seqNo are dropped. */
  tombstoneFloor: number;
}

/** Writes a merged segment (a worker thread, or in slices on the main thread). */
export type MergeRunner = (r: MergeRequest) => Promise<SegmentMeta>;

/** The default runner: the writer in slices on the main thread. */
export const mergeInProcess: MergeRunner = (r) =>
  writeSegmentAsync(r.dir, r.name, {
    leaves: r.inputs.map((i) => ({ leaf: i.leaf, keep: (d: number) => i.keep.has(d) })),
    tombstones: (t) => t.seqNo > r.tombstoneFloor,
  });

/** A searcher that open contexts pin: the segments it reads stay until the last one lets go. */
interface Pin {
  seqNo: number;
  contexts: Set<string>;
  leaves: Leaf[];
}

/** A real-time get result. */
export interface GetResult {
  source: string;
  version: number;
  seqNo: number;
  primaryTerm: 1;
  routing?: string;
}

const conflict = (reason: string): WriteOutcome => ({ ok: false, status: 409, error: { type: 'version_conflict_engine_exception', reason } });

/** A write refused by the mapping: ES's error as a per-item outcome. */
function failure(e: EsError): WriteOutcome {
  const cause = e.extra.causedBy;
  return {
    ok: false, status: e.status,
    error: { type: e.type, reason: e.message, ...(cause ? { meta: { caused_by: { type: cause.type, reason: cause.message } } } : {}) },
  };
}

/** What a write sees of its id: the store's state, or what an earlier write of the same batch left. */
interface IdState {
  live: boolean;
  version: number | undefined;
  seqNo: number | undefined;
}

/** A validated, sequenced batch (see ShardStore.prepare). */
export interface PreparedBatch {
  /** One per write, in order; failed writes carry their error and take no seqNo. */
  outcomes: WriteOutcome[];
  /** The ops to append to the log, in seqNo order. */
  ops: LoggedOp[];
  /** Parsed fields of each op (undefined for deletes): commit indexes them without parsing again. */
  parsed: Array<ParsedDoc | undefined>;
  /** The store's seqNo the batch was prepared on; it commits only on that state. */
  afterSeqNo: number;
}

/** Where a doc of the shard is: its segment and its doc there. */
interface Located {
  leaf: Leaf;
  doc: number;
}

/**
 * One shard's documents (Lucene's IndexWriter + its readers): writes go to the in-memory buffer
 * (index/indexBuffer.ts), which is frozen and becomes a segment when it is flushed; searches run
 * over every segment a searcher spans (shardSearch.ts). Each doc is identified across segments by
 * the seqNo of the op that created it (its "doc id" in `_doc` order), and keeps the seqNo of the op
 * that deleted it, so a searcher `{seqNo}` sees exactly the docs live at that point however the
 * segments are laid out: PITs and scrolls pin one in O(1), and later writes never change what they
 * see.
 */
export class ShardStore {
  readonly index: string;
  readonly shardId: number;
  readonly mapping: IndexMapping;
  readonly settings: () => ShardSettings;
  /** Immutable segments, in seqNo order (the buffer comes after them). */
  private segments: Leaf[] = [];
  private buffer: IndexBuffer;
  private nextSegment = 0;
  private seqNo = -1;
  private refreshed: SearcherRef = Object.freeze({ maxDoc: 0, seqNo: -1 });
  /** Logged docs kept without indexed fields because their source no longer parsed (see applyLogged). */
  unparsed = 0;
  /** Document log sequence of the last message applied (the shard actor tells it). */
  private appliedStream = 0;
  /** Of each frozen buffer: the log sequence and the seqNo its ops reach. */
  private readonly frozenApplied = new Map<Leaf, { applied: number; seqNo: number }>();
  /** What the newest commit holds. */
  private committed = { gen: 0, applied: 0, seqNo: -1 };
  private readonly pins = new Map<number, Pin>();
  private readonly pinOf = new Map<string, number>();
  /** (time, seqNo) of recent refreshes: deletions newer than the retention period stay in merged segments. */
  private readonly refreshes: Array<[number, number]> = [];
  /** Largest deletion seqNo merges dropped: older searchers need pinned segments. */
  private droppedThrough = -1;
  /** Segments out of the shard that pins still read. */
  private readonly retired = new Set<SegmentLeaf>();
  /** Deletions already written per segment (only changed ones are written again). */
  private readonly delWritten = new Map<Leaf, { count: number; file: string }>();
  private commitQueue: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** Log sequence the segments held when this store opened its directory. */
  private bufferBase = 0;

  constructor(private readonly o: ShardStoreOptions) {
    this.index = o.index;
    this.shardId = o.shardId;
    this.mapping = o.mapping;
    this.settings = o.settings;
    this.buffer = this.newBuffer();
    if (o.dir) this.openDir(o.dir);
  }

  private newBuffer(): IndexBuffer {
    return new IndexBuffer({ ...this.o, name: `_${(this.nextSegment++).toString(36)}` });
  }

  /** Every segment, oldest first, the buffer last. */
  private leaves(): Leaf[] {
    return [...this.segments, this.buffer];
  }

  // ---- writes ----

  /**
   * Validates, sequences and applies one write at once (tests and tools); the shard write path
   * uses {@link prepare}, appends, then {@link commit}s.
   */
  write(w: DocWrite): WriteOutcome {
    const p = this.prepare([w]);
    this.commit(p);
    return p.outcomes[0];
  }

  /**
   * Validates and sequences a batch without changing anything: version checks, conflicts and the
   * parse of every source happen here, against the store plus the effects of the batch's earlier
   * writes (the same id twice). The result is what to append to the log (`ops`) and, once the
   * log has acknowledged it, what {@link commit} applies. A write that fails validation gets its
   * ES error in `outcomes` and takes no seqNo.
   *
   * @param view the mapping to parse with (the shard write path passes a recording view, so it can
   *   see and undo the dynamic fields a batch would add before they reach the log)
   */
  prepare(writes: DocWrite[], view: MappingView = this.mapping): PreparedBatch {
    const overlay = new Map<string, IdState>();
    const outcomes: WriteOutcome[] = [];
    const ops: LoggedOp[] = [];
    const parsed: Array<ParsedDoc | undefined> = [];
    let seqNo = this.seqNo;
    for (const w of writes) {
      const cur = overlay.get(w.id) ?? this.idState(w.id);
      const refused = this.refusal(w, cur);
      if (refused) {
        outcomes.push(refused);
        continue;
      }
      const version = w.versionType ? w.version! : (cur.version ?? 0) + 1;
      let doc: ParsedDoc | undefined;
      if (w.op !== 'delete') {
        try {
          doc = parseSource(w.source, w.id, view);
        } catch (e) {
          if (!(e instanceof EsError)) throw e;
          outcomes.push(failure(e));
          continue;
        }
      }
      seqNo++;
      // (built key by key in this order, as the log frames it: no spread objects per write)
      const logged: LoggedOp = { op: w.op === 'delete' ? 'delete' : 'index', id: w.id, seqNo, version };
      if (w.op !== 'delete') logged.source = w.source;
      if (w.routing !== undefined) logged.routing = w.routing;
      ops.push(logged);
      parsed.push(doc);
      const result = w.op === 'delete' ? (cur.live ? 'deleted' : 'not_found') : cur.live ? 'updated' : 'created';
      outcomes.push({ ok: true, result, version, seqNo, logged });
      overlay.set(w.id, { live: w.op !== 'delete', version, seqNo });
    }
    return { outcomes, ops, parsed, afterSeqNo: this.seqNo };
  }

  /**
   * Applies a prepared batch (after the log acknowledged it). All or nothing: a batch prepared on
   * another state of the store is refused before anything changes.
   */
  commit(p: PreparedBatch): void {
    if (p.afterSeqNo !== this.seqNo) {
      throw new Error(`batch prepared after seqNo ${p.afterSeqNo} cannot commit after ${this.seqNo} on [${this.index}][${this.shardId}]`);
    }
    p.ops.forEach((op, i) => this.applyOp(op, p.parsed[i]));
  }

  /**
   * Applies a sequenced op read from the log (replay, replicas). The op was validated when it was
   * written; if its source no longer parses against this mapping (a log written by an older
   * version), the document is still kept (id, source, version) without indexed fields: an
   * acknowledged write is never dropped.
   */
  applyLogged(op: LoggedOp): void {
    if (op.seqNo <= this.seqNo) throw new Error(`op seqNo ${op.seqNo} is not after ${this.seqNo} on [${this.index}][${this.shardId}]`);
    let doc: ParsedDoc | undefined;
    if (op.op === 'index') {
      try {
        doc = parseSource(op.source, op.id, this.mapping);
      } catch (e) {
        if (!(e instanceof EsError)) throw e;
        doc = [];
        this.unparsed++;
      }
    }
    this.applyOp(op, doc);
  }

  private applyOp(op: LoggedOp, doc: ParsedDoc | undefined): void {
    const live = this.liveDoc(op.id);
    if (live) live.leaf.markDeleted(live.doc, op.seqNo);
    if (op.op === 'index') this.buffer.add(op, doc!);
    else this.buffer.addTombstone(op.id, { version: op.version, seqNo: op.seqNo });
    this.seqNo = op.seqNo;
  }

  /** The newest segment that knows `id`, and what it knows. */
  private newest(id: string): { leaf: Leaf; doc?: number; live?: boolean; tomb?: Tombstone } | undefined {
    const e = this.buffer.entry(id);
    if (e) return { leaf: this.buffer, ...e };
    for (let i = this.segments.length - 1; i >= 0; i--) {
      const leaf = this.segments[i];
      const x = leaf.entry(id);
      if (x) return { leaf, ...x };
    }
    return undefined;
  }

  /** The live doc of `id`, if any. */
  private liveDoc(id: string): Located | undefined {
    const n = this.newest(id);
    return n && n.doc !== undefined && n.live ? { leaf: n.leaf, doc: n.doc } : undefined;
  }

  /** Whether `id` is live, and its version and seqNo (or the tombstone's version). */
  private idState(id: string): IdState {
    const n = this.newest(id);
    if (!n) return { live: false, version: undefined, seqNo: undefined };
    if (n.doc !== undefined && n.live) return { live: true, version: n.leaf.versionOf(n.doc), seqNo: n.leaf.seqNoOf(n.doc) };
    if (n.tomb && (n.doc === undefined || n.tomb.seqNo > n.leaf.seqNoOf(n.doc))) return { live: false, version: n.tomb.version, seqNo: undefined };
    return { live: false, version: n.doc !== undefined ? n.leaf.versionOf(n.doc) : undefined, seqNo: undefined };
  }

  /** The version-conflict outcome of a write, if it is refused (mirrors InternalEngine's checks). */
  private refusal(w: DocWrite, cur: IdState): WriteOutcome | undefined {
    if (w.op === 'create' && cur.live) return conflict(`[${w.id}]: version conflict, document already exists (current version [${cur.version}])`);
    if (w.versionType && cur.version !== undefined) {
      // VersionType.EXTERNAL / EXTERNAL_GTE: a deleted doc's tombstone still holds its version
      const gte = w.versionType === 'external_gte';
      if (gte ? cur.version > w.version! : cur.version >= w.version!) {
        return conflict(`[${w.id}]: version conflict, current version [${cur.version}] is ${gte ? 'higher than' : 'higher or equal to'} the one provided [${w.version}]`);
      }
    }
    if (w.ifSeqNo === undefined && w.ifPrimaryTerm === undefined) return undefined;
    const want = `required seqNo [${w.ifSeqNo ?? -2}], primary term [${w.ifPrimaryTerm ?? 0}]`;
    if (!cur.live) return conflict(`[${w.id}]: version conflict, ${want}. but no document was found`);
    if (cur.seqNo !== w.ifSeqNo || (w.ifPrimaryTerm ?? 1) !== 1) {
      return conflict(`[${w.id}]: version conflict, ${want}. current document has seqNo [${cur.seqNo}] and primary term [1]`);
    }
    return undefined;
  }

  // ---- segments ----

  /**
   * Freezes the buffer into a segment and starts a new buffer (nothing changes for searchers: the
   * docs stay where their doc ids say). Returns the frozen segment, or undefined when the buffer
   * is empty.
   */
  flush(): Leaf | undefined {
    if (this.buffer.isEmpty()) return undefined;
    const frozen = this.buffer;
    frozen.frozen = true;
    this.segments.push(frozen);
    this.frozenApplied.set(frozen, { applied: this.appliedStream, seqNo: this.seqNo });
    this.buffer = this.newBuffer();
    return frozen;
  }

  /** The shard actor applied document log message `seq` (its ops, if any, are in the store now). */
  markApplied(seq: number): void {
    if (seq > this.appliedStream) this.appliedStream = seq;
  }

  /** UTF-16 units of `_source` the active buffer holds (an estimate of its heap). */
  bufferChars(): number {
    return this.buffer.sourceChars;
  }

  /** Docs in the active buffer. */
  bufferDocs(): number {
    return this.buffer.maxDoc;
  }

  /**
   * Writes the buffer to a segment on disk (in slices: the event loop is never held long), puts
   * the segment in its place, and commits. Searches meanwhile read the frozen buffer. Without a
   * directory it only freezes the buffer.
   */
  flushAsync(): Promise<void> {
    // one flush at a time: commits then always name a contiguous prefix of the log
    const run = () => this.flushNow();
    const p = this.flushQueue.then(run, run);
    this.flushQueue = p.catch(() => undefined);
    return p;
  }
  private flushQueue: Promise<unknown> = Promise.resolve();
  /** A flush is writing (the shard actor does not start another one meanwhile). */
  flushing = false;
  /**
   * Segments being written (a flush's, a merge's) and not yet in the shard: a commit meanwhile must
   * not take their `.seg.tmp`, or the `.seg` renamed into place, for garbage.
   */
  private readonly writing = new Set<string>();

  private async flushNow(): Promise<void> {
    const frozen = this.flush() as IndexBuffer | undefined;
    const dir = this.o.dir;
    if (!dir) return;
    if (frozen) {
      const reached = this.frozenApplied.get(frozen)!;
      this.flushing = true;
      this.writing.add(frozen.name);
      try {
        const meta = await writeSegmentAsync(dir, frozen.name, { leaves: [{ leaf: frozen }] });
        await crashPoint('flush.published');
        if (this.closed) return;
        const leaf = new SegmentLeaf(openSegment(segmentFile(dir, meta.name), this.cache()), this.o);
        // deletions that reached the frozen buffer, in seqNo order, carry over
        const { docs, seqNos } = frozen.deletionsUpTo(Infinity);
        for (let i = 0; i < docs.length; i++) leaf.markDeleted(docs[i], seqNos[i]);
        this.replaceSegments([frozen], leaf);
        this.lastFlushed = reached;
      } finally {
        this.flushing = false;
        this.writing.delete(frozen.name);
      }
    }
    await this.commitAsync();
  }

  private cache(): SegmentCache {
    return (this.o.cache ??= new SegmentCache({ maxBytes: 64 << 20 }));
  }

  /** Replaces `old` (adjacent, in order) by `leaf` in the shard and in every pin that reads the frozen buffer it was. */
  private replaceSegments(old: Leaf[], leaf: SegmentLeaf): void {
    const at = this.segments.indexOf(old[0]);
    if (at < 0) throw new Error(`segment [${old[0].name}] is not in the shard`);
    this.segments.splice(at, old.length, leaf);
    leaf.refs++;
    for (const o of old) {
      this.frozenApplied.delete(o);
      if (o instanceof SegmentLeaf) {
        o.refs--;
        this.retired.add(o);
      }
    }
    if (old.length === 1 && old[0] instanceof IndexBuffer) {
      // a frozen buffer in a pin becomes its disk segment (same docs, same doc numbers)
      for (const pin of this.pins.values()) {
        const i = pin.leaves.indexOf(old[0]);
        if (i >= 0) {
          pin.leaves[i] = leaf;
          leaf.refs++;
        }
      }
    }
    this.disposeRetired();
  }

  /** Closes and deletes retired segments nothing reads any more. */
  private disposeRetired(): void {
    for (const r of [...this.retired]) {
      if (r.refs > 0) continue;
      this.retired.delete(r);
      this.delWritten.delete(r);
      r.data.close();
      this.o.cache?.evictSegment(r.data.cacheKey);
    }
  }

  // ---- merges ----

  /** Segments on disk as the merge policy sees them (seqNo order; frozen buffers end the list). */
  mergeCandidates(): MergeCandidate[] {
    const out: MergeCandidate[] = [];
    for (const l of this.segments) {
      if (!(l instanceof SegmentLeaf)) break;
      out.push({ name: l.name, sizeBytes: l.meta.sizeBytes, maxDoc: l.maxDoc, delCount: l.deletions.count, merging: l.merging });
    }
    return out;
  }

  /**
   * Merges a run of adjacent segments (names in order) into one: docs deleted at or below the
   * retention floor are dropped (pinned searchers keep the old segments), tombstones too; deletions
   * that arrive while it runs are carried over. `run` writes the segment (a worker, or in slices on
   * the main thread). Resolves false when the run is no longer in the shard.
   */
  merge(names: string[], run: MergeRunner = mergeInProcess): Promise<boolean> {
    const p = this.mergeNow(names, run);
    this.merges.add(p);
    p.then(() => this.merges.delete(p), () => this.merges.delete(p));
    return p;
  }
  /** Merges under way (closeWhenIdle waits for them). */
  private readonly merges = new Set<Promise<boolean>>();

  private async mergeNow(names: string[], run: MergeRunner): Promise<boolean> {
    const dir = this.o.dir;
    if (!dir || this.closed) return false;
    const at = this.segments.findIndex((l) => l.name === names[0]);
    const leaves = this.segments.slice(at, at + names.length);
    if (at < 0 || leaves.length !== names.length || leaves.some((l, i) => !(l instanceof SegmentLeaf) || l.name !== names[i] || l.merging)) return false;
    const segs = leaves as SegmentLeaf[];
    const floor = this.retainFloor();
    let dropped = -1;
    const inputs = segs.map((l) => {
      const gone = l.deletions.upTo(floor);
      const keep = Bitset.all(l.maxDoc);
      for (let i = 0; i < gone.docs.length; i++) {
        keep.clear(gone.docs[i]);
        if (gone.seqNos[i] > dropped) dropped = gone.seqNos[i];
      }
      return { path: segmentFile(dir, l.name), leaf: l.data, keep };
    });
    for (const l of segs) l.merging = true;
    const name = `_${(this.nextSegment++).toString(36)}`;
    let meta: SegmentMeta;
    this.writing.add(name);
    try {
      meta = await run({ dir, name, inputs, tombstoneFloor: floor });
    } catch (e) {
      this.writing.delete(name);
      throw e;
    } finally {
      for (const l of segs) l.merging = false;
    }
    await crashPoint('merge.published');
    if (this.closed || segs.some((l, i) => this.segments[at + i] !== l)) {
      this.writing.delete(name);
      return false;
    }
    let merged: SegmentLeaf;
    try {
      merged = new SegmentLeaf(openSegment(segmentFile(dir, meta.name), this.cache()), this.o);
    } finally {
      this.writing.delete(name); // in the shard below, before the next await
    }
    // deletions of kept docs (older ones above the floor, and any that arrived meanwhile), by seqNo
    const carried: Array<[number, number]> = [];
    segs.forEach((l) => {
      const all = l.deletions.entries();
      for (let i = 0; i < all.docs.length; i++) {
        if (all.seqNos[i] <= floor) continue; // dropped with its doc
        const doc = merged.localDoc(l.seqNoOf(all.docs[i]));
        if (doc >= 0) carried.push([all.seqNos[i], doc]);
      }
    });
    carried.sort((a, b) => a[0] - b[0]);
    for (const [seq, doc] of carried) merged.markDeleted(doc, seq);
    if (dropped > this.droppedThrough) this.droppedThrough = dropped;
    this.mergeStats.merges++;
    this.mergeStats.docs += merged.maxDoc;
    this.mergeStats.bytes += meta.sizeBytes;
    this.replaceSegments(segs, merged);
    await this.commitAsync();
    return true;
  }

  /** Merges done by this store and what they wrote. */
  readonly mergeStats = { merges: 0, docs: 0, bytes: 0 };

  // ---- commits ----

  /** Writes a commit point of the segments on disk and their deletions (queued: one at a time). */
  commitAsync(): Promise<void> {
    const run = async () => {
      if (this.o.dir && !this.closed) this.writeCommit(this.o.dir);
    };
    const p = this.commitQueue.then(run, run);
    this.commitQueue = p.catch(() => undefined);
    return p;
  }

  private committedSegment(leaf: SegmentLeaf, dir: string, gen: number): CommittedSegment {
    const count = leaf.deletions.count;
    let w = this.delWritten.get(leaf);
    if (count > 0 && (!w || w.count !== count)) {
      const file = `${leaf.name}_${gen}.del`;
      writeDurable(dir, file, leaf.deletions.encode());
      w = { count, file };
      this.delWritten.set(leaf, w);
    }
    return { meta: leaf.meta, ...(w && count > 0 ? { del: w.file } : {}) };
  }

  private writeCommit(dir: string): void {
    const gen = this.committed.gen + 1;
    // the segments on disk up to the first frozen buffer not yet written (the log holds the rest)
    const onDisk: SegmentLeaf[] = [];
    for (const l of this.segments) {
      if (!(l instanceof SegmentLeaf)) break;
      onDisk.push(l);
    }
    const pending = this.segments[onDisk.length] ?? (this.buffer.isEmpty() ? undefined : this.buffer);
    const { applied, seqNo } = pending ? this.lastFlushed : { applied: this.appliedStream, seqNo: this.seqNo };
    const pins = [...this.pins.values()]
      .filter((p) => p.leaves.every((l) => l instanceof SegmentLeaf || l.maxDoc === 0))
      .map((p) => ({
        seqNo: p.seqNo,
        contexts: [...p.contexts],
        segments: p.leaves.filter((l): l is SegmentLeaf => l instanceof SegmentLeaf).map((l) => this.committedSegment(l, dir, gen)),
      }));
    const c: CommitPoint = {
      gen,
      segments: onDisk.map((l) => this.committedSegment(l, dir, gen)),
      seqNo,
      applied,
      nextSegment: this.nextSegment,
      pins,
      droppedThrough: this.droppedThrough,
      time: Date.now(),
      ...(this.o.logId ? { logId: this.o.logId } : {}),
    };
    writeCommit(dir, c);
    this.lastCommit = c;
    this.committed = { gen, applied, seqNo };
    this.committedNames = onDisk.map((l) => l.name);
    const inUse = new Set<string>();
    for (const l of [...this.segments, ...this.retired]) if (l instanceof SegmentLeaf) inUse.add(`${l.name}.seg`);
    for (const w of this.delWritten.values()) inUse.add(w.file);
    for (const n of this.writing) inUse.add(`${n}.seg`).add(`${n}.seg.tmp`);
    deleteUnreferenced(dir, inUse);
  }

  /** The log sequence and seqNo the last buffer written to disk reached (flushes run one at a time, in order). */
  private lastFlushed = { applied: 0, seqNo: -1 };

  /** Segments the newest commit names. */
  private committedNames: string[] = [];
  private lastCommit?: CommitPoint;

  /**
   * Where the directory's files went when its commit belonged to another document log (opening
   * moved them aside and started empty); the node says so loudly.
   */
  setAside?: string;

  /** The newest commit point (peer recovery sends its files), undefined before the first. */
  commitSnapshot(): CommitPoint | undefined {
    return this.lastCommit ? structuredClone(this.lastCommit) : undefined;
  }

  /** What the newest commit holds: the log sequence and seqNo its segments reach. */
  committedPoint(): { gen: number; applied: number; seqNo: number } {
    return { ...this.committed };
  }

  /** Opens the copy's directory: segments and deletions of its newest commit, pins; garbage removed. */
  private openDir(dir: string): void {
    mkdirSync(dir, { recursive: true });
    let c = readCommit(dir);
    if (c && this.o.logId && c.logId && c.logId !== this.o.logId) {
      // written while following another document log (the stream was re-created): not this log's
      // shard. Its files are the only copy of what that log held, so they are set aside, never deleted.
      this.setAside = `${dir}.stale-${Date.now()}`;
      renameSync(dir, this.setAside);
      mkdirSync(dir, { recursive: true });
      c = undefined;
    }
    const opened = new Map<string, SegmentLeaf>();
    const open = (cs: CommittedSegment): SegmentLeaf => {
      let leaf = opened.get(cs.meta.name);
      if (leaf) return leaf;
      const data = openSegment(segmentFile(dir, cs.meta.name), this.cache());
      const dels = cs.del ? Deletions.decode(readFileSync(join(dir, cs.del)), data.maxDoc) : new Deletions(data.maxDoc);
      leaf = new SegmentLeaf(data, this.o, dels);
      if (cs.del) this.delWritten.set(leaf, { count: dels.count, file: cs.del });
      opened.set(cs.meta.name, leaf);
      return leaf;
    };
    if (c) {
      for (const cs of c.segments) {
        const leaf = open(cs);
        leaf.refs++;
        this.segments.push(leaf);
      }
      for (const p of c.pins) {
        const leaves = p.segments.map(open);
        for (const l of leaves) l.refs++;
        this.pins.set(p.seqNo, { seqNo: p.seqNo, contexts: new Set(p.contexts), leaves });
        for (const ctx of p.contexts) this.pinOf.set(ctx, p.seqNo);
      }
      for (const leaf of opened.values()) if (!this.segments.includes(leaf)) this.retired.add(leaf);
      this.seqNo = c.seqNo;
      this.nextSegment = c.nextSegment;
      this.droppedThrough = c.droppedThrough ?? -1;
      this.committed = { gen: c.gen, applied: c.applied, seqNo: c.seqNo };
      this.committedNames = c.segments.map((x) => x.meta.name);
      this.lastCommit = c;
      this.appliedStream = c.applied;
      this.lastFlushed = { applied: c.applied, seqNo: c.seqNo };
      this.bufferBase = c.applied;
      this.buffer = this.newBuffer(); // after the committed segment names
    }
    const inUse = new Set<string>();
    for (const l of opened.values()) inUse.add(`${l.name}.seg`);
    for (const w of this.delWritten.values()) inUse.add(w.file);
    deleteUnreferenced(dir, inUse);
    this.refresh();
  }

  /** Log sequence the segments held when this store opened its directory (0 without one). */
  openedAt(): number {
    return this.bufferBase;
  }

  /** Closes the segment files (the store is not used after). */
  /**
   * Closes once the flush and merges under way have finished with the directory (a store about to
   * be replaced on the same directory: a peer recovery empties it, a rebuild wipes it; a flush or a
   * merge still writing there would rename its file in after, or commit segments that are gone).
   * Nothing new starts meanwhile; what finishes is not committed.
   */
  async closeWhenIdle(): Promise<void> {
    this.closed = true;
    await this.flushQueue;
    await Promise.allSettled([...this.merges]);
    await this.commitQueue;
    this.close();
  }

  close(): void {
    this.closed = true;
    for (const l of [...this.segments, ...this.retired]) if (l instanceof SegmentLeaf) l.data.close();
  }

  // ---- pins ----

  /**
   * An open context reads searcher `seqNo`: the segments it spans stay (even once merged away)
   * until every context pinning them is released. False when this copy can no longer serve that
   * searcher (a merge already dropped docs it sees).
   */
  pin(context: string, seqNo: number): boolean {
    if (this.pinOf.get(context) === seqNo) return true;
    if (this.pinOf.has(context)) this.unpin(context);
    let p = this.pins.get(seqNo);
    if (!p) {
      if (seqNo < this.droppedThrough) return false;
      p = { seqNo, contexts: new Set(), leaves: this.leaves().filter((l) => l.minSeqNo <= seqNo) };
      for (const l of p.leaves) if (l instanceof SegmentLeaf) l.refs++;
      this.pins.set(seqNo, p);
    }
    p.contexts.add(context);
    this.pinOf.set(context, seqNo);
    return true;
  }

  /** The context no longer reads its searcher. */
  unpin(context: string): void {
    const seqNo = this.pinOf.get(context);
    if (seqNo === undefined) return;
    this.pinOf.delete(context);
    const p = this.pins.get(seqNo);
    if (!p) return;
    p.contexts.delete(context);
    if (p.contexts.size > 0) return;
    this.pins.delete(seqNo);
    for (const l of p.leaves) if (l instanceof SegmentLeaf) l.refs--;
    this.disposeRetired();
  }

  /**
   * The segments of the copy as `_cat/segments` shows them (the buffer too, as an uncommitted
   * in-memory segment, like Lucene's flushed-but-uncommitted ones): docs live and deleted for the
   * last refresh, bytes on disk, heap bytes.
   */
  segmentList(): Array<{ name: string; generation: number; docs: number; deleted: number; sizeBytes: number; memoryBytes: number; committed: boolean; searchable: boolean }> {
    const s = this.refreshed;
    const committed = new Set(this.committedNames);
    return this.leaves()
      .filter((l) => l.maxDoc > 0)
      .map((l) => {
        const max = l.maxDocAt(s.seqNo);
        const deleted = l.deletedCount({ maxDoc: max, seqNo: s.seqNo });
        const disk = l instanceof SegmentLeaf;
        return {
          name: l.name,
          generation: parseInt(l.name.slice(1), 36),
          docs: max - deleted,
          deleted,
          sizeBytes: disk ? l.meta.sizeBytes : 0,
          memoryBytes: disk ? l.data.residentBytes : (l as IndexBuffer).sourceChars * 2 * 3,
          committed: committed.has(l.name),
          searchable: max > 0,
        };
      });
  }

  /** Totals for `_stats` segments: live segments, their bytes, heap, the buffer, and what pins hold back. */
  segmentStats(): { count: number; sizeBytes: number; memoryBytes: number; bufferBytes: number; pinnedCount: number; pinnedBytes: number } {
    let count = 0, sizeBytes = 0, memoryBytes = 0;
    for (const l of this.segments) {
      if (!(l instanceof SegmentLeaf)) continue;
      count++;
      sizeBytes += l.meta.sizeBytes;
      memoryBytes += l.data.residentBytes;
    }
    let pinnedCount = 0, pinnedBytes = 0;
    for (const r of this.retired) {
      pinnedCount++;
      pinnedBytes += r.meta.sizeBytes;
    }
    const bufferBytes = this.leaves().filter((l) => l instanceof IndexBuffer).reduce((n, l) => n + (l as IndexBuffer).sourceChars * 2 * 3, 0);
    return { count, sizeBytes, memoryBytes, bufferBytes, pinnedCount, pinnedBytes };
  }

  /** Contexts pinning searchers, and the segments (names, bytes, still live or merged away) each pins. */
  pinned(): Array<{ seqNo: number; contexts: string[]; segments: Array<{ name: string; sizeBytes: number; live: boolean }> }> {
    return [...this.pins.values()].map((p) => ({
      seqNo: p.seqNo,
      contexts: [...p.contexts],
      segments: p.leaves
        .filter((l): l is SegmentLeaf => l instanceof SegmentLeaf)
        .map((l) => ({ name: l.name, sizeBytes: l.meta.sizeBytes, live: this.segments.includes(l) })),
    }));
  }

  /** The buffer new docs go to (tests and tools read a one-segment store through it). */
  activeBuffer(): IndexBuffer {
    return this.buffer;
  }

  /** Segment names and sizes (tests, stats). */
  segmentNames(): string[] {
    return this.segments.map((s) => s.name);
  }

  // ---- reads ----

  /** Real-time get of the latest live version. */
  get(id: string): GetResult | undefined {
    const d = this.liveDoc(id);
    if (!d) return undefined;
    const routing = d.leaf.routingOf(d.doc);
    return { source: d.leaf.source(d.doc), version: d.leaf.versionOf(d.doc), seqNo: d.leaf.seqNoOf(d.doc), primaryTerm: 1, ...(routing !== undefined ? { routing } : {}) };
  }

  /** Makes everything applied so far visible to new searchers. */
  refresh(): void {
    let maxDoc = 0;
    for (const leaf of this.leaves()) maxDoc += leaf.maxDocAt(this.seqNo);
    this.refreshed = Object.freeze({ maxDoc, seqNo: this.seqNo });
    const now = Date.now();
    const last = this.refreshes[this.refreshes.length - 1];
    if (!last || last[1] !== this.seqNo) this.refreshes.push([now, this.seqNo]);
    const keepMs = this.o.retentionMs ?? 60_000;
    while (this.refreshes.length > 2 && now - this.refreshes[1][0] >= keepMs) this.refreshes.shift();
  }

  /**
   * Deletions at or below this seqNo may be dropped by a merge: the searcher of the newest refresh
   * at least the retention period old (a context opened on another copy pins its segments here
   * within that time; the pinned segments then keep what it reads).
   */
  retainFloor(now = Date.now()): number {
    const keepMs = this.o.retentionMs ?? 60_000;
    if (keepMs <= 0) return this.refreshed.seqNo;
    let floor = -1;
    for (const [t, seq] of this.refreshes) if (now - t >= keepMs) floor = seq;
    return floor;
  }

  /** The view of the last refresh, O(1); hold it as long as needed (PIT, scroll). */
  acquireSearcher(): SearcherRef {
    return this.refreshed;
  }

  /** Whether writes were applied since the last refresh. */
  pendingRefresh(): boolean {
    return this.refreshed.seqNo !== this.seqNo;
  }

  /** Highest seqNo applied (-1 when none). */
  maxSeqNo(): number {
    return this.seqNo;
  }

  /**
   * The segments a searcher spans, each bounded to the docs it sees: the ones an open context
   * pinned for it, else the shard's current ones (which hold every doc it sees unless a merge
   * dropped docs deleted after it). Never empty: request errors are thrown on an empty shard too.
   */
  leavesFor(s: SearcherRef): LeafSearcher[] {
    const S = s.seqNo;
    const pin = this.pins.get(S);
    if (!pin && S < this.droppedThrough) {
      throw new EsError('search_context_missing_exception', 404, `No search context found for the searcher at seqNo [${S}] of [${this.index}][${this.shardId}]: its segments were merged away`);
    }
    const out: LeafSearcher[] = [];
    for (const leaf of pin ? pin.leaves : this.leaves()) {
      if (leaf !== this.buffer && !(leaf.minSeqNo <= S)) continue;
      out.push({ leaf, s: { maxDoc: leaf.maxDocAt(S), seqNo: S } });
    }
    if (!out.length) out.push({ leaf: this.buffer, s: { maxDoc: 0, seqNo: S } });
    return out;
  }

  /** Executes the query phase of a search on a searcher. Hits' `doc` are shard doc ids. */
  query(s: SearcherRef, req: ShardQueryRequest, opts?: QueryOptions): ShardQueryResult {
    return queryLeaves(this.leavesFor(s), req, opts, s.seqNo);
  }

  /** Number of visible docs matching `query` (match_all when absent). */
  count(s: SearcherRef, query?: unknown): number {
    return countLeaves(this.leavesFor(s), query);
  }

  /**
   * Reads of the docs a searcher returned (sources, versions, routings for the fetch phase and hit
   * metadata): from the segments it reads (an open context's pinned ones), not only the live ones.
   */
  docsOf(s: SearcherRef | undefined): SearcherDocs {
    const leaves = s ? this.pins.get(s.seqNo)?.leaves : undefined;
    if (!leaves) return this;
    const pinned = new ShardStorePinned(this, leaves);
    return pinned;
  }

  /** The segment and doc of a shard doc id (a seqNo), if the shard still holds it. */
  locate(docId: number, within: Leaf[] = this.leaves()): Located | undefined {
    const leaves = within;
    for (let i = leaves.length - 1; i >= 0; i--) {
      const leaf = leaves[i];
      if (!(leaf.minSeqNo <= docId)) continue;
      const doc = leaf.localDoc(docId);
      return doc < 0 ? undefined : { leaf, doc };
    }
    return undefined;
  }

  private at(docId: number): Located {
    const l = this.locate(docId);
    if (!l) throw new Error(`[${this.index}][${this.shardId}] has no doc [${docId}]`);
    return l;
  }

  /** Sources of several docs as their segments hold them (one read per run of adjacent docs on disk). */
  sourceTexts(docIds: ArrayLike<number>): Array<string | Uint8Array> {
    return readSourceTexts(Array.from(docIds, (d) => this.at(d)));
  }

  /** Raw `_source` JSON text of a doc, exactly as indexed. */
  source(docId: number): string {
    const l = this.at(docId);
    return l.leaf.source(l.doc);
  }

  /** `_id` of a doc. */
  id(docId: number): string {
    const l = this.at(docId);
    return l.leaf.idOf(l.doc);
  }

  /** Custom routing a doc was indexed with, if any (ES returns it as `_routing`). */
  routing(docId: number): string | undefined {
    const l = this.at(docId);
    return l.leaf.routingOf(l.doc);
  }

  /** Whether any doc was indexed with a custom routing (search hits then carry `_routing`). */
  hasRouting(): boolean {
    return this.leaves().some((l) => l.hasRouting());
  }

  /** `_version` and `_seq_no` of a doc. */
  versionOf(docId: number): { version: number; seqNo: number } {
    const l = this.at(docId);
    return { version: l.leaf.versionOf(l.doc), seqNo: docId };
  }

  /** `_primary_term` of a doc: the store records no term per op, every doc is term 1 (as {@link get} and the if_primary_term check). */
  primaryTerm(_docId: number): number {
    return 1;
  }

  /** Doc counts of the last refresh: live docs, deleted docs, docs held. */
  stats(): { docs: number; deleted: number; maxDoc: number } {
    let maxDoc = 0, deleted = 0;
    for (const { leaf, s } of this.leavesFor(this.refreshed)) {
      maxDoc += s.maxDoc;
      deleted += leaf.deletedCount(s);
    }
    return { docs: maxDoc - deleted, deleted, maxDoc };
  }

  /** Index ops held (live and deleted docs of every segment). */
  indexTotal(): number {
    return this.leaves().reduce((n, l) => n + l.maxDoc, 0);
  }

  /** UTF-8 bytes of every `_source` kept. */
  sourceBytes(): number {
    return this.leaves().reduce((n, l) => n + l.sourceBytes(), 0);
  }

  // ---- legacy snapshots (store/storeCodec.ts) ----

  /** @internal the one buffer a legacy snapshot encodes (snapshots need an unflushed store). */
  snapshotBuffer(): IndexBuffer {
    if (this.segments.length) throw new Error(`[${this.index}][${this.shardId}] has segments: legacy snapshots encode one buffer`);
    return this.buffer;
  }

  /** @internal what a legacy snapshot of this store holds (O(tombstones)). */
  freeze(): import('../index/indexBuffer').FrozenStore {
    return this.snapshotBuffer().freeze(this.refreshed, this.seqNo);
  }

  /** @internal installs a decoded legacy snapshot (the shard's docs as one buffer). */
  loadLegacy(img: import('../index/indexBuffer').LoadedStore): void {
    if (this.seqNo !== -1 || this.segments.length) throw new Error(`[${this.index}][${this.shardId}] is not empty`);
    this.buffer.load(img);
    this.seqNo = img.seqNo;
    this.refreshed = Object.freeze({ maxDoc: this.buffer.maxDocAt(img.refreshed.seqNo), seqNo: img.refreshed.seqNo });
  }
}

/** What the fetch phase and hit metadata read of the docs a searcher returned. */
export interface SearcherDocs {
  source(docId: number): string;
  /** Sources of several docs as the segments hold them (disk segments: UTF-8 bytes, one read per run of adjacent docs). */
  sourceTexts(docIds: ArrayLike<number>): Array<string | Uint8Array>;
  id(docId: number): string;
  routing(docId: number): string | undefined;
  hasRouting(): boolean;
  versionOf(docId: number): { version: number; seqNo: number };
  primaryTerm(docId: number): number;
}

/** The docs of a pinned searcher (its segments may have been merged away from the shard). */
class ShardStorePinned implements SearcherDocs {
  constructor(private readonly store: ShardStore, private readonly leaves: Leaf[]) {}
  private at(docId: number): Located {
    const l = this.store.locate(docId, this.leaves) ?? this.store.locate(docId);
    if (!l) throw new Error(`[${this.store.index}][${this.store.shardId}] has no doc [${docId}]`);
    return l;
  }
  source(docId: number): string {
    const l = this.at(docId);
    return l.leaf.source(l.doc);
  }
  sourceTexts(docIds: ArrayLike<number>): Array<string | Uint8Array> {
    return readSourceTexts(Array.from(docIds, (d) => this.at(d)));
  }
  id(docId: number): string {
    const l = this.at(docId);
    return l.leaf.idOf(l.doc);
  }
  routing(docId: number): string | undefined {
    const l = this.at(docId);
    return l.leaf.routingOf(l.doc);
  }
  hasRouting(): boolean {
    return this.leaves.some((l) => l.hasRouting());
  }
  versionOf(docId: number): { version: number; seqNo: number } {
    const l = this.at(docId);
    return { version: l.leaf.versionOf(l.doc), seqNo: docId };
  }
  primaryTerm(): number {
    return 1;
  }
}

/** Sources of located docs: runs of docs of one disk segment are read together, the buffer's are its strings. */
function readSourceTexts(at: Located[]): Array<string | Uint8Array> {
  const out = new Array<string | Uint8Array>(at.length);
  for (let i = 0; i < at.length; ) {
    const leaf = at[i].leaf;
    let j = i + 1;
    while (j < at.length && at[j].leaf === leaf) j++;
    if (leaf instanceof SegmentLeaf) {
      const texts = leaf.data.sourcesOf(at.slice(i, j).map((l) => l.doc));
      for (let k = i; k < j; k++) out[k] = texts[k - i];
    } else for (let k = i; k < j; k++) out[k] = leaf.source(at[k].doc);
    i = j;
  }
  return out;
}
