/**
 * Spec security-tokens.md §7 and §9.12, 9.21, 9.22 through the real search, scroll and PIT routes of
 * a whole node (not the `/_test/...` harness routes of apiKeys.test.ts): index privileges, API key
 * limits, wildcard narrowing, and ownership of scroll and PIT contexts. Raw HTTP where the status and
 * body matter; the official v8 and v9 clients for the same checks as a client sees them.
 */
import { Client as Client8 } from 'es8';
import { Client as Client9 } from 'es9';
import { ELASTIC_PASSWORD, startTestNode, type TestNode } from '../../support/node';
import { failure, raw, type RawResponse } from '../search/helpers';

let t: TestNode;
const PASSWORD = 'search-access-pw';
const DOCS: Record<string, number> = { ab1: 3, ab2: 2, ac1: 4, sc1: 10 };
const opened: Array<{ close(): Promise<void> }> = [];

const basic = (user: string, password = PASSWORD) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
/** One raw request as `user` (Basic) or with any Authorization header. */
const as = (user: string | { authorization: string }, method: string, path: string, body?: unknown) =>
  raw(t, method, path, body, typeof user === 'string' ? basic(user) : user);
const client8 = (auth: ConstructorParameters<typeof Client8>[0]['auth']) => track(new Client8({ node: t.url, auth }));
const client9 = (auth: ConstructorParameters<typeof Client9>[0]['auth']) => track(new Client9({ node: t.url, auth }));
function track<C extends { close(): Promise<void> }>(c: C): C {
  opened.push(c);
  return c;
}

const ids = (r: RawResponse) => r.json.hits.hits.map((h: { _id: string }) => h._id);
const denied = (who: string, action: string, privileges: string, indices?: string) =>
  `action [${action}] is unauthorized for ${who}${indices ? ` on indices [${indices}]` : ''}, this action is granted by the index privileges [${privileges}]`;

/**
 * ES's 404 for someone else's (or a gone) context: search_phase_execution_exception around
 * search_context_missing_exception. `hides`: a name the body must not reveal (the owner, to others).
 */
function expectContextMissing(r: RawResponse, hides?: string) {
  expect(r.status).toBe(404);
  expect(r.json.status).toBe(404);
  expect(r.json.error.type).toBe('search_phase_execution_exception');
  expect(r.json.error.reason).toBe('all shards failed');
  expect(r.json.error.root_cause).toHaveLength(1);
  expect(r.json.error.root_cause[0].type).toBe('search_context_missing_exception');
  expect(r.json.error.root_cause[0].reason).toMatch(/^No search context found for id \[[^\]]+\]/);
  if (hides) expect(r.text).not.toContain(hides);
}

function expectForbidden(r: RawResponse, reason: string) {
  expect(r.status).toBe(403);
  expect(r.json).toEqual({ error: { root_cause: [{ type: 'security_exception', reason }], type: 'security_exception', reason }, status: 403 });
}

const openScroll = (user: string, size = 2) => as(user, 'POST', '/sc1/_search?scroll=1m', { size, sort: [{ n: 'asc' }] });
const nextPage = (user: string, scrollId: string) => as(user, 'POST', '/_search/scroll', { scroll_id: scrollId, scroll: '1m' });
const clearScroll = (user: string, scrollId: string) => as(user, 'DELETE', '/_search/scroll', { scroll_id: scrollId });
const openPit = (user: string, index = 'sc1') => as(user, 'POST', `/${index}/_pit?keep_alive=1m`);
const pitSearch = (user: string, id: string) => as(user, 'POST', '/_search', { pit: { id, keep_alive: '1m' }, size: 3, sort: [{ n: 'asc' }] });
const closePit = (user: string, id: string) => as(user, 'DELETE', '/_pit', { id });

async function okScroll(user: string): Promise<string> {
  const r = await openScroll(user);
  if (r.status !== 200) throw new Error(`open scroll as ${user}: ${r.status} ${r.text}`);
  return r.json._scroll_id;
}
async function okPit(user: string): Promise<string> {
  const r = await openPit(user);
  if (r.status !== 200) throw new Error(`open pit as ${user}: ${r.status} ${r.text}`);
  return r.json.id;
}

