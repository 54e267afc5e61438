/**
 * The binary reply of the shard `query` and `fetch` ops: a small JSON head (searcher, totals,
 * aggregations) followed by the hits as typed columns: doc ids, scores, sort values, `_id`s as
 * JSON text, and `_source` bytes, each addressed by offsets. The edge renders a search response
 * by copying these bytes, without building an object per hit (see actors/search/hitList.ts).
 *
 * Layout (little-endian):
 *
 *   u8 0xB1 | u8 version 1 (2 with hit metadata) | u8 flags (1 docs, 2 scores, 4 sort, 8 ids,
 *   16 routing, 32 version, 64 seq_no) | u8 sort keys
 *   u32 n (hits) | u32 fetched (sources, a prefix of the hits) | u32 head length | head JSON
 *   [i32 doc × n] [f64 score × n, NaN = null]
 *   [per sort key: u8 kind; 1: f64 × n | 2: i64 × n | 0: u32 offset × (n+1) + tagged values |
 *    3: (the doc ids) | 4: u32 shard index (`_shard_doc` of it and the doc ids)]
 *   [ids: u32 offset × (n+1) + the `_id`s as JSON strings]
 *   [routing: u32 offset × (n+1) + `_routing` as JSON strings, empty for a doc without one]
 *   [version: u32 × n] [seq_no: f64 × n, then primary term: u32 × n]
 *   [extras (flag 128): u32 offset × (n+1) + `fields` objects as JSON text, empty for none;
 *    u32 offset × (n+1) + trailing hit members (`"matched_queries":[…]`) as JSON text]
 *   u32 offset × (fetched+1) + the sources
 *
 * A page the coordinator asked to render (version 3, `render` in the query message) ends instead
 * with the fetched hits written as the response carries them (actors/shard/hitRender.ts), each
 * followed by a comma: u32 hit offset × (fetched+1) | u32 source start, end × fetched | the hits.
 * A run of rows is then one byte range of the page; the sources are found inside the hits.
 *
 * Hit metadata travels only when needed: `_routing` when some hit of the page has one, `_version`
 * and `_seq_no`/`_primary_term` when the request asks (`version`, `seq_no_primary_term`). A page
 * without any is byte for byte a version 1 page.
 *
 * Tagged sort values: 0 null, 1 f64, 2 i64, 3 a JSON string, 4 false, 5 true, 6 decimal digits of
 * a bigint outside int64 (unsigned_long). Non-finite numbers are null, as JSON made them before.
 * Error replies stay JSON (`{"ok":false,…}`): a reply starting with `{` is one.
 */
import { ByteWriter } from '../wire/byteWriter';
import { parseJson, stringify } from '../wire/json';
import type { SearcherRef, ShardHit, ShardQueryResult, SortValue } from './engine/types';
import { shardDocValue } from './engine/query/sort';
import { writeRenderedHits, writeSource, type RenderSpec, type SourceBytes } from './hitRender';

export const PAGE_MAGIC = 0xb1;
const VERSION = 1;
/** A page with hit metadata columns (a reader that knows only version 1 refuses it, not misreads it). */
const VERSION_META = 2;
/** A page whose fetched hits are rendered (hitRender.ts); the coordinator asks for it. */
const VERSION_RENDERED = 3;
const F_DOCS = 1;
const F_SCORES = 2;
const F_SORT = 4;
const F_IDS = 8;
const F_ROUTING = 16;
const F_VERSION = 32;
const F_SEQ_NO = 64;
/** Hit extras computed by the shard: `fields` (docvalue_fields, fields) and trailing members (matched_queries). */
const F_EXTRA = 128;
const F_META = F_ROUTING | F_VERSION | F_SEQ_NO | F_EXTRA;
const K_TAGGED = 0;
const K_F64 = 1;
const K_I64 = 2;
/** The hit's doc id (`_doc`), or `_shard_doc` of the u32 shard index that follows: nothing per hit. */
const K_DOC = 3;
const K_SHARD_DOC = 4;
const T_NULL = 0;
const T_F64 = 1;
const T_I64 = 2;
const T_STR = 3;
const T_FALSE = 4;
const T_TRUE = 5;
const T_BIG = 6;
const I64_MIN = -(1n << 63n);
const I64_MAX = (1n << 63n) - 1n;

