/**
 * Issue 19 through the official client: `_flush` writes segments, `_cat/segments` and `_stats`
 * show them, `_forcemerge` reclaims deleted docs, a scroll opened before every doc is updated keeps
 * reading the old versions after a force merge (its pinned segments stay, and `_contexts` shows
 * them), and once it is cleared a force merge reclaims them. The node restarts from its commits.
 */
import { startTestNode, type TestNode } from '../../support/node';

let t: TestNode;
const N = 300;

beforeAll(async () => {
  t = await startTestNode({ settings: { 'indices.merge.deletes_retention': '0s' } });
  await t.es.indices.create({ index: 'seg', settings: { number_of_shards: 1, number_of_replicas: 0 }, mappings: { properties: { v: { type: 'keyword' }, n: { type: 'long' } } } });
  await t.es.bulk({ index: 'seg', refresh: true, operations: Array.from({ length: N }, (_, i) => [{ index: { _id: `d${i}` } }, { v: 'old', n: i }]).flat() });
}, 120_000);
afterAll(async () => {
  await t?.stop();
});

const segments = async () => (await t.es.cat.segments({ index: 'seg', format: 'json' })) as unknown as Array<Record<string, string>>;

describe('segments on disk', () => {
  it('flushes the buffer into a committed segment that _cat/segments and _stats show', async () => {
    const r = await t.es.indices.flush({ index: 'seg' });
    expect(r._shards).toEqual({ total: 1, successful: 1, failed: 0 });
    const segs = await segments();
    expect(segs).toHaveLength(1);
    expect(segs[0]).toMatchObject({ index: 'seg', shard: '0', prirep: 'p', 'docs.count': String(N), 'docs.deleted': '0', committed: 'true', searchable: 'true' });
    const st = await t.es.indices.stats({ index: 'seg', metric: 'segments,docs,store' });
    expect(st._all.primaries!.segments!.count).toBe(1);
    expect(st._all.primaries!.store!.size_in_bytes).toBeGreaterThan(0);
  });

  it('refuses only_expunge_deletes with max_num_segments as ES does', async () => {
    const e = await t.es.indices.forcemerge({ index: 'seg', only_expunge_deletes: true, max_num_segments: 1 }).catch((x) => x);
    expect(e.meta.statusCode).toBe(400);
    expect(e.meta.body.error.type).toBe('action_request_validation_exception');
    expect(e.meta.body.error.reason).toContain('cannot set only_expunge_deletes and max_num_segments at the same time');
  });

  it('keeps what a scroll opened before the updates reads through a force merge, then reclaims it once the scroll is cleared', async () => {
    const first = await t.es.search({ index: 'seg', scroll: '5m', size: 100, sort: ['_doc'], query: { term: { v: 'old' } } });
    expect(first.hits.hits).toHaveLength(100);
    await t.es.bulk({ index: 'seg', refresh: true, operations: Array.from({ length: N }, (_, i) => [{ index: { _id: `d${i}` } }, { v: 'new', n: i }]).flat() });
    await t.es.indices.flush({ index: 'seg' });
    let segs = await segments();
    expect(segs.reduce((n, s) => n + Number(s['docs.deleted']), 0)).toBe(N);
    const fm = await t.es.indices.forcemerge({ index: 'seg', max_num_segments: 1 });
    expect(fm._shards?.failed).toBe(0);
    segs = await segments();
    expect(segs).toHaveLength(1);
    expect(segs[0]['docs.deleted']).toBe('0');
    expect(segs[0]['docs.count']).toBe(String(N));
    // the scroll still pages through the old versions
    const seen = new Set(first.hits.hits.map((h) => h._id));
    let id = first._scroll_id!;
    for (;;) {
      const page = await t.es.scroll({ scroll_id: id, scroll: '5m' });
      if (!page.hits.hits.length) break;
      for (const h of page.hits.hits) {
        expect((h._source as { v: string }).v).toBe('old');
        seen.add(h._id!);
      }
      id = page._scroll_id!;
    }
    expect(seen.size).toBe(N);
    const ctx = (await t.es.transport.request({ method: 'GET', path: `/_contexts/${encodeURIComponent(id)}` })) as { pinned_segments_count: number; pinned_size_in_bytes: number };
    expect(ctx.pinned_segments_count).toBeGreaterThan(0);
    expect(ctx.pinned_size_in_bytes).toBeGreaterThan(0);
    const pinnedStats = await t.es.indices.stats({ index: 'seg', metric: 'segments' });
    expect((pinnedStats._all.primaries!.segments as unknown as { pinned_count: number }).pinned_count).toBeGreaterThan(0);
    await t.es.clearScroll({ scroll_id: id });
    const after = await t.es.indices.stats({ index: 'seg', metric: 'segments' });
    expect((after._all.primaries!.segments as unknown as { pinned_count: number }).pinned_count).toBe(0);
  });

  it('restarts from its commits with every document', async () => {
    await t.restart();
    const c = await t.es.count({ index: 'seg', query: { term: { v: 'new' } } });
    expect(c.count).toBe(N);
    const segs = await segments();
    expect(segs.length).toBeGreaterThanOrEqual(1);
  });
});
