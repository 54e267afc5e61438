/**
 * Issue 13 item 2: `_msearch` through the official clients (v8, v9) and `helpers.msearch`, raw
 * HTTP where the exact status and body matter. Items run through the `_search` code itself, so PIT
 * and search_after inside items behave as in ES's search/350_point_in_time.yml ("msearch").
 */
import { startTestNode, type TestNode } from '../../support/node';
import { bulkIndex, failure, raw } from '../search/helpers';

let t: TestNode;
/** The v8 or the v9 client (typed as v8: both take the same request shapes here). */
const cl = (v: 'es' | 'es9'): TestNode['es'] => t[v] as unknown as TestNode['es'];
const N = 23;
const seqDocs = Array.from({ length: N }, (_, i) => ({ id: i + 1, k: (i * 7) % 5, tag: i % 2 ? 'odd' : 'even' }));
const ndjson = (lines: unknown[]) => lines.map((l) => JSON.stringify(l)).join('\n') + '\n';

beforeAll(async () => {
  t = await startTestNode();
  // search/350_point_in_time.yml's setup
  await t.es.indices.create({ index: 'test', mappings: { properties: { id: { type: 'long' }, age: { type: 'long' }, foo: { type: 'keyword' } } } });
  await t.es.indices.create({ index: 'test2', mappings: { properties: { id: { type: 'long' }, age: { type: 'long' }, foo: { type: 'keyword' } } } });
  await bulkIndex(t, 'test', [{ id: 1, foo: 'bar', age: 18 }, { id: 42, foo: 'bar', age: 18 }, { id: 172, foo: 'bar', age: 24 }]);
  await bulkIndex(t, 'test2', [{ id: 45, foo: 'bar', age: 19 }]);
  await t.es.indices.create({ index: 'seq', settings: { number_of_shards: 3 }, mappings: { properties: { id: { type: 'long' }, k: { type: 'long' }, tag: { type: 'keyword' } } } });
  await bulkIndex(t, 'seq', seqDocs);
}, 120_000);
afterAll(async () => {
  await t?.stop();
});

describe('msearch through the official clients', () => {
  for (const v of ['es', 'es9'] as const) {
    it(`${v}: answers every search in order, a missing index as that item's 404`, async () => {
      const res = (await cl(v).msearch({
        searches: [
          { index: 'test*' },
          { query: { term: { foo: 'bar' } } },
          { index: 'test2' },
          { query: { match_all: {} } },
          { index: 'nope' },
          { query: { match_all: {} } },
          {},
          { size: 0, query: { term: { tag: 'odd' } } },
        ],
      } as never)) as unknown as { took: number; responses: Array<Record<string, any>> };
      expect(typeof res.took).toBe('number');
      const r = res.responses;
      expect(r).toHaveLength(4);
      expect([r[0].status, r[0].hits.total]).toEqual([200, { value: 4, relation: 'eq' }]);
      expect([r[1].status, r[1].hits.hits.map((h: any) => h._id)]).toEqual([200, ['45']]);
      expect(r[2]).toEqual({
        error: {
          root_cause: [{ type: 'index_not_found_exception', reason: 'no such index [nope]', 'resource.type': 'index_or_alias', 'resource.id': 'nope', index_uuid: '_na_', index: 'nope' }],
          type: 'index_not_found_exception',
          reason: 'no such index [nope]',
          'resource.type': 'index_or_alias',
          'resource.id': 'nope',
          index_uuid: '_na_',
          index: 'nope',
        },
        status: 404,
      });
      // no index: every index; the item's query counts the odd ids of `seq` only
      expect(r[3].hits.total.value).toBe(seqDocs.filter((d) => d.tag === 'odd').length);
    });
  }

  it('puts status last in each item, as ES (MultiSearchResponse.Item)', async () => {
    const res = await raw(t, 'POST', '/_msearch', ndjson([{ index: 'test2' }, { size: 1 }]));
    expect(res.status).toBe(200);
    const keys = Object.keys(res.json.responses[0]);
    expect(keys[keys.length - 1]).toBe('status');
    expect(keys.slice(0, 4)).toEqual(['took', 'timed_out', '_shards', 'hits']);
  });

  it('uses the path index unless the header names one', async () => {
    const res = await raw(t, 'POST', '/test2/_msearch', ndjson([{}, {}, { index: 'test' }, {}]));
    expect(res.json.responses.map((x: any) => x.hits.total.value)).toEqual([1, 3]);
  });

  it('runs items with max_concurrent_searches=1 and answers them in request order', async () => {
    const lines: unknown[] = [];
    for (let i = 1; i <= 6; i++) lines.push({ index: 'seq' }, { query: { term: { id: i } } });
    const res = await raw(t, 'GET', '/_msearch?max_concurrent_searches=1', ndjson(lines));
    expect(res.json.responses.map((x: any) => x.hits.hits[0]._id)).toEqual(['1', '2', '3', '4', '5', '6']);
  });

  it('answers a shard failure inside one item as that item, with ES status, the others unaffected', async () => {
    const res = await raw(t, 'POST', '/_msearch', ndjson([{ index: 'seq' }, { sort: [{ missing_field: 'asc' }] }, { index: 'seq' }, { size: 0 }]));
    expect(res.status).toBe(200);
    const [bad, good] = res.json.responses;
    expect(bad.status).toBe(400);
    expect(bad.error.type).toBe('search_phase_execution_exception');
    expect(bad.error.root_cause[0].reason).toBe('No mapping found for [missing_field] in order to sort on');
    expect(good.hits.total.value).toBe(N);
  });

  it('takes rest_total_hits_as_int and typed_keys from the URL for every item', async () => {
    const res = await raw(t, 'POST', '/_msearch?rest_total_hits_as_int=true&typed_keys=true', ndjson([{ index: 'seq' }, { size: 0, aggs: { t: { terms: { field: 'tag' } } } }]));
    expect(res.json.responses[0].hits.total).toBe(N);
    expect(Object.keys(res.json.responses[0].aggregations)).toEqual(['sterms#t']);
  });
});

