/**
 * Binary image of one shard store for snapshots: per-doc arrays, raw `_source` texts, ids,
 * routings, tombstones and every column (doc values, ordinals, postings) as they stood at a
 * `ShardStore.freeze()`, so loading costs memcpy and a few big string decodes instead of parsing and
 * re-indexing every document. Running sums (`Cumulative`) and the id map are rebuilt on load; they
 * are cheap loops over the arrays.
 */
import { ByteReader, ChunkWriter, SnapshotFormatError } from '../base/binary';
import { Cumulative, KeywordColumn, NumericColumn, Postings, TextColumn, docFreq, type Column, type NumVal, type PostingRef, type BufferPostingRef } from '../index/columns';
import type { FieldType } from '../types';
import type { FrozenStore, IndexBuffer, LoadedStore, Tombstone } from '../index/indexBuffer';

const ColumnKind = { Numeric: 0, Keyword: 1, Text: 2 } as const;

/** Writes the part of `store` that `frozen` describes. */
export function encodeStore(w: ChunkWriter, store: IndexBuffer, frozen: FrozenStore): void {
  for (const _ of encodeStoreSteps(w, store, frozen));
}

/**
 * `encodeStore` in steps of a few milliseconds each (a string chunk, a column), so a snapshot can
 * give the event loop a turn in between. Safe because everything read is bounded by `frozen`:
 * writes in between only append docs >= maxDoc or delete with seqNos > seqNo.
 */
export function* encodeStoreSteps(w: ChunkWriter, store: IndexBuffer, frozen: FrozenStore): Generator<void> {
  const { maxDoc, seqNo, refreshed } = frozen;
  const { routings, delLog } = store.internals();
  w.u32(maxDoc);
  w.f64(seqNo);
  w.u32(refreshed.maxDoc);
  w.f64(refreshed.seqNo);
  yield* w.stringSteps(store.ids, 0, maxDoc);
  yield* w.stringSteps(store.sources, 0, maxDoc);
  w.typed(store.seqNos, maxDoc);
  // A delete applied after the freeze has a higher seqNo: as of the freeze the doc was live.
  const delSeq = store.delSeq.slice(0, maxDoc);
  for (let d = 0; d < maxDoc; d++) if (delSeq[d] > seqNo) delSeq[d] = Infinity;
  w.typed(delSeq, maxDoc);
  w.typed(store.versions, maxDoc);
  w.typed(delLog, frozen.delCount);
  yield;
  const rDocs: number[] = [];
  const rVals: string[] = [];
  for (const [doc, r] of routings) if (doc < maxDoc) rDocs.push(doc), rVals.push(r);
  w.typed(Int32Array.from(rDocs), rDocs.length);
  w.strings(rVals);
  const tIds = [...frozen.tombstones.keys()];
  const tombs = [...frozen.tombstones.values()];
  w.strings(tIds);
  w.typed(Float64Array.from(tombs, (t) => t.version), tombs.length);
  w.typed(Float64Array.from(tombs, (t) => t.seqNo), tombs.length);
  const cols = [...store.columns].slice(0, frozen.columnCount);
  w.u32(cols.length);
  for (const [path, col] of cols) {
    yield;
    w.str(path);
    if (col instanceof NumericColumn) {
      w.u8(ColumnKind.Numeric);
      w.str(col.type);
      encodeNumeric(w, col, maxDoc);
    } else if (col instanceof KeywordColumn) {
      w.u8(ColumnKind.Keyword);
      encodeKeyword(w, col, maxDoc);
    } else {
      w.u8(ColumnKind.Text);
      encodeText(w, col, maxDoc);
    }
  }
}

