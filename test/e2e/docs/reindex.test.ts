/**
 * Issue 13 item 4: `_reindex`, `_delete_by_query` and `_tasks` through the official clients (v8,
 * v9) and raw HTTP. Both page with the node's own scroll machinery (contexts opened through the
 * registry, so they are in the lifecycle log) and write through the bulk path. The 100,000-document
 * `slices: auto` check is in reindex100k.test.ts.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { shardFor } from '../../../actors/shard/engine';
import { calculateNumRoutingShards } from '../../../actors/shard/engine/base/routing';
import { allFacts, bulkIndex, eventually, raw } from '../search/helpers';

let t: TestNode;
/** The v8 or the v9 client (typed as v8: both take the same request shapes here). */
const cl = (v: 'es' | 'es9'): TestNode['es'] => t[v] as unknown as TestNode['es'];
const N = 120;
const docs = Array.from({ length: N }, (_, i) => ({ key: i + 1, grp: i % 4 === 0 ? 'a' : 'b', secret: `s${i}` }));
const MAPPINGS = { properties: { key: { type: 'long' }, grp: { type: 'keyword' }, secret: { type: 'keyword' } } };
const RESPONSE_KEYS = ['took', 'timed_out', 'total', 'updated', 'created', 'deleted', 'batches', 'version_conflicts', 'noops', 'retries', 'throttled_millis', 'requests_per_second', 'throttled_until_millis', 'failures'];

/** Every doc of an index as id -> source (one scroll through the client). */
async function contents(index: string): Promise<Map<string, any>> {
  const out = new Map<string, any>();
  let page = await t.es.search({ index, scroll: '1m', size: 500, sort: ['_doc'] });
  while (page.hits.hits.length) {
    for (const h of page.hits.hits) out.set(h._id!, h._source);
    page = await t.es.scroll({ scroll_id: page._scroll_id!, scroll: '1m' });
  }
  await t.es.clearScroll({ scroll_id: page._scroll_id! });
  return out;
}

const srcMap = () => new Map(docs.map((d) => [String(d.key), d]));

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'src', settings: { number_of_shards: 3 }, mappings: MAPPINGS as never });
  await bulkIndex(t, 'src', docs, (d) => String(d.key));
}, 120_000);
afterAll(async () => {
  await t?.stop();
});

