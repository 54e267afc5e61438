/**
 * Issue 22 item 1: async search through the official client (ES's async_search YAML tests' shapes:
 * 10_basic, 20_keep_alive): submit, poll, partial while running, complete, extend, delete, expire;
 * ES's ids, headers and 404s; its facts on the lifecycle log; a restart keeps a stored result; the
 * Discover pattern (sort + search_after + PIT inside async search).
 */
import { startTestNode, type TestNode } from '../../support/node';
import { eventually, factTypesOf, raw } from './helpers';

let t: TestNode;
const DOCS = 3000;

beforeAll(async () => {
  t = await startTestNode();
  for (const [i, n] of [['test-1', 2], ['test-2', 1], ['test-3', 3]] as const) {
    await t.es.indices.create({ index: i, settings: { number_of_shards: n, number_of_replicas: 0 }, mappings: { properties: { max: { type: 'long' }, k: { type: 'keyword' } } } });
  }
  await t.es.index({ index: 'test-2', document: { max: 2 } });
  await t.es.index({ index: 'test-1', document: { max: 1 } });
  await t.es.index({ index: 'test-3', document: { max: 3 } });
  const ops = [];
  for (let i = 0; i < DOCS; i++) ops.push({ index: { _index: 'big', _id: String(i) } }, { n: i, k: `k${i % 97}` });
  await t.es.indices.create({ index: 'big', settings: { number_of_shards: 3, number_of_replicas: 0 } });
  await t.es.bulk({ operations: ops });
  await t.es.indices.refresh({ index: '*' });
});
afterAll(async () => {
  await t?.stop();
});

const uuidOf = (esId: string) => {
  const b = Buffer.from(esId, 'base64url');
  const doc = Buffer.from(b.subarray(1, 1 + b[0]).toString(), 'base64url').toString('hex');
  return `${doc.slice(0, 8)}-${doc.slice(8, 12)}-${doc.slice(12, 16)}-${doc.slice(16, 20)}-${doc.slice(20)}`;
};

