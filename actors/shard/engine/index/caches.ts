/**
 * Search-time caches of one shard. Both depend only on doc ids < maxDoc, whose values never change
 * (docs are append-only), so one entry serves every searcher with that prefix:
 * - sorted doc orders of a numeric sort key (LSD radix sort, extended by merging as maxDoc grows);
 * - slice filters (bitsets) per (maxDoc, slice).
 */
import type { Bitset } from '../base/bits';
import { cmpNum } from './columnViews';
import type { NumericKeyReader } from './numericKeys';

/** All docs [0, size) ordered by key (ascending, or descending with `desc`), then doc id ascending. */
export interface SortedOrder {
  perm: Int32Array;
  size: number;
}

const MAX_ORDERS = 8;
const MAX_SLICES = 64;
const TWO53 = 2 ** 53;

/** The caches of one shard (LRU-bounded). */
export class SearchCaches {
  private readonly orders = new Map<string, SortedOrder>();
  private readonly slices = new Map<string, Bitset>();
  /** Java hashCode of each doc's _id, filled lazily for sliced scrolls. */
  idHashes = new Int32Array(0);
  idHashCount = 0;

  /** The cached order for `key`, built or extended to cover [0, maxDoc). */
  sortedOrder(key: string, reader: NumericKeyReader, maxDoc: number, desc: boolean): SortedOrder {
    let o = this.orders.get(key);
    if (o && o.size >= maxDoc) {
      touch(this.orders, key, o);
      return o;
    }
    const fresh = radixOrder(reader, o ? o.size : 0, maxDoc, desc);
    o = o ? { perm: merge(o.perm, fresh, reader, desc ? -1 : 1), size: maxDoc } : { perm: fresh, size: maxDoc };
    touch(this.orders, key, o);
    evict(this.orders, MAX_ORDERS);
    return o;
  }

  slice(key: string, build: () => Bitset): Bitset {
    let b = this.slices.get(key);
    if (!b) {
      b = build();
      evict(this.slices, MAX_SLICES - 1);
    }
    touch(this.slices, key, b);
    return b;
  }
}

function touch<V>(m: Map<string, V>, k: string, v: V): void {
  m.delete(k);
  m.set(k, v);
}

function evict<V>(m: Map<string, V>, max: number): void {
  while (m.size > max) m.delete(m.keys().next().value as string);
}

/**
 * Sorts docs [from, to) by key with a stable LSD radix sort on 16-bit digits of the
 * order-preserving bit pattern of the double (plus the nanos part), so ties keep doc order.
 * `desc` sorts the negated key, so ties still come in ascending doc order (Lucene's tie-break).
 */
export function radixOrder(reader: NumericKeyReader, from: number, to: number, desc = false): Int32Array {
  const n = to - from;
  const f64 = new Float64Array(n);
  const u32 = new Uint32Array(f64.buffer);
  const lo = reader.res === 'nanos' ? new Uint32Array(n) : null;
  for (let i = 0; i < n; i++) {
    if (lo) {
      const k = reader.key(from + i);
      f64[i] = desc ? -k.hi + 0 : k.hi;
      lo[i] = desc ? 0xfffff - k.lo : k.lo; // nanos within a milli < 2^20
    } else f64[i] = desc ? -reader.hi(from + i) + 0 : reader.hi(from + i);
  }
  const kLo = new Uint32Array(n), kHi = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    let l = u32[2 * i], h = u32[2 * i + 1];
    if (h & 0x80000000) {
      h = ~h;
      l = ~l;
    } else h ^= 0x80000000;
    kLo[i] = l >>> 0;
    kHi[i] = h >>> 0;
  }
  let perm = new Int32Array(n);
  for (let i = 0; i < n; i++) perm[i] = i;
  let tmp = new Int32Array(n);
  const counts = new Uint32Array(65536);
  const passes: Array<[Uint32Array, number]> = [];
  if (lo) passes.push([lo, 0], [lo, 16]);
  passes.push([kLo, 0], [kLo, 16], [kHi, 0], [kHi, 16]);
  for (const [keys, shift] of passes) {
    counts.fill(0);
    for (let i = 0; i < n; i++) counts[(keys[i] >>> shift) & 0xffff]++;
    if (n === 0 || counts[(keys[0] >>> shift) & 0xffff] === n) continue; // digit constant: skip
    let sum = 0;
    for (let b = 0; b < 65536; b++) {
      const c = counts[b];
      counts[b] = sum;
      sum += c;
    }
    for (let i = 0; i < n; i++) {
      const p = perm[i];
      tmp[counts[(keys[p] >>> shift) & 0xffff]++] = p;
    }
    [perm, tmp] = [tmp, perm];
  }
  for (let i = 0; i < n; i++) perm[i] += from;
  fixExactTies(perm, reader, desc ? -1 : 1);
  return perm;
}

// Beyond 2^53 distinct longs can share a double: re-sort those runs exactly.
function fixExactTies(perm: Int32Array, reader: NumericKeyReader, dir: number): void {
  const col = reader.col;
  if (!col?.hasExact || reader.res === 'double' || reader.res === 'float') return;
  for (let i = 0; i < perm.length; ) {
    const h = reader.hi(perm[i]);
    let j = i + 1;
    while (j < perm.length && reader.hi(perm[j]) === h) j++;
    if (j - i > 1 && Math.abs(h) >= TWO53 && perm.subarray(i, j).some((d) => col.exactOf(d) !== undefined || col.isMulti(d))) {
      const run = Array.from(perm.subarray(i, j)).sort((a, b) => dir * cmpNum(reader.key(a), reader.key(b)) || a - b);
      perm.set(run, i);
    }
    i = j;
  }
}

function merge(a: Int32Array, b: Int32Array, reader: NumericKeyReader, dir: number): Int32Array {
  const out = new Int32Array(a.length + b.length);
  let i = 0, j = 0, k = 0;
  while (i < a.length && j < b.length) out[k++] = dir * reader.compare(a[i], b[j]) <= 0 ? a[i++] : b[j++]; // a's docs are older: first on ties
  while (i < a.length) out[k++] = a[i++];
  while (j < b.length) out[k++] = b[j++];
  return out;
}
