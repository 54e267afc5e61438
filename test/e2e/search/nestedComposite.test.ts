/**
 * Issue 24 through the official client: `nested` (mapping, query, inner_hits, nested and
 * reverse_nested aggregations), ES's search.aggregation/230_composite.yml (its setup maps a
 * geo_point and nested fields) and the date_range case of 360_date_histogram.yml, ported case by
 * case; a nested query inside a PIT with search_after.
 */
import { startTestNode, type TestNode } from '../../support/node';

let t: TestNode;
type Aggs = Record<string, any>;

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'test', mappings: { properties: { date: { type: 'date' }, date_nanos: { type: 'date_nanos' }, keyword: { type: 'keyword' }, long: { type: 'long' }, geo_point: { type: 'geo_point' } } } });
  await t.es.indices.create({ index: 'other', mappings: { properties: { date: { type: 'date' }, long: { type: 'long' } } } });
  await t.es.indices.create({
    index: 'verynested',
    mappings: {
      properties: {
        department: { type: 'keyword' }, staff: { type: 'integer' },
        courses: { type: 'nested', properties: { name: { type: 'keyword' }, credits: { type: 'integer' }, sessions: { type: 'nested', properties: { semester: { type: 'keyword' } } } } },
      },
    },
  });
  const course = (name: string, credits: number, spr: number, fall: number) => ({ name, credits, sessions: [{ semester: 'spr2021', students: spr }, { semester: 'fall2020', students: fall }] });
  await t.es.index({ index: 'verynested', id: '1', document: { department: 'compsci', staff: 12, courses: [course('Object Oriented Programming', 3, 37, 45), course('Theory of Computation', 4, 19, 14)] } });
  await t.es.index({ index: 'verynested', id: '2', document: { department: 'math', staff: 20, courses: [course('Precalculus', 1, 100, 134), course('Linear Algebra', 3, 29, 23)] } });
  const docs = [
    { keyword: 'foo', long: [10, 20], geo_point: '37.2343,-115.8067' },
    { keyword: ['foo', 'bar'], geo_point: '41.12,-71.34' },
    { keyword: 'bar', long: [100, 0], geo_point: '90.0,0.0' },
    { keyword: 'bar', long: [1000, 0], geo_point: '41.12,-71.34' },
    { date: '2017-10-20T03:08:45' },
    { date: '2017-10-21T07:00:00' },
  ];
  await t.es.bulk({ operations: docs.flatMap((d, i) => [{ index: { _index: 'test', _id: String(i + 1) } }, d]) });
  await t.es.index({ index: 'other', id: '0', document: { date: '2017-10-20T03:08:45' } });
  await t.es.indices.refresh({ index: 'test,other,verynested' });
});
afterAll(async () => {
  await t?.stop();
});

const composite = async (body: Record<string, unknown>, index = 'test') => (await t.es.search({ index, aggs: { test: { composite: body } } } as never)).aggregations!.test as Aggs;

describe('search.aggregation/230_composite.yml', () => {
  it('Simple Composite aggregation', async () => {
    const a = await composite({ sources: [{ kw: { terms: { field: 'keyword' } } }] });
    expect(a.buckets).toEqual([{ key: { kw: 'bar' }, doc_count: 3 }, { key: { kw: 'foo' }, doc_count: 2 }]);
  });
  it('Nested Composite aggregation and Aggregate After', async () => {
    const sources = [{ long: { terms: { field: 'long' } } }, { kw: { terms: { field: 'keyword' } } }];
    const a = await composite({ sources });
    expect(a.buckets.map((b: Aggs) => [b.key.long, b.key.kw, b.doc_count])).toEqual([[0, 'bar', 2], [10, 'foo', 1], [20, 'foo', 1], [100, 'bar', 1], [1000, 'bar', 1]]);
    const after = await composite({ sources, after: { long: 20, kw: 'foo' } });
    expect(after.buckets.map((b: Aggs) => [b.key.long, b.key.kw, b.doc_count])).toEqual([[100, 'bar', 1], [1000, 'bar', 1]]);
  });
  it('Aggregate After Missing', async () => {
    const a = await composite({ sources: [{ kw: { terms: { field: 'keyword' } } }], after: { kw: 'delta' } });
    expect(a.buckets).toEqual([{ key: { kw: 'foo' }, doc_count: 2 }]);
  });
  it('after_key in the response', async () => {
    const a = await composite({ sources: [{ keyword: { terms: { field: 'keyword' } } }] });
    expect(a.after_key).toEqual({ keyword: 'foo' });
  });
  it('Composite aggregation with format and calendar_interval', async () => {
    const sources = [{ date: { date_histogram: { field: 'date', calendar_interval: '1d', format: 'yyyy-MM-dd' } } }];
    expect((await composite({ sources })).buckets).toEqual([{ key: { date: '2017-10-20' }, doc_count: 1 }, { key: { date: '2017-10-21' }, doc_count: 1 }]);
    expect((await composite({ sources, after: { date: '2017-10-20' } })).buckets).toEqual([{ key: { date: '2017-10-21' }, doc_count: 1 }]);
  });
});

