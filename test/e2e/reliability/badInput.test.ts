/**
 * Bad input gets ES's 4xx, never a 5xx (issue 10 items 11 and 14, and every 5xx the fuzz found:
 * scripts/fuzz.ts). One request per finding, as the fuzz sent it.
 */
import { startTestNode, ELASTIC_PASSWORD, type TestNode } from '../../support/node';
import { raw } from '../search/helpers';

let t: TestNode;
const auth = { authorization: `Basic ${Buffer.from(`elastic:${ELASTIC_PASSWORD}`).toString('base64')}` };
const call = (method: string, path: string, body?: unknown) => raw(t, method, path, body, auth);
const deep = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;

beforeAll(async () => {
  t = await startTestNode({ security: true });
  expect((await call('PUT', '/bi', { mappings: { properties: { n: { type: 'long' }, k: { type: 'keyword' } } } })).status).toBe(200);
  const lines = Array.from({ length: 30 }, (_, i) => `{"index":{"_id":"${i}"}}\n{"n":${i},"k":"k${i % 3}"}\n`).join('');
  expect((await call('POST', '/bi/_bulk?refresh=true', lines)).json.errors).toBe(false);
});
afterAll(() => t.stop());

describe('deep nesting is a 400 wherever a body is parsed (item 11)', () => {
  const cases: Array<[string, string, (d: string) => string]> = [
    ['POST', '/bi/_search', (d) => `{"query":${d}}`],
    ['POST', '/bi/_search', (d) => `{"aggs":${d}}`],
    ['PUT', '/bi/_doc/deep', (d) => `{"o":${d}}`],
    ['PUT', '/deepidx', (d) => `{"mappings":${d}}`],
    ['PUT', '/bi/_mapping', (d) => `{"properties":${d}}`],
    ['PUT', '/_cluster/settings', (d) => `{"persistent":${d}}`],
    ['POST', '/_search/scroll', (d) => `{"scroll_id":${d}}`],
    ['DELETE', '/_pit', (d) => `{"id":${d}}`],
  ];
  it.each(cases)('%s %s', async (method, path, body) => {
    for (const depth of [1001, 100_000]) {
      const res = await call(method, path, body(deep(depth)));
      expect([depth, res.status, res.json.error.type]).toEqual([depth, 400, 'x_content_parse_exception']);
      expect(res.json.error.reason).toMatch(/Document nesting depth \(1001\) exceeds the maximum allowed \(1000/);
    }
  });

  it('refuses queries nested deeper than 30 and documents deeper than the mapping depth limit', async () => {
    let q: unknown = { match_all: {} };
    for (let i = 0; i < 40; i++) q = { bool: { must: [q] } };
    const search = await call('POST', '/bi/_search', { query: q });
    expect([search.status, search.json.error.type]).toEqual([400, 'illegal_argument_exception']);
    expect(search.json.error.reason).toBe('The nested depth of the query exceeds the maximum nested depth for queries set in [indices.query.bool.max_nested_depth]');
    const doc = await call('PUT', '/bi/_doc/d', JSON.parse(deep(25)));
    expect([doc.status, doc.json.error.type]).toEqual([400, 'illegal_argument_exception']);
    expect(doc.json.error.reason).toMatch(/^Limit of mapping depth \[20\] has been exceeded due to object field \[a(\.a){19}\]$/);
  });

  it('answers a 300-level aggregation chain (its shard reply nests deeper than the request)', async () => {
    let aggs: Record<string, unknown> = { leaf: { max: { field: 'n' } } };
    for (let i = 0; i < 300; i++) aggs = { [`a${i}`]: { terms: { field: 'k', size: 1 }, aggs } };
    const res = await call('POST', '/bi/_search', { size: 0, aggs });
    expect(res.status).toBe(200);
    expect(res.json.aggregations.a299.buckets[0].doc_count).toBe(10);
  });
});

describe('the 500s listed in item 14', () => {
  it('sort missing {} is ES’s 400', async () => {
    const res = await call('POST', '/bi/_search', { sort: [{ n: { missing: {} } }] });
    expect([res.status, res.json.error.type, res.json.error.reason]).toEqual([
      400,
      'x_content_parse_exception',
      expect.stringMatching(/\[field_sort\] missing doesn't support values of type: START_OBJECT$/),
    ]);
  });

  it('PUT _mapping with a blank body is an empty update; without a body ES’s 400', async () => {
    const blank = await call('PUT', '/bi/_mapping', ' ');
    expect([blank.status, blank.json]).toEqual([200, { acknowledged: true }]);
    const none = await call('PUT', '/bi/_mapping');
    expect([none.status, none.json.error.type, none.json.error.reason]).toEqual([400, 'parse_exception', 'request body is required']);
  });
});

describe('what the fuzz found (each was a 500)', () => {
  it('64-bit integers in mappings and cluster settings', async () => {
    const idx = await call('PUT', '/bigmeta', '{"mappings":{"_meta":{"v":18446744073709551616},"properties":{"d":{"type":"date","format":"yyyy"}}}}');
    expect(idx.status).toBe(200);
    expect((await call('GET', '/bigmeta/_mapping')).text).toContain('18446744073709551616');
    const twice = '{"properties":{"d2":{"type":"date","format":-9223372036854775809}}}';
    expect((await call('PUT', '/bigmeta/_mapping', twice)).status).toBeLessThan(500);
    expect((await call('PUT', '/bigmeta/_mapping', twice)).status).toBeLessThan(500); // compared with the existing field
    const cs = await call('PUT', '/_cluster/settings', '{"transient":{"search.max_open_scroll_context":9223372036854775808}}');
    expect([cs.status, cs.json.error.reason]).toEqual([400, 'Failed to parse value [9223372036854775808] for setting [search.max_open_scroll_context] must be <= 2147483647']);
    const ka = await call('PUT', '/_cluster/settings', { persistent: { 'search.max_keep_alive': 5 } });
    expect([ka.status, ka.json.error.type]).toEqual([400, 'parse_exception']);
  });

  it('a mapping naming a field both as a leaf and as an object', async () => {
    const res = await call('PUT', '/bi/_mapping', { properties: { a: { type: 'keyword' }, 'a.b': { type: 'keyword' } } });
    expect([res.status, res.json.error.reason]).toEqual([400, "can't merge a non object mapping [a] with an object mapping"]);
  });

  it('index settings that cannot nest (`x` next to `x.y`) are refused, and GET _settings keeps working', async () => {
    expect((await call('PUT', '/bi/_settings', { index: { max_result_window: '5000' } })).status).toBe(200);
    const res = await call('PUT', '/bi/_settings', { 'index.max_result_window.field': 'x' });
    expect([res.status, res.json.error.type]).toEqual([400, 'illegal_argument_exception']);
    expect((await call('GET', '/_settings')).status).toBe(200);
    expect((await call('HEAD', '/_settings')).status).toBe(200);
  });

  it('bulk metadata with objects or arrays where ES wants a simple value', async () => {
    const res = await call('POST', '/_bulk', '{"index":{"_index":"bi","_id":[null]}}\n{"n":1}\n');
    expect([res.status, res.json.error.reason]).toEqual([400, 'Malformed action/metadata line [1], expected a simple value for field [_id] but found [START_ARRAY]']);
    const num = await call('POST', '/_bulk', '{"index":{"_index":"bi","_id":12345678901234567890}}\n{"n":1}\n');
    expect(num.status).toBe(200);
  });

  it('security APIs with junk bodies', async () => {
    for (const body of [{ cluster: 5 }, { cluster: [{}] }, { index: { a: 1 } }, { index: [{ names: 'bi', privileges: 7 }] }, { application: [1] }]) {
      expect([body, (await call('POST', '/_security/user/_has_privileges', body)).status]).toEqual([body, 400]);
    }
    expect((await call('POST', '/_security/api_key', { name: 'k1' })).status).toBe(200); // queries only run over existing keys
    for (const body of [{ query: true }, { query: { term: 5 } }, { sort: [5] }, { size: { a: 1 } }]) {
      expect([body, (await call('POST', '/_security/_query/api_key', body)).status]).toEqual([body, 400]);
    }
    const long = await call('DELETE', '/_security/api_key', { name: 'x'.repeat(40000) });
    expect(long.status).toBeLessThan(500);
  });
});

describe('numbers above 2^53 in shard replies (fuzz, seed 5)', () => {
  it('metric aggregations over longs near 2^63 answer on one and on several shards', async () => {
    for (const shards of [1, 2]) {
      const index = `huge${shards}`;
      expect((await call('PUT', `/${index}`, { settings: { number_of_shards: shards }, mappings: { properties: { n: { type: 'long' }, k: { type: 'keyword' } } } })).status).toBe(200);
      const lines = ['9223372036854775807', '9223372036854775000', '9007199254740993', '5'].map((n, i) => `{"index":{"_id":"${i}"}}\n{"n":${n},"k":"k${i % 2}"}\n`).join('');
      expect((await call('POST', `/${index}/_bulk?refresh=true`, lines)).json.errors).toBe(false);
      const metrics = { mx: { max: { field: 'n' } }, mn: { min: { field: 'n' } }, s: { sum: { field: 'n' } }, a: { avg: { field: 'n' } } };
      const res = await call('POST', `/${index}/_search`, { size: 0, aggs: { ...metrics, t: { terms: { field: 'k' }, aggs: metrics }, tn: { terms: { field: 'n' } } } });
      expect([shards, res.status]).toEqual([shards, 200]);
      expect(Number(res.json.aggregations.mx.value)).toBeCloseTo(9.223372036854776e18, -5);
      expect(res.json.aggregations.mn.value).toBe(5);
      expect(res.json.aggregations.t.buckets).toHaveLength(2);
      expect(res.text).toContain('"key":9223372036854775807'); // long keys stay exact
    }
  });
});

describe('a document with a single 8 MiB token (item 9)', () => {
  it('is refused alone in a keyword field; its neighbours stay intact, also after a restart', async () => {
    expect((await call('PUT', '/tok', { mappings: { properties: { k: { type: 'keyword' }, t: { type: 'text' } } } })).status).toBe(200);
    const huge = 'x'.repeat(8 * 1024 * 1024);
    const body = [
      ['a', { t: 'first doc', k: 'a' }],
      ['bad', { t: 'bad doc', k: huge }],
      ['b', { t: 'second doc', k: 'b' }],
      ['text', { t: huge }],
      ['c', { t: 'third doc', k: 'c' }],
    ].map(([id, doc]) => `{"index":{"_id":"${id}"}}\n${JSON.stringify(doc)}\n`).join('');
    const bulk = await call('POST', '/tok/_bulk?refresh=true', body);
    expect(bulk.status).toBe(200);
    expect(bulk.json.items.map((i: { index: { status: number } }) => i.index.status)).toEqual([201, 400, 201, 201, 201]);
    expect(bulk.json.items[1].index.error.type).toBe('illegal_argument_exception');
    expect(bulk.json.items[1].index.error.caused_by).toEqual({ type: 'max_bytes_length_exceeded_exception', reason: 'bytes can be at most 32766 in length; got 8388608' });
    const check = async () => {
      for (const id of ['a', 'b', 'c']) expect((await call('GET', `/tok/_doc/${id}`)).json._source.k).toBe(id);
      expect((await call('GET', '/tok/_doc/bad')).status).toBe(404);
      const hits = (await call('POST', '/tok/_search', { query: { match: { t: 'doc' } }, _source: false })).json.hits.hits.map((h: { _id: string }) => h._id).sort();
      expect(hits).toEqual(['a', 'b', 'c']);
      expect((await call('POST', '/tok/_search', { query: { match: { t: 'x'.repeat(255) } }, _source: false })).json.hits.hits.map((h: { _id: string }) => h._id)).toEqual(['text']);
    };
    await check();
    await t.restart(); // snapshot on clean shutdown, then start from it
    await check();
  });
});