beforeAll(async () => {
  t = await startTestNode({ security: true });
  for (const [index, count] of Object.entries(DOCS)) {
    await t.es.indices.create({ index, settings: { number_of_shards: 1 }, mappings: { properties: { n: { type: 'long' } } } });
    await t.es.bulk({ refresh: true, operations: Array.from({ length: count }, (_, i) => [{ index: { _index: index, _id: String(i + 1) } }, { n: i + 1 }]).flat() });
  }
  const roles: Array<[string, string[], string[]]> = [
    ['ab_reader', ['manage_own_api_key'], ['ab*']],
    ['monitor_only', ['monitor'], []],
    ['manager', ['manage'], []],
    ['sc_reader', ['monitor'], ['sc*']],
    ['carol_role', [], ['sc*']],
    ['nope_reader', [], ['nope*', 'ab1']],
  ];
  for (const [name, cluster, names] of roles) {
    await t.es.security.putRole({ name, cluster, indices: names.length ? [{ names, privileges: ['read'] }] : [] });
  }
  const users: Array<[string, string]> = [['bob', 'ab_reader'], ['mona', 'monitor_only'], ['max', 'manager'], ['alice', 'sc_reader'], ['bert', 'sc_reader'], ['carol', 'carol_role'], ['nora', 'nope_reader']];
  for (const [username, role] of users) await t.es.security.putUser({ username, password: PASSWORD, roles: [role] });
}, 120_000);
afterAll(async () => {
  for (const c of opened) await c.close();
  await t?.stop();
});

describe('an API key limited to read on a* of a user who reads ab* only (9.12)', () => {
  let key: { id: string; encoded: string };
  beforeAll(async () => {
    const bob = client8({ username: 'bob', password: PASSWORD });
    key = await bob.security.createApiKey({ name: 'a-star', role_descriptors: { r: { indices: [{ names: ['a*'], privileges: ['read'] }] } } });
  });
  const viaKey = () => ({ authorization: `ApiKey ${key.encoded}` });

  it('searches ab1, granted by both the key and its owner', async () => {
    const r = await as(viaKey(), 'GET', '/ab1/_search');
    expect(r.status).toBe(200);
    expect(r.json.hits.total).toEqual({ value: DOCS.ab1, relation: 'eq' });
    expect(r.json.hits.hits.every((h: { _index: string }) => h._index === 'ab1')).toBe(true);
  });

  it('refuses ac1 (granted by the key, not by the owner) naming the key, its owner and the action', async () => {
    const r = await as(viaKey(), 'GET', '/ac1/_search');
    expectForbidden(r, denied(`API key id [${key.id}] of user [bob]`, 'indices:data/read/search', 'read,all', 'ac1'));
  });

  it('narrows a wildcard to the authorized indices: a* returns only ab* documents', async () => {
    const r = await as(viaKey(), 'GET', '/a*/_search?size=100');
    expect(r.status).toBe(200);
    expect(r.json.hits.total).toEqual({ value: DOCS.ab1 + DOCS.ab2, relation: 'eq' });
    expect([...new Set(r.json.hits.hits.map((h: { _index: string }) => h._index))].sort()).toEqual(['ab1', 'ab2']);
    expect(r.json._shards.total).toBe(2); // ac1's shard is not even searched
  });

  it('sees an index created after a first wildcard search and no longer one deleted (resolutions are kept per caller while the cluster state is unchanged)', async () => {
    const search = async () => {
      const r = await as(viaKey(), 'GET', '/a*/_search?size=100');
      expect(r.status).toBe(200);
      return [...new Set(r.json.hits.hits.map((h: { _index: string }) => h._index))].sort();
    };
    expect(await search()).toEqual(['ab1', 'ab2']);
    await t.es.index({ index: 'ab3', id: '1', document: { n: 1 }, refresh: true });
    expect(await search()).toEqual(['ab1', 'ab2', 'ab3']);
    await t.es.indices.delete({ index: 'ab3' });
    expect(await search()).toEqual(['ab1', 'ab2']);
  });

  it('gives the same answers through the v8 client', async () => {
    const es = client8({ apiKey: key.encoded });
    expect((await es.search({ index: 'ab1' })).hits.total).toEqual({ value: DOCS.ab1, relation: 'eq' });
    const f = await failure(es.search({ index: 'ac1' }));
    expect(f.status).toBe(403);
    expect(f.body.error.reason).toBe(denied(`API key id [${key.id}] of user [bob]`, 'indices:data/read/search', 'read,all', 'ac1'));
  });
});

