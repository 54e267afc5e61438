import { reduceHits, reduceTotal } from '../../../../../actors/shard/engine/query/reduce';
import { compareCodePoints, compareSortValues } from '../../../../../actors/shard/engine/base/sortValues';
import type { ShardHit, ShardQueryResult, SortSpec } from '../../../../../actors/shard/engine/types';

const hit = (doc: number, sort?: ShardHit['sort'], score: number | null = null): ShardHit => ({ doc, _id: `d${doc}`, score, sort });
const result = (hits: ShardHit[], totalHits: number | null = hits.length, totalRelation: 'eq' | 'gte' = 'eq', maxScore: number | null = null): ShardQueryResult =>
  ({ hits, totalHits, totalRelation, maxScore });

describe('compareSortValues', () => {
  const asc: SortSpec = { field: 'f', order: 'asc' };
  const desc: SortSpec = { field: 'f', order: 'desc' };
  it.each([
    [1, 2, asc, -1],
    [2, 1, asc, 1],
    [1, 2, desc, 1],
    [9007199254740993n, 9007199254740992, asc, 1],
    [9223372036854775807n, 5, asc, 1],
    [-9223372036854775808n, 5, desc, 1],
    [1.5, 1n, asc, 1],
    ['Infinity', 1e308, asc, 1],
    ['-Infinity', -1e308, asc, -1],
    ['a', 'b', asc, -1],
    ['b', 'a', desc, -1],
    ['a', 'ab', asc, -1],
    [false, true, asc, -1],
    [3, 3n, asc, 0],
  ])('compares %p with %p', (a, b, spec, sign) => {
    expect(Math.sign(compareSortValues(a as never, b as never, spec))).toBe(sign);
  });

  it('puts null last by default whatever the order', () => {
    expect(compareSortValues(null, 'a', asc)).toBeGreaterThan(0);
    expect(compareSortValues(null, 'a', desc)).toBeGreaterThan(0);
    expect(compareSortValues('a', null, desc)).toBeLessThan(0);
  });

  it('puts null first with missing _first', () => {
    expect(compareSortValues(null, 'a', { ...asc, missing: '_first' })).toBeLessThan(0);
    expect(compareSortValues(null, 'a', { ...desc, missing: '_first' })).toBeLessThan(0);
  });

  it('orders strings by code point like UTF-8 bytes', () => {
    expect(compareCodePoints('\uffff', '\u{1F600}')).toBeLessThan(0); // JS < would say the opposite
    expect(compareCodePoints('Z', 'a')).toBeLessThan(0);
  });
});

describe('reduceHits', () => {
  const sort: SortSpec[] = [{ field: 'n', order: 'asc' }];

  it('merges sorted shard lists by sort values', () => {
    const r = reduceHits(
      [
        { shardIndex: 0, result: result([hit(1, [1]), hit(2, [4]), hit(3, [7])]) },
        { shardIndex: 1, result: result([hit(1, [2]), hit(2, [3]), hit(3, [9])]) },
        { shardIndex: 2, result: result([hit(5, [5])]) },
      ],
      { sort, from: 0, size: 10, trackTotalHits: true },
    );
    expect(r.hits.map((h) => h.sort![0])).toEqual([1, 2, 3, 4, 5, 7, 9]);
    expect(r.total).toEqual({ value: 7, relation: 'eq' });
  });

  it('breaks ties by shard index then doc id', () => {
    const r = reduceHits(
      [
        { shardIndex: 1, result: result([hit(0, [1]), hit(3, [1])]) },
        { shardIndex: 0, result: result([hit(7, [1]), hit(9, [1])]) },
      ],
      { sort, from: 0, size: 10, trackTotalHits: true },
    );
    expect(r.hits.map((h) => [h.shardIndex, h.doc])).toEqual([[0, 7], [0, 9], [1, 0], [1, 3]]);
  });

  it('slices the page [from, from+size)', () => {
    const r = reduceHits(
      [
        { shardIndex: 0, result: result([hit(0, [0]), hit(2, [2]), hit(4, [4])]) },
        { shardIndex: 1, result: result([hit(1, [1]), hit(3, [3]), hit(5, [5])]) },
      ],
      { sort, from: 2, size: 2, trackTotalHits: true },
    );
    expect(r.hits.map((h) => h.sort![0])).toEqual([2, 3]);
  });

  it('treats from -1 as 0', () => {
    const r = reduceHits([{ shardIndex: 0, result: result([hit(0, [0]), hit(1, [1])]) }], { sort, from: -1, size: 1, trackTotalHits: true });
    expect(r.hits.map((h) => h.doc)).toEqual([0]);
  });

  it('orders by score desc when unsorted and takes the max score', () => {
    const r = reduceHits(
      [
        { shardIndex: 0, result: result([hit(0, undefined, 3), hit(1, undefined, 1)], 2, 'eq', 3) },
        { shardIndex: 1, result: result([hit(0, undefined, 2), hit(1, undefined, 1)], 2, 'eq', 2) },
      ],
      { from: 0, size: 10, trackTotalHits: 10000 },
    );
    expect(r.hits.map((h) => [h.shardIndex, h.score])).toEqual([[0, 3], [1, 2], [0, 1], [1, 1]]);
    expect(r.maxScore).toBe(3);
  });

  it('merges desc, bigint and missing values with the shard semantics', () => {
    const specs: SortSpec[] = [{ field: 'k', order: 'desc' }, { field: '_shard_doc', order: 'asc' }];
    const r = reduceHits(
      [
        { shardIndex: 0, result: result([hit(0, ['b', 0]), hit(1, [null, 1])]) },
        { shardIndex: 1, result: result([hit(0, ['c', 4294967296]), hit(1, ['a', 4294967297])]) },
      ],
      { sort: specs, from: 0, size: 10, trackTotalHits: true },
    );
    expect(r.hits.map((h) => h.sort![0])).toEqual(['c', 'b', 'a', null]);
  });

  it('returns max score null when no shard scored', () => {
    expect(reduceHits([{ shardIndex: 0, result: result([]) }], { from: 0, size: 10, trackTotalHits: true }).maxScore).toBeNull();
  });
});

describe('reduceTotal', () => {
  const shards = (...r: Array<[number | null, 'eq' | 'gte']>) => r.map(([t, rel], i) => ({ shardIndex: i, result: result([], t, rel) }));
  it.each([
    [true, shards([3, 'eq'], [4, 'eq']), { value: 7, relation: 'eq' }],
    [10000, shards([3, 'eq'], [4, 'eq']), { value: 7, relation: 'eq' }],
    [5, shards([3, 'eq'], [4, 'eq']), { value: 5, relation: 'gte' }],
    [5, shards([5, 'gte'], [5, 'gte']), { value: 5, relation: 'gte' }],
    [100, shards([5, 'gte'], [5, 'eq']), { value: 10, relation: 'gte' }],
    [false, shards([3, 'eq']), undefined],
  ])('track_total_hits %p', (track, s, expected) => {
    expect(reduceTotal(s, track as boolean | number)).toEqual(expected);
  });
});