/** The JSON head of a query reply: everything but the hits. */
export interface QueryPageHead {
  searcher: SearcherRef;
  totalHits: number | null;
  totalRelation: 'eq' | 'gte';
  maxScore: number | null;
  aggs?: unknown;
  /** `profile: true`: the shard's profile sections. */
  profile?: { searches: unknown[]; aggregations: unknown[] };
}

/** A source as a copy holds it: text (the buffer) or UTF-8 bytes (a disk segment, copied as they are). */
export type SourceText = SourceBytes;

/** Writes strings one after the other, recording where each starts (byte offsets). */
function writeStrings(w: ByteWriter, texts: string[]): void {
  const n = texts.length;
  const table = w.pos;
  w.ensure(4 * (n + 1));
  w.pos += 4 * (n + 1);
  const start = w.pos;
  const joined = texts.join('');
  const bytes = w.utf8(joined);
  const b = w.buf;
  let at = 0;
  if (bytes === joined.length) {
    // One byte per code unit: char offsets are byte offsets.
    for (let i = 0; i < n; i++) {
      b.writeUInt32LE(at, table + 4 * i);
      at += texts[i].length;
    }
  } else {
    for (let i = 0; i < n; i++) {
      b.writeUInt32LE(at, table + 4 * i);
      at += Buffer.byteLength(texts[i]);
    }
  }
  b.writeUInt32LE(at, table + 4 * n);
  if (at !== w.pos - start) throw new Error(`page codec: wrote ${w.pos - start} bytes of strings, counted ${at}`);
}

/** Writes sources (text or bytes) one after the other, recording where each starts (byte offsets). */
function writeSources(w: ByteWriter, sources: readonly SourceBytes[]): void {
  if (sources.every((x) => typeof x === 'string')) return writeStrings(w, sources as string[]);
  writeTable(w, sources.length, (i) => writeSource(w, sources[i]));
}

/** An offset table of `n + 1` entries, then the `n` items `write` puts, each entry where its item starts. */
function writeTable(w: ByteWriter, n: number, write: (i: number) => unknown): void {
  const table = w.pos;
  w.ensure(4 * (n + 1));
  w.pos += 4 * (n + 1);
  const start = w.pos;
  for (let i = 0; i < n; i++) {
    w.setU32(table + 4 * i, w.pos - start);
    write(i);
  }
  w.setU32(table + 4 * n, w.pos - start);
}

/** Whether sort value `j` of every hit is its doc id (`_doc`), or `_shard_doc` of `shardIndex`. */
function derivedFrom(hits: readonly ShardHit[], j: number, shardIndex: number | undefined): number {
  let doc = true;
  let shardDoc = shardIndex !== undefined;
  for (let i = 0; i < hits.length && (doc || shardDoc); i++) {
    const h = hits[i];
    const v = h.sort![j];
    if (v !== h.doc) doc = false;
    if (shardDoc && v !== shardDocValue(shardIndex!, h.doc)) shardDoc = false;
  }
  return doc ? K_DOC : shardDoc ? K_SHARD_DOC : -1;
}

function writeSortColumn(w: ByteWriter, hits: readonly ShardHit[], j: number, shardIndex?: number): void {
  const n = hits.length;
  const derived = n ? derivedFrom(hits, j, shardIndex) : -1;
  if (derived === K_DOC) return w.u8(K_DOC);
  if (derived === K_SHARD_DOC) {
    w.u8(K_SHARD_DOC);
    return w.u32(shardIndex!);
  }
  let f64 = true;
  let i64 = true;
  for (let i = 0; i < n && (f64 || i64); i++) {
    const v = hits[i].sort![j];
    if (typeof v !== 'number' || !Number.isFinite(v)) f64 = false;
    if (typeof v !== 'bigint' || v < I64_MIN || v > I64_MAX) i64 = false;
  }
  if (f64 && n) {
    w.u8(K_F64);
    w.ensure(8 * n);
    for (let i = 0; i < n; i++) {
      w.buf.writeDoubleLE(hits[i].sort![j] as number, w.pos);
      w.pos += 8;
    }
    return;
  }
  if (i64 && n) {
    w.u8(K_I64);
    for (let i = 0; i < n; i++) w.i64(hits[i].sort![j] as bigint);
    return;
  }
  w.u8(K_TAGGED);
  writeTable(w, n, (i) => writeTagged(w, hits[i].sort![j]));
}