describe('privileges of search, cluster and token actions (9.21)', () => {
  it('refuses a search on an index the user does not read, naming roles, index and [read,all]', async () => {
    const r = await as('bob', 'GET', '/ac1/_search');
    expectForbidden(r, denied('user [bob] with effective roles [ab_reader]', 'indices:data/read/search', 'read,all', 'ac1'));
  });

  it('refuses a search by a user without read anywhere before resolving indices', async () => {
    const r = await as('mona', 'POST', '/ab1/_search', { query: { match_all: {} } });
    expectForbidden(r, denied('user [mona] with effective roles [monitor_only]', 'indices:data/read/search', 'read,all'));
  });

  it('refuses _nodes/stats without monitor, naming [monitor,manage,all]; allows it with monitor', async () => {
    const r = await as('bob', 'GET', '/_nodes/stats');
    expectForbidden(
      r,
      'action [cluster:monitor/nodes/stats] is unauthorized for user [bob] with effective roles [ab_reader], this action is granted by the cluster privileges [monitor,manage,all]',
    );
    const ok = await as('mona', 'GET', '/_nodes/stats');
    expect(ok.status).toBe(200);
    expect(ok.json._nodes).toEqual({ total: 1, successful: 1, failed: 0 });
  });

  it('refuses token creation to a user with manage but not manage_token', async () => {
    const r = await as('max', 'POST', '/_security/oauth2/token', { grant_type: 'password', username: 'max', password: PASSWORD });
    expectForbidden(
      r,
      'action [cluster:admin/xpack/security/token/create] is unauthorized for user [max] with effective roles [manager], this action is granted by the cluster privileges [manage_token,manage_security,all]',
    );
  });

  it('refuses to open a PIT on an index without read, naming indices:data/read/open_point_in_time', async () => {
    expectForbidden(await openPit('bob', 'ac1'), denied('user [bob] with effective roles [ab_reader]', 'indices:data/read/open_point_in_time', 'read,all', 'ac1'));
    expectForbidden(await openPit('mona', 'ab1'), denied('user [mona] with effective roles [monitor_only]', 'indices:data/read/open_point_in_time', 'read,all'));
  });
});

describe('scroll contexts belong to the user who opened them (9.22)', () => {
  it('answers 404 to another reader continuing the scroll; the owner continues from the same page', async () => {
    const first = await openScroll('alice');
    expect(ids(first)).toEqual(['1', '2']);
    expectContextMissing(await nextPage('bert', first.json._scroll_id), 'alice');
    const own = await nextPage('alice', first.json._scroll_id);
    expect(own.status).toBe(200);
    expect(ids(own)).toEqual(['3', '4']);
    await clearScroll('alice', own.json._scroll_id);
  });

  it('answers 404 to a user who reads other indices only (SecurityScrollTests.testScrollIsPerUser)', async () => {
    const id = await okScroll('alice');
    expectContextMissing(await nextPage('bob', id), 'alice');
    await clearScroll('alice', id);
  });

  it('frees nothing when another user clears the scroll: 404 {succeeded:true,num_freed:0}; the owner frees it', async () => {
    const id = await okScroll('alice');
    const theirs = await clearScroll('bert', id);
    expect(theirs.status).toBe(404);
    expect(theirs.json).toEqual({ succeeded: true, num_freed: 0 });
    expect((await nextPage('alice', id)).status).toBe(200);
    const mine = await clearScroll('alice', id);
    expect(mine.status).toBe(200);
    expect(mine.json).toEqual({ succeeded: true, num_freed: 1 });
    expectContextMissing(await nextPage('alice', id));
  });

  it('clears only the caller own scrolls on _all', async () => {
    const id = await okScroll('alice');
    const all = await as('bert', 'DELETE', '/_search/scroll/_all');
    expect(all.status).toBe(200);
    expect(all.json).toEqual({ succeeded: true, num_freed: 1 }); // ES counts the nodes that answered
    expect((await nextPage('alice', id)).status).toBe(200);
    await clearScroll('alice', id);
  });

  it('lists another user none of the owner scrolls on GET /_scroll', async () => {
    const a = await okScroll('alice');
    const b = await okScroll('bert');
    const theirs = await as('bert', 'GET', '/_scroll');
    expect(theirs.status).toBe(200);
    expect(theirs.json.count).toBe(theirs.json.scrolls.length);
    expect(theirs.json.scrolls.map((s: { owner: { username: string } }) => s.owner.username)).toEqual(['bert']);
    await clearScroll('alice', a);
    await clearScroll('bert', b);
  });

  it('needs read on some index to continue: a role change takes effect on the next request', async () => {
    const id = await okScroll('carol');
    await t.es.security.putRole({ name: 'carol_role', cluster: ['monitor'], indices: [] });
    const r = await nextPage('carol', id);
    expectForbidden(r, denied('user [carol] with effective roles [carol_role]', 'indices:data/read/scroll', 'read,all'));
    await t.es.security.putRole({ name: 'carol_role', indices: [{ names: ['sc*'], privileges: ['read'] }] });
    const back = await nextPage('carol', id);
    expect(back.status).toBe(200); // the 403 did not free the context
    expect(ids(back)).toEqual(['3', '4']);
    await clearScroll('carol', id);
  });

  it('lets the owner continue once its read moved to other indices: the scroll action is checked on any index', async () => {
    const id = await okScroll('carol');
    await t.es.security.putRole({ name: 'carol_role', indices: [{ names: ['x*'], privileges: ['read'] }] });
    try {
      const r = await nextPage('carol', id);
      expect(r.status).toBe(200);
      expect(ids(r)).toEqual(['3', '4']);
    } finally {
      await t.es.security.putRole({ name: 'carol_role', indices: [{ names: ['sc*'], privileges: ['read'] }] });
      await clearScroll('carol', id);
    }
  });
});

