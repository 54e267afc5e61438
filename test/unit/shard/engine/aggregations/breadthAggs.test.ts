import { shardWith, search } from '../engineFixture';
import { reduceAggs, renderAggs } from '../../../../../actors/shard/engine';
import { javaDouble } from '../../../../../actors/shard/engine/aggregations/ranges';

// The corpus of ES's search.aggregation/150_stats_metric.yml and 220_filters_bucket.yml, plus dates and a tag.
const docs = {
  1: { int_field: 1, double_field: 1.0, string_field: 'foo', day: '2015-01-01' },
  2: { int_field: 51, double_field: 51.0, string_field: 'foo', day: '2015-06-01' },
  3: { int_field: 101, double_field: 101.0, string_field: 'foo' },
  4: { int_field: 151, double_field: 151.0, string_field: 'bar', day: '2016-01-01' },
};
const mappings = { properties: { int_field: { type: 'integer' }, double_field: { type: 'double' }, string_field: { type: 'keyword' }, day: { type: 'date' } } };
const one = shardWith(docs, mappings);
// the same docs over two shards: the merge must give what one shard gives
const left = shardWith({ 1: docs[1], 3: docs[3] }, mappings);
const right = shardWith({ 2: docs[2], 4: docs[4] }, mappings);

const aggs = (a: Record<string, unknown>, query?: unknown) => renderAggs(reduceAggs([search(one, { aggs: a, query, size: 0 }).aggs], a), a, false) as Record<string, any>;
const twoShards = (a: Record<string, unknown>, query?: unknown) =>
  renderAggs(reduceAggs([search(left, { aggs: a, query, size: 0 }).aggs, search(right, { aggs: a, query, size: 0 }).aggs], a), a, false);

describe('stats and extended_stats (150_stats_metric, 160_extended_stats_metric)', () => {
  it('Basic test', () => {
    expect(aggs({ s: { stats: { field: 'int_field' } } }).s).toEqual({ count: 4, min: 1, max: 151, avg: 76, sum: 304 });
    const e = aggs({ e: { extended_stats: { field: 'double_field' } } }).e;
    expect(e).toMatchObject({ count: 4, sum_of_squares: 35604, variance: 3125, std_deviation: 55.90169943749474 });
    expect(e.std_deviation_bounds).toMatchObject({ upper: 187.80339887498948, lower: -35.80339887498948 });
  });
  it('Filtered test', () => {
    const e = aggs({ e: { extended_stats: { field: 'int_field' } } }, { constant_score: { filter: { range: { int_field: { gte: 50 } } } } }).e;
    expect(e).toMatchObject({ count: 3, min: 51, max: 151, avg: 101, sum: 303, sum_of_squares: 35603, variance: 1666.6666666666667 });
    expect(e.std_deviation_bounds.upper).toBe(182.6496580927726);
  });
  it('Missing field with and without missing param', () => {
    expect(aggs({ m: { stats: { field: 'foo', missing: 1 } } }).m).toEqual({ count: 4, min: 1, max: 1, avg: 1, sum: 4 });
    expect(aggs({ m: { stats: { field: 'foo' } } }).m).toEqual({ count: 0, min: null, max: null, avg: null, sum: 0 });
  });
  it('Sigma test and dates print as strings', () => {
    expect(aggs({ e: { extended_stats: { field: 'int_field', sigma: 3 } } }).e.std_deviation_bounds.upper).toBe(243.7050983124842);
    expect(aggs({ d: { stats: { field: 'day' } } }).d.min_as_string).toBe('2015-01-01T00:00:00.000Z');
  });
  it('merges shards to the same figures', () => {
    const a = { e: { extended_stats: { field: 'int_field' } } };
    expect(twoShards(a)).toEqual(aggs(a));
  });
});

describe('filter, filters, missing (220_filters_bucket, 50_filter)', () => {
  const named = { filters: { filters: { first_filter: { match: { int_field: 101 } }, second_filter: { match: { int_field: 151 } } } }, aggs: { the_avg: { avg: { field: 'int_field' } } } };
  it('named filters are keyed buckets with sub-aggregations', () => {
    expect(aggs({ f: named }).f).toEqual({ buckets: { first_filter: { doc_count: 1, the_avg: { value: 101 } }, second_filter: { doc_count: 1, the_avg: { value: 151 } } } });
  });
  it('anonymous filters are a bucket array; other_bucket collects the rest', () => {
    const f = aggs({ f: { filters: { filters: [{ match: { int_field: 101 } }, { match: { int_field: 151 } }], other_bucket: true } } }).f;
    expect(f.buckets.map((b: { doc_count: number }) => b.doc_count)).toEqual([1, 1, 2]);
  });
  it('Filtered test: buckets count only the query matches', () => {
    const f = aggs({ f: named }, { constant_score: { filter: { range: { int_field: { gte: 110 } } } } }).f;
    expect(f.buckets.first_filter).toEqual({ doc_count: 0, the_avg: { value: null } });
    expect(f.buckets.second_filter.doc_count).toBe(1);
  });
  it('filter and missing are single buckets', () => {
    const r = aggs({ f: { filter: { term: { string_field: 'foo' } }, aggs: { m: { max: { field: 'int_field' } } } }, mi: { missing: { field: 'day' } } });
    expect(r).toEqual({ f: { doc_count: 3, m: { value: 101 } }, mi: { doc_count: 1 } });
    expect(twoShards({ f: { filter: { term: { string_field: 'foo' } } } })).toEqual({ f: { doc_count: 3 } });
  });
});

