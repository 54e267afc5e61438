/**
 * Issue 22's table, one test per row (each failed before its fix), plus index close/open: the
 * `format: iso8601` keys, transient cluster settings, `_cat/indices?health=invalid`, `_update` with
 * `if_seq_no` on a missing doc, `GET /_template?flat_settings=true` (responseParams.test.ts), the
 * elastic/kibana `client_credentials` grant (security/serviceAccounts.test.ts) and `filter_path`
 * (responseParams.test.ts).
 */
import { errors } from 'es8';
import { startTestNode, type TestNode } from '../../support/node';
import { raw } from '../search/helpers';

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'dates', settings: { number_of_shards: 1, number_of_replicas: 0 }, mappings: { properties: { date: { type: 'date' } } } });
  await t.es.bulk({
    refresh: true,
    operations: [{ index: { _index: 'dates', _id: '1' } }, { date: '2017-10-19T04:12:00Z' }, { index: { _index: 'dates', _id: '2' } }, { date: '2017-10-19T05:01:00Z' }],
  });
});
afterAll(async () => {
  await t?.stop();
});

describe('issue 22 table rows', () => {
  it('"format": "iso8601" prints date_histogram keys as ES does', async () => {
    const r = await raw(t, 'POST', '/dates/_search', { size: 0, aggs: { h: { date_histogram: { field: 'date', calendar_interval: 'hour', format: 'iso8601' } } } });
    expect(r.json.aggregations.h.buckets.map((b: { key_as_string: string }) => b.key_as_string)).toEqual(['2017-10-19T04:00:00.000Z', '2017-10-19T05:00:00.000Z']);
  });

  it('"format": "iso8601" prints composite date_histogram keys as ES does', async () => {
    const r = await raw(t, 'POST', '/dates/_search', {
      size: 0,
      aggs: { c: { composite: { sources: [{ d: { date_histogram: { field: 'date', calendar_interval: 'hour', format: 'iso8601' } } }] } } },
    });
    expect(r.json.aggregations.c.buckets.map((b: { key: { d: string } }) => b.key.d)).toEqual(['2017-10-19T04:00:00.000Z', '2017-10-19T05:00:00.000Z']);
  });

  it('accepts transient search.default_allow_partial_results and names the scope of an unknown key', async () => {
    const ok = await raw(t, 'PUT', '/_cluster/settings', { transient: { 'search.default_allow_partial_results': false } });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ acknowledged: true, persistent: {}, transient: { search: { default_allow_partial_results: 'false' } } });
    const bad = await raw(t, 'PUT', '/_cluster/settings', { transient: { 'search.no_such_thing': 1 } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.reason).toBe('transient setting [search.no_such_thing], not recognized');
    await raw(t, 'PUT', '/_cluster/settings', { transient: { 'search.default_allow_partial_results': null } });
  });

  it('_cat/indices?health=invalid is a 400', async () => {
    const r = await raw(t, 'GET', '/_cat/indices?health=invalid-health-value');
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ type: 'illegal_argument_exception', reason: 'unknown cluster health status [invalid-health-value]' });
  });

  it('_update with if_seq_no on a missing document is 404 document_missing_exception', async () => {
    const r = await raw(t, 'POST', '/dates/_update/nope?if_seq_no=0&if_primary_term=1', { doc: { a: 1 } });
    expect(r.status).toBe(404);
    expect(r.json.error.type).toBe('document_missing_exception');
  });
});

