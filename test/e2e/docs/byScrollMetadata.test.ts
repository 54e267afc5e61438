/**
 * Reindex and delete-by-query use the metadata of the hits they page through, as ES does:
 * `dest.routing: keep` (the default) writes each copy with its source hit's `_routing`, and a
 * delete-by-query deletes each hit only if it still has the `_seq_no` / `_primary_term` the scroll
 * saw, counting a document changed since as a version conflict.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { shardFor } from '../../../actors/shard/engine';
import { calculateNumRoutingShards } from '../../../actors/shard/engine/base/routing';
import { eventually, raw } from '../search/helpers';

let t: TestNode;
const SHARDS = 3;
const shardOf = (r: string) => shardFor(r, SHARDS, calculateNumRoutingShards(SHARDS));
/** Ids whose own shard is not the shard their routing picks (a copy routed by id would be lost to a routed get). */
const ROUTED = Array.from({ length: 40 }, (_, i) => `doc-${i}`).filter((id) => shardOf(id) !== shardOf('tenant-7')).slice(0, 6);
const PLAIN = ['p1', 'p2', 'p3'];

const ndjson = (lines: unknown[]) => lines.map((l) => JSON.stringify(l)).join('\n') + '\n';

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'rsrc', settings: { number_of_shards: SHARDS } });
  const ops = [
    ...ROUTED.flatMap((id, i) => [{ index: { _index: 'rsrc', _id: id, routing: 'tenant-7' } }, { n: i }]),
    ...PLAIN.flatMap((id, i) => [{ index: { _index: 'rsrc', _id: id } }, { n: 100 + i }]),
  ];
  const b = await raw(t, 'POST', '/_bulk?refresh=true', ndjson(ops));
  expect(b.json.errors).toBe(false);
});
afterAll(async () => {
  await t?.stop();
});

/** Every hit of an index: id -> `_routing` (undefined: none). */
async function routings(index: string): Promise<Record<string, string | undefined>> {
  const r = await raw(t, 'POST', `/${index}/_search`, { size: 100 });
  return Object.fromEntries(r.json.hits.hits.map((h: { _id: string; _routing?: string }) => [h._id, h._routing]));
}

describe('reindex dest.routing', () => {
  const expected = { ...Object.fromEntries(ROUTED.map((id) => [id, 'tenant-7'])), ...Object.fromEntries(PLAIN.map((id) => [id, undefined])) };

  it('keeps each source hit\'s routing by default: copies are found with it, where the routing puts them', async () => {
    await t.es.indices.create({ index: 'kept', settings: { number_of_shards: SHARDS } });
    const r = await t.es.reindex({ source: { index: 'rsrc' }, dest: { index: 'kept' }, refresh: true });
    expect([r.created, r.failures]).toEqual([ROUTED.length + PLAIN.length, []]);
    expect(await routings('kept')).toEqual(expected);
    for (const id of ROUTED) {
      expect((await raw(t, 'GET', `/kept/_doc/${id}?routing=tenant-7`)).json).toMatchObject({ found: true, _routing: 'tenant-7' });
      expect((await raw(t, 'GET', `/kept/_doc/${id}`)).status).toBe(404); // not on the shard its id picks
    }
    expect((await raw(t, 'GET', '/kept/_doc/p1')).json.found).toBe(true);
  });

  it('does the same with `routing: keep` spelled out, sliced', async () => {
    await t.es.indices.create({ index: 'kept2', settings: { number_of_shards: SHARDS } });
    const r = await raw(t, 'POST', '/_reindex?refresh=true&slices=2', { source: { index: 'rsrc', size: 2 }, dest: { index: 'kept2', routing: 'keep' } });
    expect([r.status, r.json.created]).toEqual([200, ROUTED.length + PLAIN.length]);
    expect(await routings('kept2')).toEqual(expected);
  });

  it('drops it with `discard` and replaces it with `=<value>`', async () => {
    await t.es.reindex({ source: { index: 'rsrc' }, dest: { index: 'dropped', routing: 'discard' }, refresh: true });
    expect(Object.values(await routings('dropped')).every((r) => r === undefined)).toBe(true);
    await t.es.reindex({ source: { index: 'rsrc' }, dest: { index: 'replaced', routing: '=other' }, refresh: true });
    expect(Object.values(await routings('replaced'))).toEqual(Array(ROUTED.length + PLAIN.length).fill('other'));
  });
});