/** Reads what encodeStore wrote. Throws SnapshotFormatError on any inconsistency. */
export function decodeStore(r: ByteReader): LoadedStore {
  const maxDoc = r.u32();
  const seqNo = r.f64();
  const refreshed = { maxDoc: r.u32(), seqNo: r.f64() };
  const ids = r.strings();
  const sources = r.strings();
  const seqNos = r.typed(Float64Array);
  const delSeq = r.typed(Float64Array);
  const versions = r.typed(Uint32Array);
  const delLog = r.typed(Float64Array);
  const delCount = delLog.length;
  check(ids.length === maxDoc && sources.length === maxDoc && seqNos.length === maxDoc && delSeq.length === maxDoc && versions.length === maxDoc,
    'doc arrays disagree with maxDoc');
  check(refreshed.maxDoc <= maxDoc && refreshed.seqNo <= seqNo, 'refreshed searcher beyond the shard');
  const rDocs = r.typed(Int32Array);
  const rVals = r.strings();
  check(rDocs.length === rVals.length, 'routing arrays disagree');
  const routings = Array.from(rDocs, (d, i) => [d, rVals[i]] as [number, string]);
  const tIds = r.strings();
  const tVer = r.typed(Float64Array);
  const tSeq = r.typed(Float64Array);
  check(tIds.length === tVer.length && tIds.length === tSeq.length, 'tombstone arrays disagree');
  const tombstones = tIds.map((id, i) => [id, { version: tVer[i], seqNo: tSeq[i] }] as [string, Tombstone]);
  const nCols = r.u32();
  const columns: Array<[string, Column]> = [];
  for (let i = 0; i < nCols; i++) {
    const path = r.str();
    const kind = r.u8();
    if (kind === ColumnKind.Numeric) columns.push([path, decodeNumeric(r, r.str() as FieldType)]);
    else if (kind === ColumnKind.Keyword) columns.push([path, decodeKeyword(r)]);
    else if (kind === ColumnKind.Text) columns.push([path, decodeText(r)]);
    else throw new SnapshotFormatError(`unknown column kind ${kind}`);
  }
  return { maxDoc, seqNo, refreshed, ids, sources, seqNos, delSeq, versions, routings, tombstones, delLog, delCount, columns };
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new SnapshotFormatError(`bad shard image: ${what}`);
}

// ---- numeric ----

function encodeNumeric(w: ChunkWriter, col: NumericColumn, maxDoc: number): void {
  w.typed(col.hi, Math.min(col.hi.length, maxDoc));
  w.u8(col.lo ? 1 : 0);
  if (col.lo) w.typed(col.lo, Math.min(col.lo.length, maxDoc));
  const exact = [...(col.exact ?? [])].filter(([d]) => d < maxDoc);
  w.typed(Int32Array.from(exact, ([d]) => d), exact.length);
  w.strings(exact.map(([, b]) => b.toString()));
  const multi = [...(col.multi ?? [])].filter(([d]) => d < maxDoc);
  w.typed(Int32Array.from(multi, ([d]) => d), multi.length);
  w.typed(Uint32Array.from(multi, ([, v]) => v.length), multi.length);
  const vals = multi.flatMap(([, v]) => v);
  w.typed(Float64Array.from(vals, (v) => v.hi), vals.length);
  w.typed(Int32Array.from(vals, (v) => v.lo), vals.length);
  const bigAt: number[] = [];
  vals.forEach((v, i) => v.big !== undefined && bigAt.push(i));
  w.typed(Int32Array.from(bigAt), bigAt.length);
  w.strings(bigAt.map((i) => vals[i].big!.toString()));
  const flagged = multi.length > 0 && col.multiFlag !== null;
  w.u8(flagged ? 1 : 0);
  if (flagged) w.typed(col.multiFlag!, Math.min(col.multiFlag!.length, maxDoc));
}

