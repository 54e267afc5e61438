/**
 * A role that names only an alias (ES IndicesAndAliasesResolver + RBACEngine): privileges on an
 * alias cover its indices when they are reached through that alias, for search, count, PIT open,
 * scroll, get, mget and writes through the alias's write index; the concrete index named directly
 * stays forbidden, and a PIT opened through the alias is searched on its concrete indices (ES
 * documents that this needs the privilege on them).
 */
import { Client as Client8 } from 'es8';
import { Client as Client9 } from 'es9';
import { startTestNode, type TestNode } from '../../support/node';
import { raw, type RawResponse } from '../search/helpers';

let t: TestNode;
const PASSWORD = 'alias-grants-pw';
const basic = (user: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${PASSWORD}`).toString('base64')}` });
const as = (user: string, method: string, path: string, body?: unknown) => raw(t, method, path, body, basic(user));
const ids = (r: RawResponse) => r.json.hits.hits.map((h: { _id: string }) => h._id).sort();
const indexOf = (r: RawResponse) => [...new Set(r.json.hits.hits.map((h: { _index: string }) => h._index))].sort();
let c8: Client8;
let c9: Client9;

/** ES's 403 for `user` (one role) on `indices`. */
function expectDenied(r: RawResponse, user: string, role: string, action: string, indices: string) {
  expect(r.status).toBe(403);
  expect(r.json.error.type).toBe('security_exception');
  expect(r.json.error.reason).toMatch(new RegExp(`^action \\[${action.replace(/[[\]/]/g, '\\$&')}\\] is unauthorized for user \\[${user}\\] with effective roles \\[${role}\\] on indices \\[${indices}\\]`));
}

beforeAll(async () => {
  t = await startTestNode({ security: true });
  await t.es.indices.create({ index: 'logs-1', settings: { number_of_shards: 2 }, mappings: { properties: { n: { type: 'long' } } } });
  await t.es.indices.create({ index: 'logs-2', settings: { number_of_shards: 1 }, mappings: { properties: { n: { type: 'long' } } } });
  await t.es.indices.create({ index: 'other', settings: { number_of_shards: 1 } });
  const docs = (index: string, n: number, from: number) => Array.from({ length: n }, (_, i) => [{ index: { _index: index, _id: `${index}-${i}` } }, { n: from + i }]).flat();
  await t.es.bulk({ refresh: true, operations: [...docs('logs-1', 5, 0), ...docs('logs-2', 3, 100), ...docs('other', 2, 500)] });
  await t.es.indices.updateAliases({
    actions: [
      { add: { index: 'logs-1', alias: 'logs', is_write_index: true } },
      { add: { index: 'logs-2', alias: 'logs' } },
      { add: { index: 'other', alias: 'elsewhere' } },
    ],
  });
  // `logs` only: not logs-1, logs-2, nor `elsewhere`
  await t.es.security.putRole({ name: 'via_alias', indices: [{ names: ['logs'], privileges: ['read', 'write'] }] });
  await t.es.security.putUser({ username: 'ava', password: PASSWORD, roles: ['via_alias'] });
  c8 = new Client8({ node: t.url, auth: { username: 'ava', password: PASSWORD } });
  c9 = new Client9({ node: t.url, auth: { username: 'ava', password: PASSWORD } });
}, 120_000);
afterAll(async () => {
  await c8?.close();
  await c9?.close();
  await t?.stop();
});

const ALL_LOGS = [...Array.from({ length: 5 }, (_, i) => `logs-1-${i}`), ...Array.from({ length: 3 }, (_, i) => `logs-2-${i}`)].sort();

