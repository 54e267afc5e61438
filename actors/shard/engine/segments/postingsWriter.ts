/**
 * The postings region of a keyword or text field and its term directory.
 *
 * Term t's record is bytes [post.off[t], pos.off[t]) (postings) then [pos.off[t], post.off[t+1])
 * (positions, when the field has them; without positions the postings end at post.off[t+1]):
 * ```
 * postings   u32 flags (1 = freqs, 2 = impacts), u32 impact entries, i32 docs[df],
 *            u16 freqs[df] (flag 1) padded to 4, then for df >= BLOCK (flag 2): i32 off[blocks+1],
 *            u16 tf[entries], u8 norm[entries]; padded to 8
 * positions  u32 starts[df+1] (into pos), u32 pos[...]; padded to 8
 * ```
 * `post.df[t]` is the term's doc freq, or -(doc + 1) for a single doc with tf 1: such a term has
 * no postings bytes at all (most terms of a large vocabulary are that rare).
 */
import { grow } from '../base/bits';
import { frontier, BLOCK } from '../index/impacts';
import type { PositionList, PostingRef } from '../index/columnViews';
import type { SegmentFileWriter } from './fileWriter';
import { Sec } from './format';
import type { LeafPlan } from './leaf';
import { StringTableBuilder } from './strings';

export const PostFlag = { Freqs: 1, Impacts: 2 } as const;

export class PostingsWriter {
  readonly dict = new StringTableBuilder();
  private postOff = new Float64Array(64);
  private df = new Int32Array(64);
  private posOff: Float64Array | null;
  count = 0;
  // scratch of the term being assembled
  private docs = new Int32Array(64);
  private freqs = new Uint16Array(64);
  private starts = new Uint32Array(64);
  private pos = new Uint32Array(64);
  private tfs = new Uint16Array(64);
  private norms = new Uint8Array(64);
  private off = new Int32Array(16);
  private len = 0;
  private nPos = 0;
  private anyFreq = false;

  /**
   * @param lens field lengths + 1 of the new segment (text: impacts are computed from them);
   *   null for keywords (no freqs, no impacts)
   */
  constructor(private readonly w: SegmentFileWriter, private readonly field: number, readonly lens: Uint32Array | null, readonly positions: boolean) {
    this.posOff = positions ? new Float64Array(64) : null;
    w.begin(Sec.field(field, 'post'), 'bytes');
    this.postOff[0] = w.offset;
  }

  /** Postings of the term being assembled. */
  get size(): number {
    return this.len;
  }

  /** Starts a term. */
  reset(): void {
    this.len = 0;
    this.nPos = 0;
    this.anyFreq = false;
  }

  /** Appends a source leaf's postings of the term, remapped through the plan (dropped docs skipped). */
  append(ref: PostingRef, plan: LeafPlan, positions: PositionList | undefined): void {
    const map = plan.map;
    if (typeof ref === 'number') {
      this.one(ref, 1, map, positions, 0);
      return;
    }
    const { docs, freqs } = ref;
    for (let i = 0; i < ref.len; i++) this.one(docs[i], freqs ? freqs[i] : 1, map, positions, i);
  }

  private one(doc: number, tf: number, map: Int32Array, positions: PositionList | undefined, i: number): void {
    // a buffer keeps growing while it is flushed: docs past the leaf's maxDoc are not part of it
    if (doc >= map.length) return;
    const nd = map[doc];
    if (nd < 0) return;
    const n = this.len;
    if (n + 2 > this.starts.length) {
      this.docs = grow(this.docs, n + 2);
      this.freqs = grow(this.freqs, n + 2);
      this.starts = grow(this.starts, n + 2);
    }
    this.docs[n] = nd;
    this.freqs[n] = tf;
    if (tf !== 1) this.anyFreq = true;
    if (this.posOff) {
      if (!positions) throw new Error(`field ${this.field}: a term has postings but no positions`);
      const a = positions.starts[i], b = positions.starts[i + 1];
      this.starts[n] = this.nPos;
      this.pos = grow(this.pos, this.nPos + (b - a));
      this.pos.set(positions.pos.subarray(a, b), this.nPos);
      this.nPos += b - a;
    }
    this.len = n + 1;
  }