function writeTagged(w: ByteWriter, v: SortValue | undefined): void {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return w.u8(T_NULL);
    w.u8(T_F64);
    return w.f64(v);
  }
  if (typeof v === 'bigint') {
    if (v >= I64_MIN && v <= I64_MAX) {
      w.u8(T_I64);
      return w.i64(v);
    }
    const digits = v.toString();
    w.u8(T_BIG);
    w.u32(digits.length);
    return w.ascii(digits);
  }
  if (typeof v === 'string') {
    w.u8(T_STR);
    const at = w.reserveU32();
    w.setU32(at, w.utf8(JSON.stringify(v)));
    return;
  }
  if (typeof v === 'boolean') return w.u8(v ? T_TRUE : T_FALSE);
  w.u8(T_NULL);
}

function writeHeader(w: ByteWriter, flags: number, keys: number, n: number, fetched: number, head: string, rendered = false): void {
  w.u8(PAGE_MAGIC);
  w.u8(rendered ? VERSION_RENDERED : flags & F_META ? VERSION_META : VERSION);
  w.u8(flags);
  w.u8(keys);
  w.u32(n);
  w.u32(fetched);
  const at = w.reserveU32();
  w.setU32(at, w.utf8(head));
}

const charsOf = (xs: readonly SourceBytes[]) => {
  let n = 0;
  for (const x of xs) n += typeof x === 'string' ? x.length : x.byteLength;
  return n;
};

/** Per-hit metadata of a query page, in hit order (see {@link hitMeta}). */
export interface HitMeta {
  /** `_routing` of each hit (undefined: none); absent when no hit has one. */
  routing?: Array<string | undefined>;
  version?: ArrayLike<number>;
  seqNo?: ArrayLike<number>;
  primaryTerm?: ArrayLike<number>;
}

/** Where a shard reads hit metadata (ShardStore). */
export interface HitMetaSource {
  hasRouting(): boolean;
  routing(doc: number): string | undefined;
  versionOf(doc: number): { version: number; seqNo: number };
  primaryTerm(doc: number): number;
}

/**
 * The metadata a page of `hits` carries: `_routing` of the hits that have one (nothing when the
 * shard holds no routed doc, so a plain search pays one check), `_version` and `_seq_no` /
 * `_primary_term` only when the request asks.
 */
export function hitMeta(store: HitMetaSource, hits: readonly ShardHit[], want: { version?: boolean; seqNoPrimaryTerm?: boolean }): HitMeta | undefined {
  const n = hits.length;
  if (!n || (!want.version && !want.seqNoPrimaryTerm && !store.hasRouting())) return undefined; // a plain search
  const meta: HitMeta = {};
  if (store.hasRouting()) {
    const routing = new Array<string | undefined>(n);
    let any = false;
    for (let i = 0; i < n; i++) if ((routing[i] = store.routing(hits[i].doc)) !== undefined) any = true;
    if (any) meta.routing = routing;
  }
  if (want.version || want.seqNoPrimaryTerm) {
    const version = new Uint32Array(n);
    const seqNo = new Float64Array(n);
    const term = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
      const v = store.versionOf(hits[i].doc);
      version[i] = v.version;
      seqNo[i] = v.seqNo;
      term[i] = store.primaryTerm(hits[i].doc);
    }
    if (want.version) meta.version = version;
    if (want.seqNoPrimaryTerm) Object.assign(meta, { seqNo, primaryTerm: term });
  }
  return meta.routing || meta.version || meta.seqNo ? meta : undefined;
}

/**
 * Encodes a query reply: the result's hits as columns, and the sources of its first `sources.length`
 * hits. With the request's `shardIndex`, a `_shard_doc` column (PIT tiebreaker) costs nothing per hit.
 * With `render`, those hits are written rendered, their sources inside them (version 3).
 */
