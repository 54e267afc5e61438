/**
 * Per-field, append-only column stores of the in-memory segment (the indexing buffer): numeric doc
 * values (Float64Array + exact side structures), keyword ordinals with postings, text postings with
 * field lengths. Doc ids only grow, so any searcher sees a consistent prefix [0, maxDoc) of every
 * column without copying. They implement the column views (columnViews.ts) the query side reads,
 * as the on-disk segments do.
 */
import type { FieldType } from '../types';
import type { Instant } from '../base/dates';
import type { FieldValue } from './docParser';
import { analyze, tokenPositions, type FieldStats } from './analysis';
import { compareStrings, grow, lowerBound } from '../base/bits';
import type { BlockImpacts, KeywordView, NumericView, PositionList, PostingList, PostingRef, TextView } from './columnViews';
import { impactsOf } from './impacts';
import { isEncoded } from './fieldCodecs';

export type { PostingList, PostingRef, ColumnView, KeywordView, NumericView, TextView, NumVal } from './columnViews';
export { cmpNum, docFreq, forEachPosting } from './columnViews';
import { cmpNum, type NumVal } from './columnViews';

/** A posting list: ascending doc ids with term frequencies (null = all 1). */
export class Postings implements PostingList {
  docs = new Int32Array(4);
  freqs: Uint16Array | null = null;
  len = 0;
  /** A list over existing arrays (snapshot load); the first `add` copies them into its own. */
  static of(docs: Int32Array<ArrayBuffer>, freqs: Uint16Array<ArrayBuffer> | null, len: number): Postings {
    const p = new Postings();
    p.docs = docs;
    p.freqs = freqs;
    p.len = len;
    return p;
  }
  add(doc: number, tf: number): void {
    const n = this.len;
    this.docs = grow(this.docs, n + 1);
    if (tf !== 1 && !this.freqs) this.freqs = new Uint16Array(this.docs.length).fill(1);
    if (this.freqs) {
      this.freqs = grow(this.freqs, this.docs.length, 1);
      this.freqs[n] = Math.min(tf, 65535);
    }
    this.docs[n] = doc;
    this.len = n + 1;
  }
}


/** A posting list of the buffer: a bare doc number (tf 1) or a growing Postings. */
export type BufferPostingRef = number | Postings;

/** Appends (doc, tf) to a posting list, upgrading a bare doc number to a Postings. */
export function appendPosting(ref: BufferPostingRef | undefined, doc: number, tf: number): BufferPostingRef {
  if (ref === undefined && tf === 1) return doc;
  const p = typeof ref === 'object' ? ref : new Postings();
  if (typeof ref === 'number') p.add(ref, 1);
  p.add(doc, tf);
  return p;
}


/**
 * Running sum over doc ids with a checkpoint every 1024 docs, so a sum "over docs < maxDoc" for any
 * past maxDoc costs at most 1023 per-doc lookups.
 */
export class Cumulative {
  private blocks = new Float64Array(16);
  private nBlocks = 0;
  total = 0;
  add(doc: number, amount: number): void {
    const b = doc >>> 10;
    if (this.nBlocks <= b) {
      this.blocks = grow(this.blocks, b + 1);
      while (this.nBlocks <= b) this.blocks[this.nBlocks++] = this.total;
    }
    this.total += amount;
  }
  before(maxDoc: number, amountOf: (doc: number) => number): number {
    const b = maxDoc >>> 10;
    if (b >= this.nBlocks) return this.total;
    let s = this.blocks[b];
    for (let d = b << 10; d < maxDoc; d++) s += amountOf(d);
    return s;
  }
}


/**
 * Numeric doc values. Integers and dates keep hi = value (millis for dates); longs beyond 2^53 are
 * also kept exactly in `exact`; date_nanos keeps hi = epoch millis and lo = nanos within the milli.
 * Multi-valued docs keep every value (ascending) in `multi`; `hi` holds their minimum.
 */
