/**
 * Error envelope fidelity and transport rules (search-paging.md §0, §1, §3, §4; §15 item 15).
 */
import { startTestNode, type TestNode } from '../../support/node';
import { bulkIndex, raw } from './helpers';

let t: TestNode;
const docs = Array.from({ length: 20 }, (_, i) => ({ n: i + 1, title: `title ${i + 1}`, tag: i % 2 ? 'odd' : 'even' }));

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'e1', mappings: { properties: { n: { type: 'long' }, title: { type: 'text' }, tag: { type: 'keyword' } } } });
  await bulkIndex(t, 'e1', docs, (d) => String(d.n));
  await t.es.indices.create({ index: 'e2', mappings: { properties: { n: { type: 'long' } } } });
  await bulkIndex(t, 'e2', docs.map((d) => ({ n: d.n + 100 })), (d) => String(d.n));
});
afterAll(async () => {
  await t?.stop();
});

it('answers the 8.x compatible media type with the same type', async () => {
  const res = await raw(t, 'POST', '/e1/_search', { size: 1 }, {
    accept: 'application/vnd.elasticsearch+json; compatible-with=8',
    'content-type': 'application/vnd.elasticsearch+json; compatible-with=8',
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/vnd\.elasticsearch\+json; ?compatible-with=8/);
});

it('accepts a GET search with a body', async () => {
  const res = await raw(t, 'GET', '/e1/_search', { query: { term: { tag: 'odd' } }, size: 100 });
  expect(res.status).toBe(200);
  expect(res.json.hits.total.value).toBe(docs.filter((d) => d.tag === 'odd').length);
});

it('rejects an unknown search body key with 400 parsing_exception', async () => {
  const res = await raw(t, 'POST', '/e1/_search', { foo: 'bar' });
  expect(res.status).toBe(400);
  expect(res.json.error.type).toBe('parsing_exception');
  expect(res.json.error.reason).toBe('Unknown key for a VALUE_STRING in [foo].');
});

it('rejects a count body key other than query with 400 parsing_exception', async () => {
  const res = await raw(t, 'POST', '/e1/_count', { size: 3 });
  expect(res.status).toBe(400);
  expect(res.json.error).toMatchObject({ type: 'parsing_exception', reason: 'request does not support [size]' });
});

it('rejects sorting on an unmapped field with 400 and the shard failure in failed_shards', async () => {
  const res = await raw(t, 'POST', '/e1/_search', { sort: [{ nope: 'asc' }] });
  expect(res.status).toBe(400);
  expect(res.json.error.type).toBe('search_phase_execution_exception');
  expect(res.json.error.reason).toBe('all shards failed');
  expect(res.json.error.root_cause[0]).toMatchObject({ type: 'query_shard_exception', reason: 'No mapping found for [nope] in order to sort on' });
  expect(res.json.error.failed_shards[0]).toMatchObject({ shard: 0, index: 'e1', reason: { type: 'query_shard_exception' } });
  expect(typeof res.json.error.failed_shards[0].node).toBe('string');
});

it('sorts on an unmapped field given unmapped_type', async () => {
  const res = await t.es.search({ index: 'e1', size: 3, sort: [{ nope: { order: 'asc', unmapped_type: 'long' } }, { n: 'asc' }] as never });
  expect(res.hits.hits.map((h) => h._id)).toEqual(['1', '2', '3']);
});

it('rejects sorting on a text field with 400 illegal_argument_exception', async () => {
  const res = await raw(t, 'POST', '/e1/_search', { sort: [{ title: 'asc' }] });
  expect(res.status).toBe(400);
  expect(res.json.error.root_cause[0].type).toBe('illegal_argument_exception');
});

it('answers 200 with _shards.failures when only some shards fail', async () => {
  // `tag` is mapped in e1 only: e2's shard fails to sort on it, e1's succeeds.
  const res = await raw(t, 'POST', '/e1,e2/_search', { size: 100, sort: [{ tag: 'asc' }, { n: 'asc' }] });
  expect(res.status).toBe(200);
  expect(res.json._shards).toMatchObject({ total: 2, successful: 1, failed: 1 });
  expect(res.json._shards.failures[0]).toMatchObject({ shard: 0, index: 'e2', reason: { type: 'query_shard_exception' } });
  expect(res.json.hits.hits).toHaveLength(docs.length);
});

it('rejects an invalid index name with 400 invalid_index_name_exception', async () => {
  const res = await raw(t, 'PUT', '/Logs', {});
  expect(res.status).toBe(400);
  expect(res.json.error).toMatchObject({ type: 'invalid_index_name_exception', reason: 'Invalid index name [Logs], must be lowercase' });
});

it('rejects an empty bulk with 400 validation', async () => {
  const res = await raw(t, 'POST', '/_bulk', '\n');
  expect(res.status).toBe(400);
  expect(res.json.error.reason).toBe('Validation Failed: 1: no requests added;');
});

it('rejects a search on a missing index inside a list with 404 naming it', async () => {
  const res = await raw(t, 'POST', '/e1,ghost/_search', {});
  expect(res.status).toBe(404);
  expect(res.json.error).toMatchObject({ type: 'index_not_found_exception', reason: 'no such index [ghost]', index: 'ghost' });
});

it('skips a missing index with ignore_unavailable=true', async () => {
  const res = await raw(t, 'POST', '/e1,ghost/_search?ignore_unavailable=true', { size: 0 });
  expect(res.status).toBe(200);
  expect(res.json.hits.total.value).toBe(docs.length);
});

it('answers the client with a ResponseError carrying status and body', async () => {
  try {
    await t.es.search({ index: 'ghost' });
    throw new Error('expected a failure');
  } catch (e) {
    const err = e as { name: string; meta: { statusCode: number; body: { error: { type: string } } } };
    expect(err.name).toBe('ResponseError');
    expect(err.meta.statusCode).toBe(404);
    expect(err.meta.body.error.type).toBe('index_not_found_exception');
  }
});

it('answers GET / with the version banner the clients check', async () => {
  const info = await t.es.info();
  expect(info.version.number).toMatch(/^8\./);
  expect(info.tagline).toBe('You Know, for Search');
});