describe('PIT and search_after inside msearch items (search/350_point_in_time.yml)', () => {
  it('runs PIT searches as items', async () => {
    const { id } = await t.es.openPointInTime({ index: 't*', keep_alive: '5m' });
    const res = await raw(t, 'POST', '/_msearch', ndjson([{}, { query: { match: { _index: 'test' } }, pit: { id } }, {}, { query: { match_all: {} }, pit: { id } }]));
    expect(res.status).toBe(200);
    expect(res.json.responses.map((x: any) => x.hits.total)).toEqual([{ value: 3, relation: 'eq' }, { value: 4, relation: 'eq' }]);
    expect(res.json.responses.map((x: any) => x.pit_id)).toEqual([id, id]);
    await t.es.closePointInTime({ id });
  });

  it('refuses the whole request when an item names an index beside its PIT', async () => {
    const { id } = await t.es.openPointInTime({ index: 't*', keep_alive: '5m' });
    const res = await raw(t, 'POST', '/_msearch', ndjson([{ index: 'index' }, { query: { match: { foo: 'bar' } }, pit: { id } }, { index: 'index2' }, { query: { match_all: {} }, pit: { id } }]));
    expect(res.status).toBe(400);
    expect(res.json.error.type).toBe('action_request_validation_exception');
    expect(res.json.error.reason).toBe(
      'Validation Failed: 1: [indices] cannot be used with point in time. Do not specify any index with point in time.;2: [indices] cannot be used with point in time. Do not specify any index with point in time.;',
    );
    await t.es.closePointInTime({ id });
  });

  it('pages a PIT with search_after inside items, every doc once, in the PIT order', async () => {
    const { id } = await t.es.openPointInTime({ index: 'seq', keep_alive: '1m' });
    const sort = [{ k: 'asc' }, { id: 'desc' }];
    const expected = [...seqDocs].sort((a, b) => a.k - b.k || b.id - a.id).map((d) => String(d.id));
    // writes after the PIT opened stay invisible to it
    await t.es.index({ index: 'seq', id: '999', document: { id: 999, k: 0, tag: 'even' }, refresh: true });
    const seen: string[] = [];
    let after: unknown[] | undefined;
    for (let page = 0; page < 20; page++) {
      const body = { size: 4, sort, pit: { id, keep_alive: '1m' }, ...(after ? { search_after: after } : {}) };
      // the same search twice in one msearch: both items must agree
      const res = await t.es9.msearch({ searches: [{}, body, {}, body] } as never);
      const [a, b] = (res as unknown as { responses: any[] }).responses;
      expect(a.hits.hits.map((h: any) => h._id)).toEqual(b.hits.hits.map((h: any) => h._id));
      if (!a.hits.hits.length) break;
      seen.push(...a.hits.hits.map((h: any) => h._id));
      after = a.hits.hits[a.hits.hits.length - 1].sort;
      expect(after).toHaveLength(3); // the implicit _shard_doc tiebreaker
    }
    expect(seen).toEqual(expected);
    await t.es.closePointInTime({ id });
    await t.es.delete({ index: 'seq', id: '999', refresh: true });
  });

  it('answers a closed PIT as that item\'s 404', async () => {
    const { id } = await t.es.openPointInTime({ index: 'seq', keep_alive: '1m' });
    await t.es.closePointInTime({ id });
    const res = await raw(t, 'POST', '/_msearch', ndjson([{}, { pit: { id } }, { index: 'test2' }, {}]));
    expect(res.status).toBe(200);
    expect(res.json.responses[0].status).toBe(404);
    expect(res.json.responses[0].error.root_cause[0].type).toBe('search_context_missing_exception');
    expect(res.json.responses[1].status).toBe(200);
  });
});

