import {
  bitMix, calculateNumRoutingShards, indexShard, javaStringHashCode, murmur3Bytes, murmur3Routing, searchShards, shardFor,
} from '../../../../../actors/shard/engine';

describe('murmur3 routing hash', () => {
  // ES Murmur3HashFunctionTests known values (UTF-16LE code units, seed 0)
  it.each([
    ['hell', 0x5a0cb7c3],
    ['hello', 0xd7c31989],
    ['hello w', 0x22ab2984],
    ['hello wo', 0xdf0ca123],
    ['hello wor', 0xe7744d61],
    ['The quick brown fox jumps over the lazy dog', 0xe07db09c],
    ['The quick brown fox jumps over the lazy cog', 0x4e63d2ad],
  ])('hashes %j like ES Murmur3HashFunction', (s, expected) => {
    expect(murmur3Routing(s)).toBe(expected | 0);
  });

  // murmur3_x86_32 over UTF-8 bytes (public reference vectors)
  it.each([
    ['', 0],
    ['hello', 0x248bfa47],
    ['The quick brown fox jumps over the lazy dog', 0x2e4ff723],
  ])('hashes the bytes of %j like the reference murmur3_x86_32', (s, expected) => {
    expect(murmur3Bytes(new TextEncoder().encode(s))).toBe(expected | 0);
  });

  it('equals murmur3 over the little-endian UTF-16 bytes, surrogates included', () => {
    for (const s of ['1', 'ab', 'αβγ', '😀x', 'user_42']) {
      const bytes = new Uint8Array(s.length * 2);
      for (let i = 0; i < s.length; i++) {
        bytes[2 * i] = s.charCodeAt(i) & 0xff;
        bytes[2 * i + 1] = s.charCodeAt(i) >>> 8;
      }
      expect(murmur3Routing(s)).toBe(murmur3Bytes(bytes));
    }
  });
});

describe('shardFor', () => {
  // ES MetadataCreateIndexServiceTests.testCalculateNumRoutingShards
  it.each([
    [1, 1024], [2, 1024], [3, 768], [5, 640], [9, 576], [512, 1024], [1024, 2048], [2048, 4096],
  ])('uses %i shards -> %i routing shards', (n, expected) => {
    expect(calculateNumRoutingShards(n)).toBe(expected);
  });

  // hash, then floorMod(hash, routingNumShards) / (routingNumShards / numShards); derived by hand
  // from the Java code with an independent implementation
  it.each([
    ['1', -126235597, [0, 2, 4, 8]],
    ['2', -303927213, [0, 1, 3, 7]],
    ['3', -1151172406, [0, 1, 0, 1]],
    ['foo', 2085578581, [1, 0, 2, 5]],
    ['bar', -242191547, [1, 1, 3, 7]],
    ['user_42', -941467058, [1, 1, 3, 7]],
    ['αβγ', -1654120319, [0, 1, 0, 0]],
    ['😀', 1443257913, [1, 0, 2, 4]],
  ] as const)('routes %j (hash %i) to shards %j of 2, 3, 5 and 10', (routing, hash, shards) => {
    expect(murmur3Routing(routing)).toBe(hash);
    expect([2, 3, 5, 10].map((n) => shardFor(routing, n, calculateNumRoutingShards(n)))).toEqual(shards);
  });

  it('puts everything on shard 0 of a one-shard index', () => {
    expect(['a', 'b', '1', 'zz'].map((r) => shardFor(r, 1, 1024))).toEqual([0, 0, 0, 0]);
  });
});

