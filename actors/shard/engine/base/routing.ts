/**
 * Hashes that must agree bit for bit with Elasticsearch / Java:
 * - document routing (`shardFor`, `indexShard`): murmur3_x86_32 (seed 0) over the UTF-16 code units
 *   of the routing value as little-endian byte pairs, then `floorMod(hash, routingNumShards) /
 *   routingFactor` (IndexRouting.hashToShardId), partitioned indices add a per-_id offset;
 * - sliced scroll (`javaStringHashCode`, the project's documented choice, search-paging.md §14);
 * - slicing on a numeric field (`bitMix`, HPPC BitMixer.mix of a long).
 */

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

function mixK1(k1: number): number {
  k1 = Math.imul(k1, C1);
  k1 = (k1 << 15) | (k1 >>> 17);
  return Math.imul(k1, C2);
}

function mixH1(h1: number, k1: number): number {
  h1 ^= k1;
  h1 = (h1 << 13) | (h1 >>> 19);
  return (Math.imul(h1, 5) + 0xe6546b64) | 0;
}

function fmix(h1: number, len: number): number {
  h1 ^= len;
  h1 ^= h1 >>> 16;
  h1 = Math.imul(h1, 0x85ebca6b);
  h1 ^= h1 >>> 13;
  h1 = Math.imul(h1, 0xc2b2ae35);
  h1 ^= h1 >>> 16;
  return h1 | 0;
}

/** murmur3_x86_32 over raw bytes; returns a signed 32-bit int (like Java). */
export function murmur3Bytes(bytes: Uint8Array, seed = 0): number {
  const n = bytes.length;
  const blocks = n & ~3;
  let h1 = seed | 0;
  for (let i = 0; i < blocks; i += 4) {
    const k1 = bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24);
    h1 = mixH1(h1, mixK1(k1));
  }
  const tail = n & 3;
  if (tail > 0) {
    let k1 = bytes[blocks];
    if (tail > 1) k1 ^= bytes[blocks + 1] << 8;
    if (tail > 2) k1 ^= bytes[blocks + 2] << 16;
    h1 ^= mixK1(k1);
  }
  return fmix(h1, n);
}

/**
 * ES `Murmur3HashFunction.hash(String)`: each UTF-16 code unit contributes two little-endian bytes,
 * so two chars form one 4-byte block. No byte array is materialized.
 */
export function murmur3Routing(routing: string): number {
  const n = routing.length;
  let h1 = 0;
  let i = 0;
  for (; i + 1 < n; i += 2) h1 = mixH1(h1, mixK1(routing.charCodeAt(i) | (routing.charCodeAt(i + 1) << 16)));
  if (i < n) h1 ^= mixK1(routing.charCodeAt(i)); // 2-byte tail
  return fmix(h1, n * 2);
}

/** Java `Math.floorMod` for ints. */
export const floorMod = (x: number, m: number): number => ((x % m) + m) % m;

/**
 * `MetadataCreateIndexService.calculateNumRoutingShards` for indices created on >= 7.0: the largest
 * `numShards * 2^k <= 1024` with k >= 1.
 */
export function calculateNumRoutingShards(numShards: number): number {
  const log2NumShards = 32 - Math.clz32(numShards - 1); // ceil(log2(numShards)); 0 for 1 shard
  const numSplits = Math.max(1, 10 - log2NumShards);
  return numShards * 2 ** numSplits;
}

/** What document routing needs of an index (ES `IndexMetadata` routing fields). */
export interface RoutingSpec {
  numberOfShards: number;
  /** `index.number_of_routing_shards` as ES fixes it at creation (calculateNumRoutingShards by default). */
  routingNumShards: number;
  /** `index.routing_partition_size` (1 = not partitioned). */
  routingPartitionSize: number;
}

/**
 * `IndexRouting.hashToShardId`: floorMod(hash, routingNumShards) / routingFactor, where
 * routingFactor = routingNumShards / numberOfShards. Every argument is required, so a caller that
 * forgets the index's routing shard count does not compile.
 * @example shardFor('1', 5, 5) // the shard ES picks for `PUT idx/_doc/1` on an index created with number_of_routing_shards 5
 */
export function shardFor(routing: string, numShards: number, routingNumShards: number): number {
  return hashToShard(murmur3Routing(routing), numShards, routingNumShards);
}

function hashToShard(hash: number, numShards: number, routingNumShards: number): number {
  const routingFactor = routingNumShards / numShards;
  return Math.floor(floorMod(hash, routingNumShards) / routingFactor);
}