export function encodeQueryPage(
  searcher: SearcherRef, result: ShardQueryResult, sources: readonly SourceBytes[], shardIndex?: number, meta?: HitMeta, render?: RenderSpec,
): Buffer {
  const hits = result.hits;
  const n = hits.length;
  const keys = n && hits[0].sort ? hits[0].sort.length : 0;
  const hasSort = n > 0 && hits[0].sort !== undefined;
  let scored = false;
  for (let i = 0; i < n && !scored; i++) scored = hits[i].score !== null;
  const extra = hits.some((h) => h.fields !== undefined || h.tail !== undefined);
  const metaFlags = (!meta ? 0 : (meta.routing ? F_ROUTING : 0) | (meta.version ? F_VERSION : 0) | (meta.seqNo ? F_SEQ_NO : 0)) | (extra ? F_EXTRA : 0);
  const flags = F_DOCS | F_IDS | (scored ? F_SCORES : 0) | (hasSort ? F_SORT : 0) | metaFlags;
  const head: QueryPageHead = { searcher, totalHits: result.totalHits, totalRelation: result.totalRelation, maxScore: result.maxScore };
  if (result.aggs !== undefined) head.aggs = result.aggs;
  if (result.profile !== undefined) head.profile = result.profile;
  const headText = stringify(head);
  const ids = new Array<string>(n);
  for (let i = 0; i < n; i++) ids[i] = JSON.stringify(hits[i]._id);
  const rendered = render !== undefined && sources.length > 0;
  // Sized for ASCII text (grows when not): the reply is this writer's buffer, no copy.
  const perHit = rendered ? 2 * (40 + render.index.length + 9 * keys) : 0;
  const w = new ByteWriter(64 + headText.length + n * (20 + 9 * keys) + charsOf(ids) * (rendered ? 2 : 1) + charsOf(sources) + perHit * sources.length);
  writeHeader(w, flags, keys, n, sources.length, headText, rendered);
  w.ensure(4 * n);
  for (let i = 0; i < n; i++) {
    w.buf.writeInt32LE(hits[i].doc, w.pos);
    w.pos += 4;
  }
  if (scored) {
    w.ensure(8 * n);
    for (let i = 0; i < n; i++) {
      const s = hits[i].score;
      w.buf.writeDoubleLE(s === null || !Number.isFinite(s) ? NaN : s, w.pos);
      w.pos += 8;
    }
  }
  for (let j = 0; j < keys; j++) writeSortColumn(w, hits, j, shardIndex);
  writeStrings(w, ids);
  if (metaFlags) writeMeta(w, meta ?? {}, n);
  if (extra) {
    writeStrings(w, hits.map((h) => h.fields ?? ''));
    writeStrings(w, hits.map((h) => h.tail ?? ''));
  }
  if (rendered) writeRendered(w, hits, ids, sources, meta, scored, render);
  else writeSources(w, sources);
  return w.take();
}

/** The rendered section: hit offsets, source ranges, then the hits (see the layout above). */
function writeRendered(w: ByteWriter, hits: readonly ShardHit[], ids: string[], sources: readonly SourceBytes[], meta: HitMeta | undefined, scored: boolean, render: RenderSpec): void {
  const f = sources.length;
  const hitAt = new Uint32Array(f + 1);
  const srcAt = new Uint32Array(2 * f);
  const tables = w.pos;
  w.ensure(4 * (3 * f + 1));
  w.pos += 4 * (3 * f + 1);
  writeRenderedHits(w, w.pos, hits, ids, sources, meta, scored, render, hitAt, srcAt);
  Buffer.from(hitAt.buffer).copy(w.buf, tables);
  Buffer.from(srcAt.buffer).copy(w.buf, tables + 4 * (f + 1));
}