describe('nested', () => {
  it('nested query with inner_hits', async () => {
    const r = await t.es.search({ index: 'verynested', query: { nested: { path: 'courses', query: { term: { 'courses.credits': 4 } }, inner_hits: {} } } });
    expect(r.hits.hits.map((h) => h._id)).toEqual(['1']);
    const ih = (r.hits.hits[0].inner_hits!.courses.hits as unknown as Aggs);
    expect(ih.total).toEqual({ value: 1, relation: 'eq' });
    expect(ih.hits[0]._nested).toEqual({ field: 'courses', offset: 1 });
    expect(ih.hits[0]._source.name).toBe('Theory of Computation');
  });
  it('a deeper nested path matches per object', async () => {
    const q = (semester: string) => ({ nested: { path: 'courses.sessions', query: { term: { 'courses.sessions.semester': semester } } } });
    expect((await t.es.search({ index: 'verynested', query: q('spr2021') })).hits.hits).toHaveLength(2);
    expect((await t.es.search({ index: 'verynested', query: q('win2022') })).hits.hits).toHaveLength(0);
  });
  it('nested and reverse_nested aggregations', async () => {
    const r = await t.es.search({
      index: 'verynested', size: 0,
      aggs: {
        courses: {
          nested: { path: 'courses' },
          aggs: { credits: { terms: { field: 'courses.credits' }, aggs: { dept: { reverse_nested: {}, aggs: { d: { terms: { field: 'department' } } } } } } },
        },
      },
    });
    const c = r.aggregations!.courses as Aggs;
    expect(c.doc_count).toBe(4);
    const three = c.credits.buckets.find((b: Aggs) => b.key === 3);
    expect(three.doc_count).toBe(2);
    expect(three.dept.doc_count).toBe(2);
    expect(three.dept.d.buckets.map((b: Aggs) => b.key).sort()).toEqual(['compsci', 'math']);
  });
  it('inside a PIT with search_after', async () => {
    const pit = await t.es.openPointInTime({ index: 'verynested', keep_alive: '1m' });
    const first = await t.es.search({ pit: { id: pit.id }, size: 1, sort: [{ staff: 'asc' }], query: { nested: { path: 'courses', query: { range: { 'courses.credits': { gte: 3 } } } } } });
    const second = await t.es.search({ pit: { id: pit.id }, size: 1, sort: [{ staff: 'asc' }], search_after: first.hits.hits[0].sort, query: { nested: { path: 'courses', query: { range: { 'courses.credits': { gte: 3 } } } } } });
    expect([first.hits.hits[0]._id, second.hits.hits[0]._id]).toEqual(['1', '2']);
    await t.es.closePointInTime({ id: pit.id });
  });
});

describe('search.aggregation/360_date_histogram.yml on a date_range field', () => {
  it('date_histogram on range with hard bounds', async () => {
    await t.es.indices.create({ index: 'test_date_hist', settings: { number_of_shards: 5 }, mappings: { properties: { range: { type: 'date_range' }, date: { type: 'date' }, date_not_indexed: { type: 'date', index: false } } } });
    const ranges = [
      { gte: '2016-01-01', lt: '2016-01-02' }, { gte: '2016-01-02', lt: '2016-01-03' }, { gte: '2016-02-01', lt: '2016-02-02' },
      { gte: '2016-03-01', lt: '2016-03-02' }, { gte: '2016-04-01' }, { lt: '2016-02-01' },
    ];
    await t.es.bulk({ index: 'test_date_hist', refresh: true, operations: [...ranges.flatMap((range) => [{ index: {} }, { range }]), { index: {} }, { date: ['2021-05-01', '2021-04-01', '2021-04-22'], date_not_indexed: ['2021-05-01', '2021-04-01', '2021-03-22'] }] });
    const r = await t.es.search({ index: 'test_date_hist', size: 0, aggs: { histo: { date_histogram: { field: 'range', calendar_interval: 'month', hard_bounds: { min: '2015-06-01', max: '2016-06-01' } } } } });
    expect((r.hits.total as { value: number }).value).toBe(7);
    const b = (r.aggregations!.histo as Aggs).buckets;
    expect(b).toHaveLength(13);
    expect(b[0]).toMatchObject({ key_as_string: '2015-06-01T00:00:00.000Z', doc_count: 1 });
    expect(b[8]).toMatchObject({ key_as_string: '2016-02-01T00:00:00.000Z', doc_count: 1 });
    expect(b[12]).toMatchObject({ key_as_string: '2016-06-01T00:00:00.000Z', doc_count: 1 });
  });
});

describe('inside async search', () => {
  it('runs nested (inner_hits) and nested aggregations to completion', async () => {
    const r = await t.es.asyncSearch.submit({
      index: 'verynested',
      wait_for_completion_timeout: '10s',
      query: { nested: { path: 'courses', query: { term: { 'courses.name': 'Linear Algebra' } }, inner_hits: {} } },
      aggs: { c: { nested: { path: 'courses' }, aggs: { n: { terms: { field: 'courses.name' } } } } },
    });
    expect(r.is_running).toBe(false);
    expect(r.response.hits.hits.map((h) => h._id)).toEqual(['2']);
    expect((r.response.hits.hits[0].inner_hits!.courses.hits as unknown as Aggs).hits[0]._nested).toEqual({ field: 'courses', offset: 1 });
    expect((r.response.aggregations!.c as Aggs).doc_count).toBe(2); // the matched doc's two courses
  });
});

