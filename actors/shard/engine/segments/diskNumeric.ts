/**
 * NumericView over a segment's numeric column sections (writeNumeric.ts). Arrays are views of
 * cached off-heap buffers, loaded on first use and kept by this view object (the segment hands
 * out a new view once the cache let one of them go).
 */
import type { NumericView, NumVal } from '../index/columnViews';
import type { FieldType } from '../types';
import { lowerBound } from '../base/bits';
import type { SegmentFile } from './segmentFile';

export class DiskNumericView implements NumericView {
  readonly kind = 'numeric' as const;
  readonly simple: boolean;
  readonly hasExact: boolean;
  private readonly hasMulti: boolean;
  private _hi?: Float64Array;
  private _lo?: Int32Array | null;
  private _ex?: { docs: Int32Array; vals: BigUint64Array };
  private _m?: { docs: Int32Array; start: Uint32Array; hi: Float64Array; lo: Int32Array | null; exIdx: Int32Array | null; exVals: BigUint64Array | null; flag: Uint8Array };

  constructor(private readonly file: SegmentFile, private readonly field: number, readonly type: FieldType) {
    this.hasExact = file.has(this.sec('ex.docs'));
    this.hasMulti = file.has(this.sec('m.docs'));
    this.simple = !file.has(this.sec('lo')) && !this.hasExact && !this.hasMulti;
  }

  private sec(part: string): string {
    return `f${this.field}.${part}`;
  }

  private load<T extends ArrayBufferView>(part: string): T {
    return this.file.section<T>(this.sec(part)).value;
  }

  get hi(): Float64Array {
    return (this._hi ??= this.load<Float64Array>('hi'));
  }

  get lo(): Int32Array | null {
    if (this._lo === undefined) this._lo = this.file.has(this.sec('lo')) ? this.load<Int32Array>('lo') : null;
    return this._lo;
  }

  private get ex() {
    return (this._ex ??= { docs: this.load<Int32Array>('ex.docs'), vals: this.load<BigUint64Array>('ex.vals') });
  }

  private get m() {
    if (!this._m) {
      const exIdx = this.file.has(this.sec('m.exIdx'));
      this._m = {
        docs: this.load('m.docs'), start: this.load('m.start'), hi: this.load('m.hi'), lo: this.file.has(this.sec('m.lo')) ? this.load('m.lo') : null,
        exIdx: exIdx ? this.load('m.exIdx') : null, exVals: exIdx ? this.load('m.exVals') : null, flag: this.load('m.flag'),
      };
    }
    return this._m;
  }

  has(doc: number): boolean {
    const h = this.hi;
    return doc < h.length && h[doc] === h[doc];
  }

  private exact(v: bigint): bigint {
    return this.type === 'unsigned_long' ? v : BigInt.asIntN(64, v);
  }

  exactOf(doc: number): bigint | undefined {
    if (!this.hasExact) return undefined;
    const { docs, vals } = this.ex;
    const i = lowerBound(docs, docs.length, doc);
    return i < docs.length && docs[i] === doc ? this.exact(vals[i]) : undefined;
  }

  isMulti(doc: number): boolean {
    return this.hasMulti && this.m.flag[doc] === 1;
  }

  multiOf(doc: number): NumVal[] | undefined {
    if (!this.isMulti(doc)) return undefined;
    const m = this.m;
    const i = lowerBound(m.docs, m.docs.length, doc);
    const out: NumVal[] = [];
    let e = m.exIdx ? lowerBound(m.exIdx, m.exIdx.length, m.start[i]) : 0;
    for (let j = m.start[i]; j < m.start[i + 1]; j++) {
      const v: NumVal = { hi: m.hi[j], lo: m.lo ? m.lo[j] : 0 };
      if (m.exIdx && e < m.exIdx.length && m.exIdx[e] === j) v.big = this.exact(m.exVals![e++]);
      out.push(v);
    }
    return out;
  }

  numVals(doc: number): NumVal[] {
    if (!this.has(doc)) return [];
    const multi = this.multiOf(doc);
    if (multi) return multi;
    const lo = this.lo;
    const v: NumVal = { hi: this.hi[doc], lo: lo ? lo[doc] : 0 };
    const big = this.exactOf(doc);
    if (big !== undefined) v.big = big;
    return [v];
  }

  natural(doc: number): Array<number | bigint | boolean> {
    return this.numVals(doc).map((v) => {
      if (this.type === 'boolean') return v.hi !== 0;
      if (this.type === 'date_nanos') return BigInt(v.hi) * 1_000_000n + BigInt(v.lo);
      return v.big ?? v.hi;
    });
  }
}
