/**
 * Issue 24, the ip, geo_point and range field types through the official client: the "IP test"
 * of ES's search.aggregation/20_terms.yml, CIDR and range queries, ip_range, geo_distance,
 * geo_bounding_box, _geo_distance sort, geotile_grid, range relations, docvalue_fields, the
 * mapping round trip, and the same queries inside PIT, scroll and search_after.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { failure, raw } from './helpers';

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({
    index: 'test_1',
    settings: { number_of_shards: 1, number_of_replicas: 0 },
    mappings: { properties: { str: { type: 'keyword' }, ip: { type: 'ip' }, loc: { type: 'geo_point' }, ages: { type: 'integer_range' }, when: { type: 'date_range' } } },
  });
  await t.es.indices.create({ index: 'multi', settings: { number_of_shards: 3 }, mappings: { properties: { ip: { type: 'ip' }, loc: { type: 'geo_point' } } } });
  const docs = [
    { ip: '::1', loc: { lat: 48.8566, lon: 2.3522 }, ages: { gte: 10, lte: 20 }, when: { gte: '2020-01-01', lt: '2021-01-01' } },
    { ip: '127.0.0.1', loc: '51.5074,-0.1278', ages: { gte: 15, lt: 30 }, when: { gte: '2021-06-01' } },
    { ip: '::1', loc: [139.6917, 35.6895], ages: { gt: 30 } },
  ];
  await t.es.bulk({ refresh: true, operations: docs.flatMap((d, i) => [{ index: { _index: 'test_1', _id: String(i + 1) } }, d]) });
  const many = Array.from({ length: 30 }, (_, i) => ({ ip: `10.0.${i % 3}.${i}`, loc: { lat: (i % 10) * 5, lon: i * 2 } }));
  await t.es.bulk({ refresh: true, operations: many.flatMap((d, i) => [{ index: { _index: 'multi', _id: String(i) } }, d]) });
});
afterAll(async () => {
  await t?.stop();
});

const idsOf = (r: { hits: { hits: Array<{ _id?: string | null }> } }) => r.hits.hits.map((h) => h._id ?? '');
type Buckets = { buckets: Array<Record<string, unknown>> };

describe('search.aggregation/20_terms.yml IP test', () => {
  it('keys are addresses, counted', async () => {
    const r = await t.es.search({ index: 'test_1', size: 0, aggs: { ip_terms: { terms: { field: 'ip' } } } });
    const b = (r.aggregations!.ip_terms as Buckets).buckets;
    expect(b).toEqual([{ key: '::1', doc_count: 2 }, { key: '127.0.0.1', doc_count: 1 }]);
  });
  it('include and exclude take addresses; a regexp is refused', async () => {
    const inc = await t.es.search({ index: 'test_1', size: 0, aggs: { ip_terms: { terms: { field: 'ip', include: ['127.0.0.1'] } } } });
    expect((inc.aggregations!.ip_terms as Buckets).buckets).toEqual([{ key: '127.0.0.1', doc_count: 1 }]);
    const exc = await t.es.search({ index: 'test_1', size: 0, aggs: { ip_terms: { terms: { field: 'ip', exclude: ['127.0.0.1'] } } } });
    expect((exc.aggregations!.ip_terms as Buckets).buckets).toEqual([{ key: '::1', doc_count: 2 }]);
    const e = await failure(t.es.search({ index: 'test_1', size: 0, aggs: { ip_terms: { terms: { field: 'ip', exclude: '127.*' } } } }));
    expect(e.status).toBeGreaterThanOrEqual(400);
  });
});

describe('ip', () => {
  it('CIDR term, range, sort across shards, ip_range', async () => {
    expect((await t.es.count({ index: 'multi', query: { term: { ip: '10.0.1.0/24' } } })).count).toBe(10);
    expect((await t.es.count({ index: 'multi', query: { range: { ip: { gte: '10.0.0.0', lt: '10.0.1.0' } } } })).count).toBe(10);
    const s = await t.es.search({ index: 'multi', size: 3, sort: [{ ip: 'asc' }] });
    expect(s.hits.hits.map((h) => h.sort![0])).toEqual(['10.0.0.0', '10.0.0.3', '10.0.0.6']);
    const r = await t.es.search({ index: 'multi', size: 0, aggs: { r: { ip_range: { field: 'ip', ranges: [{ to: '10.0.1.0' }, { mask: '10.0.1.0/24' }, { from: '10.0.2.0' }] } } } });
    expect((r.aggregations!.r as Buckets).buckets).toEqual([
      { key: '*-10.0.1.0', to: '10.0.1.0', doc_count: 10 },
      { key: '10.0.1.0/24', from: '10.0.1.0', to: '10.0.2.0', doc_count: 10 },
      { key: '10.0.2.0-*', from: '10.0.2.0', doc_count: 10 },
    ]);
  });
  it('a bad address is a 400 at indexing and in queries', async () => {
    const e = await failure(t.es.index({ index: 'test_1', id: 'x', document: { ip: '1.2.3' } }));
    expect(e.status).toBe(400);
    expect(e.body.error.type).toBe('mapper_parsing_exception'); // this node's type for document parse errors
    const q = await failure(t.es.search({ index: 'test_1', query: { term: { ip: 'nope' } } }));
    expect(q.status).toBe(400);
  });
});

describe('geo_point', () => {
  it('geo_distance, geo_bounding_box, _geo_distance sort', async () => {
    const near = await t.es.search({ index: 'test_1', query: { geo_distance: { distance: '400km', loc: { lat: 48.8566, lon: 2.3522 } } } });
    expect(idsOf(near).sort()).toEqual(['1', '2']);
    const box = await t.es.search({ index: 'test_1', query: { geo_bounding_box: { loc: { top_left: { lat: 60, lon: -10 }, bottom_right: { lat: 40, lon: 10 } } } } });
    expect(idsOf(box).sort()).toEqual(['1', '2']);
    const sorted = await t.es.search({ index: 'test_1', sort: [{ _geo_distance: { loc: { lat: 35, lon: 139 }, order: 'asc', unit: 'km' } }] as never });
    expect(idsOf(sorted)).toEqual(['3', '2', '1']); // Tokyo, then London (9,560 km), then Paris (9,710 km)
    expect(typeof sorted.hits.hits[0].sort![0]).toBe('number');
  });
  it('geotile_grid', async () => {
    const r = await t.es.search({ index: 'test_1', size: 0, aggs: { g: { geotile_grid: { field: 'loc', precision: 1 } } } });
    const b = (r.aggregations!.g as Buckets).buckets;
    expect(b.reduce((a, x) => a + (x.doc_count as number), 0)).toBe(3);
    expect(b.every((x) => /^1\/\d\/\d$/.test(x.key as string))).toBe(true);
  });
});

describe('range fields', () => {
  it('term and range relations', async () => {
    const c = async (query: unknown) => (await t.es.count({ index: 'test_1', query: query as never })).count;
    expect(await c({ term: { ages: 18 } })).toBe(2);
    expect(await c({ range: { ages: { gte: 0, lte: 25, relation: 'within' } } })).toBe(1);
    expect(await c({ range: { when: { gte: '2020-03-01', lte: '2020-04-01', relation: 'contains' } } })).toBe(1);
    expect(await c({ range: { when: { gte: '2030-01-01' } } })).toBe(1);
  });
  it('mapping round trip and docvalue_fields', async () => {
    const m = await t.es.indices.getMapping({ index: 'test_1' });
    expect(m.test_1.mappings.properties).toMatchObject({ ip: { type: 'ip' }, loc: { type: 'geo_point' }, ages: { type: 'integer_range' } });
    const r = await t.es.search({ index: 'test_1', query: { ids: { values: ['1'] } }, docvalue_fields: ['ip', 'loc'] });
    expect(r.hits.hits[0].fields!.ip).toEqual(['::1']);
    const p = (r.hits.hits[0].fields!.loc as Array<{ lat: number; lon: number }>)[0];
    expect(Math.abs(p.lat - 48.8566)).toBeLessThan(1e-6);
  });
});

describe('inside PIT, scroll and search_after', () => {
  it('pages a CIDR query sorted by address', async () => {
    const pit = await t.es.openPointInTime({ index: 'multi', keep_alive: '1m' });
    const seen: string[] = [];
    let after: unknown[] | undefined;
    for (;;) {
      const r = await t.es.search({ pit: { id: pit.id }, size: 4, sort: [{ ip: 'asc' }], query: { term: { ip: '10.0.2.0/24' } }, ...(after ? { search_after: after as never } : {}) });
      if (!r.hits.hits.length) break;
      seen.push(...r.hits.hits.map((h) => h.sort![0] as string));
      after = r.hits.hits[r.hits.hits.length - 1].sort;
    }
    await t.es.closePointInTime({ id: pit.id });
    expect(seen).toHaveLength(10);
    expect(seen[0]).toBe('10.0.2.2');
    let s = await t.es.search({ index: 'multi', scroll: '1m', size: 4, query: { geo_distance: { distance: '20000km', loc: { lat: 0, lon: 0 } } } });
    let n = s.hits.hits.length;
    while (s.hits.hits.length) {
      s = await t.es.scroll({ scroll_id: s._scroll_id!, scroll: '1m' });
      n += s.hits.hits.length;
    }
    expect(n).toBe(30);
    void raw;
  });
});