function writeMeta(w: ByteWriter, meta: HitMeta, n: number): void {
  if (meta.routing) writeStrings(w, meta.routing.map((r) => (r === undefined ? '' : JSON.stringify(r))));
  if (meta.version) {
    w.ensure(4 * n);
    for (let i = 0; i < n; i++) w.u32(meta.version[i]);
  }
  if (meta.seqNo) {
    w.ensure(12 * n);
    for (let i = 0; i < n; i++) w.f64(meta.seqNo[i]);
    for (let i = 0; i < n; i++) w.u32(meta.primaryTerm?.[i] ?? 1);
  }
}

/** Encodes a fetch reply: the sources of a prefix of the asked docs. */
export function encodeFetchPage(sources: readonly SourceBytes[]): Buffer {
  const w = new ByteWriter(64 + 4 * sources.length + charsOf(sources));
  writeHeader(w, 0, 0, sources.length, sources.length, '{}');
  writeSources(w, sources);
  return w.take();
}

/**
 * The sources of `docs` that go in one reply, in order: as many as fit in under half of the NATS
 * message size (chars ≈ bytes for JSON, with room for UTF-8 growth), and always the first. With
 * `sourcesOf` (a store that reads several sources at once, e.g. a run of docs of a segment on disk
 * in one read) they are read in slices of {@link READ_SLICE} docs.
 */
export function replySources(
  docs: ArrayLike<number>, sourceOf: (doc: number) => SourceBytes, maxPayload: number, sourcesOf?: (docs: number[]) => readonly SourceBytes[],
): SourceBytes[] {
  const sources: SourceBytes[] = [];
  let budget = Math.floor(maxPayload * 0.45);
  for (let from = 0; from < docs.length; ) {
    let slice: readonly SourceBytes[] | undefined;
    if (sourcesOf) {
      const part: number[] = [];
      for (let k = from; k < docs.length && part.length < READ_SLICE; k++) part.push(docs[k]);
      slice = sourcesOf(part);
    }
    const end = slice ? from + slice.length : docs.length;
    for (let i = from; i < end; i++) {
      const s = slice ? slice[i - from] : sourceOf(docs[i]);
      if (sources.length && s.length > budget) return sources;
      budget -= s.length;
      sources.push(s);
    }
    from = end;
  }
  return sources;
}
/** Docs whose sources are read at once when the store can (replySources). */
const READ_SLICE = 1024;

/** The first sources that fit one reply (under half of the NATS `max_payload`; at least one). */
export function fitSources(texts: SourceBytes[], maxPayload: number): SourceBytes[] {
  let budget = Math.floor(maxPayload * 0.45);
  for (let i = 0; i < texts.length; i++) {
    const t = texts[i];
    const size = typeof t === 'string' ? t.length : t.byteLength;
    if (i > 0 && size > budget) return texts.slice(0, i);
    budget -= size;
  }
  return texts;
}

/**
 * The value JSON gave the coordinator before (stringify, then a lossless parse): integral doubles
 * beyond 2^53 came back as bigint, bigints within 2^53 as numbers, -0 as 0.
 */
function asJsonRead(v: number): number | bigint {
  if (v === 0) return 0;
  return Number.isInteger(v) && !Number.isSafeInteger(v) && Math.abs(v) < 1e21 ? BigInt(String(v)) : v;
}

function bigAsJsonRead(v: bigint): number | bigint {
  return v >= MIN_SAFE && v <= MAX_SAFE ? Number(v) : v;
}
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * A decoded page reply: reads columns in place (no copy of the message, nothing per hit until
 * asked). Rows are hit positions in the shard's order.
 */
export class ShardPage<H = unknown> {
  readonly n: number;
  /** Hits whose sources this reply carries (the first `fetched`). */
  readonly fetched: number;
  readonly head: H;
  readonly sortKeys: number;
  readonly hasSort: boolean;
  readonly hasScores: boolean;
  /** Whether hits carry `_routing` (those that have one), `_version`, `_seq_no` and `_primary_term`. */
  readonly hasRouting: boolean;
  readonly hasVersion: boolean;
  readonly hasSeqNo: boolean;
  /** Whether hits carry shard-computed extras (`fields`, trailing members). */
  readonly hasExtra: boolean;
  /** Whether the fetched hits come rendered (see {@link renderedStart}). */
  readonly rendered: boolean;
  /** The reply's bytes. */
  readonly b: Buffer;
  private readonly dv: DataView;
  private readonly docsAt: number;
  private readonly scoresAt: number;
  private readonly sortKind: number[] = [];
  private readonly sortAt: number[] = [];
  private readonly idsTable: number;
  private readonly idsData: number;
  private readonly routingTable: number = 0;
  private readonly routingData: number = 0;
  private readonly versionAt: number = 0;
  private readonly seqNoAt: number = 0;
  private readonly termAt: number = 0;
  private readonly fieldsTable: number = 0;
  private readonly tailTable: number = 0;
  private readonly srcTable: number;
  private readonly srcData: number;
  private readonly hitTable: number = 0;

