/**
 * Issue 22 item 3: `_update_by_query` on the delete-by-query/reindex machinery (update_by_query/*.yml
 * shapes): ES's response, slices, max_docs, conflicts, wait_for_completion=false with `_tasks`,
 * rethrottle, a script refused as on a node without scripts.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { eventually, raw } from '../search/helpers';

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'ubq', settings: { number_of_shards: 3, number_of_replicas: 0 } });
  const ops = [];
  for (let i = 0; i < 120; i++) ops.push({ index: { _index: 'ubq', _id: String(i) } }, { n: i, tag: i % 2 ? 'odd' : 'even' });
  await t.es.bulk({ refresh: true, operations: ops });
});
afterAll(async () => {
  await t?.stop();
});

describe('_update_by_query', () => {
  it('rewrites every match in place with ES response (10_basic.yml)', async () => {
    const r = await raw(t, 'POST', '/ubq/_update_by_query?refresh=true', { query: { term: { 'tag.keyword': 'even' } } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ timed_out: false, total: 60, updated: 60, deleted: 0, version_conflicts: 0, noops: 0, batches: 1, retries: { bulk: 0, search: 0 }, throttled_millis: 0, requests_per_second: -1, throttled_until_millis: 0, failures: [] });
    expect(r.json.created).toBeUndefined();
    const doc = await t.es.get({ index: 'ubq', id: '0' });
    expect(doc._version).toBe(2);
    expect(doc._source).toEqual({ n: 0, tag: 'even' });
  });

  it('runs in slices, each a child task, with the totals merged (20_validation / 50_consistency)', async () => {
    const r = await raw(t, 'POST', '/ubq/_update_by_query?slices=3&refresh=true', {});
    expect(r.json).toMatchObject({ total: 120, updated: 120, version_conflicts: 0 });
    expect(r.json.slices).toHaveLength(3);
    expect(r.json.slices.reduce((a: number, s: { updated: number }) => a + s.updated, 0)).toBe(120);
  });

  it('stops at max_docs', async () => {
    const r = await raw(t, 'POST', '/ubq/_update_by_query?max_docs=7&refresh=true', {});
    expect(r.json).toMatchObject({ total: 7, updated: 7 });
  });

  it('runs as a task with wait_for_completion=false and can be rethrottled', async () => {
    const started = await raw(t, 'POST', '/ubq/_update_by_query?wait_for_completion=false&requests_per_second=50&scroll_size=10', {});
    const task = started.json.task as string;
    expect(task).toMatch(/^.+:\d+$/);
    const rt = await raw(t, 'POST', `/_update_by_query/${task}/_rethrottle?requests_per_second=-1`);
    expect(rt.status).toBe(200);
    const done = await eventually(async () => {
      const g = await raw(t, 'GET', `/_tasks/${task}`);
      return g.json.completed ? g.json : undefined;
    }, 30_000, 'task completion');
    expect(done.task.action).toBe('indices:data/write/update/byquery');
    expect(done.response).toMatchObject({ total: 120, updated: 120, version_conflicts: 0 });
  });

  /**
   * A throttled update-by-query (batches of 5, one every 2 s) whose docs are all written again after
   * its first batch: the scroll still sees the old versions, so writing them back would lose the new ones.
   */
  async function changedDuring(index: string, conflicts: 'proceed' | 'abort') {
    await t.es.indices.create({ index, settings: { number_of_shards: 2, number_of_replicas: 0 } });
    await t.es.bulk({ refresh: true, operations: Array.from({ length: 30 }, (_, i) => [{ index: { _index: index, _id: `d${i}` } }, { n: i, v: 1 }]).flat() });
    const start = await raw(t, 'POST', `/${index}/_update_by_query?wait_for_completion=false&scroll_size=5&requests_per_second=2.5&conflicts=${conflicts}`, { query: { match_all: {} } });
    expect(start.status).toBe(200);
    const task = start.json.task as string;
    await eventually(async () => (await raw(t, 'GET', `/_tasks/${task}`)).json.task?.status?.updated >= 5, 10_000, 'the first batch');
    await t.es.bulk({ refresh: true, operations: Array.from({ length: 30 }, (_, i) => [{ index: { _index: index, _id: `d${i}` } }, { n: i, v: 2 }]).flat() });
    const done = await raw(t, 'GET', `/_tasks/${task}?wait_for_completion=true&timeout=60s`);
    expect(done.json.completed).toBe(true);
    return done.json.response;
  }

  it('counts docs changed since its scroll as version conflicts and leaves them (conflicts=proceed)', async () => {
    const r = await changedDuring('ubq-cas1', 'proceed');
    expect(r).toMatchObject({ total: 30, updated: 5, version_conflicts: 25, failures: [] });
    expect((await t.es.count({ index: 'ubq-cas1', query: { term: { v: 2 } } })).count).toBe(30); // no newer doc overwritten
  }, 60_000);

  it("stops at the first changed doc with ES's 409 failure (conflicts=abort)", async () => {
    const r = await changedDuring('ubq-cas2', 'abort');
    expect(r.updated).toBe(5);
    expect(r.version_conflicts).toBeGreaterThanOrEqual(1);
    expect(r.failures[0]).toMatchObject({ index: 'ubq-cas2', status: 409, cause: { type: 'version_conflict_engine_exception', index: 'ubq-cas2' } });
    expect((await t.es.count({ index: 'ubq-cas2', query: { term: { v: 2 } } })).count).toBe(30);
  }, 60_000);

  it('refuses a script, as a node that runs no scripts', async () => {
    const r = await raw(t, 'POST', '/ubq/_update_by_query', { script: { source: 'ctx._source.n++' } });
    expect(r.status).toBe(400);
  });
});
