/**
 * What the query phase reserves on the request breaker (ES's BigArrays and search contexts
 * reserve theirs): cheap estimates of the heap a search materialises on a shard, taken before it
 * is allocated. They are estimates of V8 objects, not measurements; the README's Differences
 * table says what they count.
 */

/** Label of the hit arrays of a query phase. */
export const HITS_LABEL = '<search_hits>';
/** Label of the bitsets of matching docs. */
export const BITSET_LABEL = '<reused_arrays>';

/** A top-k slot (a doc id in the heap array). */
const SLOT_BYTES = 16;
/** A hit of the page: its object, `_id` reference, score and sort array. */
const HIT_BYTES = 120;
/** Each sort value a hit carries. */
const SORT_VALUE_BYTES = 24;

/** The top `k = from + size` candidates and the `size` hit objects returned. */
export function hitsBytes(k: number, size: number, sortKeys: number): number {
  return k * SLOT_BYTES + Math.min(size, k) * (HIT_BYTES + sortKeys * SORT_VALUE_BYTES);
}

/** One bitset over `maxDoc` docs (32-bit words) and its object. */
export function bitsetBytes(maxDoc: number): number {
  return 64 + 4 * Math.ceil(maxDoc / 32);
}
