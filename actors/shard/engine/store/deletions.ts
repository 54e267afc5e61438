/**
 * The deletions of one immutable segment (Lucene's live docs, kept with the seqNo of each delete
 * so a searcher sees exactly the deletions made up to its own seqNo): an append-only log of
 * (doc, seqNo) in seqNo order, and the live-docs bitset of a searcher built from a prefix of it,
 * cached for the latest searchers.
 */
import { Bitset, grow, upperBoundF64 } from '../base/bits';

const CACHED = 4;

export class Deletions {
  private docs = new Int32Array(8);
  private seqs = new Float64Array(8);
  private n = 0;
  /** Deleted at any seqNo so far. */
  private readonly deleted: Bitset;
  /** Live docs for the first k deletions, newest first. */
  private readonly live: Array<{ k: number; bits: Bitset }> = [];

  constructor(readonly maxDoc: number) {
    this.deleted = new Bitset(maxDoc);
  }

  /** Deletions recorded. */
  get count(): number {
    return this.n;
  }

  /** Records that `doc` was deleted by op `seqNo` (ops arrive in seqNo order); false when it already was. */
  add(doc: number, seqNo: number): boolean {
    if (this.deleted.has(doc)) return false;
    if (this.n > 0 && seqNo < this.seqs[this.n - 1]) throw new Error(`deletion seqNo ${seqNo} before ${this.seqs[this.n - 1]}`);
    this.docs = grow(this.docs, this.n + 1);
    this.seqs = grow(this.seqs, this.n + 1);
    this.docs[this.n] = doc;
    this.seqs[this.n++] = seqNo;
    this.deleted.set(doc);
    return true;
  }

  isDeleted(doc: number): boolean {
    return this.deleted.has(doc);
  }

  /** Deletions with seqNo <= `seqNo`. */
  countUpTo(seqNo: number): number {
    return upperBoundF64(this.seqs, this.n, seqNo);
  }

  upTo(seqNo: number): { docs: Int32Array; seqNos: Float64Array } {
    const k = this.countUpTo(seqNo);
    return { docs: this.docs.subarray(0, k), seqNos: this.seqs.subarray(0, k) };
  }

  /** The seqNo that deleted `doc`, or Infinity (a scan: for rare paths only). */
  seqNoOf(doc: number): number {
    if (!this.deleted.has(doc)) return Infinity;
    for (let i = 0; i < this.n; i++) if (this.docs[i] === doc) return this.seqs[i];
    return Infinity;
  }

  /** Live docs of a searcher at `seqNo`; null when none of its docs is deleted for it. */
  liveAt(seqNo: number): Bitset | null {
    const k = this.countUpTo(seqNo);
    if (k === 0) return null;
    for (const e of this.live) if (e.k === k) return e.bits;
    // extend the nearest smaller prefix when there is one
    let base: { k: number; bits: Bitset } | undefined;
    for (const e of this.live) if (e.k < k && (!base || e.k > base.k)) base = e;
    const bits = base ? base.bits.clone() : Bitset.all(this.maxDoc);
    for (let i = base ? base.k : 0; i < k; i++) bits.clear(this.docs[i]);
    this.live.unshift({ k, bits });
    if (this.live.length > CACHED) this.live.pop();
    return bits;
  }

  /** Every deletion, as (doc, seqNo) pairs in seqNo order (commit points persist them). */
  entries(): { docs: Int32Array; seqNos: Float64Array } {
    return { docs: this.docs.slice(0, this.n), seqNos: this.seqs.slice(0, this.n) };
  }

  /** Binary form: count, then docs (int32), then seqNos (float64), little-endian. */
  encode(): Buffer {
    const out = Buffer.alloc(8 + this.n * 12);
    out.writeUInt32LE(this.n, 0);
    out.writeUInt32LE(this.maxDoc, 4);
    for (let i = 0; i < this.n; i++) out.writeInt32LE(this.docs[i], 8 + i * 4);
    const at = 8 + this.n * 4;
    for (let i = 0; i < this.n; i++) out.writeDoubleLE(this.seqs[i], at + i * 8);
    return out;
  }

  static decode(buf: Buffer, maxDoc: number): Deletions {
    const n = buf.readUInt32LE(0);
    if (buf.readUInt32LE(4) !== maxDoc || buf.length !== 8 + n * 12) throw new Error('deletions do not match their segment');
    const d = new Deletions(maxDoc);
    const at = 8 + n * 4;
    for (let i = 0; i < n; i++) d.add(buf.readInt32LE(8 + i * 4), buf.readDoubleLE(at + i * 8));
    return d;
  }
}