describe('reindex', () => {
  for (const v of ['es', 'es9'] as const) {
    it(`${v}: copies every document with ES's response, then overwrites them as updates`, async () => {
      const dest = `copy-${v}`;
      const r = await cl(v).reindex({ source: { index: 'src' }, dest: { index: dest }, refresh: true });
      expect(r).toMatchObject({ timed_out: false, total: N, created: N, updated: 0, deleted: 0, batches: 1, version_conflicts: 0, noops: 0, retries: { bulk: 0, search: 0 }, throttled_millis: 0, requests_per_second: -1, throttled_until_millis: 0, failures: [] });
      expect(await contents(dest)).toEqual(srcMap());
      const again = await cl(v).reindex({ source: { index: 'src', size: 50 }, dest: { index: dest } });
      expect([again.created, again.updated, again.batches]).toEqual([0, N, 3]);
    });
  }

  it('answers in ES key order', async () => {
    const r = await raw(t, 'POST', '/_reindex', { source: { index: 'src' }, dest: { index: 'order' } });
    expect(Object.keys(r.json)).toEqual(RESPONSE_KEYS);
  });

  it('copies what the source query matches, up to max_docs, and only the _source it keeps', async () => {
    const r = await raw(t, 'POST', '/_reindex?refresh=true', {
      max_docs: 7,
      source: { index: 'src', query: { term: { grp: 'a' } }, _source: { excludes: ['secret'] }, sort: [{ key: 'asc' }], size: 3 },
      dest: { index: 'some' },
    });
    expect([r.status, r.json.total, r.json.created, r.json.batches]).toEqual([200, 7, 7, 3]);
    const expected = docs.filter((d) => d.grp === 'a').slice(0, 7).map((d): [string, unknown] => [String(d.key), { key: d.key, grp: 'a' }]);
    expect(await contents('some')).toEqual(new Map(expected));
  });

  it('aborts on a version conflict with op_type create (409, failures as ES), or counts it with conflicts=proceed', async () => {
    await t.es.index({ index: 'clash', id: '1', document: { key: -1 }, refresh: true });
    const abort = await raw(t, 'POST', '/_reindex', { source: { index: 'src', query: { ids: { values: ['1', '2'] } } }, dest: { index: 'clash', op_type: 'create' } });
    expect(abort.status).toBe(409);
    expect(abort.json).toMatchObject({ created: 1, updated: 0, version_conflicts: 1, batches: 1 });
    expect(abort.json.failures).toEqual([
      {
        index: 'clash',
        id: '1',
        cause: { type: 'version_conflict_engine_exception', reason: '[1]: version conflict, document already exists (current version [1])', index_uuid: expect.any(String), shard: expect.stringMatching(/^\d+$/), index: 'clash' },
        status: 409,
      },
    ]);
    const proceed = await t.es.reindex({ conflicts: 'proceed', source: { index: 'src' }, dest: { index: 'clash', op_type: 'create' } });
    expect([proceed.created, proceed.version_conflicts, proceed.failures]).toEqual([N - 2, 2, []]);
  });

  it('splits into slices (one scroll each) whose statuses add up', async () => {
    const r = await t.es9.reindex({ source: { index: 'src' }, dest: { index: 'sliced' }, slices: 5, refresh: true });
    expect([r.created, r.total]).toEqual([N, N]);
    expect(r.slices!.map((s: any) => s.slice_id)).toEqual([0, 1, 2, 3, 4]);
    expect(r.slices!.reduce((a: number, s: any) => a + s.created, 0)).toBe(N);
    expect(await contents('sliced')).toEqual(srcMap());
  });

  it('opens its scrolls through the context registry: opened and cleared in the lifecycle log, none left open', async () => {
    const before = new Set((await allFacts(t.sys.ctx.nc)).map((f) => f.id));
    await t.es.reindex({ source: { index: 'src', size: 40 }, dest: { index: 'logged' }, slices: 2 } as never);
    const facts = (await allFacts(t.sys.ctx.nc)).filter((f) => !before.has(f.id) && f.type.startsWith('scroll.'));
    const opened = facts.filter((f) => f.type === 'scroll.opened');
    expect(opened).toHaveLength(2);
    expect(opened.map((f) => (f.data as { slice?: unknown }).slice)).toEqual(expect.arrayContaining([{ id: 0, max: 2 }, { id: 1, max: 2 }]));
    for (const o of opened) expect(facts.filter((f) => f.aggregateId === o.aggregateId).map((f) => f.type).at(-1)).toBe('scroll.cleared');
    expect((await raw(t, 'GET', '/_scroll')).json.count).toBe(0);
  });

  it.each([
    [{ junk: { more: 1 } }, '', 'x_content_parse_exception', '[1:2] [reindex] unknown field [junk]'],
    [{ source: { index: 'src', junk: {} }, dest: { index: 'd' } }, '', 'parsing_exception', 'Unknown key for a START_OBJECT in [junk].'],
    [{ source: { index: 'src' }, dest: { index: 'd', junk: {} } }, '', 'x_content_parse_exception', '[1:47] [dest] unknown field [junk]'],
    [{ source: { index: 'src' }, dest: {} }, '', 'action_request_validation_exception', 'Validation Failed: 1: index must be specified;'],
    [{ source: { index: 'src', from: 1 }, dest: { index: 'd' } }, '', 'action_request_validation_exception', 'Validation Failed: 1: from is not supported in this context;'],
    [{ source: { index: 'src', size: 'cat' }, dest: { index: 'd' } }, '', 'number_format_exception', 'For input string: "cat"'],
    [{ source: { index: 'src', _source: false }, dest: { index: 'd' } }, '', 'action_request_validation_exception', 'Validation Failed: 1: _source:false is not supported in this context;'],
    [{ conflicts: 'cat', source: { index: 'src' }, dest: { index: 'd' } }, '', 'illegal_argument_exception', 'conflicts may only be "proceed" or "abort" but was [cat]'],
    [{ max_docs: -4, source: { index: 'src' }, dest: { index: 'd' } }, '', 'illegal_argument_exception', '[max_docs] parameter cannot be negative, found [-4]'],
    [{ size: 4, max_docs: 5, source: { index: 'src' }, dest: { index: 'd' } }, '', 'illegal_argument_exception', '[max_docs] set to two different values [4] and [5]'],
    [{ source: { index: 'src' }, dest: { index: 'd' } }, '?max_docs=1&slices=2', 'action_request_validation_exception', 'Validation Failed: 1: [max_docs] should be >= [slices];'],
    [{ source: { index: 'src' }, dest: { index: 'd' } }, '?slices=junk', 'illegal_argument_exception', '[slices] must be a positive integer or the string "auto", but was [junk]'],
    [{ source: { index: 'src' }, dest: { index: 'd' } }, '?requests_per_second=0', 'illegal_argument_exception', '[requests_per_second] must be a float greater than 0. Use -1 to disable throttling.'],
    [{ source: { index: 'src', remote: { host: 'http://badremote:9200' } }, dest: { index: 'd' } }, '', 'illegal_argument_exception', '[badremote:9200] not whitelisted in reindex.remote.whitelist'],
    [{ source: { index: 'src' }, dest: { index: 'd' }, script: { source: 'ctx._source.x = 1' } }, '', 'illegal_argument_exception', 'cannot execute [inline] scripts'],
    [{ source: { index: 'src' }, dest: { index: 'd' } }, '?foo=1', 'illegal_argument_exception', 'request [/_reindex] contains unrecognized parameter: [foo]'],
  ])('refuses %j%s with %s', async (body, qs, type, reason) => {
    const r = await raw(t, 'POST', `/_reindex${qs}`, body);
    expect([r.status, r.json.error.type, r.json.error.reason]).toEqual([400, type, reason]);
    expect((await raw(t, 'HEAD', '/d')).status).toBe(404); // nothing was written
  });

  it('refuses to write into an index it reads from, and a missing source index is ES\'s 404', async () => {
    const same = await raw(t, 'POST', '/_reindex', { source: { index: 's*' }, dest: { index: 'src' } });
    expect([same.status, same.json.error.reason]).toEqual([400, 'Validation Failed: 1: reindex cannot write into an index its reading from [src];']);
    const missing = await raw(t, 'POST', '/_reindex', { source: { index: 'nope' }, dest: { index: 'd2' } });
    expect([missing.status, missing.json.error.type]).toEqual([404, 'index_not_found_exception']);
  });
});

