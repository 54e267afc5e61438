/**
 * Elasticsearch's YAML REST test `api_key/20_query.yml` translated to the official client against a
 * whole node, plus the paging rules ES's search over `.security` applies (item 18: search_after);
 * the aggregations of ES's ApiKeyAggsIT (issue 22), and `users/40_query.yml` with the role query.
 */
import { Client, errors } from 'es8';
import { startTestNode, type TestNode } from '../../../support/node';

let t: TestNode;
const PW = 'x-pack-test-password';
const clients: Client[] = [];
const as = (username: string) => {
  const c = new Client({ node: t.url, auth: { username, password: PW } });
  clients.push(c);
  return c;
};
let manager: Client;
let user1: Client;
let user2: Client;
const ids: Record<string, string> = {};

beforeAll(async () => {
  t = await startTestNode({ security: true });
  await t.es.cluster.health({ wait_for_status: 'yellow' });
  await t.es.security.putRole({ name: 'admin_role', cluster: ['manage_api_key'] });
  await t.es.security.putRole({ name: 'user_role', cluster: ['manage_own_api_key'] });
  await t.es.security.putUser({ username: 'api_key_manager', password: PW, roles: ['admin_role'], full_name: 'API key manager' });
  await t.es.security.putUser({ username: 'api_key_user_1', password: PW, roles: ['user_role'], full_name: 'API key user 1' });
  await t.es.security.putUser({ username: 'api_key_user_2', password: PW, roles: ['user_role'], full_name: 'API key user 2' });
  [manager, user1, user2] = [as('api_key_manager'), as('api_key_user_1'), as('api_key_user_2')];
  const m = await manager.security.createApiKey({ name: 'manager-api-key', expiration: '10d', metadata: { letter: 'a', number: 42 } });
  expect(m.name).toBe('manager-api-key');
  ids.manager = m.id;
  const u1 = await user1.security.createApiKey({ name: 'user1-api-key', expiration: '1d', metadata: { letter: 'a', number: 1 } });
  ids.user1 = u1.id;
  const u2 = await user2.security.createApiKey({ name: 'user2-api-key', expiration: '1d', metadata: { letter: 'b', number: 42 } });
  ids.user2 = u2.id;
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await t.stop();
});

describe('api_key/20_query.yml: Test query api key', () => {
  it('empty body works just like match_all', async () => {
    expect(await manager.security.queryApiKeys({})).toMatchObject({ total: 3, count: 3 });
  });

  it('match_all by a manage_own_api_key user sees only its own key', async () => {
    const r = await user1.security.queryApiKeys({ query: { match_all: {} } });
    expect(r).toMatchObject({ total: 1, count: 1 });
    expect(r.api_keys[0].id).toBe(ids.user1);
  });

  it('wildcard on name, own keys only', async () => {
    const r = await user2.security.queryApiKeys({ query: { wildcard: { name: 'user*' } } });
    expect(r).toMatchObject({ total: 1, count: 1 });
    expect(r.api_keys[0].id).toBe(ids.user2);
  });

  it('sort by creation desc with from and size', async () => {
    const r = await manager.security.queryApiKeys({ query: { wildcard: { name: 'user*' } }, sort: [{ creation: { order: 'desc' } }], from: 1, size: 1 });
    expect(r).toMatchObject({ total: 2, count: 1 });
    expect(r.api_keys[0].id).toBe(ids.user1);
  });

  it('pages with search_after over [expiration, username]', async () => {
    const page = (search_after?: Array<string | number>) =>
      manager.security.queryApiKeys({ query: { wildcard: { name: '*key' } }, sort: ['expiration', 'username'], size: 1, ...(search_after ? { search_after } : {}) });
    const p0 = await page();
    expect(p0).toMatchObject({ total: 3, count: 1 });
    expect(p0.api_keys[0].id).toBe(ids.user1);
    const p1 = await page([p0.api_keys[0].expiration!, p0.api_keys[0].username!]);
    expect(p1).toMatchObject({ total: 3, count: 1 });
    expect(p1.api_keys[0].id).toBe(ids.user2);
    const p2 = await page([p1.api_keys[0].expiration!, p1.api_keys[0].username!]);
    expect(p2).toMatchObject({ total: 3, count: 1 });
    expect(p2.api_keys[0].id).toBe(ids.manager);
    // the YAML runner substitutes stashed values as strings: the same page from "${expiration1}"
    const p2s = await page([String(p1.api_keys[0].expiration), p1.api_keys[0].username!]);
    expect(p2s.api_keys[0].id).toBe(ids.manager);
    const p3 = await page([p2.api_keys[0].expiration!, p2.api_keys[0].username!]);
    expect(p3).toMatchObject({ total: 3, count: 0, api_keys: [] });
  });
});