describe('route order and listings', () => {
  it('refuses a continuation by a user without read anywhere with 403 before looking the context up', async () => {
    const id = await okScroll('alice');
    const r = await nextPage('mona', id);
    expectForbidden(r, denied('user [mona] with effective roles [monitor_only]', 'indices:data/read/scroll', 'read,all'));
    expect((await nextPage('alice', id)).status).toBe(200);
    await clearScroll('alice', id);
  });

  it('lists every user\'s scrolls and PITs to the superuser', async () => {
    const a = await okScroll('alice');
    const b = await okScroll('bert');
    const pa = await okPit('alice');
    const scrolls = await as(basic('elastic', ELASTIC_PASSWORD), 'GET', '/_scroll');
    const pits = await as(basic('elastic', ELASTIC_PASSWORD), 'GET', '/_pit');
    const owners = (xs: Array<{ owner: { username: string } }>) => xs.map((x) => x.owner.username).sort();
    expect(owners(scrolls.json.scrolls)).toEqual(expect.arrayContaining(['alice', 'bert']));
    expect(owners(pits.json.pits)).toContain('alice');
    await clearScroll('alice', a);
    await clearScroll('bert', b);
    await closePit('alice', pa);
  });

  it('tells who cleared a context only to that user, never to another one', async () => {
    const id = await okScroll('alice');
    await clearScroll('alice', id);
    const other = await nextPage('bert', id);
    expectContextMissing(other, 'alice');
    const own = await nextPage('alice', id);
    expectContextMissing(own);
    expect(own.json.error.root_cause[0].reason).toContain('by [alice]');
    const pit = await okPit('alice');
    await closePit('alice', pit);
    expectContextMissing(await pitSearch('bert', pit), 'alice');
  });
});

describe('point-in-time contexts belong to the user who opened them (9.22)', () => {
  it('answers 404 to another reader searching with the PIT id; the owner searches on', async () => {
    const id = await okPit('alice');
    expectContextMissing(await pitSearch('bert', id), 'alice');
    const own = await pitSearch('alice', id);
    expect(own.status).toBe(200);
    expect(ids(own)).toEqual(['1', '2', '3']);
    expect(own.json.hits.total).toEqual({ value: DOCS.sc1, relation: 'eq' });
    await closePit('alice', id);
  });

  it('frees nothing when another user closes the PIT: 404 {succeeded:false,num_freed:0}; the owner closes it', async () => {
    const id = await okPit('alice');
    const theirs = await closePit('bert', id);
    expect(theirs.status).toBe(404);
    expect(theirs.json).toEqual({ succeeded: false, num_freed: 0 });
    expect((await pitSearch('alice', id)).status).toBe(200);
    const mine = await closePit('alice', id);
    expect(mine.status).toBe(200);
    expect(mine.json).toEqual({ succeeded: true, num_freed: 1 });
    expectContextMissing(await pitSearch('alice', id));
  });

  it('lists another user none of the owner PITs on GET /_pit', async () => {
    const a = await okPit('alice');
    const b = await okPit('bert');
    const theirs = await as('bert', 'GET', '/_pit');
    expect(theirs.status).toBe(200);
    expect(theirs.json.pits.map((p: { id: string }) => p.id)).toEqual([b]);
    await closePit('alice', a);
    await closePit('bert', b);
  });
});