describe('reindex as a task (wait_for_completion=false)', () => {
  for (const v of ['es', 'es9'] as const) {
    it(`${v}: answers a task id whose progress _tasks reports until the stored response`, async () => {
      // 120 docs in batches of 20 at 40 docs/s: about 3 s, one batch every 0.5 s
      const { task } = (await cl(v).reindex({ source: { index: 'src', size: 20 }, dest: { index: `slow-${v}` }, wait_for_completion: false, requests_per_second: 40 })) as { task: string };
      expect(task).toMatch(/^.+:\d+$/);
      const running = await eventually(async () => {
        const g = (await cl(v).tasks.get({ task_id: task })) as any;
        return !g.completed && g.task.status.created > 0 && g.task.status.created < N ? g : undefined;
      }, 10_000, 'a running task with progress');
      expect(running.task).toMatchObject({ action: 'indices:data/write/reindex', description: `reindex from [src] to [slow-${v}]`, cancellable: true, cancelled: false, type: 'transport' });
      expect(running.task.status).toMatchObject({ total: N, updated: 0, deleted: 0, requests_per_second: 40 });
      const listed = (await cl(v).tasks.list({ actions: '*reindex', detailed: true })) as any;
      expect(Object.keys(Object.values(listed.nodes as Record<string, any>)[0].tasks)).toContain(task);
      const done = (await cl(v).tasks.get({ task_id: task, wait_for_completion: true, timeout: '30s' })) as any;
      expect(done.completed).toBe(true);
      expect(done.response).toMatchObject({ total: N, created: N, batches: 6, failures: [] });
      expect(done.response.throttled_millis).toBeGreaterThan(0);
      expect(done.task.status).toMatchObject({ total: N, created: N });
      expect(done.task).not.toHaveProperty('cancelled'); // as ES stores it in .tasks
      // still there later (ES keeps it in .tasks)
      expect(((await cl(v).tasks.get({ task_id: task })) as any).response.created).toBe(N);
    });
  }

  it('reports slices of a sliced task: children with parent_task_id, the parent merging finished slices', async () => {
    const r = await raw(t, 'POST', '/_reindex?wait_for_completion=false&slices=3&requests_per_second=60', { source: { index: 'src', size: 10 }, dest: { index: 'slow-sliced' } });
    const parent = r.json.task;
    const grouped = await eventually(async () => {
      const g = await raw(t, 'GET', `/_tasks?group_by=parents&detailed&actions=*reindex`);
      return g.json.tasks?.[parent]?.children?.length === 3 ? g.json : undefined;
    }, 10_000, 'three child tasks');
    expect(grouped.tasks[parent].children.map((c: any) => c.parent_task_id)).toEqual([parent, parent, parent]);
    expect(grouped.tasks[parent].children.map((c: any) => c.status.slice_id).sort()).toEqual([0, 1, 2]);
    const done = await raw(t, 'GET', `/_tasks/${parent}?wait_for_completion=true`);
    expect(done.json.response.created).toBe(N);
    expect(done.json.task.status.slices.map((s: any) => s.slice_id)).toEqual([0, 1, 2]);
    expect(done.json.response.slices.reduce((a: number, s: any) => a + s.created, 0)).toBe(N);
  });

  it('is cancelled through _tasks/<id>/_cancel and stops at its next batch', async () => {
    const r = await raw(t, 'POST', '/_reindex?wait_for_completion=false&requests_per_second=10', { source: { index: 'src', size: 10 }, dest: { index: 'cancelled' } });
    const task = r.json.task;
    await eventually(async () => (await raw(t, 'GET', `/_tasks/${task}`)).json.task?.status?.created >= 10, 10_000, 'a first batch');
    const c = await raw(t, 'POST', `/_tasks/${task}/_cancel`);
    expect(c.status).toBe(200);
    expect(Object.values(c.json.nodes as Record<string, any>)[0].tasks[task].cancelled).toBe(true);
    const done = await raw(t, 'GET', `/_tasks/${task}?wait_for_completion=true`);
    expect(done.json.response.canceled).toBe('by user request');
    expect(done.json.response.created).toBeLessThan(N);
    expect((await raw(t, 'GET', '/_scroll')).json.count).toBe(0);
  });

  it('stretches its scroll keep-alive over a throttle longer than it (as ES), so the scroll never expires', async () => {
    // 40-doc batches at 20 docs/s: 2 s between batches, against a 1 s scroll keep-alive
    const r = await raw(t, 'POST', '/_reindex?scroll=1s&requests_per_second=20', { source: { index: 'src', size: 40 }, dest: { index: 'stretched' } });
    expect([r.status, r.json.created, r.json.batches]).toEqual([200, N, 3]);
    expect(r.json.throttled_millis).toBeGreaterThan(3000);
  });

  it('speeds up when rethrottled to -1', async () => {
    const r = await raw(t, 'POST', '/_reindex?wait_for_completion=false&requests_per_second=1', { source: { index: 'src', size: 10 }, dest: { index: 'rethrottled' } });
    const task = r.json.task;
    await eventually(async () => (await raw(t, 'GET', `/_tasks/${task}`)).json.task?.status?.batches >= 1, 10_000, 'a first batch');
    const re = await raw(t, 'POST', `/_reindex/${task}/_rethrottle?requests_per_second=-1`);
    expect(re.status).toBe(200);
    const done = await raw(t, 'GET', `/_tasks/${task}?wait_for_completion=true&timeout=20s`);
    expect(done.json.response.created).toBe(N);
  });

  it.each([
    ['/_tasks/junk', 400, 'illegal_argument_exception', 'malformed task id junk'],
    ['/_tasks/node:x', 400, 'illegal_argument_exception', 'malformed task id node:x'],
  ])('GET %s -> %s', async (path, status, type, reason) => {
    const r = await raw(t, 'GET', path);
    expect([r.status, r.json.error.type, r.json.error.reason]).toEqual([status, type, reason]);
  });

  it('answers an unknown task id with ES\'s 404', async () => {
    const node = Object.keys((await raw(t, 'GET', '/_nodes/stats')).json.nodes)[0];
    const r = await raw(t, 'GET', `/_tasks/${node}:987654`);
    expect([r.status, r.json.error.type, r.json.error.reason]).toEqual([404, 'resource_not_found_exception', `task [${node}:987654] isn't running and hasn't stored its results`]);
    const other = await raw(t, 'GET', '/_tasks/elsewhere:1');
    expect(other.json.error.reason).toBe("task [elsewhere:1] belongs to the node [elsewhere] which isn't part of the cluster and there is no record of the task");
  });
});