describe('query api key paging as ES', () => {
  it('returns _sort values only when sorting (dates as epoch millis)', async () => {
    const sorted = await manager.security.queryApiKeys({ sort: [{ name: 'asc' }, 'creation'] });
    expect(sorted.api_keys.map((k) => k.id)).toEqual([ids.manager, ids.user1, ids.user2]);
    expect(sorted.api_keys[0]._sort).toEqual(['manager-api-key', sorted.api_keys[0].creation]);
    const plain = await manager.security.queryApiKeys({});
    expect(plain.api_keys.every((k) => k._sort === undefined)).toBe(true);
  });

  it('sorts by a metadata field and pages through ties with a tiebreaker', async () => {
    const first = await manager.security.queryApiKeys({ sort: ['metadata.letter', 'name'], size: 2 });
    expect(first.api_keys.map((k) => k.id)).toEqual([ids.manager, ids.user1]);
    const next = await manager.security.queryApiKeys({ sort: ['metadata.letter', 'name'], size: 2, search_after: first.api_keys[1]._sort as string[] });
    expect(next.api_keys.map((k) => k.id)).toEqual([ids.user2]);
  });

  it('queries metadata values as keywords and dates by range', async () => {
    expect((await manager.security.queryApiKeys({ query: { term: { 'metadata.number': 42 } } })).total).toBe(2);
    const soon = Date.now() + 5 * 24 * 3600_000;
    const r = await manager.security.queryApiKeys({ query: { range: { expiration: { lt: soon } } } });
    expect(r.api_keys.map((k) => k.id).sort()).toEqual([ids.user1, ids.user2].sort());
  });

  it.each([
    [{ from: -1 }, 400, 'action_request_validation_exception', 'Validation Failed: 1: [from] parameter cannot be negative but was [-1];'],
    [{ size: -2 }, 400, 'action_request_validation_exception', 'Validation Failed: 1: [size] parameter cannot be negative but was [-2];'],
    [{ sort: ['name'], search_after: ['a', 'b'] }, 400, 'illegal_argument_exception', 'search_after has 2 value(s) but sort has 1.'],
    [{ sort: ['name'], search_after: ['a'], from: 1 }, 400, 'illegal_argument_exception', '`from` parameter must be set to 0 when `search_after` is used.'],
    [{ sort: ['api_key_hash'] }, 400, 'illegal_argument_exception', 'Field [api_key_hash] is not allowed for querying or aggregation'],
    [{ query: { term: { api_key_hash: 'x' } } }, 400, 'illegal_argument_exception', 'Field [api_key_hash] is not allowed for querying or aggregation'],
    [{ query: { fuzzy: { name: 'x' } } }, 400, 'illegal_argument_exception', 'Query type [fuzzy] is not currently supported in this context'],
    [{ sort: [{ name: 'up' }] }, 400, 'illegal_argument_exception', 'Unknown SortOrder [up]'],
    [{ from: 9_999, size: 2 }, 400, 'illegal_argument_exception', expect.stringMatching(/^Result window is too large, from \+ size must be less than or equal to: \[10000\] but was \[10001\]/)],
    [{ highlight: {} }, 400, 'x_content_parse_exception', '[1:2] [query_api_key_request_payload] unknown field [highlight]'],
    [{ aggs: { g: { global: {} } } }, 400, 'illegal_argument_exception', 'Unsupported API Keys agg [g] of type [global]'],
  ])('refuses %j with ES 4xx', async (body, status, type, reason) => {
    const e = (await manager.transport.request({ method: 'POST', path: '/_security/_query/api_key', body }).catch((x: unknown) => x)) as errors.ResponseError;
    expect(e).toBeInstanceOf(errors.ResponseError);
    expect(e.statusCode).toBe(status);
    expect(e.body.error).toMatchObject({ type, reason });
  });
});

