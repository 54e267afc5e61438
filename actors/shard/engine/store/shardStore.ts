import { EsError } from '../../../wire/esErrors';
import { parseSourceJson } from '../../../wire/sourceJson';
import type {
  DocValuesReader, DocWrite, FieldType, LoggedOp, SearcherRef, ShardQueryRequest, ShardQueryResult, WriteOutcome,
} from '../types';
import type { IndexMapping } from '../index/mapping';
import { parseDocument, type ParsedDoc } from '../index/docParser';
import type { MappingView } from '../index/fieldDef';
import { KeywordColumn, NumericColumn, TextColumn, columnFor, type Column, type ColumnView } from '../index/columns';
import { grow, upperBoundF64 } from '../base/bits';
import { executeCount, executeQuery, type QueryOptions } from '../query/search';
import { SearchCaches } from '../index/caches';
import type { ShardSettings, StoreView } from '../index/storeView';

export type { ShardSettings } from '../index/storeView';

/** Constructor options of a ShardStore. */
export interface ShardStoreOptions {
  index: string;
  shardId: number;
  mapping: IndexMapping;
  settings: () => ShardSettings;
}

/** A real-time get result. */
export interface GetResult {
  source: string;
  version: number;
  seqNo: number;
  primaryTerm: 1;
  routing?: string;
}

/** What a delete leaves behind for an id with no live doc: versioning continues from it. */
export interface Tombstone {
  version: number;
  seqNo: number;
}

/** Bounds of a shard snapshot (see ShardStore.freeze). */
export interface FrozenStore {
  maxDoc: number;
  seqNo: number;
  refreshed: SearcherRef;
  delCount: number;
  /** The first `columnCount` columns (insertion order) existed at the freeze. */
  columnCount: number;
  tombstones: ReadonlyMap<string, Tombstone>;
}

/** A decoded shard snapshot, ready for ShardStore.load. */
export interface LoadedStore {
  maxDoc: number;
  seqNo: number;
  refreshed: SearcherRef;
  ids: string[];
  sources: string[];
  seqNos: Float64Array<ArrayBuffer>;
  delSeq: Float64Array<ArrayBuffer>;
  versions: Uint32Array<ArrayBuffer>;
  routings: Array<[number, string]>;
  tombstones: Array<[string, Tombstone]>;
  delLog: Float64Array<ArrayBuffer>;
  delCount: number;
  columns: Array<[string, Column]>;
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

/**
 * One shard's documents: append-only doc ids with MVCC (each doc records the seqNo that created
 * and the seqNo that deleted it), `_source` kept as the raw JSON text, columnar doc values and
 * inverted indexes. A searcher `{maxDoc, seqNo}` sees doc d iff d < maxDoc && deletedSeqNo[d] > seqNo,
 * so pinned searchers (PIT, scroll) cost nothing and never change.
 */
export class ShardStore implements StoreView {
  readonly index: string;
  readonly shardId: number;
  readonly mapping: IndexMapping;
  readonly settings: () => ShardSettings;
  /** @internal per-doc state, valid for doc < maxDoc */
  readonly ids: string[] = [];
  /** @internal */
  readonly sources: string[] = [];
  /** @internal seqNo that created each doc */
  seqNos = new Float64Array(16);
  /** @internal seqNo that deleted each doc (Infinity while live) */
  delSeq = new Float64Array(16).fill(Infinity);
  /** @internal */
  versions = new Uint32Array(16);
  /** @internal previous doc of the same _id, -1 if none */
  prev = new Int32Array(16).fill(-1);
  /** @internal latest doc of each _id (live or deleted) */
  readonly idMap = new Map<string, number>();
  /** @internal */
  readonly columns = new Map<string, Column>();
  /** @internal search-time caches (sorted doc orders, slice filters) */
  readonly caches = new SearchCaches();
  private readonly routings = new Map<number, string>();
  private readonly tombstones = new Map<string, Tombstone>();
  private delLog = new Float64Array(16);
  private delCount = 0;
  private docCount = 0;
  private seqNo = -1;
  private refreshed: SearcherRef = Object.freeze({ maxDoc: 0, seqNo: -1 });

