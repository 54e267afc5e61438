import { compareIps } from './ip';
import type { SortSpec, SortValue } from '../types';

/**
 * Comparison of sort values as they appear in `hits[].sort` / `search_after`, shared by the shard
 * (top-k, search_after) and the coordinator (merge of shard results), so both order hits alike.
 *
 * Semantics:
 * - `null` (a missing keyword, or any missing value the shard did not replace) sorts last with
 *   `missing: _last` (default) and first with `_first`, whatever the order, like Lucene's
 *   STRING_LAST/STRING_FIRST after ES flips them for `desc`.
 * - numbers and bigints compare exactly against each other (longs beyond 2^53 arrive as bigint);
 *   the strings `"Infinity"`/`"-Infinity"` (missing doubles as ES prints them) compare as numbers.
 * - strings compare by Unicode code point (= UTF-8 byte order, Lucene's BytesRef order).
 * - booleans: false < true.
 *
 * @returns negative when `a` comes first under `spec.order`, positive when `b` does, 0 on a tie.
 * @example compareSortValues(1n << 60n, 3, { field: 'n', order: 'desc' }) // < 0
 */
export function compareSortValues(a: SortValue | undefined, b: SortValue | undefined, spec: Pick<SortSpec, 'order' | 'missing' | 'valueType'>): number {
  const aNull = a === null || a === undefined;
  const bNull = b === null || b === undefined;
  if (aNull || bNull) {
    if (aNull && bNull) return 0;
    const first = spec.missing === '_first';
    return aNull === first ? -1 : 1;
  }
  const ip = spec.valueType === 'ip' && typeof a === 'string' && typeof b === 'string' ? compareIps(a, b) : undefined;
  const c = ip ?? compareRaw(a, b);
  return spec.order === 'desc' ? -c : c;
}

/** Compares every key in order; 0 when all are equal. */
export function compareSortArrays(a: readonly SortValue[], b: readonly SortValue[], specs: readonly SortSpec[]): number {
  for (let i = 0; i < specs.length; i++) {
    const c = compareSortValues(a[i], b[i], specs[i]);
    if (c !== 0) return c;
  }
  return 0;
}

/** Ascending natural order of two non-null sort values. */
export function compareRaw(a: Exclude<SortValue, null>, b: Exclude<SortValue, null>): number {
  const na = asNumeric(a);
  const nb = asNumeric(b);
  if (na !== undefined && nb !== undefined) return compareNumeric(na, nb);
  if (typeof a === 'string' && typeof b === 'string') return compareCodePoints(a, b);
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1;
  // Mixed kinds do not happen within one sort key; order them deterministically anyway.
  return RANK[typeof a] - RANK[typeof b];
}

const RANK: Record<string, number> = { boolean: 0, number: 1, bigint: 1, string: 2 };

function asNumeric(v: Exclude<SortValue, null>): number | bigint | undefined {
  if (typeof v === 'number' || typeof v === 'bigint') return v;
  if (v === 'Infinity') return Infinity;
  if (v === '-Infinity') return -Infinity;
  return undefined;
}

function compareNumeric(a: number | bigint, b: number | bigint): number {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  // bigint vs number: JS relational operators compare these exactly (incl. fractions and ±Infinity).
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) ? (Number.isNaN(b) ? 0 : 1) : -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** UTF-16 strings in code point order: surrogates (U+10000..) sort above U+E000..U+FFFF. */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return fixup(x) - fixup(y);
  }
  return a.length - b.length;
}

const fixup = (c: number) => (c >= 0xd800 && c <= 0xdfff ? c + 0x2000 : c >= 0xe000 ? c - 0x800 : c);