describe('query api key aggregations (ES ApiKeyAggsIT)', () => {
  it('answers terms, cardinality, value_count and missing over the caller\'s keys, with typed_keys', async () => {
    const body = {
      size: 0,
      aggs: {
        names: { terms: { field: 'name' } },
        owners: { cardinality: { field: 'username' } },
        types: { value_count: { field: 'type' } },
        noexp: { missing: { field: 'expiration' } },
      },
    };
    const all = await manager.security.queryApiKeys({ ...body, typed_keys: true });
    expect(all).toMatchObject({ total: 3, count: 0, api_keys: [] });
    const a = all.aggregations as Record<string, any>;
    expect(a['sterms#names'].buckets.map((b: any) => b.key)).toEqual(['manager-api-key', 'user1-api-key', 'user2-api-key']);
    expect(a['cardinality#owners']).toEqual({ value: 3 });
    expect(a['value_count#types']).toEqual({ value: 3 });
    expect(a['missing#noexp']).toEqual({ doc_count: 0 });
    // a manage_own_api_key user aggregates over its own keys only
    const own = (await user1.security.queryApiKeys(body)).aggregations as Record<string, any>;
    expect(own.owners).toEqual({ value: 1 });
  });

  it('filters, composite with sub-aggregations and date_range with date math', async () => {
    const r = await manager.security.queryApiKeys({
      size: 0,
      aggs: {
        letters: { filters: { filters: { a: { term: { 'metadata.letter': 'a' } }, b: { match: { metadata: 'b' } } }, other_bucket_key: 'none' } },
        by_user: { composite: { sources: [{ user: { terms: { field: 'username' } } }] }, aggs: { long_lived: { filter: { range: { expiration: { gte: 'now+5d/d' } } } } } },
        expiry: { date_range: { field: 'expiration', ranges: [{ to: 'now+2d/d' }, { from: 'now+2d/d' }] } },
      },
    });
    const a = r.aggregations as Record<string, any>;
    expect(a.letters.buckets).toEqual({ a: { doc_count: 2 }, b: { doc_count: 1 }, none: { doc_count: 0 } });
    expect(a.by_user.buckets.map((b: any) => [b.key.user, b.doc_count, b.long_lived.doc_count])).toEqual([
      ['api_key_manager', 1, 1],
      ['api_key_user_1', 1, 0],
      ['api_key_user_2', 1, 0],
    ]);
    expect(a.by_user.after_key).toEqual({ user: 'api_key_user_2' });
    expect(a.expiry.buckets.map((b: any) => b.doc_count)).toEqual([2, 1]);
  });

  it('range over a date field with epoch-millis bounds, typed_keys naming range and date_range, sorted by from', async () => {
    const cut = Date.now() + 5 * 86_400_000;
    const r = await manager.security.queryApiKeys({
      size: 0,
      typed_keys: true,
      aggs: {
        exp: { range: { field: 'expiration', ranges: [{ from: cut }, { to: cut, key: 'soon' }] } },
        made: { date_range: { field: 'creation', format: 'yyyy', ranges: [{ from: 'now-1d' }] } },
      },
    });
    const a = r.aggregations as Record<string, any>;
    expect(a['range#exp'].buckets.map((b: any) => [b.key, b.doc_count])).toEqual([
      ['soon', 2],
      [`${new Date(cut).toISOString()}-*`, 1],
    ]);
    expect(a['range#exp'].buckets[1]).toMatchObject({ from: cut, from_as_string: new Date(cut).toISOString() });
    expect(a['date_range#made'].buckets).toEqual([expect.objectContaining({ doc_count: 3, from_as_string: String(new Date(Date.now() - 86_400_000).getUTCFullYear()) })]);
    // a keyword field has no ranges (ES: the field's value source type is not supported by the agg)
    const e = (await manager.transport.request({ method: 'POST', path: '/_security/_query/api_key', body: { aggs: { n: { range: { field: 'name', ranges: [{ to: 1 }] } } } } }).catch((x: unknown) => x)) as errors.ResponseError;
    expect(e.statusCode).toBe(400);
    expect(e.body.error).toMatchObject({ type: 'illegal_argument_exception', reason: 'Field [name] of type [keyword] is not supported for aggregation [range]' });
  });

  it('shows limited_by with with_limited_by, and accepts with_profile_uid', async () => {
    const r = await manager.security.queryApiKeys({ query: { ids: { values: [ids.user1] } }, with_limited_by: true, with_profile_uid: true });
    expect(r.api_keys[0].limited_by).toEqual([{ user_role: expect.objectContaining({ cluster: ['manage_own_api_key'] }) }]);
    expect(r.api_keys[0].profile_uid).toBeUndefined();
    const plain = await manager.security.queryApiKeys({ query: { ids: { values: [ids.user1] } } });
    expect(plain.api_keys[0].limited_by).toBeUndefined();
  });

  it.each([
    [{ aggs: { wrong: { filters: { filters: { x: { term: { api_key_invalidated: false } } } } } } }, 'Field [api_key_invalidated] is not allowed for querying or aggregation'],
    [{ aggs: { ok: { filters: { filters: { y: { term: { invalidated: false } } } }, aggs: { wrong: { filters: { filters: { z: { wildcard: { 'creator.realm': 'x' } } } } } } } } }, 'Field [creator.realm] is not allowed for querying or aggregation'],
    [{ aggs: { c: { cardinality: { field: 'type' } }, cc: { cumulative_cardinality: { buckets_path: 'c' } } } }, 'Unsupported aggregation of type [cumulative_cardinality]'],
  ])('refuses %j with a 400', async (body, reason) => {
    const e = (await user1.transport.request({ method: 'POST', path: '/_security/_query/api_key', querystring: { typed_keys: true }, body }).catch((x: unknown) => x)) as errors.ResponseError;
    expect(e.statusCode).toBe(400);
    expect(e.body.error).toMatchObject({ type: 'illegal_argument_exception', reason });
  });
});