function decodeNumeric(r: ByteReader, type: FieldType): NumericColumn {
  const col = new NumericColumn(type);
  col.hi = r.typed(Float64Array);
  col.lo = r.u8() ? r.typed(Int32Array) : null;
  const exDocs = r.typed(Int32Array);
  const exVals = r.strings();
  check(exDocs.length === exVals.length, 'exact long arrays disagree');
  if (exDocs.length) col.exact = new Map(Array.from(exDocs, (d, i) => [d, BigInt(exVals[i])]));
  const mDocs = r.typed(Int32Array);
  const mCounts = r.typed(Uint32Array);
  const his = r.typed(Float64Array);
  const los = r.typed(Int32Array);
  const bigAt = r.typed(Int32Array);
  const bigs = r.strings();
  check(mDocs.length === mCounts.length && his.length === los.length && bigAt.length === bigs.length, 'multi-value arrays disagree');
  const vals: NumVal[] = Array.from(his, (hi, i) => ({ hi, lo: los[i] }));
  bigAt.forEach((at, i) => {
    check(at < vals.length, 'exact multi-value out of range');
    vals[at].big = BigInt(bigs[i]);
  });
  if (mDocs.length) {
    col.multi = new Map();
    let p = 0;
    for (let i = 0; i < mDocs.length; i++) {
      check(p + mCounts[i] <= vals.length, 'multi-value counts overrun');
      col.multi.set(mDocs[i], vals.slice(p, (p += mCounts[i])));
    }
  }
  if (r.u8()) col.multiFlag = r.typed(Uint8Array);
  return col;
}

// ---- postings ----

/** Postings truncated to docs < maxDoc, in the shape they had then (a lone tf-1 doc is a bare number). */
function encodePostings(w: ChunkWriter, refs: Array<PostingRef | undefined>, maxDoc: number): void {
  const lens = new Int32Array(refs.length);
  const hasFreqs = new Uint8Array(refs.length);
  let total = 0;
  let totalFreqs = 0;
  refs.forEach((ref, i) => {
    const n = docFreq(ref, maxDoc);
    const p = typeof ref === 'object' ? ref : undefined;
    const bare = n === 1 && (typeof ref === 'number' || !p!.freqs || p!.freqs[0] === 1);
    lens[i] = bare ? -1 : n;
    total += n;
    if (!bare && p?.freqs && p.freqs.subarray(0, n).some((f) => f !== 1)) {
      hasFreqs[i] = 1;
      totalFreqs += n;
    }
  });
  const docs = new Int32Array(total);
  const freqs = new Uint16Array(totalFreqs);
  let at = 0;
  let fAt = 0;
  refs.forEach((ref, i) => {
    if (typeof ref === 'number') {
      if (lens[i] === -1) docs[at++] = ref;
      return;
    }
    if (!ref) return;
    const n = lens[i] === -1 ? 1 : lens[i];
    docs.set(ref.docs.subarray(0, n), at);
    at += n;
    if (hasFreqs[i]) {
      freqs.set(ref.freqs!.subarray(0, n), fAt);
      fAt += n;
    }
  });
  w.typed(lens, lens.length);
  w.typed(hasFreqs, hasFreqs.length);
  w.typed(docs, docs.length);
  w.typed(freqs, freqs.length);
}

function decodePostings(r: ByteReader): BufferPostingRef[] {
  const lens = r.typed(Int32Array);
  const hasFreqs = r.typed(Uint8Array);
  const docs = r.typed(Int32Array);
  const freqs = r.typed(Uint16Array);
  check(lens.length === hasFreqs.length, 'postings arrays disagree');
  const out = new Array<BufferPostingRef>(lens.length);
  let at = 0;
  let fAt = 0;
  for (let i = 0; i < lens.length; i++) {
    const n = lens[i];
    if (n === -1) {
      check(at < docs.length, 'postings overrun');
      out[i] = docs[at++];
      continue;
    }
    check(n >= 0 && at + n <= docs.length, 'postings overrun');
    // Views into one array: the first append grows (copies) a list, so neighbours are never overwritten.
    const f = hasFreqs[i] ? freqs.subarray(fAt, (fAt += n)) : null;
    check(fAt <= freqs.length, 'frequencies overrun');
    out[i] = Postings.of(docs.subarray(at, (at += n)), f, n);
  }
  return out;
}