export class NumericColumn implements NumericView {
  readonly kind = 'numeric' as const;
  hi = new Float64Array(16).fill(NaN);
  lo: Int32Array | null;
  exact: Map<number, bigint> | null = null;
  multi: Map<number, NumVal[]> | null = null;
  multiFlag: Uint8Array | null = null;
  constructor(readonly type: FieldType) {
    this.lo = type === 'date_nanos' ? new Int32Array(16) : null;
  }

  toNumVal(v: FieldValue): NumVal {
    if (typeof v === 'object') return { hi: (v as Instant).ms, lo: this.lo ? (v as Instant).ns : 0 };
    if (typeof v === 'bigint') return { hi: Number(v), lo: 0, big: v };
    return { hi: v as number, lo: 0 };
  }

  add(doc: number, values: FieldValue[]): void {
    this.hi = grow(this.hi, doc + 1, NaN);
    if (this.lo) this.lo = grow(this.lo, doc + 1);
    if (values.length === 1) {
      // One value (the usual case): no NumVal object made; the same as the general path below.
      const v = values[0];
      if (typeof v === 'object') {
        this.hi[doc] = (v as Instant).ms;
        if (this.lo) this.lo[doc] = (v as Instant).ns;
      } else if (typeof v === 'bigint') {
        this.hi[doc] = Number(v);
        if (this.lo) this.lo[doc] = 0;
        (this.exact ??= new Map()).set(doc, v);
      } else {
        this.hi[doc] = v as number;
        if (this.lo) this.lo[doc] = 0;
      }
      return;
    }
    const vals = values.map((v) => this.toNumVal(v));
    if (vals.length > 1) vals.sort(cmpNum);
    const first = vals[0];
    this.hi[doc] = first.hi;
    if (this.lo) this.lo[doc] = first.lo;
    if (first.big !== undefined) (this.exact ??= new Map()).set(doc, first.big);
    if (vals.length > 1) {
      (this.multi ??= new Map()).set(doc, vals);
      this.multiFlag = grow(this.multiFlag ?? new Uint8Array(16), doc + 1);
      this.multiFlag[doc] = 1;
    }
  }

  has(doc: number): boolean {
    return doc < this.hi.length && this.hi[doc] === this.hi[doc];
  }

  get simple(): boolean {
    return !this.lo && !this.exact && !this.multiFlag;
  }

  get hasExact(): boolean {
    return this.exact !== null;
  }

  exactOf(doc: number): bigint | undefined {
    return this.exact?.get(doc);
  }

  isMulti(doc: number): boolean {
    return this.multiFlag !== null && this.multiFlag[doc] === 1;
  }

  multiOf(doc: number): NumVal[] | undefined {
    return this.multi?.get(doc);
  }

  /** All values of a doc (ascending), empty when missing. */
  numVals(doc: number): NumVal[] {
    if (!this.has(doc)) return [];
    if (this.multiFlag && this.multiFlag[doc]) return this.multi!.get(doc)!;
    return [{ hi: this.hi[doc], lo: this.lo ? this.lo[doc] : 0, big: this.exact?.get(doc) }];
  }

  /** Doc values as DocValuesReader returns them. */
  natural(doc: number): Array<number | bigint | boolean> {
    return this.numVals(doc).map((v) => {
      if (this.type === 'boolean') return v.hi !== 0;
      if (this.type === 'date_nanos') return BigInt(v.hi) * 1_000_000n + BigInt(v.lo);
      return v.big ?? v.hi;
    });
  }
}

/** Keyword doc values (ordinals into insertion-ordered terms) plus postings per term. */
export class KeywordColumn implements KeywordView {
  readonly kind = 'keyword' as const;
  readonly dict = new Map<string, number>();
  readonly terms: string[] = [];
  readonly postings: BufferPostingRef[] = [];
  ords = new Int32Array(16).fill(-1);
  /** Docs with several distinct values: ordinals sorted by term. `ords[doc]` is the smallest. */
  multi: Map<number, number[]> | null = null;
  readonly docCount = new Cumulative();
  readonly sumDocFreq = new Cumulative();

