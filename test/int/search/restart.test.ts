/**
 * Issue 2: durability across a node restart. Every acknowledged write (index, overwrite, delete,
 * with or without refresh) is rebuilt from the document log: searchable, gettable and counted as
 * before. In-process, a hard kill is not available; `t.restart()` stops the node and starts it on
 * the same NATS store and data dir.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { bulkIndex, raw } from '../../e2e/search/helpers';
import { rng } from '../../support/rng';

let t: TestNode;
jest.setTimeout(60_000);

interface Doc {
  n: number;
  grp: string;
  v: number;
}
const r = rng(77);
const docs: Doc[] = Array.from({ length: 600 }, (_, i) => ({ n: i + 1, grp: ['a', 'b', 'c'][Math.floor(r() * 3)], v: 1 }));
const mappings = { properties: { n: { type: 'long' }, grp: { type: 'keyword' }, v: { type: 'long' } } };

/** What the node acknowledged, kept by the test: id -> source (absent = deleted). */
const expected = new Map<string, Record<string, unknown>>();
const expectedUnrefreshed = new Map<string, Record<string, unknown>>();
const versions = new Map<string, number>();

async function allIds(index: string): Promise<string[]> {
  const res = await t.es.search({ index, size: 1000, _source: false, track_total_hits: true });
  return res.hits.hits.map((h) => h._id!).sort();
}

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'r1', settings: { number_of_shards: 1 }, mappings: mappings as never });
  await t.es.indices.create({ index: 'r3', settings: { number_of_shards: 3, max_result_window: 5000 }, mappings: mappings as never });
  for (const index of ['r1', 'r3']) await bulkIndex(t, index, docs, (d) => String(d.n));
  for (const d of docs) expected.set(String(d.n), d as never);
  // Overwrites and deletes, each acknowledged before the restart.
  for (const n of [5, 6, 7]) {
    const res = await raw(t, 'PUT', `/r3/_doc/${n}?refresh=true`, { n, grp: 'z', v: 2 });
    expect(res.status).toBe(200);
    versions.set(String(n), res.json._version);
    expected.set(String(n), { n, grp: 'z', v: 2 });
  }
  for (const n of [10, 11, 12]) {
    expect((await raw(t, 'DELETE', `/r3/_doc/${n}?refresh=true`)).status).toBe(200);
    expected.delete(String(n));
  }
  // Acknowledged without any refresh: must still survive.
  await t.es.indices.create({ index: 'quiet', settings: { number_of_shards: 2, refresh_interval: '-1' } });
  const writes = Array.from({ length: 50 }, (_, i) => raw(t, 'PUT', `/quiet/_doc/q${i}`, { i }));
  for (const [i, res] of (await Promise.all(writes)).entries()) {
    expect(res.status).toBe(201);
    expectedUnrefreshed.set(`q${i}`, { i });
  }
  await t.es.cluster.putSettings({ persistent: { 'search.max_open_scroll_context': 7 } });
  await t.restart();
}, 120_000);
afterAll(async () => {
  await t?.stop();
});

it('finds every acknowledged document of a 1-shard index by search after restart', async () => {
  expect(await allIds('r1')).toEqual(docs.map((d) => String(d.n)).sort());
});

it('finds every acknowledged document of a 3-shard index, minus the deleted ones, after restart', async () => {
  expect(await allIds('r3')).toEqual([...expected.keys()].sort());
  expect((await t.es.count({ index: 'r3' })).count).toBe(expected.size);
});

it('gets every acknowledged document with its latest source after restart', async () => {
  for (const [id, src] of expected) {
    const res = await raw(t, 'GET', `/r3/_doc/${id}`);
    expect([id, res.status, res.json._source]).toEqual([id, 200, src]);
  }
});

it('keeps versions of overwritten documents after restart', async () => {
  for (const [id, version] of versions) {
    const res = await raw(t, 'GET', `/r3/_doc/${id}`);
    expect(res.json._version).toBe(version);
  }
});