/**
 * The shard of a document, as ES's `IndexRouting` computes it: `Unpartitioned` hashes the routing
 * value (the `_id` without one); `Partitioned` adds floorMod(hash(_id), routing_partition_size) to
 * the routing's hash, so one routing value spreads over a partition of shards.
 * @throws Error when a partitioned index gets no routing (callers check first and answer ES's 400)
 */
export function indexShard(r: RoutingSpec, id: string, routing: string | undefined): number {
  if (r.routingPartitionSize > 1) {
    if (routing === undefined) throw new Error('A routing value is required for gets from a partitioned index');
    // Java int addition wraps; floorMod then takes the wrapped value.
    const hash = (murmur3Routing(routing) + floorMod(murmur3Routing(id), r.routingPartitionSize)) | 0;
    return hashToShard(hash, r.numberOfShards, r.routingNumShards);
  }
  return shardFor(routing ?? id, r.numberOfShards, r.routingNumShards);
}

/** `IndexRouting.collectSearchShards`: every shard that may hold documents routed with `routing`, ascending. */
export function searchShards(r: RoutingSpec, routing: string): number[] {
  const hash = murmur3Routing(routing);
  const out = new Set<number>();
  for (let i = 0; i < Math.max(1, r.routingPartitionSize); i++) out.add(hashToShard((hash + i) | 0, r.numberOfShards, r.routingNumShards));
  return [...out].sort((a, b) => a - b);
}

/** Java `String.hashCode()` (UTF-16 code units, 32-bit signed overflow). */
export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

// 64-bit unsigned multiply of (ah:al) by (bh:bl) keeping the low 64 bits, on 32-bit halves.
function mul64(ah: number, al: number, bh: number, bl: number): [number, number] {
  const a0 = al & 0xffff, a1 = al >>> 16, b0 = bl & 0xffff, b1 = bl >>> 16;
  const p00 = a0 * b0;
  const mid = a1 * b0 + ((p00 >>> 16) & 0xffff) + a0 * b1; // < 2^34, exact in a double
  const lo = ((mid & 0xffff) << 16 | (p00 & 0xffff)) >>> 0;
  const carry = Math.floor(mid / 65536) + a1 * b1; // high 32 bits of al*bl (exact, < 2^53)
  const hi = (carry + Math.imul(ah, bl) + Math.imul(al, bh)) >>> 0;
  return [hi, lo];
}

/**
 * HPPC `BitMixer.mix(long)`: Stafford variant-9 mix64, truncated to a signed int. Input as a bigint
 * or as a double holding an integer (any |v| < 2^63).
 */
export function bitMix(v: number | bigint): number {
  let hi: number, lo: number;
  if (typeof v === 'bigint') {
    const u = BigInt.asUintN(64, v);
    hi = Number(u >> 32n);
    lo = Number(u & 0xffffffffn);
  } else {
    lo = v % 4294967296;
    hi = Math.floor(v / 4294967296);
    if (lo < 0) lo += 4294967296; // two's complement split for negatives
    hi = hi >>> 0;
    lo = lo >>> 0;
  }
  // z = (z ^ (z >>> 32)) * 0x4cd6944c5cc20b6d
  lo = (lo ^ hi) >>> 0;
  [hi, lo] = mul64(hi, lo, 0x4cd6944c, 0x5cc20b6d);
  // z = (z ^ (z >>> 29)) * 0xfc12c5b19d3259e9
  const sLo = ((lo >>> 29) | (hi << 3)) >>> 0;
  const sHi = hi >>> 29;
  [hi, lo] = mul64((hi ^ sHi) >>> 0, (lo ^ sLo) >>> 0, 0xfc12c5b1, 0x9d3259e9);
  // z ^ (z >>> 32), low 32 bits as int
  return (lo ^ hi) | 0;
}

/** HPPC `BitMixer.mix64(long)` (the whole 64-bit result, signed), as a bigint. */
export function mix64(v: bigint): bigint {
  let z = BigInt.asUintN(64, v);
  z = BigInt.asUintN(64, (z ^ (z >> 32n)) * 0x4cd6944c5cc20b6dn);
  z = BigInt.asUintN(64, (z ^ (z >> 29n)) * 0xfc12c5b19d3259e9n);
  return BigInt.asIntN(64, z ^ (z >> 32n));
}

/** Lucene `NumericUtils.doubleToSortableLong`: the double's bits, negatives flipped so longs sort like doubles. */
export function doubleToSortableLong(d: number): bigint {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, d);
  const bits = view.getBigInt64(0);
  return bits < 0n ? bits ^ 0x7fffffffffffffffn : bits;
}
