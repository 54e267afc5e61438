import { EsError } from '../../../wire/esErrors';
import { parseSourceJson } from '../../../wire/sourceJson';
import type { DocValuesReader, FieldType, LoggedOp, SearcherRef } from '../types';
import type { IndexMapping } from './mapping';
import { parseDocument, type ParsedDoc } from './docParser';
import type { MappingView } from './fieldDef';
import { KeywordColumn, NumericColumn, TextColumn, columnFor, type Column, type ColumnView } from './columns';
import { docValuesOf } from './fieldCodecs';
import { grow, upperBoundF64 } from '../base/bits';
import { SearchCaches } from './caches';
import type { ShardSettings, StoreView } from './storeView';

export type { ShardSettings } from './storeView';

/** What a delete leaves behind for an id with no live doc: versioning continues from it. */
export interface Tombstone {
  version: number;
  seqNo: number;
}

/** What one segment knows of an `_id`: its newest doc there (live or not) and its delete tombstone, if any. */
export interface IdEntry {
  /** Newest doc of the id in this segment. */
  doc?: number;
  /** Whether that doc is still live (not deleted by a later op). */
  live?: boolean;
  tomb?: Tombstone;
}

/** Bounds of a buffer snapshot (legacy snapshots: store/storeCodec.ts). */
export interface FrozenStore {
  maxDoc: number;
  seqNo: number;
  refreshed: SearcherRef;
  delCount: number;
  /** The first `columnCount` columns (insertion order) existed at the freeze. */
  columnCount: number;
  tombstones: ReadonlyMap<string, Tombstone>;
}

/** A decoded legacy snapshot, ready for IndexBuffer.load. */
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

/** Constructor options of a buffer (and of a shard store). */
export interface BufferOptions {
  index: string;
  shardId: number;
  mapping: IndexMapping;
  settings: () => ShardSettings;
  /** Its segment name once it is written to disk. */
  name?: string;
}

/**
 * Parses a document's `_source` against a mapping view into indexed fields (ES's
 * mapper_parsing_exception when it does not parse).
 */
export function parseSource(source: string | undefined, id: string, view: MappingView): ParsedDoc {
  let obj: unknown;
  try {
    obj = parseSourceJson(source ?? '');
  } catch (e) {
    throw new EsError('mapper_parsing_exception', 400, 'failed to parse', { causedBy: new EsError('json_parse_exception', 400, (e as Error).message) });
  }
  return parseDocument(view, obj, id, source);
}

/**
 * The in-memory segment of a shard (Lucene's indexing buffer): documents appended in seqNo order,
 * `_source` kept as the raw JSON text, columnar doc values and inverted indexes, each doc with the
 * seqNo that created it and the one that deleted it (Infinity while live). A searcher sees doc d
 * iff d < its maxDoc and delSeq[d] > its seqNo, so a prefix of the buffer is a consistent view
 * without copying. Once frozen (flush), it takes no more docs and is written to a segment on disk;
 * deletions of its docs keep arriving until the disk segment replaces it.
 */
export class IndexBuffer implements StoreView {
  readonly index: string;
  readonly shardId: number;
  readonly mapping: IndexMapping;
  readonly settings: () => ShardSettings;
  name: string;
  /** @internal per-doc state, valid for doc < maxDoc */
  readonly ids: string[] = [];
  /** @internal */
  readonly sources: string[] = [];
  /** @internal seqNo that created each doc (ascending) */
  seqNos = new Float64Array(16);
  /** @internal seqNo that deleted each doc (Infinity while live) */
  delSeq = new Float64Array(16).fill(Infinity);
  /** @internal */
  versions = new Uint32Array(16);
  /** @internal previous doc of the same _id in this buffer, -1 if none */
  prev = new Int32Array(16).fill(-1);
  /** @internal latest doc of each _id (live or deleted) */
  readonly idMap = new Map<string, number>();
  /** @internal */
  readonly columns = new Map<string, Column>();
  readonly caches = new SearchCaches();
  private readonly routings = new Map<number, string>();
  /** Delete ops of this buffer's life, for ids with no doc here after them. */
  private readonly tombs = new Map<string, Tombstone>();
  /** Deletions of this buffer's docs, in seqNo order: the seqNo and the doc. */
  private delLog = new Float64Array(16);
  private delDocs = new Int32Array(16);
  private delCount = 0;
  private docCount = 0;
  /** Bytes of `_source` held (UTF-16 length, an estimate of the heap it takes). */
  sourceChars = 0;
  private sourceBytesUpTo = 0;
  private sourceBytesTotal = 0;
  /** Takes no more docs (it is being written to disk). */
  frozen = false;

