/** Range scans over columns: numeric doc values (exact for big longs and nanos) and term dictionaries. */
import { Bitset, compareStrings } from '../base/bits';
import { cmpNum, forEachPosting, type KeywordView, type NumericView, type NumVal, type TextView } from '../index/columnViews';

/** One side of a range. */
export interface Bound {
  v: NumVal;
  incl: boolean;
}

/** Docs < maxDoc with any value in [lo, hi] (bounds optional, inclusive per `incl`). */
export function numericRange(col: NumericView | undefined, maxDoc: number, lo?: Bound, hi?: Bound): Bitset {
  const bits = new Bitset(maxDoc);
  if (!col) return bits;
  const n = Math.min(maxDoc, col.hi.length);
  const ok = (v: NumVal) => {
    if (lo) {
      const c = cmpNum(v, lo.v);
      if (c < 0 || (c === 0 && !lo.incl)) return false;
    }
    if (hi) {
      const c = cmpNum(v, hi.v);
      if (c > 0 || (c === 0 && !hi.incl)) return false;
    }
    return true;
  };
  const h = col.hi;
  const simple = col.simple && lo?.v.big === undefined && hi?.v.big === undefined;
  if (simple) {
    // the hot path: plain doubles
    const a = lo ? lo.v.hi : -Infinity, b = hi ? hi.v.hi : Infinity;
    const ai = lo ? lo.incl : true, bi = hi ? hi.incl : true;
    for (let d = 0; d < n; d++) {
      const x = h[d];
      if ((ai ? x >= a : x > a) && (bi ? x <= b : x < b)) bits.set(d); // NaN (missing) fails both
    }
    return bits;
  }
  for (let d = 0; d < n; d++) {
    if (h[d] !== h[d]) continue;
    if (col.isMulti(d)) {
      if (col.multiOf(d)!.some(ok)) bits.set(d);
    } else if (ok({ hi: h[d], lo: col.lo ? col.lo[d] : 0, big: col.exactOf(d) })) bits.set(d);
  }
  return bits;
}

/** Docs < maxDoc with a term in the string range (code point order), via the term dictionary. */
export function keywordRange(
  col: KeywordView | TextView | undefined, maxDoc: number,
  lo?: { v: string; incl: boolean }, hi?: { v: string; incl: boolean },
): Bitset {
  const bits = new Bitset(maxDoc);
  if (!col) return bits;
  const inRange = (t: string) => {
    if (lo) {
      const c = compareStrings(t, lo.v);
      if (c < 0 || (c === 0 && !lo.incl)) return false;
    }
    if (hi) {
      const c = compareStrings(t, hi.v);
      if (c > 0 || (c === 0 && !hi.incl)) return false;
    }
    return true;
  };
  if (col.kind === 'keyword') {
    col.forEachTerm((t, o) => {
      if (inRange(t)) forEachPosting(col.postingsOf(o), maxDoc, (d) => bits.set(d));
    });
  } else col.forEachTerm((t, ref) => inRange(t) && forEachPosting(ref, maxDoc, (d) => bits.set(d)));
  return bits;
}
