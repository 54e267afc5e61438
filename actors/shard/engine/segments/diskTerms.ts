/**
 * KeywordView and TextView over a segment's term columns (writeTerms.ts, postingsWriter.ts).
 * A term is found by binary search over the sorted dictionary bytes; its postings (with the block
 * impacts computed at write time) and positions are read on demand, one positional read per term,
 * and cached by (field, ordinal). A bare doc number stands for a single posting with tf 1.
 */
import { lowerBound } from '../base/bits';
import { impactsOf } from '../index/impacts';
import type { BlockImpacts, FieldStats, KeywordView, PositionList, PostingList, PostingRef, TextView } from '../index/columnViews';
import { BLOCK } from '../index/impacts';
import type { SegmentFieldMeta } from './format';
import { PostFlag } from './postingsWriter';
import type { SegmentFile } from './segmentFile';
import { StringTable } from './strings';

/** A posting list read from a segment, with the impacts stored next to it. */
export class DiskPostings implements PostingList {
  constructor(readonly docs: Int32Array, readonly freqs: Uint16Array | null, readonly len: number, readonly imp: BlockImpacts | null) {}
}

const EMPTY_IMPACTS = (): BlockImpacts => ({ blocks: 0, off: new Int32Array(1), tf: new Uint16Array(0), norm: new Uint8Array(0), size: 0, last: new Int32Array(0) });

/** Parses a postings record of `df` docs at `at` in `buf`. */
export function parsePostings(buf: ArrayBuffer, at: number, df: number): DiskPostings {
  const head = new Uint32Array(buf, at, 2);
  const flags = head[0], entries = head[1];
  let p = at + 8;
  const docs = new Int32Array(buf, p, df);
  p += 4 * df;
  let freqs: Uint16Array | null = null;
  if (flags & PostFlag.Freqs) {
    freqs = new Uint16Array(buf, p, df);
    p += (2 * df + 3) & ~3;
  }
  let imp: BlockImpacts | null = null;
  if (flags & PostFlag.Impacts) {
    const blocks = Math.floor(df / BLOCK);
    const off = new Int32Array(buf, p, blocks + 1);
    p += 4 * (blocks + 1);
    const tf = new Uint16Array(buf, p, entries);
    p += 2 * entries;
    const norm = new Uint8Array(buf, p, entries);
    const last = new Int32Array(blocks);
    for (let b = 0; b < blocks; b++) last[b] = docs[b * BLOCK + BLOCK - 1];
    imp = { blocks, off, tf, norm, size: entries, last };
  }
  return new DiskPostings(docs, freqs, df, imp);
}

/** Dictionary, term directory, postings and prefix statistics shared by both views. */
abstract class TermColumn {
  private _dict?: StringTable;
  private _postOff?: Float64Array;
  private _df?: Int32Array;
  private _posOff?: Float64Array | null;
  private _cumDocs?: Float64Array;
  private _cumSum?: Float64Array;
  /** Direct-mapped cache of decoded terms (bounded heap: at most 4,096 strings per view). */
  private readonly strs: Array<string | undefined>;
  private readonly strOrd: Int32Array;
  readonly numTerms: number;

  constructor(protected readonly file: SegmentFile, protected readonly field: number, protected readonly meta: SegmentFieldMeta, protected readonly maxDoc: number) {
    this.numTerms = meta.terms ?? 0;
    const n = Math.min(4096, Math.max(1, this.numTerms));
    this.strs = new Array<string | undefined>(n);
    this.strOrd = new Int32Array(n).fill(-1);
  }

  protected sec(part: string): string {
    return `f${this.field}.${part}`;
  }

  protected load<T extends ArrayBufferView>(part: string): T {
    return this.file.section<T>(this.sec(part)).value;
  }

  protected get dict(): StringTable {
    if (!this._dict) {
      const offs = this.sec('dict.offs');
      this._dict = new StringTable(this.load('dict.offs'), this.load('dict.bytes'), this.file.footer.utf16?.includes(offs) ?? false);
    }
    return this._dict;
  }

  private get postOff(): Float64Array {
    return (this._postOff ??= this.load('post.off'));
  }

  private get df(): Int32Array {
    return (this._df ??= this.load('post.df'));
  }

  private get posOff(): Float64Array | null {
    if (this._posOff === undefined) this._posOff = this.file.has(this.sec('pos.off')) ? this.load('pos.off') : null;
    return this._posOff;
  }

  termOf(ord: number): string {
    const slot = ord % this.strs.length;
    if (this.strOrd[slot] === ord) return this.strs[slot]!;
    const s = this.dict.get(ord);
    this.strs[slot] = s;
    this.strOrd[slot] = ord;
    return s;
  }

  ordOf(term: string): number {
    return this.numTerms === 0 ? -1 : this.dict.indexOf(term);
  }

  /** Doc freq of a term from the directory alone (no postings read). */
  docFreqAt(ord: number): number {
    const df = this.df[ord];
    return df < 0 ? 1 : df;
  }

  /** Postings of the term with ordinal `ord`. */
  postingsAt(ord: number): PostingRef {
    const df = this.df[ord];
    if (df < 0) return -df - 1;
    const from = this.postOff[ord];
    const to = this.posOff ? this.posOff[ord] : this.postOff[ord + 1];
    return this.file.cached(`f${this.field}.p${ord}`, () => {
      const buf = this.file.read(from, to - from);
      return { value: parsePostings(buf, 0, df), bytes: buf.byteLength };
    });
  }