describe('async search (10_basic.yml, 20_keep_alive.yml)', () => {
  it('answers a search done within the wait without an id, as ES', async () => {
    const r = await t.es.asyncSearch.submit({ index: 'test-*', wait_for_completion_timeout: '10s', query: { match_all: {} }, aggs: { 1: { max: { field: 'max' } } }, sort: ['max'] });
    expect(r.id).toBeUndefined();
    expect(r.is_partial).toBe(false);
    expect(r.is_running).toBe(false);
    expect(r.response.hits.hits.map((h) => (h._source as { max: number }).max)).toEqual([1, 2, 3]);
    expect((r.response.aggregations as Record<string, { value: number }>)['1'].value).toBe(3);
  });

  it('names aggregations with their type under typed_keys, in the answer and the stored result', async () => {
    const r = await t.es.asyncSearch.submit({ index: 'test-*', typed_keys: true, keep_on_completion: true, wait_for_completion_timeout: '10s', size: 0, aggs: { m: { max: { field: 'max' } }, k: { terms: { field: 'k' } } } });
    expect(Object.keys(r.response.aggregations!).sort()).toEqual(['max#m', 'sterms#k']);
    expect((r.response.aggregations as Record<string, { value: number }>)['max#m'].value).toBe(3);
    const g = await t.es.asyncSearch.get({ id: r.id! });
    expect(Object.keys(g.response.aggregations!).sort()).toEqual(['max#m', 'sterms#k']);
    await t.es.asyncSearch.delete({ id: r.id! });
  });

  it('keeps a finished search with keep_on_completion: get, status, delete, then 404', async () => {
    const r = await t.es.asyncSearch.submit({ index: 'test-*', wait_for_completion_timeout: '10s', keep_on_completion: true, query: { match_all: {} }, sort: ['max'] });
    expect(r.id).toMatch(/^[A-Za-z0-9_-]+=*$/);
    expect(r.is_running).toBe(false);
    expect(r.completion_time_in_millis).toBeGreaterThanOrEqual(r.start_time_in_millis);
    expect(r.expiration_time_in_millis - r.start_time_in_millis).toBe(5 * 86_400_000);
    const g = await t.es.asyncSearch.get({ id: r.id!, keep_alive: '1m' });
    expect(g.is_partial).toBe(false);
    expect(g.response.hits.hits).toHaveLength(3);
    expect(g.expiration_time_in_millis).toBeLessThan(r.expiration_time_in_millis);
    const st = await t.es.asyncSearch.status({ id: r.id! });
    expect(st).toMatchObject({ id: r.id, is_running: false, is_partial: false, completion_status: 200, _shards: { total: 6, successful: 6, skipped: 0, failed: 0 } });
    expect(await t.es.asyncSearch.delete({ id: r.id! })).toEqual({ acknowledged: true });
    for (const p of [`/_async_search/${r.id}`, `/_async_search/status/${r.id}`]) {
      const gone = await raw(t, 'GET', p);
      expect(gone.status).toBe(404);
      expect(gone.json.error).toMatchObject({ type: 'resource_not_found_exception', reason: r.id });
    }
    expect((await raw(t, 'DELETE', `/_async_search/${r.id}`)).status).toBe(404);
    expect(await factTypesOf(t.sys.ctx.nc, uuidOf(r.id!))).toEqual(['asyncsearch.submitted', 'asyncsearch.completed', 'asyncsearch.extended', 'asyncsearch.deleted']);
    const ctx = await raw(t, 'GET', `/_contexts/${r.id}`);
    expect(ctx.json).toMatchObject({ kind: 'async_search', es_id: r.id, status: 'deleted', completion_status: 200, extensions: 1 });
    expect(ctx.json.history.map((h: { type: string }) => h.type)).toEqual(['asyncsearch.submitted', 'asyncsearch.completed', 'asyncsearch.extended', 'asyncsearch.deleted']);
  });

  it('shows a running search as partial, then its result; ES headers carry the id', async () => {
    const body = { size: 5, sort: [{ n: 'desc' }], aggs: { k: { terms: { field: 'k.keyword', size: 200 } } }, query: { bool: { should: [{ wildcard: { k: '*1*' } }, { range: { n: { gte: 10 } } }] } } };
    const res = await raw(t, 'POST', '/big/_async_search?wait_for_completion_timeout=0ms&keep_on_completion=true', body);
    expect(res.status).toBe(200);
    const id = res.json.id as string;
    expect(res.headers.get('x-elasticsearch-async-id')).toBe(id);
    expect(res.headers.get('x-elasticsearch-async-is-running')).toBe(res.json.is_running ? '?1' : '?0');
    if (res.json.is_running) {
      expect(res.json.is_partial).toBe(true);
      expect(res.json.response.hits.hits).toEqual([]);
      expect(res.json.response.hits.total.relation).toBe('gte');
    }
    const done = await t.es.asyncSearch.get({ id, wait_for_completion_timeout: '10s' });
    expect(done.is_running).toBe(false);
    expect(done.is_partial).toBe(false);
    expect(done.response.hits.hits.map((h) => h._id)).toEqual(['2999', '2998', '2997', '2996', '2995']);
    expect(done.response._shards).toEqual({ total: 3, successful: 3, skipped: 0, failed: 0 });
    await t.es.asyncSearch.delete({ id });
  });

  it('shows the partial reduces of a running search (batched_reduce_size), and refuses one under 2', async () => {
    const bad = await raw(t, 'POST', '/big/_async_search?batched_reduce_size=1', {});
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ type: 'illegal_argument_exception', reason: 'batchedReduceSize must be >= 2' });
    const body = { size: 0, track_total_hits: true, aggs: { k: { terms: { field: 'k.keyword', size: 200 } } }, query: { bool: { should: [{ wildcard: { k: '*1*' } }, { range: { n: { gte: 10 } } }] } } };
    const res = await raw(t, 'POST', '/big/_async_search?wait_for_completion_timeout=0ms&keep_on_completion=true&batched_reduce_size=2', body);
    const id = res.json.id as string;
    // while it runs, whatever GET shows is a consistent partial answer (no hits; totals and buckets of the shards reduced so far)
    const seen: Array<{ num_reduce_phases: number; hits: { total: { value: number }; hits: unknown[] }; aggregations?: { k: { buckets: unknown[] } } }> = [];
    for (let g = res.json; g.is_running; g = (await raw(t, 'GET', `/_async_search/${id}`)).json) seen.push(g.response);
    const done = await t.es.asyncSearch.get({ id, wait_for_completion_timeout: '10s' });
    expect(done.is_partial).toBe(false);
    const final = done.response.hits.total as { value: number };
    for (const r of seen) {
      expect(r.hits.hits).toEqual([]);
      if (r.num_reduce_phases > 0) {
        expect(r.hits.total.value).toBeLessThanOrEqual(final.value);
        expect(r.aggregations!.k.buckets.length).toBeGreaterThan(0);
      }
    }
    console.log(`saw ${seen.length} running answers, ${seen.filter((r) => r.num_reduce_phases > 0).length} with a partial reduce`);
    await t.es.asyncSearch.delete({ id });
  });

  it('expires at keep_alive, running or not, with an expired fact', async () => {
    const r = await t.es.asyncSearch.submit({ index: 'test-1', keep_alive: '1s', keep_on_completion: true, wait_for_completion_timeout: '5s' });
    const id = r.id!;
    await eventually(async () => (await raw(t, 'GET', `/_async_search/${id}`)).status === 404, 10_000, 'expiry');
    await eventually(async () => (await factTypesOf(t.sys.ctx.nc, uuidOf(id))).includes('asyncsearch.expired'), 5_000, 'expired fact');
  });

  it("refuses keep_alive under 1s, scroll, a bad id, and answers another's or a missing id with 404", async () => {
    const small = await raw(t, 'POST', '/test-1/_async_search?keep_alive=1ms', {});
    expect(small.status).toBe(400);
    expect(small.json.error.reason).toBe('Validation Failed: 1: [keep_alive] must be greater or equals than 1 second, got:1ms;');
    const scroll = await raw(t, 'POST', '/test-1/_async_search?scroll=1m', {});
    expect(scroll.status).toBe(400);
    expect(scroll.json.error.reason).toContain('[scroll] queries are not supported');
    const bad = await raw(t, 'GET', '/_async_search/not-an-id!');
    expect(bad.status).toBe(400);
    expect(bad.json.error.reason).toBe('invalid id: [not-an-id!]');
    const missing = 'FmRldE8zREVEUzA2ZVpUeGs2ejJFUFEaMkZ5QTVrSTZSaVN3WlNFVmtlWHJsdzoxMDc=';
    const r = await raw(t, 'GET', `/_async_search/${missing}`);
    expect(r.status).toBe(404);
    expect(r.json.error).toMatchObject({ type: 'resource_not_found_exception', reason: missing });
  });

  it('returns an error result with its status (missing index)', async () => {
    const r = await raw(t, 'POST', '/nope/_async_search?keep_on_completion=true&wait_for_completion_timeout=5s', {});
    expect(r.status).toBe(404);
    expect(r.json.is_running).toBe(false);
    expect(r.json.error.type).toBe('index_not_found_exception');
    const st = await t.es.asyncSearch.status({ id: r.json.id });
    expect(st.completion_status).toBe(404);
  });

  it('pages with sort + search_after + PIT inside async search (Kibana Discover)', async () => {
    const pit = await t.es.openPointInTime({ index: 'big', keep_alive: '1m' });
    const seen: string[] = [];
    let after: unknown[] | undefined;
    for (let page = 0; page < 4; page++) {
      const r = await t.es.asyncSearch.submit({
        wait_for_completion_timeout: '10s', keep_on_completion: true, keep_alive: '1m',
        pit: { id: pit.id, keep_alive: '1m' }, size: 500, sort: [{ n: 'asc' }], ...(after ? { search_after: after as never } : {}),
        query: { range: { n: { lt: 2000 } } },
      });
      const hits = r.response.hits.hits;
      expect(r.response.pit_id).toBeDefined();
      seen.push(...hits.map((h) => h._id!));
      after = hits[hits.length - 1].sort as unknown[];
      await t.es.asyncSearch.delete({ id: r.id! });
    }
    expect(seen).toEqual(Array.from({ length: 2000 }, (_, i) => String(i)));
    await t.es.closePointInTime({ id: pit.id });
  });

  it('answers a search submitted just before a restart, finished then or run again after it', async () => {
    const body = { size: 3, sort: [{ n: 'desc' }], track_total_hits: true, aggs: { k: { terms: { field: 'k.keyword', size: 200 } } } };
    const r = await raw(t, 'POST', '/big/_async_search?wait_for_completion_timeout=0ms&keep_on_completion=true', body);
    const id = r.json.id as string;
    await t.restart();
    const g = await t.es.asyncSearch.get({ id, wait_for_completion_timeout: '30s' });
    expect(g).toMatchObject({ id, is_running: false, is_partial: false, expiration_time_in_millis: r.json.expiration_time_in_millis });
    expect(g.response.hits.total).toEqual({ value: DOCS, relation: 'eq' });
    expect(g.response.hits.hits.map((h) => h._id)).toEqual(['2999', '2998', '2997']);
    expect((g.response.aggregations as Record<string, { buckets: unknown[] }>).k.buckets).toHaveLength(97);
    const types = await factTypesOf(t.sys.ctx.nc, uuidOf(id));
    expect(types.filter((x) => x === 'asyncsearch.completed')).toHaveLength(1);
    await t.es.asyncSearch.delete({ id });
  });

  it('keeps a stored result and its expiry across a restart', async () => {
    const r = await t.es.asyncSearch.submit({ index: 'test-*', keep_on_completion: true, wait_for_completion_timeout: '5s', sort: ['max'] });
    await t.restart();
    const g = await t.es.asyncSearch.get({ id: r.id! });
    expect(g.response.hits.hits).toHaveLength(3);
    expect(g.expiration_time_in_millis).toBe(r.expiration_time_in_millis);
    await t.es.asyncSearch.delete({ id: r.id! });
  });
});
