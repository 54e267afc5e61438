/**
 * What the query side reads of a field in one segment ("leaf"), whether the segment is the
 * in-memory indexing buffer (columns.ts) or an immutable segment on disk (../segments/). Doc ids
 * are the segment's own, [0, maxDoc); arrays may be shorter than maxDoc (docs without the field at
 * the end).
 *
 * A new kind of column plugs in here: add its view interface with a `kind` discriminant to
 * {@link ColumnView}, implement it in the buffer (columns.ts: what `columnFor` builds from parsed
 * values) and in the segment format (segments/: writer and reader), and read it in the queries,
 * sorts and aggregations through the interface only.
 */
import type { FieldType } from '../types';
import { lowerBound } from '../base/bits';
import type { FieldStats } from './analysis';

export type { FieldStats } from './analysis';

/** A posting list: ascending doc ids with term frequencies (null = all 1); `len` entries used. */
export interface PostingList {
  readonly docs: Int32Array;
  readonly freqs: Uint16Array | null;
  readonly len: number;
}

/** A single doc with tf 1 may be a bare number (most terms of a large vocabulary are rare). */
export type PostingRef = number | PostingList;

/** Number of postings with doc < maxDoc. */
export function docFreq(ref: PostingRef | undefined, maxDoc: number): number {
  if (ref === undefined) return 0;
  if (typeof ref === 'number') return ref < maxDoc ? 1 : 0;
  return lowerBound(ref.docs, ref.len, maxDoc);
}

/** Calls `fn(doc, tf)` for postings with doc < maxDoc, ascending. */
export function forEachPosting(ref: PostingRef | undefined, maxDoc: number, fn: (doc: number, tf: number) => void): void {
  if (ref === undefined) return;
  if (typeof ref === 'number') {
    if (ref < maxDoc) fn(ref, 1);
    return;
  }
  const { docs, freqs } = ref;
  const n = lowerBound(docs, ref.len, maxDoc);
  for (let i = 0; i < n; i++) fn(docs[i], freqs ? freqs[i] : 1);
}

/** A posting list as an object (a bare doc number becomes a one-entry list). */
export function postingList(ref: PostingRef): PostingList {
  return typeof ref === 'number' ? { docs: Int32Array.of(ref), freqs: null, len: 1 } : ref;
}

/** A numeric value split for exact ordering: (hi, lo) lexicographic, then `big` (exact long) on ties. */
export interface NumVal {
  hi: number;
  lo: number;
  big?: bigint;
}

const cmpBig = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);

/** Exact ascending comparison of two numeric values. */
export const cmpNum = (a: NumVal, b: NumVal): number =>
  a.hi !== b.hi ? (a.hi < b.hi ? -1 : 1) : a.lo !== b.lo ? a.lo - b.lo : a.big === undefined && b.big === undefined ? 0 : cmpBig(a.big ?? BigInt(a.hi), b.big ?? BigInt(b.hi));

/** Frontiers of the full blocks [0, blocks) of one posting list, flattened (see impacts.ts). */
export interface BlockImpacts {
  blocks: number;
  /** Frontier of block b: entries [off[b], off[b + 1]). */
  off: Int32Array;
  tf: Uint16Array;
  norm: Uint8Array;
  /** Entries used. */
  size: number;
  /** Last doc of each full block. */
  last: Int32Array;
}

/**
 * Numeric doc values (numbers, dates, booleans). Integers and dates keep hi = value (millis for
 * dates); longs beyond 2^53 also have an exact bigint; date_nanos keeps hi = epoch millis and lo =
 * nanos within the milli. A multi-valued doc keeps every value, ascending; `hi` holds its minimum.
 */
export interface NumericView {
  readonly kind: 'numeric';
  readonly type: FieldType;
  /** Primary double per doc; NaN = no value. */
  readonly hi: Float64Array;
  /** Nanos within the milli (date_nanos only). */
  readonly lo: Int32Array | null;
  /** No `lo`, no exact longs, no multi-valued doc: `hi` alone is the value. */
  readonly simple: boolean;
  /** Some doc has a long beyond 2^53 (sorts then break `hi` ties exactly). */
  readonly hasExact: boolean;
  has(doc: number): boolean;
  exactOf(doc: number): bigint | undefined;
  isMulti(doc: number): boolean;
  /** Every value of a multi-valued doc (ascending); undefined for single-valued docs. */
  multiOf(doc: number): NumVal[] | undefined;
  /** All values of a doc (ascending), empty when missing. */
  numVals(doc: number): NumVal[];
  /** Doc values as DocValuesReader returns them. */
  natural(doc: number): Array<number | bigint | boolean>;
}

/** Keyword doc values: per-doc ordinals into the segment's term dictionary, and postings per term. */
export interface KeywordView {
  readonly kind: 'keyword';
  /** Ordinal of each doc's smallest value; -1 = no value. */
  readonly ords: Int32Array;
  readonly numTerms: number;
  termOf(ord: number): string;
  /** -1 when the term is not in the dictionary. */
  ordOf(term: string): number;
  postingsOf(ord: number): PostingRef;
  /** Ordinals of a doc with several distinct values (sorted by term); undefined otherwise. */
  multiOrds(doc: number): number[] | undefined;
  /** Every term with its ordinal (the buffer: insertion order; a disk segment: sorted). */
  forEachTerm(fn: (term: string, ord: number) => void): void;
  /** Values of a doc, sorted; empty when missing. */
  values(doc: number): string[];
  /** Docs with a value and the number of (doc, value) pairs among docs < maxDoc (deleted ones included). */
  stats(maxDoc: number): FieldStats;
}

/**
 * Term positions of one posting list, aligned with it: the positions of posting i (doc
 * `docs[i]`) are `pos[starts[i]] .. pos[starts[i + 1] - 1]`, ascending (token index in the field,
 * values of a multi-valued field separated by the position increment gap, as ES: 100).
 */
export interface PositionList {
  readonly starts: Uint32Array;
  readonly pos: Uint32Array;
}

/** The inverted index of an analysed text field, with per-doc field lengths for BM25. */
export interface TextView {
  readonly kind: 'text';
  /** Field length + 1 per doc; 0 = field absent. */
  readonly lens: Uint32Array;
  has(doc: number): boolean;
  postings(term: string): PostingRef | undefined;
  forEachTerm(fn: (term: string, ref: PostingRef) => void): void;
  /** Impacts of the full blocks of a posting list of this field (impacts.ts). */
  impacts(p: PostingList): BlockImpacts;
  /** Positions of a term's postings (phrase, span and interval queries); undefined when the term is absent or positions are not indexed. */
  positions?(term: string): PositionList | undefined;
  /** Docs with the field and the sum of their lengths among docs < maxDoc (deleted ones included). */
  stats(maxDoc: number): FieldStats;
}

/** Any column of a field in one segment. */
export type ColumnView = NumericView | KeywordView | TextView;