describe('the same checks with the v9 client', () => {
  it('limits an API key, refuses a foreign scroll and PIT with 404 and keeps the owner contexts', async () => {
    const bob = client9({ username: 'bob', password: PASSWORD });
    const key = await bob.security.createApiKey({ name: 'a-star-9', role_descriptors: { r: { indices: [{ names: ['a*'], privileges: ['read'] }] } } });
    const viaKey = client9({ apiKey: key.encoded });
    expect((await viaKey.search({ index: 'ab1' })).hits.total).toEqual({ value: DOCS.ab1, relation: 'eq' });
    const f = await failure(viaKey.search({ index: 'ac1' }));
    expect(f.status).toBe(403);
    expect(f.body.error.reason).toBe(denied(`API key id [${key.id}] of user [bob]`, 'indices:data/read/search', 'read,all', 'ac1'));
    const wild = await viaKey.search({ index: 'a*', size: 100 });
    expect([...new Set(wild.hits.hits.map((h) => h._index))].sort()).toEqual(['ab1', 'ab2']);

    const alice = client9({ username: 'alice', password: PASSWORD });
    const bert = client9({ username: 'bert', password: PASSWORD });
    const page = await alice.search({ index: 'sc1', scroll: '1m', size: 2, sort: [{ n: 'asc' }] });
    const stolen = await failure(bert.scroll({ scroll_id: page._scroll_id!, scroll: '1m' }));
    expect(stolen.status).toBe(404);
    expect(stolen.body.error.root_cause[0].type).toBe('search_context_missing_exception');
    const notFreed = await failure(bert.clearScroll({ scroll_id: page._scroll_id! }));
    expect(notFreed).toEqual({ status: 404, body: { succeeded: true, num_freed: 0 } });
    expect((await alice.scroll({ scroll_id: page._scroll_id!, scroll: '1m' })).hits.hits.map((h) => h._id)).toEqual(['3', '4']);
    expect(await alice.clearScroll({ scroll_id: page._scroll_id! })).toEqual({ succeeded: true, num_freed: 1 });

    const pit = await alice.openPointInTime({ index: 'sc1', keep_alive: '1m' });
    const foreign = await failure(bert.search({ pit: { id: pit.id, keep_alive: '1m' } }));
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.root_cause[0].type).toBe('search_context_missing_exception');
    expect(await failure(bert.closePointInTime({ id: pit.id }))).toEqual({ status: 404, body: { succeeded: false, num_freed: 0 } });
    expect((await alice.search({ pit: { id: pit.id, keep_alive: '1m' }, size: 1, sort: [{ n: 'asc' }] })).hits.hits.map((h) => h._id)).toEqual(['1']);
    expect(await alice.closePointInTime({ id: pit.id })).toEqual({ succeeded: true, num_freed: 1 });
  });
});

describe('no index-existence oracle: authorize before resolving (item 7)', () => {
  const forbiddenFor = (path: string, action: string, index: string) =>
    denied('user [bob] with effective roles [ab_reader]', action, 'read,all', index);

  it.each([
    ['GET', '/secret-index/_search', 'indices:data/read/search'],
    ['GET', '/secret-index/_count', 'indices:data/read/search'],
    ['POST', '/secret-index/_pit?keep_alive=1m', 'indices:data/read/open_point_in_time'],
  ])('%s %s answers 403 for a missing index exactly as for an existing forbidden one', async (method, path, action) => {
    const missing = await as('bob', method, path);
    const existing = await as('bob', method, path.replace('secret-index', 'sc1'));
    expectForbidden(missing, forbiddenFor(path, action, 'secret-index'));
    expectForbidden(existing, forbiddenFor(path, action, 'sc1'));
  });

  it('refuses a mix of a readable and a missing forbidden name with 403, not 404', async () => {
    expectForbidden(await as('bob', 'GET', '/ab1,secret-index/_search'), forbiddenFor('', 'indices:data/read/search', 'secret-index'));
  });

  it('answers 404 index_not_found for a missing name the user may read', async () => {
    const r = await as('nora', 'GET', '/nope1/_search');
    expect(r.status).toBe(404);
    expect(r.json.error.type).toBe('index_not_found_exception');
    expect((await as('nora', 'GET', '/nope1/_count')).status).toBe(404);
    expect((await as('nora', 'POST', '/nope1/_pit?keep_alive=1m')).status).toBe(404);
  });

  it('drops forbidden names with ignore_unavailable, as ES treats them as unavailable', async () => {
    const r = await as('bob', 'GET', '/ab1,secret-index,sc1/_search?ignore_unavailable=true');
    expect(r.status).toBe(200);
    expect(r.json.hits.total).toEqual({ value: DOCS.ab1, relation: 'eq' });
    const none = await as('bob', 'GET', '/secret-index/_search?ignore_unavailable=true');
    expect(none.status).toBe(200);
    expect(none.json.hits.total).toEqual({ value: 0, relation: 'eq' });
    expect(none.json._shards.total).toBe(0);
  });

  it('tells the official client the same 403 for a missing index', async () => {
    const f = await failure(client8({ username: 'bob', password: PASSWORD }).count({ index: 'no-such-index' }));
    expect(f.status).toBe(403);
  });
});