describe('msearch request errors (the whole request, as ES)', () => {
  it('merges every item\'s validation errors into one 400', async () => {
    const res = await raw(t, 'POST', '/_msearch', ndjson([{}, { from: 2, search_after: [1], sort: ['id'] }, {}, {}, {}, { slice: { id: 0, max: 2 } }]));
    expect(res.status).toBe(400);
    expect(res.json.error.reason).toBe(
      'Validation Failed: 1: [from] parameter must be set to 0 when [search_after] is used;2: [slice] can only be used with [scroll] or [point-in-time] requests;',
    );
  });

  it('refuses rest_total_hits_as_int with an inexact track_total_hits (msearch/10_basic.yml)', async () => {
    const res = await raw(t, 'POST', '/_msearch?rest_total_hits_as_int=true', ndjson([{ index: 'seq' }, { query: { match_all: {} }, track_total_hits: 10 }]));
    expect(res.status).toBe(400);
    expect(res.json.error.reason).toBe('[rest_total_hits_as_int] cannot be used if the tracking of total hits is not accurate, got 10');
  });

  it.each([
    ['/_msearch?max_concurrent_searches=0', ndjson([{}, {}]), 'illegal_argument_exception', 'maxConcurrentSearchRequests must be positive'],
    ['/_msearch?max_concurrent_searches=x', ndjson([{}, {}]), 'illegal_argument_exception', 'Failed to parse int parameter [max_concurrent_searches] with value [x]'],
    ['/_msearch?foo=1', ndjson([{}, {}]), 'illegal_argument_exception', 'request [/_msearch] contains unrecognized parameter: [foo]'],
    ['/_msearch', '{}\n{}', 'illegal_argument_exception', 'The msearch request must be terminated by a newline [\n]'],
    ['/_msearch', '\n', 'action_request_validation_exception', 'Validation Failed: 1: no requests added;'],
    ['/_msearch', ndjson([{ size: 1 }, {}]), 'illegal_argument_exception', 'key [size] is not supported in the metadata section'],
    ['/_msearch', ndjson([{}, { foo: 1 }]), 'parsing_exception', 'Unknown key for a VALUE_NUMBER in [foo].'],
  ])('%s %j -> 400 %s', async (path, body, type, reason) => {
    const res = await raw(t, 'POST', path, body, { 'content-type': 'application/x-ndjson' });
    expect(res.status).toBe(400);
    expect([res.json.error.type, res.json.error.reason]).toEqual([type, reason]);
  });

  it('asks for a body', async () => {
    const res = await raw(t, 'POST', '/_msearch');
    expect([res.status, res.json.error.type, res.json.error.reason]).toEqual([400, 'parse_exception', 'request body or source parameter is required']);
  });
});

describe('helpers.msearch', () => {
  for (const v of ['es', 'es9'] as const) {
    it(`${v}: batches searches and resolves each with its documents; a failed item rejects with its error`, async () => {
      const m = cl(v).helpers.msearch({ operations: 3, flushInterval: 50 });
      const searches = [1, 2, 3, 4, 5].map((i) => m.search({ index: 'seq' }, { query: { term: { id: i } } }));
      const missing = failure(m.search({ index: 'nope' }, { query: { match_all: {} } }));
      const results = await Promise.all(searches);
      expect(results.map((r) => (r.documents as Array<{ id: number }>).map((d) => d.id))).toEqual([[1], [2], [3], [4], [5]]);
      expect(results.map((r) => r.body.hits.total)).toEqual(Array(5).fill({ value: 1, relation: 'eq' }));
      // the client raises the item's error (meta.statusCode is the msearch's own 200)
      const f = await missing;
      expect([f.body.status, f.body.error.type]).toEqual([404, 'index_not_found_exception']);
      m.stop();
      await m;
    });
  }
});
