/**
 * The segment reader: `openSegment(path, cache)` reads the footer and the bloom filter (kept on
 * the segment, about 10 bits per id); everything else is loaded on first use through the cache.
 * A DiskSegment is a LeafData (merges read it like the buffer), plus what the shard engine needs:
 * ids to docs, seqNos to binary-search, sources in runs, tombstones, column views.
 */
import { openSync, closeSync, readSync, fstatSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { lowerBound } from '../base/bits';
import type { ColumnView } from '../index/columnViews';
import { SegmentCache, type CacheEntry } from './cache';
import { DiskNumericView } from './diskNumeric';
import { DiskKeywordView, DiskTextView } from './diskTerms';
import { Sec, SegmentFormatError, TRAILER_BYTES, type SegmentMeta } from './format';
import type { LeafData, TombstoneRec } from './leaf';
import { SegmentFile } from './segmentFile';
import { bloomHas, StringTable } from './strings';

/** Sources of docs this far apart (bytes in between) are still read with one read. */
const GAP = 16 << 10;

export class DiskSegment implements LeafData {
  readonly meta: SegmentMeta;
  readonly maxDoc: number;
  private readonly file: SegmentFile;
  private readonly bloom: Uint32Array;
  private readonly bloomK: number;
  private readonly fieldIndex = new Map<string, number>();
  private readonly views = new Map<string, ColumnView>();
  private readonly memo = new Map<string, CacheEntry>();
  private idsMemo?: { offs: CacheEntry; bytes: CacheEntry; table: StringTable };
  private routingMemo?: { offs: CacheEntry; bytes: CacheEntry; table: StringTable };
  private tombMemo?: { offs: CacheEntry; bytes: CacheEntry; table: StringTable };

  constructor(readonly path: string, readonly cache: SegmentCache) {
    this.file = new SegmentFile(path, cache);
    try {
      const f = this.file.footer;
      this.meta = { ...f.meta, sizeBytes: this.file.size };
      this.maxDoc = this.meta.maxDoc;
      f.fields.forEach((p, i) => this.fieldIndex.set(p, i));
      this.bloomK = f.bloomK;
      const b = this.file.entry(Sec.bloom)!;
      const buf = this.file.read(b.offset, b.length);
      if (crc32(new Uint8Array(buf)) !== b.crc) throw new SegmentFormatError(`${path}: bloom filter checksum mismatch`);
      this.bloom = new Uint32Array(buf);
    } catch (e) {
      this.file.close();
      throw e;
    }
    this.file.onEvict = (name) => this.evicted(name);
  }

  /** The cache's name for this segment (pass it to `SegmentCache.evictSegment` once the file is deleted). */
  get cacheKey(): string {
    return this.file.cacheKey;
  }

  /** Heap and external bytes this segment holds outside the cache (footer, bloom filter). */
  get residentBytes(): number {
    return this.bloom.byteLength + this.file.footer.sections.length * 64 + 1024;
  }

  // ---- sections kept through the cache ----

  private sec<T extends ArrayBufferView>(name: string): T {
    const e = this.memo.get(name);
    if (e !== undefined && e.live) return e.value as T;
    const n = this.file.section<T>(name);
    if (n.live) this.memo.set(name, n);
    return n.value;
  }

  private evicted(name: string): void {
    this.memo.delete(name);
    const m = /^f(\d+)\./.exec(name);
    if (m) this.views.delete(this.file.footer.fields[Number(m[1])]);
  }

  private table(offs: string, bytes: string, memo: DiskSegment['idsMemo']): { offs: CacheEntry; bytes: CacheEntry; table: StringTable } {
    if (memo && memo.offs.live && memo.bytes.live) return memo;
    const o = this.file.section<Uint32Array>(offs), b = this.file.section<Uint8Array>(bytes);
    return { offs: o, bytes: b, table: new StringTable(o.value, b.value, this.file.footer.utf16?.includes(offs) ?? false) };
  }

  private get ids(): StringTable {
    return (this.idsMemo = this.table(Sec.idOffs, Sec.idBytes, this.idsMemo)).table;
  }

  private seqE?: CacheEntry<Float64Array>;

  /** seqNo of every doc, ascending in doc order (an off-heap view; binary-search it). */
  get seqNos(): Float64Array {
    // the hottest section (a doc's _doc id is its seqNo): its entry is held in a field, not the memo map
    const e = this.seqE;
    if (e !== undefined && e.live) return e.value!;
    const n = this.file.section<Float64Array>(Sec.seqNos);
    this.seqE = n;
    return n.value;
  }

  /** Version of every doc. */
  get versions(): Uint32Array | Float64Array {
    return this.sec<Uint32Array | Float64Array>(Sec.versions);
  }

  // ---- LeafData ----

  idOf(doc: number): string {
    return this.ids.get(doc);
  }

  seqNoOf(doc: number): number {
    return this.seqNos[doc];
  }

  versionOf(doc: number): number {
    return this.versions[doc];
  }

  routingOf(doc: number): string | undefined {
    if (!this.file.has(Sec.routingDocs)) return undefined;
    const docs = this.sec<Int32Array>(Sec.routingDocs);
    const i = lowerBound(docs, docs.length, doc);
    if (i >= docs.length || docs[i] !== doc) return undefined;
    return (this.routingMemo = this.table(Sec.routingOffs, Sec.routingBytes, this.routingMemo)).table.get(i);
  }

  /** Whether any doc has a custom routing. */
  hasRouting(): boolean {
    return this.file.has(Sec.routingDocs);
  }

  sourceOf(doc: number): Uint8Array {
    return this.sourceBytes(doc);
  }

  /** Raw `_source` bytes of a doc (UTF-8 JSON). */
  sourceBytes(doc: number): Uint8Array {
    return this.sourcesOf([doc])[0];
  }

  /** `_source` of a doc as text. */
  source(doc: number): string {
    const b = this.sourceBytes(doc);
    return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8');
  }

  /**
   * Sources of several docs (ascending for best effect): docs that are adjacent, or close, on
   * disk are read with one positional read, so a page of consecutive docs costs one read.
   */
  sourcesOf(docs: ArrayLike<number>): Uint8Array[] {
    const offs = this.sec<Uint32Array | Float64Array>(Sec.srcOffs);
    const base = this.file.entry(Sec.src)!.offset;
    const out = new Array<Uint8Array>(docs.length);
    for (let i = 0; i < docs.length; ) {
      let j = i;
      while (j + 1 < docs.length && docs[j + 1] > docs[j] && offs[docs[j + 1]] - offs[docs[j] + 1] <= GAP) j++;
      const from = offs[docs[i]], to = offs[docs[j] + 1];
      const buf = Buffer.allocUnsafe(to - from);
      this.file.readInto(buf, base + from);
      for (let k = i; k <= j; k++) out[k] = buf.subarray(offs[docs[k]] - from, offs[docs[k] + 1] - from);
      i = j + 1;
    }
    return out;
  }

  fieldPaths(): string[] {
    return [...this.file.footer.fields];
  }

  column(path: string): ColumnView | undefined {
    let v = this.views.get(path);
    if (v) return v;
    const i = this.fieldIndex.get(path);
    if (i === undefined) return undefined;
    const f = this.meta.fields[path];
    v = f.kind === 'numeric' ? new DiskNumericView(this.file, i, f.type)
      : f.kind === 'keyword' ? new DiskKeywordView(this.file, i, f, this.maxDoc) : new DiskTextView(this.file, i, f, this.maxDoc);
    this.views.set(path, v);
    return v;
  }

  *tombstones(): Iterable<TombstoneRec> {
    const n = this.meta.tombstones;
    if (n === 0) return;
    const t = this.tombTable();
    const seq = this.sec<Float64Array>(Sec.tombSeqNos), ver = this.sec<Float64Array>(Sec.tombVersions);
    for (let i = 0; i < n; i++) yield { id: t.get(i), seqNo: seq[i], version: ver[i] };
  }

  // ---- lookups by id ----

  /** False when no doc or tombstone of this segment has `id` (a bloom filter: true may be a false positive). */
  mayContainId(id: string): boolean {
    return bloomHas(this.bloom, id, this.bloomK);
  }

  /** Local docs holding `id`, ascending (several when the id was updated within the segment's life). */
  docsOfId(id: string): number[] {
    if (this.maxDoc === 0) return [];
    return this.ids.lookup(this.sec<Int32Array>(Sec.idHash), id);
  }

  /** The delete op recorded for `id` (an id with no live doc here), if any. */
  tombstoneOf(id: string): { seqNo: number; version: number } | undefined {
    if (this.meta.tombstones === 0) return undefined;
    const hits = this.tombTable().lookup(this.sec<Int32Array>(Sec.tombHash), id);
    if (hits.length === 0) return undefined;
    const i = hits[hits.length - 1];
    return { seqNo: this.sec<Float64Array>(Sec.tombSeqNos)[i], version: this.sec<Float64Array>(Sec.tombVersions)[i] };
  }

  private tombTable(): StringTable {
    return (this.tombMemo = this.table(Sec.tombOffs, Sec.tombBytes, this.tombMemo)).table;
  }

  /** Closes the file; views already handed out stay valid, new reads fail. */
  close(): void {
    this.file.close();
  }
}

/** Opens a segment file, reading only its footer and bloom filter. */
export function openSegment(path: string, cache: SegmentCache): DiskSegment {
  return new DiskSegment(path, cache);
}

/** Checks every byte of a segment file against its checksums (after a copy or a restore); throws SegmentFormatError. */
export function verifySegment(path: string): SegmentMeta {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size < TRAILER_BYTES) throw new SegmentFormatError(`${path}: too short`);
    const t = Buffer.alloc(TRAILER_BYTES);
    readSync(fd, t, 0, TRAILER_BYTES, size - TRAILER_BYTES);
    const footerAt = t.readDoubleLE(0);
    const buf = Buffer.allocUnsafe(1 << 20);
    let crc = 0;
    for (let at = 0; at < footerAt; ) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, footerAt - at), at);
      if (n === 0) throw new SegmentFormatError(`${path}: truncated`);
      crc = crc32(buf.subarray(0, n), crc);
      at += n;
    }
    if (crc !== t.readUInt32LE(16)) throw new SegmentFormatError(`${path}: body checksum mismatch`);
  } finally {
    closeSync(fd);
  }
  // magic, version and footer checksum
  const f = new SegmentFile(path, new SegmentCache({ maxBytes: 0 }));
  f.close();
  return { ...f.footer.meta, sizeBytes: f.size };
}
