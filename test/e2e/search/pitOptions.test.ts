/**
 * Issue 22 item 2: ES's PIT open options (`index_filter`, `max_concurrent_shard_requests`,
 * `allow_partial_search_results`) and OpenSearch's point in time API beside ES's, paged through with
 * opensearch-js (`createPit`, `search` with `pit` + `search_after`, `getAllPits`, `deletePit`,
 * `deleteAllPits`).
 */
import { Client as OpenSearch } from '@opensearch-project/opensearch';
import { startTestNode, type TestNode } from '../../support/node';
import { raw } from './helpers';

let t: TestNode;
let os: OpenSearch;

beforeAll(async () => {
  t = await startTestNode();
  os = new OpenSearch({ node: t.url });
  await t.es.indices.create({ index: 'logs-a', settings: { number_of_shards: 2, number_of_replicas: 0 }, mappings: { properties: { n: { type: 'long' }, day: { type: 'date' } } } });
  await t.es.indices.create({ index: 'logs-b', settings: { number_of_shards: 1, number_of_replicas: 0 }, mappings: { properties: { n: { type: 'long' }, day: { type: 'date' } } } });
  const ops = [];
  for (let i = 0; i < 250; i++) ops.push({ index: { _index: 'logs-a', _id: `a${i}` } }, { n: i, day: '2024-01-01' });
  for (let i = 0; i < 50; i++) ops.push({ index: { _index: 'logs-b', _id: `b${i}` } }, { n: 1000 + i, day: '2025-01-01' });
  await t.es.bulk({ refresh: true, operations: ops });
});
afterAll(async () => {
  await os?.close();
  await t?.stop();
});

describe('ES PIT open options', () => {
  it('index_filter leaves out the shards where nothing matches (skipped)', async () => {
    const r = await raw(t, 'POST', '/logs-*/_pit?keep_alive=1m', { index_filter: { range: { day: { gte: '2025-01-01' } } } });
    expect(r.status).toBe(200);
    expect(r.json._shards).toEqual({ total: 3, successful: 1, skipped: 2, failed: 0 });
    const s = await t.es.search({ pit: { id: r.json.id }, size: 0, track_total_hits: true });
    expect(s.hits.total).toEqual({ value: 50, relation: 'eq' });
    await t.es.closePointInTime({ id: r.json.id });
  });

  it('max_concurrent_shard_requests must be >= 1; 1 opens every shard one at a time', async () => {
    const bad = await raw(t, 'POST', '/logs-*/_pit?keep_alive=1m&max_concurrent_shard_requests=0');
    expect(bad.status).toBe(400);
    expect(bad.json.error.reason).toBe('maxConcurrentShardRequests must be >= 1');
    const ok = await raw(t, 'POST', '/logs-*/_pit?keep_alive=1m&max_concurrent_shard_requests=1');
    expect(ok.json._shards).toEqual({ total: 3, successful: 3, skipped: 0, failed: 0 });
    await t.es.closePointInTime({ id: ok.json.id });
  });

  it('refuses an unknown body field, as ES\'s request parser', async () => {
    const r = await raw(t, 'POST', '/logs-a/_pit?keep_alive=1m', { query: { match_all: {} } });
    expect(r.status).toBe(400);
    expect(r.json.error.reason).toBe('[1:2] [open_point_in_time_request] unknown field [query]');
  });

  it('accepts allow_partial_search_results (ES default false: a missing shard fails the open)', async () => {
    const r = await raw(t, 'POST', '/logs-a/_pit?keep_alive=1m&allow_partial_search_results=true');
    expect(r.json._shards.failed).toBe(0);
    await t.es.closePointInTime({ id: r.json.id });
  });
});

describe("OpenSearch's point in time API through opensearch-js", () => {
  it('creates a PIT, pages through it with search_after, lists and deletes it', async () => {
    const created = (await os.createPit({ index: ['logs-a'], keep_alive: '1m' })).body as { pit_id: string; _shards: { total: number }; creation_time: number };
    expect(created._shards.total).toBe(2);
    expect(created.creation_time).toBeGreaterThan(Date.now() - 60_000);
    // writes after the PIT was created stay invisible to it
    await t.es.index({ index: 'logs-a', id: 'late', document: { n: -1 }, refresh: true });
    const seen: string[] = [];
    let after: unknown[] | undefined;
    for (;;) {
      const page = (await os.search({ body: { pit: { id: created.pit_id, keep_alive: '1m' }, size: 40, sort: [{ n: 'asc' }], ...(after ? { search_after: after } : {}) } as never })).body as {
        pit_id: string;
        hits: { hits: Array<{ _id: string; sort: unknown[] }> };
      };
      expect(page.pit_id).toBe(created.pit_id);
      if (!page.hits.hits.length) break;
      seen.push(...page.hits.hits.map((h) => h._id));
      after = page.hits.hits[page.hits.hits.length - 1].sort;
    }
    expect(seen).toEqual(Array.from({ length: 250 }, (_, i) => `a${i}`));
    const all = (await os.getAllPits()).body as { pits: Array<{ pit_id: string; creation_time: number; keep_alive: number }> };
    expect(all.pits).toContainEqual({ pit_id: created.pit_id, creation_time: created.creation_time, keep_alive: 60_000 });
    const del = (await os.deletePit({ body: { pit_id: [created.pit_id] } })).body as { pits: Array<{ successful: boolean; pit_id: string }> };
    expect(del.pits).toEqual([{ successful: true, pit_id: created.pit_id }]);
    const again = (await os.deletePit({ body: { pit_id: [created.pit_id] } })).body as { pits: Array<{ successful: boolean }> };
    expect(again.pits[0].successful).toBe(false);
  });

  it('deletes every PIT with _all', async () => {
    const a = (await os.createPit({ index: ['logs-a'], keep_alive: '1m' })).body as { pit_id: string };
    const b = (await os.createPit({ index: ['logs-b'], keep_alive: '1m' })).body as { pit_id: string };
    const del = (await os.deleteAllPits()).body as { pits: Array<{ successful: boolean; pit_id: string }> };
    expect(del.pits.map((p) => p.pit_id).sort()).toEqual([a.pit_id, b.pit_id].sort());
    expect(del.pits.every((p) => p.successful)).toBe(true);
    expect(((await os.getAllPits()).body as { pits: unknown[] }).pits).toEqual([]);
  });
});