  /** Positions of the term with ordinal `ord`, when the field has them. */
  positionsAt(ord: number): PositionList | undefined {
    const posOff = this.posOff;
    if (!posOff) return undefined;
    const df = this.docFreqAt(ord);
    const from = posOff[ord], to = this.postOff[ord + 1];
    return this.file.cached(`f${this.field}.q${ord}`, () => {
      const buf = this.file.read(from, to - from);
      const starts = new Uint32Array(buf, 0, df + 1);
      return { value: { starts, pos: new Uint32Array(buf, 4 * (df + 1), starts[df]) }, bytes: buf.byteLength };
    });
  }

  forEachTermOrd(fn: (term: string, ord: number) => void): void {
    const d = this.numTerms > 0 ? this.dict : undefined;
    for (let o = 0; o < this.numTerms; o++) fn(d!.get(o), o);
  }

  /** Every term with its postings, read in sequential chunks of about 1 MB (not cached). */
  protected forEachPostings(fn: (term: string, ref: PostingRef) => void): void {
    const n = this.numTerms;
    if (n === 0) return;
    const { postOff, df, dict } = this;
    for (let a = 0; a < n; ) {
      let b = a + 1;
      while (b < n && postOff[b + 1] - postOff[a] <= 1 << 20) b++;
      const base = postOff[a];
      const buf = this.file.read(base, postOff[b] - base);
      for (let o = a; o < b; o++) {
        const f = df[o];
        fn(dict.get(o), f < 0 ? -f - 1 : parsePostings(buf, postOff[o] - base, f));
      }
      a = b;
    }
  }

  protected prefixStats(maxDoc: number, amount: (d: number) => number, counted: (d: number) => boolean): FieldStats {
    if (maxDoc >= this.maxDoc) return { docCount: this.meta.docCount, sumTotalTermFreq: this.meta.sumTotalTermFreq };
    const b = maxDoc >>> 10;
    const cd = (this._cumDocs ??= this.load('cum.docs'));
    const cs = (this._cumSum ??= this.load('cum.sum'));
    let docCount = cd[b], sum = cs[b];
    for (let d = b << 10; d < maxDoc; d++) {
      if (counted(d)) docCount++;
      sum += amount(d);
    }
    return { docCount, sumTotalTermFreq: sum };
  }
}

export class DiskKeywordView extends TermColumn implements KeywordView {
  readonly kind = 'keyword' as const;
  private _ords?: Int32Array;
  private _m?: { docs: Int32Array; start: Uint32Array; ords: Int32Array } | null;

  get ords(): Int32Array {
    return (this._ords ??= this.load('ords'));
  }

  private get m() {
    if (this._m === undefined) this._m = this.file.has(this.sec('m.docs')) ? { docs: this.load('m.docs'), start: this.load('m.start'), ords: this.load('m.ords') } : null;
    return this._m;
  }

  postingsOf(ord: number): PostingRef {
    return this.postingsAt(ord);
  }

  multiOrds(doc: number): number[] | undefined {
    const m = this.m;
    if (!m) return undefined;
    const i = lowerBound(m.docs, m.docs.length, doc);
    if (i >= m.docs.length || m.docs[i] !== doc) return undefined;
    return Array.from(m.ords.subarray(m.start[i], m.start[i + 1]));
  }

  forEachTerm(fn: (term: string, ord: number) => void): void {
    this.forEachTermOrd(fn);
  }

  values(doc: number): string[] {
    const ords = this.ords;
    const o = doc < ords.length ? ords[doc] : -1;
    if (o < 0) return [];
    const multi = this.multiOrds(doc);
    return multi ? multi.map((x) => this.termOf(x)) : [this.termOf(o)];
  }

  stats(maxDoc: number): FieldStats {
    const ords = this.ords;
    const m = this.m;
    return this.prefixStats(maxDoc, (d) => (ords[d] < 0 ? 0 : m ? (this.multiOrds(d)?.length ?? 1) : 1), (d) => ords[d] >= 0);
  }
}

export class DiskTextView extends TermColumn implements TextView {
  readonly kind = 'text' as const;
  private _lens?: Uint32Array;

  get lens(): Uint32Array {
    return (this._lens ??= this.load('lens'));
  }

  has(doc: number): boolean {
    const l = this.lens;
    return doc < l.length && l[doc] > 0;
  }

  postings(term: string): PostingRef | undefined {
    const o = this.ordOf(term);
    return o < 0 ? undefined : this.postingsAt(o);
  }

  forEachTerm(fn: (term: string, ref: PostingRef) => void): void {
    this.forEachPostings(fn);
  }

  impacts(p: PostingList): BlockImpacts {
    if (p instanceof DiskPostings) return p.imp ?? EMPTY_IMPACTS();
    return impactsOf(p, this.lens);
  }

  positions(term: string): PositionList | undefined {
    const o = this.ordOf(term);
    return o < 0 ? undefined : this.positionsAt(o);
  }

  stats(maxDoc: number): FieldStats {
    const lens = this.lens;
    return this.prefixStats(maxDoc, (d) => (lens[d] > 0 ? lens[d] - 1 : 0), (d) => lens[d] > 1);
  }
}
