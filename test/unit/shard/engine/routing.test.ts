import {
  bitMix, calculateNumRoutingShards, javaStringHashCode, murmur3Bytes, murmur3Routing, shardFor,
} from '../../../../actors/shard/engine';

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
    expect([2, 3, 5, 10].map((n) => shardFor(routing, n))).toEqual(shards);
  });

  it('puts everything on shard 0 of a one-shard index', () => {
    expect(['a', 'b', '1', 'zz'].map((r) => shardFor(r, 1))).toEqual([0, 0, 0, 0]);
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