describe('indexShard (ES IndexRouting)', () => {
  const spec = (numberOfShards: number, routingNumShards: number, routingPartitionSize = 1) => ({ numberOfShards, routingNumShards, routingPartitionSize });

  // ES scroll/12_slices.yml: 5 shards created with number_of_routing_shards 5; slice 0 of 2 takes
  // shards 0, 2, 4 and must hold ids 2, 3, 4 (id 1 is on shard 1 or 3)
  it('routes ids 1-4 of a 5-shard index with 5 routing shards as 12_slices.yml expects', () => {
    const s = spec(5, 5);
    const shards = ['1', '2', '3', '4'].map((id) => indexShard(s, id, undefined));
    expect(shards.map((n) => n % 2)).toEqual([1, 0, 0, 0]);
    expect(shards).toEqual([3, 2, 4, 2]);
  });

  // ES IndexRoutingTests.testBWC: 8 shards whose routing shard count is 8 (a sample of its table)
  it.each([
    ['sEERfFzPSI', 1], ['cNRiIrjzYd', 7], ['BgfLBXUyWT', 5], ['cnepjZhQnb', 3], ['OKCmuYkeCK', 6], ['OutXGRQUja', 5],
    ['yCdyocKWou', 1], ['KXuNWWNgVj', 2], ['DGJOYrpESx', 4], ['hswhrppvDH', 0], ['qoZALVcite', 7], ['AITyyoyLLs', 4],
  ] as const)('routes %j to shard %i of 8 (ES testBWC), by _id, by routing and for search', (key, shard) => {
    const s = spec(8, 8);
    expect(indexShard(s, key, undefined)).toBe(shard);
    expect(indexShard(s, 'xyzzy', key)).toBe(shard);
    expect(searchShards(s, key)).toEqual([shard]);
  });

  // ES 8 IndexRoutingTests.testPartitionedIndexShrunk: 4 shards, 8 routing shards, partition size 3
  // (ES 9 changed these values together with its routing for new indices)
  it.each([
    ['a', 'a_0', 1], ['a', 'a_1', 2], ['a', 'a_4', 1], ['b', 'b_1', 0], ['b', 'b_4', 3], ['b', 'b_5', 3],
    ['c', 'c_0', 1], ['c', 'c_2', 0], ['d', 'd_0', 2], ['d', 'd_2', 3], ['d', 'd_5', 3],
  ] as const)('routes routing %j id %j to shard %i of a partitioned, shrunk index', (routing, id, shard) => {
    expect(indexShard(spec(4, 8, 3), id, routing)).toBe(shard);
  });

  // ES IndexRoutingTests.testPartitionedIndexBWC: 6 shards (routing shards 6), partition size 2
  it.each([
    ['a', 'a_0', 3], ['a', 'a_1', 2], ['b', 'b_0', 5], ['b', 'b_1', 0], ['c', 'c_2', 3], ['c', 'c_3', 4], ['d', 'd_0', 3], ['d', 'd_3', 4],
  ] as const)('routes routing %j id %j to shard %i of a partitioned 6-shard index', (routing, id, shard) => {
    expect(indexShard(spec(6, 6, 2), id, routing)).toBe(shard);
  });

  it('lists the partition\'s shards for a search with routing', () => {
    const s = spec(6, 6, 2);
    const placed = new Set(['a_0', 'a_1', 'a_2', 'a_3', 'a_4', 'a_5', 'a_6', 'a_7'].map((id) => indexShard(s, id, 'a')));
    expect(searchShards(s, 'a')).toEqual([...placed].sort());
    expect(searchShards(s, 'a')).toHaveLength(2);
  });

  it('refuses a partitioned index without routing', () => {
    expect(() => indexShard(spec(6, 6, 2), 'x', undefined)).toThrow('A routing value is required for gets from a partitioned index');
  });
});

describe('slice hashes', () => {
  it.each([
    ['', 0], ['a', 97], ['hello', 99162322], ['Hello, World!', 1498789909], ['ü😀', 2015071],
  ])('computes Java String.hashCode of %j', (s, h) => {
    expect(javaStringHashCode(s)).toBe(h);
  });

  // oracle: HPPC BitMixer.mix(long) = (int) mix64(z), computed with 64-bit integers
  it.each([
    [0, 0], [1, 1939593575], [-1, 850083617], [42, -271839007], [1_600_000_000_000, -1064988344], [-5, -1309864285],
  ])('mixes the long %i like HPPC BitMixer', (v, expected) => {
    expect(bitMix(v)).toBe(expected);
    expect(bitMix(BigInt(v))).toBe(expected);
  });

  it.each([
    [(1n << 62n) + 3n, 803462262], [2n ** 63n - 1n, 425041808], [-(2n ** 63n), -7637618],
  ])('mixes the long %s beyond 2^53 exactly', (v, expected) => {
    expect(bitMix(v)).toBe(expected);
  });
});