  add(doc: number, values: FieldValue[]): void {
    this.ords = grow(this.ords, doc + 1, -1);
    const uniq = values.length === 1 ? (values as string[]) : [...new Set(values as string[])];
    if (uniq.length > 1) uniq.sort(compareStrings);
    const ords = uniq.map((t) => {
      let o = this.dict.get(t);
      if (o === undefined) {
        o = this.terms.length;
        this.dict.set(t, o);
        this.terms.push(t);
        this.postings.push(doc);
      } else this.postings[o] = appendPosting(this.postings[o], doc, 1);
      return o;
    });
    this.ords[doc] = ords[0];
    if (ords.length > 1) (this.multi ??= new Map()).set(doc, ords);
    this.docCount.add(doc, 1);
    this.sumDocFreq.add(doc, ords.length);
  }

  get numTerms(): number {
    return this.terms.length;
  }

  termOf(ord: number): string {
    return this.terms[ord];
  }

  ordOf(term: string): number {
    return this.dict.get(term) ?? -1;
  }

  postingsOf(ord: number): PostingRef {
    return this.postings[ord];
  }

  multiOrds(doc: number): number[] | undefined {
    return this.multi?.get(doc);
  }

  forEachTerm(fn: (term: string, ord: number) => void): void {
    this.terms.forEach(fn);
  }

  /** Values of a doc, sorted; empty when missing. */
  values(doc: number): string[] {
    const o = doc < this.ords.length ? this.ords[doc] : -1;
    if (o < 0) return [];
    const m = this.multi?.get(doc);
    return m ? m.map((x) => this.terms[x]) : [this.terms[o]];
  }

  stats(maxDoc: number): FieldStats {
    const docCount = this.docCount.before(maxDoc, (d) => (this.ords[d] >= 0 ? 1 : 0));
    // ords may be shorter than maxDoc (docs without the field at the end): an absent slot counts 0
    const sum = this.sumDocFreq.before(maxDoc, (d) => (!(this.ords[d] >= 0) ? 0 : this.multi?.get(d)?.length ?? 1));
    return { docCount, sumTotalTermFreq: sum };
  }
}

/** Inverted index of an analysed text field, with per-doc field lengths for BM25. */
/**
 * Positions of one term in the buffer, aligned with its postings: entries [starts[i], starts[i+1])
 * of `pos` belong to posting i. A term seen once (one doc, one position) is just that position.
 */
export class TermPositions implements PositionList {
  starts = new Uint32Array(4);
  pos = new Uint32Array(4);
  /** Postings with positions. */
  n = 0;
  /** A list over existing arrays (snapshot load). */
  static of(starts: Uint32Array<ArrayBuffer>, pos: Uint32Array<ArrayBuffer>, n: number): TermPositions {
    const t = new TermPositions();
    t.starts = starts;
    t.pos = pos;
    t.n = n;
    return t;
  }
  /** Appends the positions of the next posting: `src[order[from..to)]`. */
  add(src: Uint32Array, order: Int32Array | null, from: number, to: number): void {
    const base = this.starts[this.n];
    this.starts = grow(this.starts, this.n + 2);
    this.pos = grow(this.pos, base + (to - from));
    for (let i = from; i < to; i++) this.pos[base + i - from] = src[order ? order[i] : i];
    this.starts[++this.n] = base + (to - from);
  }
}

export class TextColumn implements TextView {
  readonly kind = 'text' as const;
  readonly dict = new Map<string, BufferPostingRef>();
  /** Positions per term (a number: its only posting has one position); absent for loaded snapshots without them. */
  readonly pos = new Map<string, number | TermPositions>();
  /** Whether every doc of the column recorded positions. */
  hasPositions = true;
  /** Field length + 1 per doc; 0 = field absent. */
  lens = new Uint32Array(16);
  readonly docCount = new Cumulative();
  readonly sumLen = new Cumulative();