  constructor(o: BufferOptions) {
    this.index = o.index;
    this.shardId = o.shardId;
    this.mapping = o.mapping;
    this.settings = o.settings;
    this.name = o.name ?? '';
  }

  /** Docs in the buffer. */
  get maxDoc(): number {
    return this.docCount;
  }

  /** No doc and no tombstone: nothing to write. */
  isEmpty(): boolean {
    return this.docCount === 0 && this.tombs.size === 0;
  }

  /** Lowest and highest seqNo of its docs (NaN when empty). */
  get minSeqNo(): number {
    return this.docCount ? this.seqNos[0] : NaN;
  }
  get maxSeqNo(): number {
    return this.docCount ? this.seqNos[this.docCount - 1] : NaN;
  }

  // ---- writes (the shard store sequences them) ----

  /** Appends a doc (the store already marked the id's previous version deleted). */
  add(op: LoggedOp, parsed: ParsedDoc): number {
    if (this.frozen) throw new Error(`segment [${this.name}] is frozen`);
    const latest = this.idMap.get(op.id);
    const doc = this.docCount;
    const n = doc + 1;
    this.seqNos = grow(this.seqNos, n);
    this.delSeq = grow(this.delSeq, n, Infinity);
    this.versions = grow(this.versions, n);
    this.prev = grow(this.prev, n, -1);
    const source = op.source ?? '{}';
    this.ids.push(op.id);
    this.sources.push(source);
    this.sourceChars += source.length;
    this.seqNos[doc] = op.seqNo;
    this.versions[doc] = op.version;
    this.prev[doc] = latest ?? -1;
    if (op.routing !== undefined) this.routings.set(doc, op.routing);
    this.idMap.set(op.id, doc);
    this.tombs.delete(op.id);
    for (const f of parsed) {
      let col = this.columns.get(f.def.path);
      if (!col) this.columns.set(f.def.path, (col = columnFor(f.def.type)));
      if (col.kind === 'text') col.add(doc, f.values, f.tokens, f.valueEnds);
      else col.add(doc, f.values);
    }
    this.docCount = n;
    return doc;
  }

  /** Records a delete op of `id` (its live doc, wherever it is, was marked deleted by the store). */
  addTombstone(id: string, t: Tombstone): void {
    this.tombs.set(id, t);
  }

  /** Marks one of this buffer's docs deleted by op `seqNo`. */
  markDeleted(doc: number, seqNo: number): void {
    if (this.delSeq[doc] !== Infinity) return;
    this.delSeq[doc] = seqNo;
    this.delLog = grow(this.delLog, this.delCount + 1);
    this.delDocs = grow(this.delDocs, this.delCount + 1);
    this.delLog[this.delCount] = seqNo;
    this.delDocs[this.delCount++] = doc;
  }

  /** What this buffer knows of `id` (undefined: nothing). */
  entry(id: string): IdEntry | undefined {
    const d = this.idMap.get(id);
    const tomb = this.tombs.get(id);
    if (d === undefined && !tomb) return undefined;
    return { ...(d !== undefined ? { doc: d, live: this.delSeq[d] === Infinity } : {}), ...(tomb ? { tomb } : {}) };
  }

  /** Every tombstone recorded here (the segment writer keeps them). */
  tombstones(): Iterable<{ id: string; seqNo: number; version: number }> {
    return [...this.tombs].map(([id, t]) => ({ id, seqNo: t.seqNo, version: t.version }));
  }

  /** Deletions of this buffer's docs with seqNo <= `seqNo`: docs and seqNos, in seqNo order. */
  deletionsUpTo(seqNo: number): { docs: Int32Array; seqNos: Float64Array } {
    const k = upperBoundF64(this.delLog, this.delCount, seqNo);
    return { docs: this.delDocs.subarray(0, k), seqNos: this.delLog.subarray(0, k) };
  }

  // ---- reads ----

  idOf(doc: number): string {
    return this.ids[doc];
  }

  docId(doc: number): number {
    return this.seqNos[doc];
  }

  seqNoOf(doc: number): number {
    return this.seqNos[doc];
  }

  versionOf(doc: number): number {
    return this.versions[doc];
  }

  column(path: string): ColumnView | undefined {
    return this.columns.get(path);
  }