describe('a role granted only on an alias', () => {
  it('searches every index behind the alias', async () => {
    const r = await as('ava', 'POST', '/logs/_search', { size: 100 });
    expect(r.status).toBe(200);
    expect(r.json.hits.total).toEqual({ value: 8, relation: 'eq' });
    expect(ids(r)).toEqual(ALL_LOGS);
    expect(indexOf(r)).toEqual(['logs-1', 'logs-2']);
    expect(r.json._shards.total).toBe(3);
  });

  it('searches through the alias with the official clients (v8, v9)', async () => {
    const r8 = await c8.search({ index: 'logs', size: 100, sort: [{ n: 'asc' }] });
    expect(r8.hits.hits.map((h) => h._id)).toEqual([...ALL_LOGS.slice(0, 5), ...ALL_LOGS.slice(5)]);
    const r9 = await c9.search({ index: 'logs', size: 0, track_total_hits: true });
    expect(r9.hits.total).toEqual({ value: 8, relation: 'eq' });
  });

  it('expands a wildcard to the granted alias and reaches its indices', async () => {
    const r = await as('ava', 'POST', '/lo*/_search', { size: 100 });
    expect(r.status).toBe(200);
    expect(ids(r)).toEqual(ALL_LOGS);
    const all = await as('ava', 'POST', '/_search', { size: 100 });
    expect(all.status).toBe(200);
    expect(ids(all)).toEqual(ALL_LOGS); // not `other`, reached only through `elsewhere`
  });

  it('counts through the alias', async () => {
    const r = await as('ava', 'GET', '/logs/_count');
    expect(r.status).toBe(200);
    expect(r.json.count).toBe(8);
    expect(await c8.count({ index: 'logs', query: { range: { n: { gte: 100 } } } })).toMatchObject({ count: 3 });
  });

  it('scrolls through the alias to the end', async () => {
    const seen: string[] = [];
    let r = await as('ava', 'POST', '/logs/_search?scroll=1m', { size: 3, sort: ['_doc'] });
    expect(r.status).toBe(200);
    while (r.json.hits.hits.length) {
      seen.push(...r.json.hits.hits.map((h: { _id: string }) => h._id));
      r = await as('ava', 'POST', '/_search/scroll', { scroll_id: r.json._scroll_id, scroll: '1m' });
      expect(r.status).toBe(200);
    }
    expect(seen.sort()).toEqual(ALL_LOGS);
    await as('ava', 'DELETE', '/_search/scroll', { scroll_id: r.json._scroll_id });
  });

  it('opens a PIT through the alias; searching it needs read on the concrete indices, as ES documents', async () => {
    const open = await as('ava', 'POST', '/logs/_pit?keep_alive=1m');
    expect(open.status).toBe(200);
    expect(open.json._shards).toEqual({ total: 3, successful: 3, skipped: 0, failed: 0 });
    const r = await as('ava', 'POST', '/_search', { pit: { id: open.json.id, keep_alive: '1m' }, size: 100 });
    expectDenied(r, 'ava', 'via_alias', 'indices:data/read/search', 'logs-1,logs-2');
    const closed = await as('ava', 'DELETE', '/_pit', { id: open.json.id });
    expect(closed.json).toEqual({ succeeded: true, num_freed: 3 }); // one per shard, as ES
  });

  it('gets a document through the alias of its single index, with mget too', async () => {
    // `logs` has two indices: a get through it is ES's 400; `elsewhere`-like single-index aliases work
    await t.es.indices.putAlias({ index: 'logs-2', name: 'logs-two' });
    await t.es.security.putRole({ name: 'via_alias', indices: [{ names: ['logs', 'logs-two'], privileges: ['read', 'write'] }] });
    const g = await as('ava', 'GET', '/logs-two/_doc/logs-2-1');
    expect(g.status).toBe(200);
    expect(g.json).toMatchObject({ _index: 'logs-2', _id: 'logs-2-1', found: true, _source: { n: 101 } });
    const src = await as('ava', 'GET', '/logs-two/_source/logs-2-0');
    expect([src.status, src.json]).toEqual([200, { n: 100 }]);
    const m = await as('ava', 'POST', '/_mget', { docs: [{ _index: 'logs-two', _id: 'logs-2-2' }, { _index: 'logs-2', _id: 'logs-2-2' }] });
    expect(m.status).toBe(200);
    expect(m.json.docs[0]).toMatchObject({ _index: 'logs-2', _id: 'logs-2-2', found: true, _source: { n: 102 } });
    expect(m.json.docs[1].error.type).toBe('security_exception');
    const multi = await as('ava', 'POST', '/_mget', { docs: [{ _index: 'logs', _id: 'logs-2-2' }] });
    expect(multi.json.docs[0].error).toMatchObject({
      type: 'illegal_argument_exception',
      reason: "alias [logs] has more than one index associated with it [logs-1, logs-2], can't execute a single index op",
    });
    const m2 = await c9.mget({ index: 'logs-two', ids: ['logs-2-0', 'nope'] });
    expect(m2.docs.map((d) => ('found' in d ? d.found : undefined))).toEqual([true, false]);
  });

  it('writes through the alias to its write index: index, create, update, delete and bulk', async () => {
    const put = await as('ava', 'PUT', '/logs/_doc/w1?refresh=true', { n: 1000 });
    expect(put.status).toBe(201);
    expect(put.json._index).toBe('logs-1');
    const post = await as('ava', 'POST', '/logs/_doc?refresh=true', { n: 1001 });
    expect([post.status, post.json._index]).toEqual([201, 'logs-1']);
    const create = await as('ava', 'PUT', '/logs/_create/w2', { n: 1002 });
    expect([create.status, create.json._index]).toEqual([201, 'logs-1']);
    const upd = await as('ava', 'POST', '/logs/_update/w1', { doc: { n: 1003 } });
    expect([upd.status, upd.json.result]).toEqual([200, 'updated']);
    const bulk = await as('ava', 'POST', '/_bulk?refresh=true', [
      JSON.stringify({ index: { _index: 'logs', _id: 'b1' } }),
      JSON.stringify({ n: 2000 }),
      JSON.stringify({ create: { _index: 'logs', _id: 'b2' } }),
      JSON.stringify({ n: 2001 }),
      JSON.stringify({ delete: { _index: 'logs', _id: 'w2' } }),
      JSON.stringify({ index: { _index: 'logs-1', _id: 'b3' } }),
      JSON.stringify({ n: 2002 }),
      '',
    ].join('\n'));
    expect(bulk.status).toBe(200);
    const items = bulk.json.items.map((i: Record<string, { _index: string; status: number; error?: { type: string } }>) => {
      const [op, v] = Object.entries(i)[0];
      return [op, v._index, v.status, v.error?.type];
    });
    expect(items).toEqual([
      ['index', 'logs-1', 201, undefined],
      ['create', 'logs-1', 201, undefined],
      ['delete', 'logs-1', 200, undefined],
      ['index', 'logs-1', 403, 'security_exception'],
    ]);
    const b = await c8.bulk({ index: 'logs', refresh: true, operations: [{ index: { _id: 'b4' } }, { n: 2003 }] });
    expect(b.errors).toBe(false);
    const r = await as('ava', 'POST', '/logs/_search', { size: 100, query: { range: { n: { gte: 1000 } } }, sort: [{ n: 'asc' }] });
    expect(r.json.hits.hits.map((h: { _source: { n: number } }) => h._source.n)).toEqual([1001, 1003, 2000, 2001, 2003]);
    const del = await as('ava', 'DELETE', '/logs/_doc/b1?refresh=true');
    expect([del.status, del.json.result, del.json._index]).toEqual([200, 'deleted', 'logs-1']);
  });

  it('still refuses the concrete indices named directly, and an alias it has no grant on', async () => {
    expectDenied(await as('ava', 'POST', '/logs-1/_search'), 'ava', 'via_alias', 'indices:data/read/search', 'logs-1');
    expectDenied(await as('ava', 'GET', '/logs-1/_count'), 'ava', 'via_alias', 'indices:data/read/search', 'logs-1');
    expectDenied(await as('ava', 'POST', '/elsewhere/_search'), 'ava', 'via_alias', 'indices:data/read/search', 'elsewhere');
    expectDenied(await as('ava', 'POST', '/logs-1/_pit?keep_alive=1m'), 'ava', 'via_alias', 'indices:data/read/open_point_in_time', 'logs-1');
    const g = await as('ava', 'GET', '/logs-1/_doc/logs-1-0');
    expect(g.status).toBe(403);
    const w = await as('ava', 'PUT', '/logs-1/_doc/x', { n: 1 });
    expect(w.status).toBe(403);
    const o = await as('ava', 'POST', '/oth*/_search');
    expect([o.status, o.json.hits.total.value]).toEqual([200, 0]);
  });
});