it('keeps deleted documents deleted after restart', async () => {
  for (const id of ['10', '11', '12']) expect((await raw(t, 'GET', `/r3/_doc/${id}`)).status).toBe(404);
});

it('makes documents acknowledged without a refresh searchable after restart', async () => {
  await t.es.indices.refresh({ index: 'quiet' });
  expect(await allIds('quiet')).toEqual([...expectedUnrefreshed.keys()].sort());
  for (const [id, src] of expectedUnrefreshed) expect((await raw(t, 'GET', `/quiet/_doc/${id}`)).json._source).toEqual(src);
});

it('keeps mappings and index settings after restart', async () => {
  const m = await t.es.indices.getMapping({ index: 'r3' });
  expect(m.r3.mappings.properties).toEqual(mappings.properties);
  const s = await t.es.indices.getSettings({ index: 'r3' });
  expect(s.r3.settings!.index!.number_of_shards).toBe('3');
  expect(String(s.r3.settings!.index!.max_result_window)).toBe('5000');
});

it('keeps dynamic cluster settings after restart', async () => {
  const s = await raw(t, 'GET', '/_cluster/settings');
  expect(s.json.persistent.search.max_open_scroll_context).toBe('7');
});

it('continues versions of existing documents for writes after restart', async () => {
  const res = await raw(t, 'PUT', '/r3/_doc/5?refresh=true', { n: 5, grp: 'y', v: 3 });
  expect(res.status).toBe(200);
  expect(res.json.result).toBe('updated');
  expect(res.json._version).toBe(versions.get('5')! + 1);
  const created = await raw(t, 'PUT', '/r3/_create/1', { n: 1 });
  expect(created.status).toBe(409); // id 1 still exists
});

it('sorts and pages the restarted index like before', async () => {
  const want = [...expected.values()].map((d) => d.n as number).sort((a, b) => a - b).map(String);
  const seen: string[] = [];
  let after: unknown[] | undefined;
  for (;;) {
    const res = await t.es.search({ index: 'r3', size: 97, sort: [{ n: 'asc' }] as never, ...(after ? { search_after: after as never } : {}) });
    if (!res.hits.hits.length) break;
    seen.push(...res.hits.hits.map((h) => h._id!));
    after = res.hits.hits[res.hits.hits.length - 1].sort;
  }
  expect(seen).toEqual(want);
});

it('survives a second restart right after a burst of acknowledged writes', async () => {
  const burst = Array.from({ length: 200 }, (_, i) => ({ n: 5000 + i, grp: 'b', v: 9 }));
  const body = burst.map((d) => `${JSON.stringify({ index: { _index: 'r1', _id: String(d.n) } })}\n${JSON.stringify(d)}\n`).join('');
  const res = await raw(t, 'POST', '/_bulk', body);
  expect(res.json.errors).toBe(false);
  await t.restart();
  await t.es.indices.refresh({ index: 'r1' });
  expect(await allIds('r1')).toEqual([...docs, ...burst].map((d) => String(d.n)).sort());
});

it('creates an index once when two creates of the same name race; the winner and its documents survive a restart', async () => {
  const creates = await Promise.all(
    Array.from({ length: 4 }, (_, i) => raw(t, 'PUT', '/racy', { settings: { number_of_shards: 1 + i } })),
  );
  const statuses = creates.map((c) => c.status).sort();
  expect(statuses).toEqual([200, 400, 400, 400]);
  for (const c of creates.filter((x) => x.status === 400)) expect(c.json.error.type).toBe('resource_already_exists_exception');
  const shards = (await raw(t, 'GET', '/racy/_settings')).json.racy.settings.index.number_of_shards;
  await bulkIndex(t, 'racy', docs.slice(0, 50), (d) => String(d.n));
  await t.restart();
  expect((await raw(t, 'GET', '/racy/_settings')).json.racy.settings.index.number_of_shards).toBe(shards);
  expect((await raw(t, 'GET', '/racy/_count')).json.count).toBe(50);
});
