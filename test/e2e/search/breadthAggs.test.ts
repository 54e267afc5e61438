/**
 * Issue 24, aggregations through the official client: ES's YAML REST tests
 * search.aggregation/150_stats_metric, 160_extended_stats_metric, 220_filters_bucket and 40_range
 * ported case by case; histogram, date_range, missing and top_hits over a 3-shard index, inside a
 * scroll and a PIT.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { failure } from './helpers';

let t: TestNode;
type Aggs = Record<string, any>;

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({
    index: 'test_1',
    settings: { number_of_replicas: 0 },
    mappings: { properties: { int_field: { type: 'integer' }, double_field: { type: 'double' }, string_field: { type: 'keyword' } } },
  });
  const docs = [1, 51, 101, 151].map((n) => ({ int_field: n, double_field: n, string_field: 'foo' }));
  await t.es.bulk({ refresh: true, operations: docs.flatMap((d, i) => [{ index: { _index: 'test_1', _id: String(i + 1) } }, d]) });
});
afterAll(async () => {
  await t?.stop();
});

const aggsOf = async (body: Record<string, unknown>, index = 'test_1'): Promise<Aggs> => (await t.es.search({ index, size: 0, ...body } as never)).aggregations as Aggs;

describe('search.aggregation/150_stats_metric.yml and 160_extended_stats_metric.yml', () => {
  it('Basic test', async () => {
    const a = await aggsOf({ aggs: { the_int_stats: { stats: { field: 'int_field' } }, the_double_stats: { stats: { field: 'double_field' } } } });
    for (const s of [a.the_int_stats, a.the_double_stats]) expect(s).toEqual({ count: 4, min: 1, max: 151, avg: 76, sum: 304 });
  });
  it('Filtered test', async () => {
    const a = await aggsOf({ query: { constant_score: { filter: { range: { int_field: { gte: 50 } } } } }, aggs: { s: { extended_stats: { field: 'int_field' } } } });
    expect(a.s).toMatchObject({ count: 3, min: 51, max: 151, avg: 101, sum: 303, sum_of_squares: 35603, variance: 1666.6666666666667, std_deviation: 40.824829046386306 });
    expect(a.s.std_deviation_bounds).toMatchObject({ upper: 182.6496580927726, lower: 19.35034190722739 });
  });
  it('Missing field with missing param, and without', async () => {
    expect((await aggsOf({ aggs: { m: { stats: { field: 'foo', missing: 1 } } } })).m).toEqual({ count: 4, min: 1, max: 1, avg: 1, sum: 4 });
    const e = (await aggsOf({ aggs: { m: { extended_stats: { field: 'foo', missing: 1 } } } })).m;
    expect(e).toMatchObject({ sum_of_squares: 4, variance: 0, std_deviation: 0, std_deviation_bounds: { upper: 1, lower: 1 } });
    expect((await aggsOf({ aggs: { m: { stats: { field: 'foo' } } } })).m.value).toBeUndefined();
  });
  it('Metadata test and typed_keys', async () => {
    const r = await t.es.search({ index: 'test_1', size: 0, typed_keys: true, aggs: { the_int_stats: { meta: { foo: 'bar' }, stats: { field: 'int_field' } } } });
    expect((r.aggregations as Aggs)['stats#the_int_stats']).toMatchObject({ meta: { foo: 'bar' }, count: 4 });
  });
  it('Sigma test and bad sigma', async () => {
    const a = await aggsOf({ aggs: { e: { extended_stats: { field: 'int_field', sigma: 3 } } } });
    expect(a.e.std_deviation_bounds).toMatchObject({ upper: 243.7050983124842, lower: -91.70509831248421 });
    const bad = await failure(aggsOf({ aggs: { the_int_extended_stats: { extended_stats: { field: 'int_field', sigma: -1 } } } }));
    expect(JSON.stringify(bad.body)).toContain('[sigma] must be greater than or equal to 0. Found [-1.0] in [the_int_extended_stats]');
  });
});

describe('search.aggregation/220_filters_bucket.yml', () => {
  const named = { first_filter: { match: { int_field: 101 } }, second_filter: { match: { int_field: 151 } } };
  it('Basic test with a sub-aggregation', async () => {
    const a = await aggsOf({ aggs: { the_filter: { filters: { filters: named }, aggs: { the_avg: { avg: { field: 'int_field' } } } } } });
    expect(a.the_filter.buckets).toEqual({ first_filter: { doc_count: 1, the_avg: { value: 101 } }, second_filter: { doc_count: 1, the_avg: { value: 151 } } });
  });
  it('Anonymous filters test', async () => {
    const a = await aggsOf({ aggs: { the_filter: { filters: { filters: [named.first_filter, named.second_filter] } } } });
    expect(a.the_filter.buckets).toEqual([{ doc_count: 1 }, { doc_count: 1 }]);
  });
  it('Filtered test', async () => {
    const a = await aggsOf({ query: { constant_score: { filter: { range: { int_field: { gte: 110 } } } } }, aggs: { the_filter: { filters: { filters: named }, aggs: { the_avg: { avg: { field: 'int_field' } } } } } });
    expect(a.the_filter.buckets.first_filter).toEqual({ doc_count: 0, the_avg: { value: null } });
    expect(a.the_filter.buckets.second_filter).toEqual({ doc_count: 1, the_avg: { value: 151 } });
  });
  it('Metadata test', async () => {
    expect((await aggsOf({ aggs: { the_filter: { meta: { foo: 'bar' }, filters: { filters: named } } } })).the_filter.meta).toEqual({ foo: 'bar' });
  });
  it('Bad params', async () => {
    for (const filters of [{}, { filters: [] }]) {
      const e = await failure(aggsOf({ aggs: { the_filter: { filters } } }));
      expect(e.status).toBe(400);
      expect(JSON.stringify(e.body)).toContain('[filters] cannot be empty');
    }
  });
  it('terms lookups inside filters', async () => {
    await t.es.indices.create({ index: 'cache', mappings: { properties: { mentions: { type: 'keyword' }, notifications: { type: 'keyword' } } } });
    await t.es.bulk({ refresh: true, index: 'cache', operations: [{ index: { _id: 'foo|bar|baz0' } }, { notifications: ['abc'] }, { index: { _id: 'foo|bar|baz1' } }, { mentions: ['abc'] }] });
    const a = await aggsOf({
      aggs: { itemsNotify: { filters: { filters: { lookup: { terms: { mentions: { index: 'cache', id: 'foo|bar|baz0', path: 'notifications' } } }, std: { terms: { mentions: ['abc'] } } } } } },
    }, 'cache');
    expect(a.itemsNotify.buckets).toEqual({ lookup: { doc_count: 1 }, std: { doc_count: 1 } });
  });
});

describe('search.aggregation/40_range.yml', () => {
  beforeAll(async () => {
    await t.es.indices.create({ index: 'rg', mappings: { properties: { double: { type: 'double' }, long: { type: 'long' } } } });
    await t.es.bulk({ refresh: true, index: 'rg', operations: [{ index: {} }, { double: 42.1, long: 25 }, { index: {} }, { double: 100.7, long: 80 }, { index: {} }, { double: 50.5, long: 75 }, { index: {} }, {}] });
  });
  const ranges = [{ to: 50 }, { from: 50, to: 150 }, { from: 150 }];
  it('Double range, with missing value, on a long field', async () => {
    const expected = (last: number) => [{ key: '*-50.0', to: 50, doc_count: 1 }, { key: '50.0-150.0', from: 50, to: 150, doc_count: 2 }, { key: '150.0-*', from: 150, doc_count: last }];
    expect((await aggsOf({ aggs: { r: { range: { field: 'double', ranges } } } }, 'rg')).r.buckets).toEqual(expected(0));
    expect((await aggsOf({ aggs: { r: { range: { field: 'double', missing: 1000, ranges } } } }, 'rg')).r.buckets).toEqual(expected(1));
    expect((await aggsOf({ aggs: { r: { range: { field: 'long', ranges } } } }, 'rg')).r.buckets).toEqual(expected(0));
  });
  it('Null to and from; keyed response with own keys', async () => {
    const n = await aggsOf({ aggs: { r: { range: { field: 'double', ranges: [{ from: null, to: 50 }, { from: 50, to: 150 }, { from: 150, to: null }] } } } }, 'rg');
    expect(n.r.buckets.map((b: { key: string }) => b.key)).toEqual(['*-50.0', '50.0-150.0', '150.0-*']);
    const k = await aggsOf({ aggs: { r: { range: { field: 'double', keyed: true, ranges: [{ key: 'first', to: 50 }, { key: 'another', from: 50, to: 150 }, { key: 'last', from: 150 }] } } } }, 'rg');
    expect(k.r.buckets).toEqual({ first: { to: 50, doc_count: 1 }, another: { from: 50, to: 150, doc_count: 2 }, last: { from: 150, doc_count: 0 } });
  });
});

describe('histogram, date_range, missing and top_hits over shards, in a scroll and a PIT', () => {
  beforeAll(async () => {
    await t.es.indices.create({ index: 'ev3', settings: { number_of_shards: 3 }, mappings: { properties: { n: { type: 'integer' }, day: { type: 'date' }, tag: { type: 'keyword' } } } });
    const ops = Array.from({ length: 40 }, (_, i) => [{ index: { _index: 'ev3', _id: String(i) } }, { n: i, tag: `t${i % 4}`, ...(i % 5 ? { day: `2020-0${1 + (i % 6)}-15` } : {}) }]).flat();
    await t.es.bulk({ refresh: true, operations: ops });
  });
  const body = {
    aggs: {
      h: { histogram: { field: 'n', interval: 10 } },
      d: { date_range: { field: 'day', format: 'yyyy-MM', ranges: [{ to: '2020-03' }, { from: '2020-03' }] } },
      m: { missing: { field: 'day' } },
      tags: { terms: { field: 'tag', order: { _key: 'asc' as const } }, aggs: { top: { top_hits: { size: 1, sort: [{ n: 'desc' as const }], _source: ['n'] } } } },
    },
  };
  const check = (a: Aggs) => {
    expect(a.h.buckets.map((b: { key: number; doc_count: number }) => [b.key, b.doc_count])).toEqual([[0, 10], [10, 10], [20, 10], [30, 10]]);
    expect(a.m.doc_count).toBe(8);
    expect(a.d.buckets.reduce((n: number, b: { doc_count: number }) => n + b.doc_count, 0)).toBe(32);
    expect(a.tags.buckets.map((b: Aggs) => b.top.hits.hits[0]._source.n)).toEqual([36, 37, 38, 39]);
  };
  it('a plain search', async () => check(await aggsOf(body, 'ev3')));
  it('the first page of a scroll', async () => {
    const r = await t.es.search({ index: 'ev3', scroll: '1m', size: 5, ...body });
    check(r.aggregations as Aggs);
    await t.es.clearScroll({ scroll_id: r._scroll_id! });
  });
  it('a PIT search', async () => {
    const { id } = await t.es.openPointInTime({ index: 'ev3', keep_alive: '1m' });
    const r = await t.es.search({ pit: { id }, size: 0, ...body });
    check(r.aggregations as Aggs);
    await t.es.closePointInTime({ id });
  });
});

describe('search.aggregation/20_terms.yml profiles and value types', () => {
  beforeAll(async () => {
    await t.es.indices.create({ index: 'prof', settings: { number_of_shards: 1, number_of_replicas: 0 }, mappings: { properties: { str: { type: 'keyword' }, number: { type: 'long' } } } });
    const docs = [{ str: 'sheep', number: 1 }, { str: 'sheep', number: 3 }, { str: 'cow', number: 1 }, { str: 'pig', number: 1 }];
    await t.es.bulk({ refresh: true, operations: docs.flatMap((d) => [{ index: { _index: 'prof' } }, d]) });
  });
  const profiled = async (aggs: unknown) => (await t.es.search({ index: 'prof', size: 0, profile: true, aggs: aggs as never })) as unknown as { aggregations: Aggs; profile: { shards: Array<{ aggregations: Aggs[]; searches: Aggs[] }> } };
  it('string profiler via global ordinals', async () => {
    const r = await profiled({ str_terms: { terms: { field: 'str' }, aggs: { max_number: { max: { field: 'number' } } } } });
    expect(r.aggregations.str_terms.buckets[0]).toMatchObject({ key: 'sheep', max_number: { value: 3 } });
    const a = r.profile.shards[0].aggregations[0];
    expect(a).toMatchObject({ type: 'GlobalOrdinalsStringTermsAggregator', description: 'str_terms', breakdown: { collect_count: 4 } });
    expect(a.debug).toMatchObject({ result_strategy: 'terms', has_filter: false, total_buckets: 3 });
    expect(a.children[0]).toMatchObject({ type: 'MaxAggregator', description: 'max_number' });
    expect(r.profile.shards[0].searches[0].query[0].time_in_nanos).toBeGreaterThan(0);
  });
  it('string profiler via map, deferred sub-aggregations', async () => {
    const r = await profiled({ str_terms: { terms: { field: 'str', collect_mode: 'breadth_first', execution_hint: 'map' }, aggs: { max_number: { max: { field: 'number' } } } } });
    const a = r.profile.shards[0].aggregations[0];
    expect(a).toMatchObject({ type: 'MapStringTermsAggregator', description: 'str_terms', breakdown: { collect_count: 4 }, debug: { deferred_aggregators: ['max_number'], result_strategy: 'terms' } });
    expect(a.children[0]).toMatchObject({ type: 'MaxAggregator', description: 'max_number' });
  });
  it('numeric profiler', async () => {
    const r = await profiled({ n_terms: { terms: { field: 'number' } } });
    expect(r.aggregations.n_terms.buckets.map((b: Aggs) => b.key)).toEqual([1, 3]);
    expect(r.profile.shards[0].aggregations[0]).toMatchObject({ type: 'NumericTermsAggregator', description: 'n_terms', breakdown: { collect_count: 4 }, debug: { result_strategy: 'long_terms', total_buckets: 2 } });
  });
  it('value type mismatch fails the shard', async () => {
    await t.es.indices.create({ index: 'valuetype_test_1', settings: { number_of_shards: 1 }, mappings: { properties: { ip: { type: 'keyword' } } } });
    await t.es.indices.create({ index: 'valuetype_test_2', settings: { number_of_shards: 1 }, mappings: { properties: { ip: { type: 'ip' } } } });
    await t.es.bulk({ refresh: true, operations: ['192.168.7.1', '192.168.7.2', '192.168.7.3'].flatMap((ip) => [{ index: { _index: 'valuetype_test_1' } }, { ip }]) });
    await t.es.bulk({ refresh: true, operations: ['127.0.0.1', '192.168.0.1', '192.168.0.2', '192.168.0.3'].flatMap((ip) => [{ index: { _index: 'valuetype_test_2' } }, { ip }]) });
    const r = await t.es.search({ index: 'valuetype_test_1,valuetype_test_2', size: 0, aggs: { str_terms: { terms: { field: 'ip', value_type: 'ip' } } } as never });
    expect(r._shards.failed).toBe(1);
    expect((r.aggregations!.str_terms as Aggs).buckets.map((b: Aggs) => [b.key, b.doc_count])).toEqual([['127.0.0.1', 1], ['192.168.0.1', 1], ['192.168.0.2', 1], ['192.168.0.3', 1]]);
  });
});
