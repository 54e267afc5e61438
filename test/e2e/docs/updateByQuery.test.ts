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

  it('refuses a script, as a node that runs no scripts', async () => {
    const r = await raw(t, 'POST', '/ubq/_update_by_query', { script: { source: 'ctx._source.n++' } });
    expect(r.status).toBe(400);
  });
});