describe('range, date_range, histogram (40_range, 41_date_range, 10_histogram)', () => {
  it('range: ordered buckets keyed from-to with Java doubles, open ends *', () => {
    expect(aggs({ r: { range: { field: 'double_field', ranges: [{ from: 150 }, { to: 50 }, { from: 50, to: 150 }] } } }).r.buckets).toEqual([
      { key: '*-50.0', to: 50, doc_count: 1 }, { key: '50.0-150.0', from: 50, to: 150, doc_count: 2 }, { key: '150.0-*', from: 150, doc_count: 1 },
    ]);
  });
  it('range keyed with own keys, and missing', () => {
    const r = aggs({ r: { range: { field: 'day', keyed: true, ranges: [{ key: 'old', to: 0 }, { key: 'new', from: 0 }] } } }).r;
    expect(r.buckets).toEqual({ old: { to: 0, doc_count: 0 }, new: { from: 0, doc_count: 3 } });
  });
  it('date_range parses and prints dates in the format', () => {
    const r = aggs({ r: { date_range: { field: 'day', format: 'yyyy-MM', ranges: [{ to: '2015-03' }, { from: '2015-03', to: '2016-01' }] } } }).r;
    expect(r.buckets.map((b: Record<string, unknown>) => [b.key, b.doc_count])).toEqual([['*-2015-03', 1], ['2015-03-2016-01', 1]]);
  });
  it('histogram fills empty buckets between the bounds, honours offset and min_doc_count', () => {
    const h = aggs({ h: { histogram: { field: 'int_field', interval: 30 } } }).h;
    expect(h.buckets.map((b: { key: number; doc_count: number }) => [b.key, b.doc_count])).toEqual([[0, 1], [30, 1], [60, 0], [90, 1], [120, 0], [150, 1]]);
    const o = aggs({ h: { histogram: { field: 'int_field', interval: 50, offset: 1, min_doc_count: 1 } } }).h;
    expect(o.buckets.map((b: { key: number }) => b.key)).toEqual([1, 51, 101, 151]);
    expect(twoShards({ h: { histogram: { field: 'int_field', interval: 40 } } })).toEqual(aggs({ h: { histogram: { field: 'int_field', interval: 40 } } }));
  });
  it('refuses a non-positive interval with ES text', () => {
    expect(() => aggs({ h: { histogram: { field: 'int_field', interval: 0 } } })).toThrow('[interval] must be >0 for histogram aggregation [h]');
  });
  it('prints keys as Java prints doubles', () => {
    expect([50, 1.5, 1e7, 0.0001, -3].map(javaDouble)).toEqual(['50.0', '1.5', '1.0E7', '1.0E-4', '-3.0']);
  });
});

describe('top_hits (200_top_hits_metric)', () => {
  it('keeps the best hits of each bucket by its sort, with _source filtering', () => {
    const t = aggs({ t: { terms: { field: 'string_field' }, aggs: { top: { top_hits: { size: 2, sort: [{ int_field: 'desc' }], _source: ['int_field'] } } } } }).t;
    expect(t.buckets[0].top.hits).toEqual({
      total: { value: 3, relation: 'eq' }, max_score: null,
      hits: [
        { _index: 'idx', _id: '3', _score: null, _source: { int_field: 101 }, sort: [101] },
        { _index: 'idx', _id: '2', _score: null, _source: { int_field: 51 }, sort: [51] },
      ],
    });
  });
  it('ranks by score by default and merges shards', () => {
    const a = { top: { top_hits: { size: 3 } } };
    const r = aggs(a, { match: { string_field: 'foo' } }).top.hits;
    expect(r.hits.map((h: { _id: string }) => h._id)).toEqual(['1', '2', '3']);
    expect(r.max_score).toBeGreaterThan(0);
    expect((twoShards(a, { match: { string_field: 'foo' } }) as any).top.hits.hits.map((h: { _id: string }) => h._id).sort()).toEqual(['1', '2', '3']);
  });
  it('refuses a window over index.max_inner_result_window', () => {
    expect(() => aggs({ top: { top_hits: { size: 101 } } })).toThrow(/Top hits result window is too large, the top hits aggregator \[top\]'s from \+ size must be less than or equal to: \[100\] but was \[101\]/);
  });
});
