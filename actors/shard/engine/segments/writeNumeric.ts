/**
 * Sections of a numeric column (`f<i>.<part>`):
 * - `hi` f64 per doc (NaN = no value); `lo` i32 per doc (date_nanos only);
 * - `ex.docs` i32 + `ex.vals` u64: exact longs beyond 2^53 of each doc's smallest value (sparse);
 * - multi-valued docs: `m.docs` i32, `m.start` u32 (count + 1), `m.hi` f64, `m.lo` i32 (date_nanos),
 *   `m.exIdx` i32 + `m.exVals` u64 (exact values by value index), `m.flag` u8 per doc.
 * Exact values are stored as their 64-bit two's complement (unsigned_long: unsigned).
 */
import type { NumericView } from '../index/columnViews';
import type { FieldType } from '../types';
import type { SegmentFileWriter } from './fileWriter';
import { Sec, type SegmentFieldMeta } from './format';
import type { LeafPlan } from './leaf';
import { pause, Slicer, type Steps } from './steps';

const U64 = 1n << 64n;

function toU64(v: bigint, type: FieldType): bigint {
  const ok = type === 'unsigned_long' ? v >= 0n && v < U64 : v >= -(1n << 63n) && v < 1n << 63n;
  if (!ok) throw new RangeError(`exact value ${v} out of range for ${type}`);
  return BigInt.asUintN(64, v);
}

/** Writes a numeric column; undefined (nothing written) when no kept doc has a value. */
export function* writeNumeric(
  w: SegmentFileWriter, field: number, cols: Array<NumericView | undefined>, plans: LeafPlan[], maxDoc: number, sl: Slicer,
): Steps<SegmentFieldMeta | undefined> {
  const type = cols.find((c) => c)!.type;
  const nanos = type === 'date_nanos';
  const hi = new Float64Array(maxDoc).fill(NaN);
  const lo = nanos ? new Int32Array(maxDoc) : null;
  const exDocs: number[] = [];
  const exVals: bigint[] = [];
  const mDocs: number[] = [];
  const mStart: number[] = [0];
  const mHi: number[] = [];
  const mLo: number[] = [];
  const mExIdx: number[] = [];
  const mExVals: bigint[] = [];
  let docCount = 0;
  let values = 0;
  for (let l = 0; l < plans.length; l++) {
    const col = cols[l];
    if (!col) continue;
    const map = plans[l].map;
    for (let d = 0; d < map.length; d++) {
      const nd = map[d];
      if (nd < 0 || !col.has(d)) continue;
      // arrays are read on every doc: a buffer column may be regrown between slices
      hi[nd] = col.hi[d];
      if (lo) lo[nd] = col.lo ? col.lo[d] : 0;
      docCount++;
      if (col.hasExact) {
        const e = col.exactOf(d);
        if (e !== undefined) {
          exDocs.push(nd);
          exVals.push(toU64(e, type));
        }
      }
      const m = col.isMulti(d) ? col.multiOf(d) : undefined;
      if (m) {
        mDocs.push(nd);
        for (const v of m) {
          if (v.big !== undefined) {
            mExIdx.push(mHi.length);
            mExVals.push(toU64(v.big, type));
          }
          mHi.push(v.hi);
          mLo.push(v.lo);
        }
        mStart.push(mHi.length);
        values += m.length;
      } else values++;
      if (sl.due()) {
        yield;
        sl.reset();
      }
    }
  }
  if (docCount === 0) return undefined;
  const sec = (part: string) => Sec.field(field, part);
  yield* pause(sl);
  w.section(sec('hi'), 'f64', hi);
  yield* pause(sl);
  if (lo) w.section(sec('lo'), 'i32', lo);
  if (exDocs.length) {
    w.section(sec('ex.docs'), 'i32', Int32Array.from(exDocs));
    w.section(sec('ex.vals'), 'u64', BigUint64Array.from(exVals));
  }
  if (mDocs.length) {
    w.section(sec('m.docs'), 'i32', Int32Array.from(mDocs));
    w.section(sec('m.start'), 'u32', Uint32Array.from(mStart));
    w.section(sec('m.hi'), 'f64', Float64Array.from(mHi));
    if (nanos) w.section(sec('m.lo'), 'i32', Int32Array.from(mLo));
    if (mExIdx.length) {
      w.section(sec('m.exIdx'), 'i32', Int32Array.from(mExIdx));
      w.section(sec('m.exVals'), 'u64', BigUint64Array.from(mExVals));
    }
    const flag = new Uint8Array(maxDoc);
    for (const d of mDocs) flag[d] = 1;
    w.section(sec('m.flag'), 'u8', flag);
  }
  return { type, kind: 'numeric', docCount, sumTotalTermFreq: values };
}
