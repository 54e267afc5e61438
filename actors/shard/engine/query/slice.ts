/**
 * The in-shard step of sliced scroll / PIT (search-paging.md §10, with the project's seed choices):
 * - scroll without `field` (or `_id`): floorMod(Java String.hashCode(_id), max) == id;
 * - PIT without `field`: contiguous doc-id ranges over the searcher's maxDoc;
 * - `field` (numeric doc values): floorMod(BitMixer.mix(first value), max) == id, missing -> slice 0.
 * Filters depend only on docs < maxDoc, so they are cached per (maxDoc, slice).
 */
import { illegalArgument } from '../../../wire/esErrors';
import type { LocalSlice, SearcherRef } from '../types';
import type { StoreView } from '../index/storeView';
import { Bitset, grow } from '../base/bits';
import type { NumericView } from '../index/columnViews';
import { NUMERIC_TYPES } from '../index/mapping';
import { bitMix, floorMod, javaStringHashCode } from '../base/routing';

/** A slice as a filter: a bitset, or a doc-id range [from, to). null = the whole shard. */
export type SliceFilter = { bits: Bitset; range?: undefined } | { range: [number, number]; bits?: undefined } | null;

/** Builds (or takes from cache) the filter of `slice` for searcher `s`; throws ES's shard errors. */
export function sliceFilter(store: StoreView, s: SearcherRef, slice: LocalSlice | undefined): SliceFilter {
  if (!slice) return null;
  const limit = store.settings().maxSlicesPerScroll;
  const requested = slice.requestMax ?? slice.max;
  // ES 8 DefaultSearchContext.preProcess checks the request's max for scrolls only (not PIT)
  if (slice.mode === 'scroll' && requested > limit) {
    throw illegalArgument(
      `The number of slices [${requested}] is too large. It must be less than [${limit}]. This limit can be set by changing the [index.max_slices_per_scroll] index level setting.`,
    );
  }
  const { id, max } = slice;
  const field = slice.field;
  if (field === '_id' && slice.mode === 'pit') throw illegalArgument('cannot slice on [_id] when using [point-in-time]');
  if (field !== undefined && field !== '_id') checkField(store, field);
  if (max <= 1) return null;
  const n = s.maxDoc;
  if (field === undefined || field === '_id') {
    if (slice.mode === 'pit') return { range: slice.docIdRange ? localRange(store, n, slice.docIdRange) : docRange(n, id, max) };
    return { bits: store.caches.slice(`id|${n}|${id}|${max}`, () => idSlice(store, n, id, max)) };
  }
  return { bits: store.caches.slice(`f|${field}|${n}|${id}|${max}`, () => fieldSlice(store, field, n, id, max)) };
}

function checkField(store: StoreView, field: string): void {
  const def = store.mapping.field(field);
  if (!def) throw illegalArgument(`field ${field} not found`);
  if (!NUMERIC_TYPES.has(def.type)) throw illegalArgument(`cannot load numeric doc values on ${field}`);
}

/** The docs [from, to) of a segment whose shard doc ids fall in [lo, hi) (doc ids ascend with docs). */
function localRange(store: StoreView, n: number, [lo, hi]: [number, number]): [number, number] {
  const first = (x: number) => {
    let a = 0, b = n;
    while (a < b) {
      const m = (a + b) >>> 1;
      if (store.docId(m) < x) a = m + 1;
      else b = m;
    }
    return a;
  };
  return [first(lo), first(hi)];
}

/** Slice i of n over [0, maxDoc): the first maxDoc % n slices get one extra doc. */
export function docRange(maxDoc: number, i: number, n: number): [number, number] {
  const q = Math.floor(maxDoc / n), r = maxDoc % n;
  if (i < r) return [(q + 1) * i, (q + 1) * (i + 1)];
  const start = r * (q + 1) + (i - r) * q;
  return [start, start + q];
}

function idSlice(store: StoreView, n: number, id: number, max: number): Bitset {
  const c = store.caches;
  if (c.idHashCount < n) {
    c.idHashes = grow(c.idHashes, n);
    for (let d = c.idHashCount; d < n; d++) c.idHashes[d] = javaStringHashCode(store.idOf(d));
    c.idHashCount = n;
  }
  const h = c.idHashes;
  const bits = new Bitset(n);
  for (let d = 0; d < n; d++) if (floorMod(h[d], max) === id) bits.set(d);
  return bits;
}

const f64 = new Float64Array(1);
const f32 = new Float32Array(1);
const u32of64 = new Uint32Array(f64.buffer);
const i32of32 = new Int32Array(f32.buffer);

/** The long a numeric doc value is stored as (Lucene sortable bits for floating types). */
function rawLong(col: NumericView, d: number, scaling?: number): number | bigint {
  const v = col.numVals(d)[0];
  switch (col.type) {
    case 'date_nanos': return BigInt(v.hi) * 1_000_000n + BigInt(v.lo);
    case 'double': {
      f64[0] = v.hi;
      let hi = u32of64[1] | 0;
      let lo = u32of64[0];
      if (hi < 0) {
        hi ^= 0x7fffffff;
        lo = ~lo >>> 0;
      }
      return hi * 4294967296 + lo >= 0 && Number.isSafeInteger(hi * 4294967296 + lo) ? hi * 4294967296 + lo : (BigInt(hi) << 32n) | BigInt(lo);
    }
    case 'float': case 'half_float': {
      f32[0] = v.hi;
      const bits = i32of32[0];
      return bits < 0 ? bits ^ 0x7fffffff : bits;
    }
    case 'scaled_float': return Math.round(v.hi * scaling!);
    default: return v.big ?? v.hi;
  }
}

function fieldSlice(store: StoreView, field: string, n: number, id: number, max: number): Bitset {
  const def = store.mapping.field(field)!;
  const col = store.column(def.path);
  const bits = new Bitset(n);
  if (col?.kind !== 'numeric') {
    if (id === 0) bits.setRange(0, n);
    return bits;
  }
  for (let d = 0; d < n; d++) {
    const slot = col.has(d) ? floorMod(bitMix(rawLong(col, d, def.scalingFactor)), max) : 0;
    if (slot === id) bits.set(d);
  }
  return bits;
}
