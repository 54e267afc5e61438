/**
 * Issue 22 item 3: `filter_path` (with `*`, `**` and `-`), `flat_settings`, `human`, `pretty` and
 * `error_trace` on every endpoint, applied once on the edge's way out: checked on 18 endpoints
 * against ES's semantics (the official client passes `filter_path` through).
 */
import { startTestNode, type TestNode } from '../../support/node';
import { raw } from '../search/helpers';

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'fp', settings: { number_of_shards: 2, number_of_replicas: 0 }, mappings: { properties: { n: { type: 'long' }, tag: { type: 'keyword' } } } });
  await t.es.bulk({ refresh: true, operations: [{ index: { _index: 'fp', _id: '1' } }, { n: 1, tag: 'a' }, { index: { _index: 'fp', _id: '2' } }, { n: 2, tag: 'b' }] });
  await t.es.indices.putTemplate({ name: 'fp-tmpl', index_patterns: ['fpt-*'], settings: { number_of_shards: 1 } });
});
afterAll(async () => {
  await t?.stop();
});

const keys = (o: unknown) => Object.keys(o as object).sort();

describe('filter_path on every endpoint', () => {
  it('GET /', async () => {
    const r = await raw(t, 'GET', '/?filter_path=version.number');
    expect(r.json).toEqual({ version: { number: expect.any(String) } });
  });
  it('GET /_cluster/health', async () => {
    expect((await raw(t, 'GET', '/_cluster/health?filter_path=status,number_of_nodes')).json).toEqual({ status: expect.any(String), number_of_nodes: 1 });
  });
  it('GET /_nodes with a wildcard segment', async () => {
    const r = await raw(t, 'GET', '/_nodes?filter_path=nodes.*.name');
    const nodes = Object.values(r.json.nodes) as Array<Record<string, unknown>>;
    expect(nodes.length).toBe(1);
    expect(keys(nodes[0])).toEqual(['name']);
  });
  it('GET /_nodes/stats with **', async () => {
    const r = await raw(t, 'GET', '/_nodes/stats?filter_path=**.open_contexts');
    const node = Object.values(r.json.nodes)[0] as { indices: { search: Record<string, unknown> } };
    expect(node).toEqual({ indices: { search: { open_contexts: expect.any(Number) } } });
  });
  it('POST /<index>/_search: hits in arrays', async () => {
    const r = await raw(t, 'POST', '/fp/_search?filter_path=hits.hits._id,hits.total.value', { sort: ['n'] });
    expect(r.json).toEqual({ hits: { total: { value: 2 }, hits: [{ _id: '1' }, { _id: '2' }] } });
  });
  it('POST /<index>/_search: exclusions', async () => {
    const r = await raw(t, 'POST', '/fp/_search?filter_path=-hits.hits,-_shards', { size: 1 });
    expect(keys(r.json)).toEqual(['hits', 'timed_out', 'took']);
    expect(keys(r.json.hits)).toEqual(['max_score', 'total']);
  });
  it('POST /<index>/_search: inclusion then exclusion', async () => {
    const r = await raw(t, 'POST', '/fp/_search?filter_path=hits.hits.*,-hits.hits._source,-hits.hits._score,-hits.hits._index', { sort: ['n'] });
    expect(r.json).toEqual({ hits: { hits: [{ _id: '1', sort: [1] }, { _id: '2', sort: [2] }] } });
  });
  it('GET /<index>/_settings with flat_settings', async () => {
    const r = await raw(t, 'GET', '/fp/_settings?flat_settings=true&filter_path=*.settings.index.number_of_shards');
    expect(r.json).toEqual({ fp: { settings: { 'index.number_of_shards': '2' } } });
  });
  it('GET /_cluster/settings', async () => {
    await t.es.cluster.putSettings({ persistent: { 'search.max_keep_alive': '2h' } });
    const nested = await raw(t, 'GET', '/_cluster/settings?filter_path=persistent.search');
    expect(nested.json).toEqual({ persistent: { search: { max_keep_alive: '2h' } } });
    const flat = await raw(t, 'GET', '/_cluster/settings?flat_settings=true&filter_path=persistent');
    expect(flat.json.persistent['search.max_keep_alive']).toBe('2h');
    await t.es.cluster.putSettings({ persistent: { 'search.max_keep_alive': null } });
  });
  it('GET /_cat/indices?format=json', async () => {
    const r = await raw(t, 'GET', '/_cat/indices/fp?format=json&filter_path=index,docs.count');
    expect(r.json).toEqual([{ index: 'fp', 'docs.count': '2' }]);
  });
  it('POST /_count', async () => {
    expect((await raw(t, 'POST', '/fp/_count?filter_path=count', {})).json).toEqual({ count: 2 });
  });
  it('GET /<index>/_doc/<id>', async () => {
    expect((await raw(t, 'GET', '/fp/_doc/1?filter_path=_source.tag,found')).json).toEqual({ found: true, _source: { tag: 'a' } });
  });
  it('POST /_mget', async () => {
    const r = await raw(t, 'POST', '/fp/_mget?filter_path=docs._id', { ids: ['1', '2'] });
    expect(r.json).toEqual({ docs: [{ _id: '1' }, { _id: '2' }] });
  });
  it('POST /_bulk', async () => {
    const r = await raw(t, 'POST', '/_bulk?refresh=true&filter_path=errors,items.*.result', '{"index":{"_index":"fp","_id":"3"}}\n{"n":3}\n');
    expect(r.json).toEqual({ errors: false, items: [{ index: { result: 'created' } }] });
  });
  it('GET /<index>/_mapping', async () => {
    expect((await raw(t, 'GET', '/fp/_mapping?filter_path=**.tag.type')).json).toEqual({ fp: { mappings: { properties: { tag: { type: 'keyword' } } } } });
  });
  it('GET /<index>', async () => {
    const r = await raw(t, 'GET', '/fp?filter_path=fp.settings.index.number_of_replicas');
    expect(r.json).toEqual({ fp: { settings: { index: { number_of_replicas: '0' } } } });
  });
  it('GET /_template/<name> with flat_settings (issue 22 table)', async () => {
    const nested = await raw(t, 'GET', '/_template/fp-tmpl');
    expect(nested.json['fp-tmpl'].settings).toEqual({ index: { number_of_shards: '1' } });
    const flat = await raw(t, 'GET', '/_template/fp-tmpl?flat_settings=true');
    expect(flat.json['fp-tmpl'].settings).toEqual({ 'index.number_of_shards': '1' });
  });
  it('POST /_msearch', async () => {
    const r = await raw(t, 'POST', '/_msearch?filter_path=responses.hits.total.value', '{"index":"fp"}\n{}\n', { 'content-type': 'application/x-ndjson' });
    expect(r.json).toEqual({ responses: [{ hits: { total: { value: 3 } } }] });
  });
  it('GET /_stats', async () => {
    expect(keys((await raw(t, 'GET', '/fp/_stats?filter_path=_all.primaries.docs')).json._all.primaries)).toEqual(['docs']);
  });
  it('POST /<index>/_pit and DELETE /_pit', async () => {
    const open = await raw(t, 'POST', '/fp/_pit?keep_alive=1m&filter_path=id');
    expect(keys(open.json)).toEqual(['id']);
    const close = await raw(t, 'DELETE', '/_pit?filter_path=succeeded', { id: open.json.id });
    expect(close.json).toEqual({ succeeded: true });
  });
  it('leaves error bodies whole', async () => {
    const r = await raw(t, 'GET', '/missing-index/_search?filter_path=took');
    expect(r.status).toBe(404);
    expect(r.json.error.type).toBe('index_not_found_exception');
  });
});

describe('pretty, human, error_trace', () => {
  it('pretty prints as ES does, with a final newline', async () => {
    const r = await raw(t, 'GET', '/_cluster/health?pretty&filter_path=status');
    expect(r.text).toMatch(/^\{\n {2}"status" : "(green|yellow)"\n\}\n$/);
  });
  it('human adds readable times next to the raw ones', async () => {
    const r = await raw(t, 'GET', '/_nodes/stats/jvm?human&filter_path=**.uptime*');
    const jvm = (Object.values(r.json.nodes)[0] as { jvm: Record<string, unknown> }).jvm;
    expect(Object.keys(jvm)).toEqual(['uptime', 'uptime_in_millis']);
    expect(jvm.uptime).toMatch(/^\d+(\.\d)?(ms|s|m|h|d)$/);
  });
  it('error_trace adds stack traces to errors only', async () => {
    const r = await raw(t, 'GET', '/missing-index/_search?error_trace=true');
    expect(typeof r.json.error.stack_trace).toBe('string');
    const ok = await raw(t, 'GET', '/fp/_count?error_trace=true');
    expect(ok.json.stack_trace).toBeUndefined();
  });
});