describe('index close and open', () => {
  beforeAll(async () => {
    await t.es.indices.create({ index: 'shut', settings: { number_of_shards: 2, number_of_replicas: 0 } });
    await t.es.index({ index: 'shut', id: '1', document: { a: 1 }, refresh: true });
  });

  it('closes an index with ES response; search, PIT and scroll refuse it with index_closed_exception', async () => {
    const pit = await t.es.openPointInTime({ index: 'shut', keep_alive: '1m' });
    const closed = await raw(t, 'POST', '/shut/_close');
    expect(closed.status).toBe(200);
    expect(closed.json).toEqual({ acknowledged: true, shards_acknowledged: true, indices: { shut: { closed: true } } });
    for (const [m, p] of [['POST', '/shut/_search'], ['POST', '/shut/_pit?keep_alive=1m'], ['POST', '/shut/_search?scroll=1m'], ['POST', '/shut/_count']] as const) {
      const r = await raw(t, m, p, {});
      expect(r.status).toBe(400);
      expect(r.json.error).toMatchObject({ type: 'index_closed_exception', reason: 'closed', index: 'shut' });
    }
    // the PIT opened before is released with the index's closing
    const s = await raw(t, 'POST', '/_search', { pit: { id: pit.id } });
    expect(s.status).toBe(404);
    expect(s.json.error.root_cause[0].type).toBe('search_context_missing_exception');
  });

  it('leaves a closed index out of wildcards and lists it as close in _cat/indices', async () => {
    const r = await raw(t, 'POST', '/sh*/_search', {});
    expect(r.status).toBe(200);
    expect(r.json._shards.total).toBe(0);
    const ignored = await raw(t, 'POST', '/shut,dates/_search?ignore_unavailable=true', { size: 0 });
    expect(ignored.json.hits.total.value).toBe(2);
    const cat = await raw(t, 'GET', '/_cat/indices/shut?format=json&h=index,status');
    expect(cat.json).toEqual([{ index: 'shut', status: 'close' }]);
    const settings = await raw(t, 'GET', '/shut/_settings?flat_settings=true');
    expect(settings.json.shut.settings['index.verified_before_close']).toBe('true');
  });

  it('opens it again: searchable as before', async () => {
    const opened = await raw(t, 'POST', '/shut/_open');
    expect(opened.json).toEqual({ acknowledged: true, shards_acknowledged: true });
    const r = await raw(t, 'POST', '/shut/_search', {});
    expect(r.json.hits.total.value).toBe(1);
    const cat = await raw(t, 'GET', '/_cat/indices/shut?format=json&h=status');
    expect(cat.json).toEqual([{ status: 'open' }]);
  });

  it('refuses document reads and writes on a closed index as ES (index, create, delete, update, bulk items, get, mget)', async () => {
    await raw(t, 'POST', '/shut/_close');
    const uuid = (await raw(t, 'GET', '/shut/_settings?flat_settings=true')).json.shut.settings['index.uuid'];
    const closed = { type: 'index_closed_exception', reason: 'closed', index: 'shut', index_uuid: uuid };
    for (const [m, p, body] of [
      ['PUT', '/shut/_doc/2', { a: 2 }],
      ['POST', '/shut/_doc', { a: 3 }],
      ['PUT', '/shut/_create/4', { a: 4 }],
      ['DELETE', '/shut/_doc/1', undefined],
      ['POST', '/shut/_update/1', { doc: { a: 5 } }],
      ['POST', '/shut/_update/9', { doc: { a: 5 }, doc_as_upsert: true }],
      ['GET', '/shut/_doc/1', undefined],
      ['GET', '/shut/_source/1', undefined],
      ['POST', '/shut/_update_by_query', {}],
      ['POST', '/shut/_delete_by_query', { query: { match_all: {} } }],
    ] as const) {
      const r = await raw(t, m, p, body);
      expect([m, p, r.status]).toEqual([m, p, 400]);
      expect(r.json.error).toMatchObject(closed);
    }
    // the official client sees the same error
    const e = (await t.es.index({ index: 'shut', id: '2', document: { a: 2 } }).catch((x: unknown) => x)) as errors.ResponseError;
    expect(e).toBeInstanceOf(errors.ResponseError);
    expect([e.statusCode, e.body.error.type]).toEqual([400, 'index_closed_exception']);
    // bulk: the closed index's items fail, the others are written
    const b = await t.es.bulk({ operations: [{ index: { _index: 'shut', _id: '2' } }, { a: 2 }, { delete: { _index: 'shut', _id: '1' } }, { index: { _index: 'dates', _id: '3' } }, { date: '2017-10-19T06:00:00Z' }] });
    expect(b.errors).toBe(true);
    expect(b.items.map((i) => Object.values(i)[0]).map((i) => [i._index, i.status, i.error?.type])).toEqual([
      ['shut', 400, 'index_closed_exception'],
      ['shut', 400, 'index_closed_exception'],
      ['dates', 201, undefined],
    ]);
    expect(b.items[0].index!.error).toMatchObject(closed);
    await t.es.delete({ index: 'dates', id: '3', refresh: true });
    // mget: the closed index's docs carry the error, the others are found
    const mg = await raw(t, 'POST', '/_mget', { docs: [{ _index: 'shut', _id: '1' }, { _index: 'dates', _id: '1' }] });
    expect(mg.status).toBe(200);
    expect(mg.json.docs[0]).toMatchObject({ _index: 'shut', _id: '1', error: closed });
    expect(mg.json.docs[1]).toMatchObject({ _index: 'dates', _id: '1', found: true });
    // opened again, nothing was written meanwhile and writes work
    await raw(t, 'POST', '/shut/_open');
    expect((await t.es.count({ index: 'shut' })).count).toBe(1);
    expect((await t.es.get({ index: 'shut', id: '1' }))._source).toEqual({ a: 1 });
    expect((await t.es.index({ index: 'shut', id: '2', document: { a: 2 }, refresh: true })).result).toBe('created');
    await t.es.delete({ index: 'shut', id: '2', refresh: true });
  });

  it('fails a reindex into a closed index item by item, as its bulk does (400, index_closed_exception)', async () => {
    await raw(t, 'POST', '/shut/_close');
    const r = await raw(t, 'POST', '/_reindex', { source: { index: 'dates' }, dest: { index: 'shut' } });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ total: 2, created: 0, updated: 0 });
    expect(r.json.failures.map((f: { index: string; status: number; cause: { type: string } }) => [f.index, f.status, f.cause.type])).toEqual([
      ['shut', 400, 'index_closed_exception'],
      ['shut', 400, 'index_closed_exception'],
    ]);
    await raw(t, 'POST', '/shut/_open');
    expect((await t.es.count({ index: 'shut' })).count).toBe(1);
  });

  it('refuses to close through a wildcard (action.destructive_requires_name)', async () => {
    const r = await raw(t, 'POST', '/sh*/_close');
    expect(r.status).toBe(400);
    expect(r.json.error.reason).toBe('Wildcard expressions or all indices are not allowed');
  });

  it('stays closed across a restart (the state is a fact on the document log)', async () => {
    await raw(t, 'POST', '/shut/_close');
    await t.restart();
    const r = await raw(t, 'POST', '/shut/_search', {});
    expect(r.json.error.type).toBe('index_closed_exception');
    await raw(t, 'POST', '/shut/_open');
  });
});