describe('users/40_query.yml and the role query', () => {
  let admin: Client;
  beforeAll(async () => {
    await t.es.security.putRole({ name: 'manage_users_role', cluster: ['manage_security'] });
    await t.es.security.putUser({ username: 'users_admin', password: PW, roles: ['manage_users_role'], full_name: 'Read User' });
    admin = as('users_admin');
    await admin.security.putUser({ username: 'test_user_1', password: PW, roles: ['test-role-1'], full_name: 'Test User 1' });
    await admin.security.putUser({ username: 'test_user_2', password: PW, roles: ['test-role-2'], full_name: 'Test User 2' });
  });

  it('queries native users with wildcard, sort, from and size', async () => {
    const all = await admin.security.queryUser({ query: { prefix: { username: 'test_user' } } });
    expect(all).toMatchObject({ total: 2, count: 2 });
    const w = await admin.security.queryUser({ query: { wildcard: { roles: 'test-role-*' } }, sort: [{ username: { order: 'desc' } }], from: 1, size: 1, with_profile_uid: true });
    expect(w).toMatchObject({ total: 2, count: 1, users: [{ username: 'test_user_1', full_name: 'Test User 1', roles: ['test-role-1'], enabled: true, _sort: ['test_user_1'] }] });
    const m = await admin.security.queryUser({ query: { match: { full_name: 'user 2' } }, sort: ['username'] });
    expect(m.users.map((u) => u.username)).toEqual(['api_key_user_1', 'api_key_user_2', 'test_user_1', 'test_user_2', 'users_admin']); // "API key manager" has neither token
    // reserved users are not documents of the native store
    expect((await t.es.security.queryUser({ query: { term: { username: 'elastic' } } })).total).toBe(0);
  });

  it('pages users with search_after and refuses a text-field sort', async () => {
    const p1 = await admin.security.queryUser({ sort: ['username'], size: 2 });
    const p2 = await admin.security.queryUser({ sort: ['username'], size: 2, search_after: p1.users[1]._sort as string[] });
    expect([...p1.users, ...p2.users].map((u) => u.username)).toEqual(['api_key_manager', 'api_key_user_1', 'api_key_user_2', 'test_user_1']);
    const e = (await admin.security.queryUser({ sort: ['full_name'] }).catch((x: unknown) => x)) as errors.ResponseError;
    expect(e.body.error).toMatchObject({ type: 'illegal_argument_exception', reason: 'sorting is not supported for field [full_name]' });
  });

  it('queries native roles, and needs read_security', async () => {
    await t.es.security.putRole({ name: 'q_role_1', description: 'Read only on logs', indices: [{ names: ['logs-*'], privileges: ['read'] }], metadata: { team: 'ops' } });
    await t.es.security.putRole({ name: 'q_role_2', applications: [{ application: 'app-x', privileges: ['read'], resources: ['*'] }], metadata: { team: 'dev' } });
    const r = await admin.security.queryRole({ query: { bool: { should: [{ match: { description: 'logs' } }, { term: { 'applications.application': 'app-x' } }] } }, sort: ['name'] });
    expect(r).toMatchObject({ total: 2, count: 2 });
    expect(r.roles.map((x) => x.name)).toEqual(['q_role_1', 'q_role_2']);
    expect(r.roles[0]).toMatchObject({ name: 'q_role_1', description: 'Read only on logs', indices: [{ names: ['logs-*'], privileges: ['read'] }], metadata: { team: 'ops' }, _sort: ['q_role_1'] });
    expect((await admin.security.queryRole({ query: { term: { 'metadata.team': 'dev' } } })).roles.map((x) => x.name)).toEqual(['q_role_2']);
    // paging over native roles by name with search_after, as over users
    const names = (await admin.security.queryRole({ sort: ['name'], size: 1000 })).roles.map((x) => x.name);
    const p1 = await admin.security.queryRole({ sort: ['name'], size: 2 });
    const p2 = await admin.security.queryRole({ sort: ['name'], size: 2, search_after: p1.roles[1]._sort as string[] });
    expect([...p1.roles, ...p2.roles].map((x) => x.name)).toEqual(names.slice(0, 4));
    expect(p2.total).toBe(names.length);
    const e = (await user1.security.queryRole({}).catch((x: unknown) => x)) as errors.ResponseError;
    expect(e.statusCode).toBe(403);
    expect(e.body.error.reason).toMatch(/^action \[cluster:admin\/xpack\/security\/role\/query\] is unauthorized for user \[api_key_user_1\]/);
  });
});