  constructor(o: ShardStoreOptions) {
    this.index = o.index;
    this.shardId = o.shardId;
    this.mapping = o.mapping;
    this.settings = o.settings;
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
          doc = this.parseSource(w.source, w.id, view);
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
        doc = this.parseSource(op.source, op.id, this.mapping);
      } catch (e) {
        if (!(e instanceof EsError)) throw e;
        doc = [];
        this.unparsed++;
      }
    }
    this.applyOp(op, doc);
  }

  /** Logged docs kept without indexed fields because their source no longer parsed (see applyLogged). */
  unparsed = 0;

  private applyOp(op: LoggedOp, doc: ParsedDoc | undefined): void {
    if (op.op === 'index') {
      this.applyIndex(op, doc!);
      return;
    }
    const latest = this.idMap.get(op.id);
    if (latest !== undefined && this.delSeq[latest] === Infinity) this.markDeleted(latest, op.seqNo);
    this.tombstones.set(op.id, { version: op.version, seqNo: op.seqNo });
    this.seqNo = op.seqNo;
  }

  /** Whether `id` is live, and its version and seqNo (or the tombstone's). */
  private idState(id: string): IdState {
    const latest = this.idMap.get(id);
    if (latest !== undefined && this.delSeq[latest] === Infinity) return { live: true, version: this.versions[latest], seqNo: this.seqNos[latest] };
    const tomb = this.tombstones.get(id);
    return { live: false, version: tomb?.version, seqNo: undefined };
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

  private parseSource(source: string | undefined, id: string, view: MappingView): ParsedDoc {
    let obj: unknown;
    try {
      obj = parseSourceJson(source ?? '');
    } catch (e) {
      throw new EsError('mapper_parsing_exception', 400, 'failed to parse', { causedBy: new EsError('json_parse_exception', 400, (e as Error).message) });
    }
    return parseDocument(view, obj, id, source);
  }

  private applyIndex(op: LoggedOp, parsed: ParsedDoc): void {
    const latest = this.idMap.get(op.id);
    if (latest !== undefined && this.delSeq[latest] === Infinity) this.markDeleted(latest, op.seqNo);
    const doc = this.docCount;
    const n = doc + 1;
    this.seqNos = grow(this.seqNos, n);
    this.delSeq = grow(this.delSeq, n, Infinity);
    this.versions = grow(this.versions, n);
    this.prev = grow(this.prev, n, -1);
    this.ids.push(op.id);
    this.sources.push(op.source ?? '{}');
    this.seqNos[doc] = op.seqNo;
    this.versions[doc] = op.version;
    this.prev[doc] = latest ?? -1;
    if (op.routing !== undefined) this.routings.set(doc, op.routing);
    this.idMap.set(op.id, doc);
    this.tombstones.delete(op.id);
    for (const f of parsed) {
      let col = this.columns.get(f.def.path);
      if (!col) this.columns.set(f.def.path, (col = columnFor(f.def.type)));
      col.add(doc, f.values, f.tokens);
    }
    this.docCount = n;
    this.seqNo = op.seqNo;
  }

  private markDeleted(doc: number, seqNo: number): void {
    this.delSeq[doc] = seqNo;
    this.delLog = grow(this.delLog, this.delCount + 1);
    this.delLog[this.delCount++] = seqNo;
  }

  // ---- reads ----

  /** Real-time get of the latest live version. */
  get(id: string): GetResult | undefined {
    const d = this.idMap.get(id);
    if (d === undefined || this.delSeq[d] !== Infinity) return undefined;
    const routing = this.routings.get(d);
    return { source: this.sources[d], version: this.versions[d], seqNo: this.seqNos[d], primaryTerm: 1, ...(routing !== undefined ? { routing } : {}) };
  }

  /** Makes everything applied so far visible to new searchers. */
  refresh(): void {
    this.refreshed = Object.freeze({ maxDoc: this.docCount, seqNo: this.seqNo });
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

  /** Executes the query phase of a search on a searcher. */
  query(s: SearcherRef, req: ShardQueryRequest, opts?: QueryOptions): ShardQueryResult {
    return executeQuery(this, s, req, opts);
  }

  /** Number of visible docs matching `query` (match_all when absent). */
  count(s: SearcherRef, query?: unknown): number {
    return executeCount(this, s, query);
  }

  /** Raw `_source` JSON text of a doc, exactly as indexed. */
  source(doc: number): string {
    return this.sources[doc];
  }

  /** `_id` of a doc. */
  id(doc: number): string {
    return this.ids[doc];
  }

  idOf(doc: number): string {
    return this.ids[doc];
  }

  docId(doc: number): number {
    return doc;
  }

  column(path: string): ColumnView | undefined {
    return this.columns.get(path);
  }

  /** Custom routing a doc was indexed with, if any (ES returns it as `_routing`). */
  routing(doc: number): string | undefined {
    return this.routings.get(doc);
  }

  /** Whether any doc was indexed with a custom routing (search hits then carry `_routing`). */
  hasRouting(): boolean {
    return this.routings.size > 0;
  }

  /** `_version` and `_seq_no` of a doc. */
  versionOf(doc: number): { version: number; seqNo: number } {
    return { version: this.versions[doc], seqNo: this.seqNos[doc] };
  }

  /** `_primary_term` of a doc: the store records no term per op, every doc is term 1 (as {@link get} and the if_primary_term check). */
  primaryTerm(_doc: number): number {
    return 1;
  }

  /** Doc counts of the last refresh: live docs, deleted docs, doc ids used. */
  stats(): { docs: number; deleted: number; maxDoc: number } {
    const s = this.refreshed;
    const deleted = this.deletedCount(s);
    return { docs: s.maxDoc - deleted, deleted, maxDoc: s.maxDoc };
  }

  private sizedUpTo = 0;
  private sizedBytes = 0;
  /** UTF-8 bytes of every `_source` kept (what the store holds; counted once per doc). */
  sourceBytes(): number {
    for (let d = this.sizedUpTo; d < this.sources.length; d++) this.sizedBytes += Buffer.byteLength(this.sources[d]);
    this.sizedUpTo = this.sources.length;
    return this.sizedBytes;
  }

  /** @internal number of docs (< s.maxDoc) deleted as seen by s */
  deletedCount(s: SearcherRef): number {
    return upperBoundF64(this.delLog, this.delCount, s.seqNo);
  }

  /** @internal whether s sees doc (doc < s.maxDoc assumed) */
  visible(s: SearcherRef, doc: number): boolean {
    return this.delSeq[doc] > s.seqNo;
  }

  /** @internal the doc of `id` that s sees, if any */
  lookup(s: SearcherRef, id: string): number | undefined {
    for (let d = this.idMap.get(id) ?? -1; d >= 0; d = this.prev[d]) {
      if (d < s.maxDoc) return this.delSeq[d] > s.seqNo ? d : undefined;
    }
    return undefined;
  }

  // ---- snapshots (storeCodec.ts) ----

  /**
   * @internal Freezes what a snapshot needs, O(tombstones): the doc-id and seqNo bounds plus a copy
   * of the only structure later writes change in place. Everything else is append-only (docs
   * `< maxDoc` never change, and a later delete has a seqNo above `seqNo`), so the snapshot can be
   * encoded afterwards, between other work, and still describe exactly this instant.
   */
  freeze(): FrozenStore {
    return {
      maxDoc: this.docCount,
      seqNo: this.seqNo,
      refreshed: this.refreshed,
      delCount: this.delCount,
      columnCount: this.columns.size,
      tombstones: new Map(this.tombstones),
    };
  }

  /** @internal live internals the codec reads (bounded by a FrozenStore). */
  internals(): { routings: ReadonlyMap<number, string>; delLog: Float64Array } {
    return { routings: this.routings, delLog: this.delLog };
  }

  /** @internal installs a decoded snapshot into this (fresh) store; rebuilds the id map and chains. */
  load(img: LoadedStore): void {
    if (this.docCount !== 0 || this.seqNo !== -1) throw new Error(`[${this.index}][${this.shardId}] is not empty`);
    const n = img.maxDoc;
    this.seqNos = img.seqNos;
    this.delSeq = img.delSeq;
    this.versions = img.versions;
    this.prev = new Int32Array(Math.max(16, n));
    for (let d = 0; d < n; d++) {
      const id = img.ids[d];
      this.prev[d] = this.idMap.get(id) ?? -1;
      this.idMap.set(id, d);
      this.ids.push(id);
    }
    for (let d = 0; d < n; d++) this.sources.push(img.sources[d]);
    for (const [doc, r] of img.routings) this.routings.set(doc, r);
    for (const [id, t] of img.tombstones) this.tombstones.set(id, t);
    for (const [path, col] of img.columns) this.columns.set(path, col);
    this.delLog = img.delLog;
    this.delCount = img.delCount;
    this.docCount = n;
    this.seqNo = img.seqNo;
    this.refreshed = Object.freeze({ ...img.refreshed });
  }

  // ---- DocValuesReader ----

  fieldType(field: string): FieldType | undefined {
    return this.mapping.fieldType(field);
  }

  values(field: string, doc: number): Array<number | bigint | string | boolean> {
    const col = this.columns.get(field);
    if (col instanceof NumericColumn) return col.natural(doc);
    if (col instanceof KeywordColumn) return col.values(doc);
    if (col instanceof TextColumn) return [];
    return [];
  }
}