describe('search.aggregation/360_date_histogram.yml, the other cases', () => {
  beforeAll(async () => {
    await t.es.indices.create({ index: 'test_timezone_date_nanos', mappings: { properties: { date: { type: 'date_nanos' } } } });
    await t.es.bulk({ index: 'test_timezone_date_nanos', refresh: true, operations: [{ index: {} }, { date: '2015-01-01' }, { index: {} }, { date: '2015-01-01T12:10:30.123456789Z' }, { index: {} }, { date: 1420070400 }] });
    await t.es.indices.create({ index: 'date_histogram_timezone_test', mappings: { properties: { date: { type: 'date', format: 'yyyy-MM-dd HH:mm:ss' } } } });
    const times = ['20:00:00', '21:30:00', '23:54:00', '23:40:00', '22:20:00', '21:20:00', '23:50:00', '22:15:00', '22:40:00', '22:20:00'];
    await t.es.bulk({ index: 'date_histogram_timezone_test', refresh: true, operations: times.flatMap((x) => [{ index: {} }, { date: `2021-05-01 ${x}` }]) });
  });
  const histo = async (index: string, body: Record<string, unknown>) =>
    ((await t.es.search({ index, size: 0, aggs: { h: { date_histogram: body } } } as never)).aggregations!.h as Aggs).buckets.map((b: Aggs) => [b.key, b.key_as_string, b.doc_count]);
  it('date_nanos without and with a time zone, fixed and calendar intervals', async () => {
    expect(await histo('test_timezone_date_nanos', { field: 'date', fixed_interval: '30s', min_doc_count: 1 })).toEqual([
      [1420050000, '1970-01-17T10:27:30.000Z', 1], [1420070400000, '2015-01-01T00:00:00.000Z', 1], [1420114230000, '2015-01-01T12:10:30.000Z', 1],
    ]);
    expect(await histo('test_timezone_date_nanos', { field: 'date', fixed_interval: '30s', time_zone: 'Europe/Berlin', min_doc_count: 1 })).toEqual([
      [1420050000, '1970-01-17T11:27:30.000+01:00', 1], [1420070400000, '2015-01-01T01:00:00.000+01:00', 1], [1420114230000, '2015-01-01T13:10:30.000+01:00', 1],
    ]);
    expect(await histo('test_timezone_date_nanos', { field: 'date', calendar_interval: 'minute', min_doc_count: 1 })).toEqual([
      [1420020000, '1970-01-17T10:27:00.000Z', 1], [1420070400000, '2015-01-01T00:00:00.000Z', 1], [1420114200000, '2015-01-01T12:10:00.000Z', 1],
    ]);
    expect(await histo('test_timezone_date_nanos', { field: 'date', calendar_interval: 'minute', time_zone: 'Europe/Berlin', min_doc_count: 1 })).toEqual([
      [1420020000, '1970-01-17T11:27:00.000+01:00', 1], [1420070400000, '2015-01-01T01:00:00.000+01:00', 1], [1420114200000, '2015-01-01T13:10:00.000+01:00', 1],
    ]);
  });
  it('date_histogram timezone with a format', async () => {
    const yes = await histo('date_histogram_timezone_test', { field: 'date', format: 'yyyy-MM-dd HH:mm:ss', calendar_interval: 'hour', time_zone: 'Asia/Jakarta' });
    expect(yes).toEqual([[1619899200000, '2021-05-02 03:00:00', 1], [1619902800000, '2021-05-02 04:00:00', 2], [1619906400000, '2021-05-02 05:00:00', 4], [1619910000000, '2021-05-02 06:00:00', 3]]);
    const no = await histo('date_histogram_timezone_test', { field: 'date', format: 'yyyy-MM-dd HH:mm:ss', calendar_interval: 'hour' });
    expect(no.map((b: unknown[]) => b[1])).toEqual(['2021-05-01 20:00:00', '2021-05-01 21:00:00', '2021-05-01 22:00:00', '2021-05-01 23:00:00']);
  });
  it('multi-value date histogram', async () => {
    const r = await t.es.search({ index: 'test_date_hist', query: { match: { date: '2021-04-01' } }, aggs: { d: { date_histogram: { field: 'date', calendar_interval: '1M' } } } });
    expect((r.hits.total as { value: number }).value).toBe(1);
    expect((r.aggregations!.d as Aggs).buckets).toHaveLength(2);
    const p = await t.es.search({ index: 'test_date_hist', profile: true, query: { match: { date_not_indexed: '2021-04-01' } }, aggs: { d: { date_histogram: { field: 'date_not_indexed', calendar_interval: '1M' } } } });
    expect((p.hits.total as { value: number }).value).toBe(1);
    expect((p.aggregations!.d as Aggs).buckets).toHaveLength(3);
  });
});