  /**
   * @param analyzed the values' tokens when the document parser already analyzed them
   * @param valueEnds where each value's tokens end in `analyzed` (several values only)
   */
  add(doc: number, values: FieldValue[], analyzed?: string[], valueEnds?: number[]): void {
    let tokens = analyzed;
    if (!tokens) {
      tokens = [];
      if (values.length > 1) valueEnds = [];
      for (const v of values) {
        for (const t of analyze(v as string)) tokens.push(t);
        valueEnds?.push(tokens.length);
      }
    }
    const n = tokens.length;
    this.lens = grow(this.lens, doc + 1);
    this.lens[doc] = n + 1;
    this.sumLen.add(doc, n);
    if (n > 0) this.docCount.add(doc, 1);
    const positions = tokenPositions(n, valueEnds);
    // token indexes grouped by token, ascending within a token (so their positions ascend)
    const order = sortedOrder(tokens);
    for (let i = 0; i < n; ) {
      let j = i + 1;
      const t = tokens[order[i]];
      while (j < n && tokens[order[j]] === t) j++;
      const prev = this.dict.get(t);
      this.dict.set(t, appendPosting(prev, doc, j - i));
      if (!this.hasPositions) {
        i = j;
        continue;
      }
      const p = this.pos.get(t);
      if (prev === undefined && j - i === 1) this.pos.set(t, positions[order[i]]);
      else {
        let tp: TermPositions;
        if (typeof p === 'object') tp = p;
        else {
          tp = new TermPositions();
          if (p !== undefined) tp.add(Uint32Array.of(p), null, 0, 1);
          this.pos.set(t, tp);
        }
        tp.add(positions, order, i, j);
      }
      i = j;
    }
  }

  has(doc: number): boolean {
    return doc < this.lens.length && this.lens[doc] > 0;
  }

  postings(term: string): PostingRef | undefined {
    return this.dict.get(term);
  }

  positions(term: string): PositionList | undefined {
    if (!this.hasPositions) return undefined;
    const p = this.pos.get(term);
    if (p === undefined) return undefined;
    return typeof p === 'number' ? { starts: Uint32Array.of(0, 1), pos: Uint32Array.of(p) } : { starts: p.starts.subarray(0, p.n + 1), pos: p.pos.subarray(0, p.starts[p.n]) };
  }

  forEachTerm(fn: (term: string, ref: PostingRef) => void): void {
    for (const [t, ref] of this.dict) fn(t, ref);
  }

  impacts(p: PostingList): BlockImpacts {
    return impactsOf(p, this.lens);
  }

  stats(maxDoc: number): FieldStats {
    const docCount = this.docCount.before(maxDoc, (d) => (this.lens[d] > 1 ? 1 : 0));
    const sum = this.sumLen.before(maxDoc, (d) => (this.lens[d] > 0 ? this.lens[d] - 1 : 0));
    return { docCount, sumTotalTermFreq: sum };
  }
}

/** Indexes of `a` ordered by value (UTF-16 order), equal values by index; short arrays by insertion. */
function sortedOrder(a: string[]): Int32Array {
  const n = a.length;
  const o = new Int32Array(n);
  for (let i = 0; i < n; i++) o[i] = i;
  if (n > 16) {
    const arr = Array.from(o).sort((x, y) => (a[x] < a[y] ? -1 : a[x] > a[y] ? 1 : x - y));
    o.set(arr);
    return o;
  }
  for (let i = 1; i < n; i++) {
    const x = o[i];
    const v = a[x];
    let j = i - 1;
    for (; j >= 0 && a[o[j]] > v; j--) o[j + 1] = o[j];
    o[j + 1] = x;
  }
  return o;
}

/** Any column of a field. */
export type Column = NumericColumn | KeywordColumn | TextColumn;

/** A new empty column for a leaf type. */
export function columnFor(type: FieldType): Column {
  if (type === 'keyword' || isEncoded(type)) return new KeywordColumn(); // ip, geo_point, ranges: encoded terms (fieldCodecs.ts)
  if (type === 'text') return new TextColumn();
  return new NumericColumn(type);
}