// ---- keyword and text ----

function encodeKeyword(w: ChunkWriter, col: KeywordColumn, maxDoc: number): void {
  // Ordinals follow first appearance, so the terms seen before maxDoc are a prefix.
  let nTerms = col.terms.length;
  while (nTerms > 0 && docFreq(col.postings[nTerms - 1], maxDoc) === 0) nTerms--;
  w.strings(col.terms, 0, nTerms);
  encodePostings(w, col.postings.slice(0, nTerms), maxDoc);
  w.typed(col.ords, Math.min(col.ords.length, maxDoc));
  const multi = [...(col.multi ?? [])].filter(([d]) => d < maxDoc);
  w.typed(Int32Array.from(multi, ([d]) => d), multi.length);
  w.typed(Uint32Array.from(multi, ([, o]) => o.length), multi.length);
  const flat = multi.flatMap(([, o]) => o);
  w.typed(Int32Array.from(flat), flat.length);
}

function decodeKeyword(r: ByteReader): KeywordColumn {
  const col = new KeywordColumn();
  const terms = r.strings();
  const postings = decodePostings(r);
  check(terms.length === postings.length, 'keyword terms and postings disagree');
  for (let o = 0; o < terms.length; o++) {
    col.dict.set(terms[o], o);
    col.terms.push(terms[o]);
    col.postings.push(postings[o]);
  }
  col.ords = r.typed(Int32Array);
  const mDocs = r.typed(Int32Array);
  const mCounts = r.typed(Uint32Array);
  const flat = r.typed(Int32Array);
  check(mDocs.length === mCounts.length, 'keyword multi-value arrays disagree');
  if (mDocs.length) {
    col.multi = new Map();
    let p = 0;
    for (let i = 0; i < mDocs.length; i++) {
      check(p + mCounts[i] <= flat.length, 'keyword multi-value counts overrun');
      col.multi.set(mDocs[i], Array.from(flat.subarray(p, (p += mCounts[i]))));
    }
  }
  // Same adds, same order as KeywordColumn.add: identical checkpoints.
  rebuild(col.docCount, col.ords.length, (d) => (col.ords[d] >= 0 ? 1 : -1));
  rebuild(col.sumDocFreq, col.ords.length, (d) => (col.ords[d] >= 0 ? col.multi?.get(d)?.length ?? 1 : -1));
  return col;
}

function encodeText(w: ChunkWriter, col: TextColumn, maxDoc: number): void {
  const entries = [...col.dict].filter(([, ref]) => docFreq(ref, maxDoc) > 0);
  w.strings(entries.map(([t]) => t));
  encodePostings(w, entries.map(([, ref]) => ref), maxDoc);
  w.typed(col.lens, Math.min(col.lens.length, maxDoc));
}

function decodeText(r: ByteReader): TextColumn {
  const col = new TextColumn();
  col.hasPositions = false; // legacy images carry no positions: phrases re-analyze `_source` (query/positions.ts)
  const terms = r.strings();
  const postings = decodePostings(r);
  check(terms.length === postings.length, 'text terms and postings disagree');
  for (let i = 0; i < terms.length; i++) col.dict.set(terms[i], postings[i]);
  col.lens = r.typed(Uint32Array);
  rebuild(col.sumLen, col.lens.length, (d) => (col.lens[d] > 0 ? col.lens[d] - 1 : -1));
  rebuild(col.docCount, col.lens.length, (d) => (col.lens[d] > 1 ? 1 : -1));
  return col;
}

/** Re-adds per-doc amounts in doc order (amount < 0 = the doc did not add). */
function rebuild(c: Cumulative, n: number, amountOf: (doc: number) => number): void {
  for (let d = 0; d < n; d++) {
    const a = amountOf(d);
    if (a >= 0) c.add(d, a);
  }
}
