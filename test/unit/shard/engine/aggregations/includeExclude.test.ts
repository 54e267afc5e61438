import { checkIncludeExclude, keyFilter } from '../../../../../actors/shard/engine/aggregations/includeExclude';
import { bitMix, doubleToSortableLong, mix64, murmur3Bytes } from '../../../../../actors/shard/engine/base/routing';

describe('hashes of partitioned include', () => {
  it('computes murmur3_x86_32 with a seed like the reference implementation', () => {
    // well-known vector: "The quick brown fox jumps over the lazy dog", seed 0x9747b28c
    expect(murmur3Bytes(new TextEncoder().encode('The quick brown fox jumps over the lazy dog'), 0x9747b28c)).toBe(0x2fa826cd | 0);
  });

  it('keeps all 64 bits of BitMixer.mix64 (its low 32 bits are BitMixer.mix)', () => {
    for (const v of [0n, 1n, -1n, 42n, 1_600_000_000_000n, -5n, 9_223_372_036_854_775_807n]) {
      expect(Number(BigInt.asIntN(32, mix64(v)))).toBe(bitMix(v));
    }
    expect(mix64(0n)).toBe(0n);
  });

  it('maps doubles to sortable longs as Lucene NumericUtils does', () => {
    expect(doubleToSortableLong(0)).toBe(0n);
    expect(doubleToSortableLong(1)).toBe(0x3ff0000000000000n);
    expect(doubleToSortableLong(-1)).toBe(-0x3ff0000000000001n);
    expect(doubleToSortableLong(-2) < doubleToSortableLong(-1)).toBe(true);
  });
});

describe('keyFilter', () => {
  // ES search.aggregation/20_terms.yml: "Partitioned string test" and "Partitioned integer test"
  it.each([
    [0, 'string', ['abc', 'bcd'], ['bcd']],
    [1, 'string', ['abc', 'bcd'], ['abc']],
    [0, 'long', [1234, 5678], [5678]],
    [1, 'long', [1234, 5678], [1234]],
  ] as const)('partition %i of 2 over %s keys keeps what ES keeps', (partition, kind, keys, kept) => {
    const f = keyFilter('t', { include: { partition, num_partitions: 2 } }, kind);
    expect(keys.filter((k) => f(k))).toEqual(kept);
  });

  it('splits keys into disjoint partitions that cover them all', () => {
    const keys = Array.from({ length: 200 }, (_, i) => `k${i}`);
    const parts = [0, 1, 2, 3, 4].map((p) => keys.filter(keyFilter('t', { include: { partition: p, num_partitions: 5 } }, 'string')));
    expect(parts.flat().sort()).toEqual([...keys].sort());
    expect(parts.every((p) => p.length > 10)).toBe(true);
  });

  it('applies a regexp include minus a value exclude', () => {
    const f = keyFilter('t', { include: 'a.*|b.*', exclude: ['bb'] }, 'string');
    expect(['a', 'ab', 'b', 'bb', 'c'].filter(f)).toEqual(['a', 'ab', 'b']);
  });

  it('parses date values with the given format, date math included', () => {
    const f = keyFilter('t', { include: ['03/05/2016', '2014-09-01||+1d'] }, 'date', { dateFormat: 'dd/MM/yyyy||strict_date_optional_time' });
    expect([Date.UTC(2016, 4, 3), Date.UTC(2014, 8, 2), Date.UTC(2014, 8, 1)].map(f)).toEqual([true, true, false]);
  });

  it('compares doubles by value', () => {
    const f = keyFilter('t', { exclude: ['14.6', '1e1'] }, 'double');
    expect([10, 14.6, 100].map(f)).toEqual([false, false, true]);
  });

  it('refuses a regexp on numeric keys', () => {
    expect(() => keyFilter('x', { include: '1.*' }, 'long')).toThrow('Aggregation [x] cannot support regular expression style include/exclude settings');
  });
});

describe('checkIncludeExclude', () => {
  it.each([
    ['include', { partition: 1 }, 'Missing [num_partitions] parameter for partition-based include'],
    ['include', { partition: -1, num_partitions: 3 }, 'Partition must be >=0 and < numPartition which is 3'],
    ['include', { partition: 0, num_partitions: 3, x: 1 }, 'Unknown parameter in Include/Exclude clause: x'],
    ['include', [{ a: 1 }], 'Array elements in include/exclude clauses should be string values'],
    ['exclude', '[a', "expected ']' at position 2"],
  ] as const)('refuses %s %j: %s', (key, v, reason) => {
    expect(() => checkIncludeExclude(key, v)).toThrow(reason);
  });
});