describe('delete-by-query compare-and-set', () => {
  const N = 15;
  const BATCH = 5;
  const seed = async (index: string) => {
    await t.es.indices.create({ index, settings: { number_of_shards: 2 } });
    const b = await raw(t, 'POST', '/_bulk?refresh=true', ndjson(Array.from({ length: N }, (_, i) => [{ index: { _index: index, _id: `d${i}` } }, { n: i, v: 1 }]).flat()));
    expect(b.json.errors).toBe(false);
  };
  /**
   * Starts a throttled delete-by-query (one batch of 5 every 3 s), waits for its first batch, then
   * writes every doc again (the scroll still sees the old versions), and returns the task's response.
   */
  async function changedDuring(index: string, conflicts: 'proceed' | 'abort', change: 'rewrite' | 'delete' = 'rewrite') {
    const start = await raw(t, 'POST', `/${index}/_delete_by_query?wait_for_completion=false&scroll_size=${BATCH}&requests_per_second=${BATCH / 3}&conflicts=${conflicts}`, { query: { match_all: {} } });
    expect(start.status).toBe(200);
    const task = start.json.task;
    await eventually(async () => (await raw(t, 'GET', `/_tasks/${task}`)).json.task?.status?.deleted >= BATCH, 10_000, 'the first batch');
    const ops = Array.from({ length: N }, (_, i) => (change === 'rewrite' ? [{ index: { _index: index, _id: `d${i}` } }, { n: i, v: 2 }] : [{ delete: { _index: index, _id: `d${i}` } }]));
    const again = await raw(t, 'POST', '/_bulk?refresh=true', ndjson(ops.flat()));
    expect(again.status).toBe(200);
    const done = await raw(t, 'GET', `/_tasks/${task}?wait_for_completion=true&timeout=30s`);
    expect(done.json.completed).toBe(true);
    return done.json.response;
  }

  it('counts docs changed since the scroll as version conflicts and leaves them (conflicts=proceed)', async () => {
    await seed('cas1');
    const r = await changedDuring('cas1', 'proceed');
    expect(r).toMatchObject({ total: N, deleted: BATCH, version_conflicts: N - BATCH, failures: [] });
    expect((await t.es.count({ index: 'cas1', query: { term: { v: 2 } } })).count).toBe(N); // every rewritten doc is still there
  });

  it('stops at the first changed doc with ES\'s 409 failure (conflicts=abort)', async () => {
    await seed('cas2');
    const r = await changedDuring('cas2', 'abort');
    expect(r.deleted).toBe(BATCH);
    expect(r.version_conflicts).toBeGreaterThanOrEqual(1);
    expect(r.failures.length).toBeGreaterThanOrEqual(1);
    const f = r.failures[0];
    expect(f).toMatchObject({ index: 'cas2', status: 409, cause: { type: 'version_conflict_engine_exception', index: 'cas2' } });
    expect(f.cause.reason).toMatch(new RegExp(`^\\[${f.id}\\]: version conflict, required seqNo \\[\\d+\\], primary term \\[1\\]\\. current document has seqNo \\[\\d+\\] and primary term \\[1\\]$`));
    expect((await t.es.count({ index: 'cas2' })).count).toBe(N);
  });

  it('counts docs deleted since the scroll as version conflicts too', async () => {
    await seed('cas4');
    const r = await changedDuring('cas4', 'proceed', 'delete');
    expect(r).toMatchObject({ total: N, deleted: BATCH, version_conflicts: N - BATCH, failures: [] });
    expect((await t.es.count({ index: 'cas4' })).count).toBe(0);
  });

  it('still deletes every unchanged doc, whatever its routing', async () => {
    await t.es.indices.create({ index: 'cas3', settings: { number_of_shards: SHARDS } });
    await raw(t, 'POST', '/_bulk?refresh=true', ndjson(ROUTED.flatMap((id) => [{ index: { _index: 'cas3', _id: id, routing: 'tenant-7' } }, { n: 1 }])));
    const r = await t.es.deleteByQuery({ index: 'cas3', query: { match_all: {} }, refresh: true });
    expect([r.deleted, r.version_conflicts]).toEqual([ROUTED.length, 0]);
    expect((await t.es.count({ index: 'cas3' })).count).toBe(0);
  });
});
