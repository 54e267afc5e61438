import { EsError } from '../../../wire/esErrors';
import type { DocWrite, LoggedOp, SearcherRef, ShardQueryRequest, ShardQueryResult, WriteOutcome } from '../types';
import type { ParsedDoc } from '../index/docParser';
import type { MappingView } from '../index/fieldDef';
import type { IndexMapping } from '../index/mapping';
import type { ShardSettings } from '../index/storeView';
import { IndexBuffer, parseSource, type BufferOptions, type Tombstone } from '../index/indexBuffer';
import type { QueryOptions } from '../query/search';
import type { Leaf } from './leaf';
import { countLeaves, queryLeaves, type LeafSearcher } from './shardSearch';

export type { ShardSettings } from '../index/storeView';
export type { Tombstone, FrozenStore, LoadedStore } from '../index/indexBuffer';

/** Constructor options of a ShardStore. */
export type ShardStoreOptions = BufferOptions;

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

  constructor(private readonly o: ShardStoreOptions) {
    this.index = o.index;
    this.shardId = o.shardId;
    this.mapping = o.mapping;
    this.settings = o.settings;
    this.buffer = this.newBuffer();
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
    if (this.buffer.maxDoc === 0) return undefined;
    const frozen = this.buffer;
    frozen.frozen = true;
    this.segments.push(frozen);
    this.buffer = this.newBuffer();
    return frozen;
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

  /** The segments a searcher spans, each bounded to the docs it sees. */
  leavesFor(s: SearcherRef): LeafSearcher[] {
    const S = s.seqNo;
    const out: LeafSearcher[] = [];
    for (const leaf of this.leaves()) {
      if (leaf !== this.buffer && !(leaf.minSeqNo <= S)) continue;
      out.push({ leaf, s: { maxDoc: leaf.maxDocAt(S), seqNo: S } });
    }
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

  /** The segment and doc of a shard doc id (a seqNo), if the shard still holds it. */
  locate(docId: number): Located | undefined {
    const leaves = this.leaves();
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
