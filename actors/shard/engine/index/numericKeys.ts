/**
 * Numeric sort keys: a doc's value(s) reduced by `mode`, converted to one resolution (so `date`
 * and `date_nanos` compare across indices, like ES `numeric_type`), with the missing value
 * substituted exactly like Lucene's (Long.MIN/MAX_VALUE or ±Infinity), as a NumVal.
 */
import type { FieldType, SortValue } from '../types';
import { cmpNum, type NumericView, type NumVal } from './columnViews';
import { floatValue } from './analysis';
import { splitNanos, toNanos, type DateFormatter } from '../base/dates';

/** How values of a sort key are compared and printed. */
export type Resolution = 'long' | 'millis' | 'nanos' | 'double' | 'float' | 'boolean';

/** `mode` of a sort on multi-valued fields. */
export type SortMode = 'min' | 'max' | 'sum' | 'avg' | 'median';

const LONG_MAX = 2n ** 63n - 1n;
const LONG_MIN = -(2n ** 63n);

/** Natural resolution of a field type, or of an `unmapped_type`/`numeric_type`. */
export function resolutionOf(type: FieldType | string, numericType?: string): Resolution {
  switch (numericType) {
    case 'long': return type === 'date_nanos' ? 'nanos' : 'long';
    case 'double': return 'double';
    case 'date': return 'millis';
    case 'date_nanos': return 'nanos';
  }
  switch (type) {
    case 'date': return 'millis';
    case 'date_nanos': return 'nanos';
    case 'double': case 'scaled_float': return 'double';
    case 'float': case 'half_float': return 'float';
    case 'boolean': return 'boolean';
    default: return 'long';
  }
}

/** Lucene's substitute for a missing value: `high` = Long.MAX_VALUE / +Infinity. */
export function sentinel(res: Resolution, high: boolean): NumVal {
  if (res === 'double' || res === 'float') return { hi: high ? Infinity : -Infinity, lo: 0 };
  const v = high ? LONG_MAX : LONG_MIN;
  if (res === 'nanos') {
    const i = splitNanos(v);
    return { hi: i.ms, lo: i.ns };
  }
  return { hi: Number(v), lo: 0, big: v };
}

/** Converts a stored value of a field of type `src` to resolution `res`. */
export function convert(v: NumVal, src: FieldType, res: Resolution): NumVal {
  const srcNanos = src === 'date_nanos';
  switch (res) {
    case 'nanos':
      if (srcNanos) return v;
      return { hi: v.big !== undefined ? Number(v.big) : Math.trunc(v.hi), lo: 0 }; // millis -> (ms, 0)
    case 'millis': case 'long': case 'boolean':
      if (srcNanos) return { hi: v.hi, lo: 0 };
      return Number.isInteger(v.hi) ? v : { hi: Math.trunc(v.hi), lo: 0 };
    case 'double': case 'float':
      return srcNanos ? { hi: v.hi * 1e6 + v.lo, lo: 0 } : { hi: v.hi, lo: 0 };
  }
}

/** Picks one value of a multi-valued doc (values ascending). */
export function pick(vals: NumVal[], mode: SortMode, integral: boolean): NumVal {
  switch (mode) {
    case 'min': return vals[0];
    case 'max': return vals[vals.length - 1];
    case 'sum': {
      let s = 0;
      for (const v of vals) s += v.hi;
      return { hi: s, lo: 0 };
    }
    case 'avg': {
      let s = 0;
      for (const v of vals) s += v.hi;
      return { hi: integral ? Math.round(s / vals.length) : s / vals.length, lo: 0 };
    }
    case 'median': {
      const m = vals.length >> 1;
      if (vals.length % 2) return vals[m];
      const x = (vals[m - 1].hi + vals[m].hi) / 2;
      return { hi: integral ? Math.round(x) : x, lo: 0 };
    }
  }
}

/** Reads sort keys of one numeric field for one sort spec. */
export class NumericKeyReader {
  private readonly simple: boolean;
  /** Whether keys can differ beyond `hi` (nanos, exact longs). */
  readonly needsTies: boolean;
  constructor(
    readonly col: NumericView | undefined,
    readonly src: FieldType,
    readonly res: Resolution,
    readonly mode: SortMode,
    readonly missing: NumVal,
  ) {
    // plain doubles, nothing to convert: the hot path reads col.hi directly
    this.simple = !!col && col.simple && (res === 'double' || res === 'float' || src !== 'double' && src !== 'float' && src !== 'half_float' && src !== 'scaled_float') && src !== 'date_nanos';
    this.needsTies = res === 'nanos' || !!col?.hasExact;
  }

  /** The key's primary double (enough to order unless equal). */
  hi(doc: number): number {
    const col = this.col;
    if (this.simple) {
      const h = col!.hi[doc];
      return h === h ? h + 0 : this.missing.hi;
    }
    return this.key(doc).hi;
  }

  key(doc: number): NumVal {
    const col = this.col;
    if (!col || !col.has(doc)) return this.missing;
    let v: NumVal;
    if (col.isMulti(doc)) v = pick(col.multiOf(doc)!, this.mode, this.res !== 'double' && this.res !== 'float');
    else v = { hi: col.hi[doc], lo: col.lo ? col.lo[doc] : 0, big: col.exactOf(doc) };
    v = convert(v, this.src, this.res);
    if (v.hi === 0) v.hi = 0; // -0 sorts with 0
    return v;
  }

  /** Ascending comparison of two docs' keys (hi first: rounding to double is monotonic). */
  compare(a: number, b: number): number {
    const x = this.hi(a), y = this.hi(b);
    if (x !== y) return x < y ? -1 : 1;
    // equal doubles can still differ exactly (nanos, longs beyond 2^53, a Long sentinel vs a huge value)
    if (!this.needsTies && (x !== this.missing.hi || this.missing.big === undefined)) return 0;
    return cmpNum(this.key(a), this.key(b));
  }
}

/** A key as it appears in `hits[].sort`. */
export function outputNum(v: NumVal, res: Resolution, formatter?: DateFormatter): SortValue {
  if (formatter && (res === 'millis' || res === 'nanos')) {
    return formatter.format({ ms: v.hi, ns: res === 'nanos' ? v.lo : 0, ...(res === 'millis' && v.big !== undefined ? { msBig: v.big } : {}) });
  }
  switch (res) {
    // ±Infinity (missing doubles) travel as ES prints them: the strings "Infinity" / "-Infinity"
    case 'double': return Number.isFinite(v.hi) ? v.hi : v.hi > 0 ? 'Infinity' : '-Infinity';
    case 'float': return Number.isFinite(v.hi) ? floatValue(v.hi) : v.hi > 0 ? 'Infinity' : '-Infinity';
    case 'boolean': return v.big !== undefined ? v.big !== 0n : v.hi !== 0;
    case 'nanos': {
      const n = toNanos({ ms: v.hi, ns: v.lo });
      return n >= -9007199254740991n && n <= 9007199254740991n ? Number(n) : n;
    }
    default:
      if (v.big !== undefined) return Number.isSafeInteger(Number(v.big)) && BigInt(Number(v.big)) === v.big ? Number(v.big) : v.big;
      return Number.isSafeInteger(v.hi) ? v.hi : BigInt(v.hi);
  }
}