  fieldPaths(): string[] {
    return [...this.columns.keys()];
  }

  source(doc: number): string {
    return this.sources[doc];
  }

  sourceOf(doc: number): string {
    return this.sources[doc];
  }

  routingOf(doc: number): string | undefined {
    return this.routings.get(doc);
  }

  hasRouting(): boolean {
    return this.routings.size > 0;
  }

  /** Docs with seqNo <= `seqNo` (they are a prefix). */
  maxDocAt(seqNo: number): number {
    return upperBoundF64(this.seqNos, this.docCount, seqNo);
  }

  /** The doc holding seqNo `docId`, or -1. */
  localDoc(docId: number): number {
    const d = lowerBoundF64(this.seqNos, this.docCount, docId);
    return d < this.docCount && this.seqNos[d] === docId ? d : -1;
  }

  /** UTF-8 bytes of every `_source` held. */
  sourceBytes(): number {
    for (let d = this.sourceBytesUpTo; d < this.docCount; d++) this.sourceBytesTotal += Buffer.byteLength(this.sources[d]);
    this.sourceBytesUpTo = this.docCount;
    return this.sourceBytesTotal;
  }

  // ---- StoreView (one segment of a searcher) ----

  deletedCount(s: SearcherRef): number {
    return upperBoundF64(this.delLog, this.delCount, s.seqNo);
  }

  visible(s: SearcherRef, doc: number): boolean {
    return this.delSeq[doc] > s.seqNo;
  }

  lookup(s: SearcherRef, id: string): number | undefined {
    for (let d = this.idMap.get(id) ?? -1; d >= 0; d = this.prev[d]) {
      if (d < s.maxDoc) return this.delSeq[d] > s.seqNo ? d : undefined;
    }
    return undefined;
  }

  fieldType(field: string): FieldType | undefined {
    return this.mapping.fieldType(field);
  }

  values(field: string, doc: number): Array<number | bigint | string | boolean> {
    const col = this.columns.get(field);
    if (col instanceof NumericColumn) return col.natural(doc);
    if (col instanceof KeywordColumn) return docValuesOf(this.mapping.fieldType(field), col.values(doc));
    if (col instanceof TextColumn) return [];
    return [];
  }

  // ---- legacy snapshots (storeCodec.ts) ----

  /** @internal what a legacy snapshot of this buffer holds */
  freeze(refreshed: SearcherRef, seqNo: number): FrozenStore {
    return { maxDoc: this.docCount, seqNo, refreshed, delCount: this.delCount, columnCount: this.columns.size, tombstones: new Map(this.tombs) };
  }

  /** @internal live internals the codec reads (bounded by a FrozenStore). */
  internals(): { routings: ReadonlyMap<number, string>; delLog: Float64Array } {
    return { routings: this.routings, delLog: this.delLog };
  }

  /** @internal installs a decoded legacy snapshot into this (fresh) buffer. */
  load(img: LoadedStore): void {
    if (this.docCount !== 0) throw new Error(`[${this.index}][${this.shardId}] is not empty`);
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
    for (let d = 0; d < n; d++) {
      this.sources.push(img.sources[d]);
      this.sourceChars += img.sources[d].length;
    }
    for (const [doc, r] of img.routings) this.routings.set(doc, r);
    for (const [id, t] of img.tombstones) this.tombs.set(id, t);
    for (const [path, col] of img.columns) this.columns.set(path, col);
    // the deletion log's docs: every deleted doc, ordered by the seqNo that deleted it
    const deleted: number[] = [];
    for (let d = 0; d < n; d++) if (this.delSeq[d] !== Infinity) deleted.push(d);
    deleted.sort((a, b) => this.delSeq[a] - this.delSeq[b]);
    this.delLog = new Float64Array(Math.max(16, deleted.length));
    this.delDocs = new Int32Array(Math.max(16, deleted.length));
    deleted.forEach((d, i) => {
      this.delLog[i] = this.delSeq[d];
      this.delDocs[i] = d;
    });
    this.delCount = deleted.length;
    this.docCount = n;
  }
}

/** First index in [0, n) with a[i] >= x (a ascending). */
function lowerBoundF64(a: Float64Array, n: number, x: number): number {
  let lo = 0, hi = n;
  while (lo < hi) {
    const m = (lo + hi) >>> 1;
    if (a[m] < x) lo = m + 1;
    else hi = m;
  }
  return lo;
}