describe('delete_by_query', () => {
  beforeAll(async () => {
    for (const index of ['del8', 'del9', 'delsliced', 'delslow']) {
      await t.es.indices.create({ index, settings: { number_of_shards: 3 }, mappings: MAPPINGS as never });
      await bulkIndex(t, index, docs, (d) => String(d.key));
    }
  });

  for (const [v, index] of [['es', 'del8'], ['es9', 'del9']] as const) {
    it(`${v}: deletes what the query matches, answering without created/updated`, async () => {
      const r = await cl(v).deleteByQuery({ index, query: { term: { grp: 'a' } }, refresh: true });
      const a = docs.filter((d) => d.grp === 'a').length;
      expect(r).toMatchObject({ total: a, deleted: a, batches: 1, version_conflicts: 0, failures: [] });
      expect(r).not.toHaveProperty('created');
      expect(r).not.toHaveProperty('updated');
      expect((await cl(v).count({ index })).count).toBe(N - a);
      expect((await cl(v).count({ index, query: { term: { grp: 'a' } } })).count).toBe(0);
    });
  }

  it('deletes with slices and q=, routed documents included', async () => {
    const routed = ['x1', 'x2', 'x3'];
    for (const id of routed) await t.es.index({ index: 'delsliced', id, routing: 'elsewhere', document: { key: 0, grp: 'c' } });
    await t.es.indices.refresh({ index: 'delsliced' });
    expect(routed.some((id) => shardFor(id, 3, calculateNumRoutingShards(3)) !== shardFor('elsewhere', 3, calculateNumRoutingShards(3)))).toBe(true);
    const r = await raw(t, 'POST', '/delsliced/_delete_by_query?q=grp:c&slices=2&refresh=true');
    expect([r.status, r.json.deleted, r.json.slices.length]).toEqual([200, 3, 2]);
    const g = await raw(t, 'POST', '/_mget', { docs: routed.map((id) => ({ _index: 'delsliced', _id: id, routing: 'elsewhere' })) });
    expect(g.json.docs.map((d: any) => d.found)).toEqual([false, false, false]);
  });

  it('runs as a task with wait_for_completion=false', async () => {
    const r = await t.es9.deleteByQuery({ index: 'delslow', query: { match_all: {} }, wait_for_completion: false, scroll_size: 30, requests_per_second: 100 } as never);
    const task = (r as { task: string }).task;
    const done = (await t.es.tasks.get({ task_id: task, wait_for_completion: true })) as any;
    expect(done.task.action).toBe('indices:data/write/delete/byquery');
    expect(done.response).toMatchObject({ total: N, deleted: N, batches: 4 });
  });

  it.each([
    ['/del8/_delete_by_query', {}, 'action_request_validation_exception', 'Validation Failed: 1: query is missing;'],
    ['/del8/_delete_by_query?conflicts=x', { query: { match_all: {} } }, 'illegal_argument_exception', 'conflicts may only be "proceed" or "abort" but was [x]'],
    ['/del8/_delete_by_query?slices=0', { query: { match_all: {} } }, 'illegal_argument_exception', '[slices] must be a positive integer or the string "auto", but was [0]'],
    ['/del8/_delete_by_query?bogus=1', { query: { match_all: {} } }, 'illegal_argument_exception', 'request [/del8/_delete_by_query] contains unrecognized parameter: [bogus]'],
  ])('POST %s %j -> 400 %s', async (path, body, type, reason) => {
    const r = await raw(t, 'POST', path, body);
    expect([r.status, r.json.error.type, r.json.error.reason]).toEqual([400, type, reason]);
  });

  it('answers a missing index with ES\'s 404', async () => {
    const r = await raw(t, 'POST', '/nope/_delete_by_query', { query: { match_all: {} } });
    expect([r.status, r.json.error.type]).toEqual([404, 'index_not_found_exception']);
  });
});