  constructor(data: Uint8Array) {
    const b = (this.b = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    this.dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    if (b[0] !== PAGE_MAGIC || (b[1] !== VERSION && b[1] !== VERSION_META && b[1] !== VERSION_RENDERED)) throw new Error(`not a shard page reply (byte 0x${(b[0] ?? 0).toString(16)})`);
    this.rendered = b[1] === VERSION_RENDERED;
    const flags = b[2];
    this.sortKeys = b[3];
    this.hasSort = (flags & F_SORT) !== 0;
    this.hasScores = (flags & F_SCORES) !== 0;
    this.hasRouting = (flags & F_ROUTING) !== 0;
    this.hasVersion = (flags & F_VERSION) !== 0;
    this.hasSeqNo = (flags & F_SEQ_NO) !== 0;
    this.hasExtra = (flags & F_EXTRA) !== 0;
    const n = (this.n = this.dv.getUint32(4, true));
    this.fetched = this.dv.getUint32(8, true);
    const headLen = this.dv.getUint32(12, true);
    this.head = parseJson<H>(b.toString('utf8', 16, 16 + headLen));
    let p = 16 + headLen;
    this.docsAt = p;
    if (flags & F_DOCS) p += 4 * n;
    this.scoresAt = p;
    if (this.hasScores) p += 8 * n;
    if (this.hasSort) {
      for (let j = 0; j < this.sortKeys; j++) {
        const kind = b[p++];
        this.sortKind.push(kind);
        this.sortAt.push(p);
        if (kind === K_F64 || kind === K_I64) p += 8 * n;
        else if (kind === K_SHARD_DOC) p += 4;
        else if (kind !== K_DOC) p += 4 * (n + 1) + this.dv.getUint32(p + 4 * n, true);
      }
    }
    this.idsTable = p;
    this.idsData = p + 4 * (n + 1);
    if (flags & F_IDS) p = this.idsData + this.dv.getUint32(p + 4 * n, true);
    if (this.hasRouting) {
      this.routingTable = p;
      this.routingData = p + 4 * (n + 1);
      p = this.routingData + this.dv.getUint32(p + 4 * n, true);
    }
    if (this.hasVersion) {
      this.versionAt = p;
      p += 4 * n;
    }
    if (this.hasSeqNo) {
      this.seqNoAt = p;
      this.termAt = p + 8 * n;
      p += 12 * n;
    }
    if (this.hasExtra) {
      this.fieldsTable = p;
      p = p + 4 * (n + 1) + this.dv.getUint32(p + 4 * n, true);
      this.tailTable = p;
      p = p + 4 * (n + 1) + this.dv.getUint32(p + 4 * n, true);
    }
    if (this.rendered) {
      this.hitTable = p;
      this.srcTable = p + 4 * (this.fetched + 1);
      this.srcData = this.srcTable + 8 * this.fetched;
    } else {
      this.srcTable = p;
      this.srcData = p + 4 * (this.fetched + 1);
    }
  }

  doc(i: number): number {
    return this.dv.getInt32(this.docsAt + 4 * i, true);
  }

  score(i: number): number | bigint | null {
    if (!this.hasScores) return null;
    const v = this.dv.getFloat64(this.scoresAt + 8 * i, true);
    return v !== v ? null : asJsonRead(v);
  }

  /** Sort value `j` of hit `i` (undefined past the keys, as a short array gives). */
  sortValue(i: number, j: number): SortValue | undefined {
    if (!this.hasSort || j >= this.sortKeys) return undefined;
    const at = this.sortAt[j];
    switch (this.sortKind[j]) {
      case K_F64:
        return asJsonRead(this.dv.getFloat64(at + 8 * i, true));
      case K_I64:
        return bigAsJsonRead(this.dv.getBigInt64(at + 8 * i, true));
      case K_DOC:
        return this.doc(i);
      case K_SHARD_DOC:
        return shardDocValue(this.dv.getUint32(at, true), this.doc(i));
      default:
        return this.tagged(at + 4 * (this.n + 1) + this.dv.getUint32(at + 4 * i, true));
    }
  }

  private tagged(p: number): SortValue {
    switch (this.b[p]) {
      case T_F64:
        return asJsonRead(this.dv.getFloat64(p + 1, true));
      case T_I64:
        return bigAsJsonRead(this.dv.getBigInt64(p + 1, true));
      case T_STR:
        return JSON.parse(this.b.toString('utf8', p + 5, p + 5 + this.dv.getUint32(p + 1, true))) as string;
      case T_BIG:
        return bigAsJsonRead(BigInt(this.b.toString('latin1', p + 5, p + 5 + this.dv.getUint32(p + 1, true))));
      case T_FALSE:
        return false;
      case T_TRUE:
        return true;
      default:
        return null;
    }
  }

  /** Whether sort column `j` holds only finite doubles, or doc-derived values below 2^53 (see {@link plainNumber}). */
  plainNumeric(j: number): boolean {
    if (!this.hasSort || j >= this.sortKeys) return false;
    const kind = this.sortKind[j];
    return kind === K_F64 || kind === K_DOC || (kind === K_SHARD_DOC && this.dv.getUint32(this.sortAt[j], true) < 2 ** 21);
  }

  /**
   * Sort value `j` of hit `i` of a {@link plainNumeric} column, as the raw double: ordering these
   * as numbers orders them as compareSortValues orders their JSON reading (an integral double beyond
   * 2^53 reads as the bigint of its shortest digits, which keeps the order and the ties).
   */
  plainNumber(i: number, j: number): number {
    const at = this.sortAt[j];
    const kind = this.sortKind[j];
    if (kind === K_F64) return this.dv.getFloat64(at + 8 * i, true);
    const doc = this.doc(i);
    return kind === K_DOC ? doc : this.dv.getUint32(at, true) * 4294967296 + doc;
  }

  /** The sort values of hit `i`, as the shard gave them (undefined without a sort). */
  sort(i: number): SortValue[] | undefined {
    if (!this.hasSort) return undefined;
    const out = new Array<SortValue>(this.sortKeys);
    for (let j = 0; j < this.sortKeys; j++) out[j] = this.sortValue(i, j)!;
    return out;
  }

  /** Appends the JSON text of sort value `j` of hit `i`. */
  writeSortValue(w: ByteWriter, i: number, j: number): void {
    const at = this.sortAt[j];
    switch (this.sortKind[j]) {
      case K_F64: {
        // an integral double's digits are its String() (no exponent below 2^53): written without a string
        const v = this.dv.getFloat64(at + 8 * i, true);
        return Number.isSafeInteger(v) ? w.int(v) : w.ascii(String(v));
      }
      case K_I64: {
        const v = this.dv.getBigInt64(at + 8 * i, true);
        return v >= MIN_SAFE && v <= MAX_SAFE ? w.int(Number(v)) : w.ascii(String(v));
      }
      case K_DOC:
        return w.int(this.doc(i));
      case K_SHARD_DOC: {
        const v = shardDocValue(this.dv.getUint32(at, true), this.doc(i));
        return typeof v === 'number' ? w.int(v) : w.ascii(String(v));
      }
      default: {
        const p = at + 4 * (this.n + 1) + this.dv.getUint32(at + 4 * i, true);
        const tag = this.b[p];
        if (tag === T_STR || tag === T_BIG) return w.bytes(this.b, p + 5, p + 5 + this.dv.getUint32(p + 1, true));
        if (tag === T_F64) return w.ascii(String(this.dv.getFloat64(p + 1, true)));
        if (tag === T_I64) return w.ascii(String(this.dv.getBigInt64(p + 1, true)));
        return w.ascii(tag === T_TRUE ? 'true' : tag === T_FALSE ? 'false' : 'null');
      }
    }
  }

  /** Byte range of hit `i`'s `_id` as a JSON string (quotes included). */
  idStart(i: number): number {
    return this.idsData + this.dv.getUint32(this.idsTable + 4 * i, true);
  }
  idEnd(i: number): number {
    return this.idsData + this.dv.getUint32(this.idsTable + 4 * i + 4, true);
  }

  id(i: number): string {
    const a = this.idStart(i);
    const e = this.idEnd(i);
    const b = this.b;
    for (let p = a + 1; p < e - 1; p++) if (b[p] === 0x5c /* \ */) return JSON.parse(b.toString('utf8', a, e)) as string;
    return b.toString('utf8', a + 1, e - 1);
  }

  /** Byte range of hit `i`'s `_routing` as a JSON string (empty: the doc has none, or the page carries none). */
  routingStart(i: number): number {
    return this.hasRouting ? this.routingData + this.dv.getUint32(this.routingTable + 4 * i, true) : 0;
  }
  routingEnd(i: number): number {
    return this.hasRouting ? this.routingData + this.dv.getUint32(this.routingTable + 4 * i + 4, true) : 0;
  }

  /** `_routing` of hit `i` (undefined when it has none). */
  routing(i: number): string | undefined {
    const a = this.routingStart(i);
    const e = this.routingEnd(i);
    return a === e ? undefined : (JSON.parse(this.b.toString('utf8', a, e)) as string);
  }

  /** `_version` of hit `i`, when the page carries versions. */
  version(i: number): number | undefined {
    return this.hasVersion ? this.dv.getUint32(this.versionAt + 4 * i, true) : undefined;
  }

  /** `_seq_no` of hit `i`, when the page carries them. */
  seqNo(i: number): number | undefined {
    return this.hasSeqNo ? this.dv.getFloat64(this.seqNoAt + 8 * i, true) : undefined;
  }

  /** `_primary_term` of hit `i`, with its `_seq_no`. */
  primaryTerm(i: number): number | undefined {
    return this.hasSeqNo ? this.dv.getUint32(this.termAt + 4 * i, true) : undefined;
  }

  /** Byte range of hit `i`'s `fields` object (empty: none). */
  fieldsRange(i: number): [number, number] {
    return this.hasExtra ? this.stringAt(this.fieldsTable, i) : [0, 0];
  }

  /** Byte range of hit `i`'s trailing members (`"matched_queries":[…]`; empty: none). */
  tailRange(i: number): [number, number] {
    return this.hasExtra ? this.stringAt(this.tailTable, i) : [0, 0];
  }

  private stringAt(table: number, i: number): [number, number] {
    const data = table + 4 * (this.n + 1);
    return [data + this.dv.getUint32(table + 4 * i, true), data + this.dv.getUint32(table + 4 * i + 4, true)];
  }

  /** Byte range of source `i` (i < fetched). */
  sourceStart(i: number): number {
    return this.srcData + this.dv.getUint32(this.srcTable + (this.rendered ? 8 : 4) * i, true);
  }
  sourceEnd(i: number): number {
    return this.srcData + this.dv.getUint32(this.srcTable + (this.rendered ? 8 * i + 4 : 4 * i + 4), true);
  }

  /**
   * Byte range of rendered hits `[i, j)` joined by commas (a rendered page, j <= fetched): what the
   * response's `hits.hits` carries for them.
   */
  renderedStart(i: number): number {
    return this.srcData + this.dv.getUint32(this.hitTable + 4 * i, true);
  }
  renderedEnd(j: number): number {
    return this.srcData + this.dv.getUint32(this.hitTable + 4 * j, true) - 1;
  }

  source(i: number): string {
    return this.b.toString('utf8', this.sourceStart(i), this.sourceEnd(i));
  }
}

/** Whether a reply is a page (else it is JSON: an error). */
export const isPage = (data: Uint8Array): boolean => data.length > 0 && data[0] === PAGE_MAGIC;