  /** Writes the assembled term (nothing when no kept doc has it); returns its new ordinal or -1. */
  finishTerm(term: string): number {
    const n = this.len;
    if (n === 0) return -1;
    const w = this.w;
    const t = this.count++;
    this.postOff = grow(this.postOff, t + 2);
    this.df = grow(this.df, t + 1);
    this.dict.add(term);
    if (n === 1 && this.freqs[0] === 1) this.df[t] = -(this.docs[0] + 1);
    else {
      this.df[t] = n;
      const impacts = this.lens !== null && n >= BLOCK;
      const freqs = this.lens !== null && this.anyFreq;
      let entries = 0;
      if (impacts) entries = this.impacts(freqs);
      w.u32((freqs ? PostFlag.Freqs : 0) | (impacts ? PostFlag.Impacts : 0));
      w.u32(entries);
      w.typed(this.docs, n);
      if (freqs) {
        w.typed(this.freqs, n);
        if (n & 1) w.bytes(PAD2);
      }
      if (impacts) {
        w.typed(this.off, Math.floor(n / BLOCK) + 1);
        w.typed(this.tfs, entries);
        w.typed(this.norms, entries);
      }
      w.pad8();
    }
    if (this.posOff) {
      this.posOff = grow(this.posOff, t + 1);
      this.posOff[t] = w.offset;
      this.starts[n] = this.nPos;
      w.typed(this.starts, n + 1);
      w.typed(this.pos, this.nPos);
      w.pad8();
    }
    this.postOff[t + 1] = w.offset;
    return t;
  }

  /** Frontiers of the full blocks of the assembled term into off/tfs/norms; returns the entries used. */
  private impacts(withFreqs: boolean): number {
    const n = this.len;
    const blocks = Math.floor(n / BLOCK);
    this.off = grow(this.off, blocks + 1);
    this.tfs = grow(this.tfs, blocks * BLOCK);
    this.norms = grow(this.norms, blocks * BLOCK);
    const p = { docs: this.docs, freqs: withFreqs ? this.freqs : null, len: n };
    const tf = new Uint16Array(BLOCK), norm = new Uint8Array(BLOCK);
    let size = 0;
    this.off[0] = 0;
    for (let b = 0; b < blocks; b++) {
      const k = frontier(p, this.lens!, b * BLOCK, b * BLOCK + BLOCK, tf, norm);
      this.tfs.set(tf.subarray(0, k), size);
      this.norms.set(norm.subarray(0, k), size);
      size += k;
      this.off[b + 1] = size;
    }
    return size;
  }

  /** Ends the region and writes the dictionary and term directory; true when the dictionary is UTF-16. */
  finish(): boolean {
    const w = this.w;
    w.end();
    const sec = (part: string) => Sec.field(this.field, part);
    const d = this.dict.finish();
    w.section(sec('dict.offs'), 'u32', d.offs);
    w.section(sec('dict.bytes'), 'bytes', d.bytes);
    w.section(sec('post.off'), 'f64', this.postOff, this.count + 1);
    w.section(sec('post.df'), 'i32', this.df, this.count);
    if (this.posOff) w.section(sec('pos.off'), 'f64', this.posOff, this.count);
    return this.dict.utf16;
  }
}

const PAD2 = new Uint8Array(2);

/** Running sums every CUM_BLOCK docs: cum[b] = sum of amount(d) over d < b * CUM_BLOCK. */
export function cumulative(maxDoc: number, amount: (d: number) => number): Float64Array {
  const cum = new Float64Array((maxDoc >>> 10) + 1);
  let s = 0;
  for (let d = 0; d < maxDoc; d++) {
    if ((d & 1023) === 0) cum[d >>> 10] = s;
    s += amount(d);
  }
  if ((maxDoc & 1023) === 0) cum[maxDoc >>> 10] = s;
  return cum;
}
