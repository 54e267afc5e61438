/**
 * The security query APIs' translation of ES's query DSL, sorts and aggregations over in-memory
 * records (actors/security/queryDsl.ts, queryPaging.ts, queryAggs.ts): which queries and fields are
 * allowed (ES's 400s otherwise), what matches, and the aggregation shapes. Table-driven.
 */
import { apiKeyRecord, type ApiKeyRecord } from '../../../machines/apiKey.machine';
import { queryKeys } from '../../../actors/security/apiKeyQuery';
import { queryRoles, queryUsers } from '../../../actors/security/userRoleQuery';
import { analyze } from '../../../actors/security/queryDsl';
import { EsError } from '../../../actors/wire/esErrors';
import type { User } from '../../../actors/wire/security';

const DAY = 86_400_000;
const NOW = Date.parse('2026-03-10T12:00:00Z');

function key(id: string, o: Partial<ApiKeyRecord> & { user?: string } = {}): ApiKeyRecord {
  return apiKeyRecord({
    keyId: id,
    seq: 1,
    status: o.status ?? 'active',
    name: o.name ?? id,
    keyType: 'rest',
    creation: o.creation ?? NOW - 10 * DAY,
    expiration: o.expiration,
    invalidation: o.invalidation,
    owner: { username: o.user ?? 'alice', realm: 'default_native', realmType: 'native' },
    hash: '{SSHA256}x',
    roleDescriptors: {},
    limitedBy: {},
    metadata: o.metadata ?? {},
  });
}

const KEYS = [
  key('k1', { name: 'key1', user: 'admin', metadata: { tags: ['prod', 'est'], environment: { system: false, hostname: 'host-1' } }, expiration: NOW + 5 * DAY }),
  key('k2', { name: 'key2', user: 'admin', metadata: { tags: ['prod', 'west'], environment: { system: false, hostname: 'host-2' } }, expiration: NOW + 40 * DAY }),
  key('k3', { name: 'key3', user: 'admin', metadata: { tags: ['prod', 'south'], environment: { system: true, hostname: 'host-2' } }, status: 'invalidated', invalidation: NOW - DAY }),
  key('k4', { name: 'key4', user: 'bob', metadata: { tags: ['prod', 'north'], label: 'value4' }, creation: NOW - DAY }),
  key('w', { name: 'wild', user: 'bob', metadata: { tags: ['staging', 'west'] }, creation: NOW - 2 * DAY }),
];

const ids = (body: Record<string, unknown>) => (queryKeys(KEYS, body, { now: NOW }).api_keys as Array<{ id: string }>).map((k) => k.id);
const refused = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    const x = e as EsError;
    return { status: x.status, type: x.type, reason: x.message };
  }
  throw new Error('not refused');
};

describe('API key queries', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ['no query is match_all', {}, ['k1', 'k2', 'k3', 'k4', 'w']],
    ['term on a keyword', { query: { term: { username: 'bob' } } }, ['k4', 'w']],
    ['term case_insensitive', { query: { term: { name: { value: 'KEY1', case_insensitive: true } } } }, ['k1']],
    ['terms', { query: { terms: { name: ['key2', 'wild', 'nope'] } } }, ['k2', 'w']],
    ['match on a flattened sub-field', { query: { match: { 'metadata.environment.hostname': 'host-2' } } }, ['k2', 'k3']],
    ['match on the whole flattened field', { query: { match: { metadata: 'host-2' } } }, ['k2', 'k3']],
    ['flattened booleans are keywords', { query: { term: { 'metadata.environment.system': 'true' } } }, ['k3']],
    ['prefix', { query: { prefix: { name: 'key' } } }, ['k1', 'k2', 'k3', 'k4']],
    ['wildcard with ?', { query: { wildcard: { name: { value: 'key?' } } } }, ['k1', 'k2', 'k3', 'k4']],
    ['exists', { query: { exists: { field: 'expiration' } } }, ['k1', 'k2']],
    ['ids', { query: { ids: { values: ['k4', 'zz'] } } }, ['k4']],
    ['boolean term', { query: { term: { invalidated: true } } }, ['k3']],
    ['date math range', { query: { range: { creation: { gte: 'now-3d/d' } } } }, ['k4', 'w']],
    ['range lt with epoch millis', { query: { range: { expiration: { lt: NOW + 10 * DAY } } } }, ['k1']],
    ['range with from/to', { query: { range: { expiration: { from: NOW, to: NOW + 5 * DAY, include_upper: false } } } }, []],
    ['bool must + must_not', { query: { bool: { must: [{ prefix: { name: 'key' } }], must_not: [{ term: { username: 'admin' } }] } } }, ['k4']],
    ['bool should only needs one', { query: { bool: { should: [{ term: { name: 'wild' } }, { term: { name: 'key1' } }] } } }, ['k1', 'w']],
    ['bool minimum_should_match 2', { query: { bool: { should: [{ prefix: { name: 'key' } }, { term: { username: 'bob' } }], minimum_should_match: 2 } } }, ['k4']],
    ['simple_query_string over all fields', { query: { simple_query_string: { query: 'wild' } } }, ['w']],
    ['simple_query_string +/- and prefix', { query: { simple_query_string: { query: '+key* -bob', fields: ['name', 'username'] } } }, ['k1', 'k2', 'k3']],
    ['simple_query_string on disallowed fields matches nothing', { query: { simple_query_string: { query: 'key1', fields: ['api_key_hash'] } } }, []],
    ['type is rest', { query: { term: { type: 'rest' } } }, ['k1', 'k2', 'k3', 'k4', 'w']],
  ])('%s', (_what, body, want) => {
    expect(ids(body)).toEqual(want);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['an index-level field', { query: { term: { api_key_invalidated: false } } }, 'Field [api_key_invalidated] is not allowed for querying or aggregation'],
    ['a field pattern', { query: { term: { 'na*': 'x' } } }, 'Field name pattern [na*] is not allowed for querying or aggregation'],
    ['a query type ES refuses here', { query: { fuzzy: { name: 'x' } } }, 'Query type [fuzzy] is not currently supported in this context'],
    ['terms lookup', { query: { terms: { name: { index: 'i', id: '1', path: 'p' } } } }, 'terms query with terms lookup is not currently supported in this context'],
    ['range relation', { query: { range: { creation: { gte: 1, relation: 'within' } } } }, 'range query with relation is not currently supported in this context'],
    ['a sort on a hidden field', { sort: ['creator.realm'] }, 'Field [creator.realm] is not allowed for querying or aggregation'],
    ['a nested sort', { sort: [{ name: { nested: { path: 'x' } } }] }, 'nested sorting is not currently supported in this context'],
  ])('refuses %s with a 400', (_what, body, reason) => {
    expect(refused(() => queryKeys(KEYS, body, { now: NOW }))).toEqual({ status: 400, type: 'illegal_argument_exception', reason });
  });

  it('refuses an unknown query type as a parsing error', () => {
    expect(refused(() => queryKeys(KEYS, { query: { nosuch: {} } }))).toMatchObject({ status: 400, type: 'parsing_exception', reason: 'unknown query [nosuch]' });
  });

  it('sorts with missing values last and pages with search_after', () => {
    const first = queryKeys(KEYS, { sort: [{ expiration: 'desc' }, 'name'], size: 2 }, { now: NOW }) as { api_keys: Array<{ id: string; _sort: unknown[] }> };
    expect(first.api_keys.map((k) => k.id)).toEqual(['k2', 'k1']);
    const next = queryKeys(KEYS, { sort: [{ expiration: 'desc' }, 'name'], size: 10, search_after: first.api_keys[1]._sort }, { now: NOW }) as { api_keys: Array<{ id: string; _sort: unknown[] }> };
    expect(next.api_keys.map((k) => k.id)).toEqual(['k3', 'k4', 'w']);
    expect(next.api_keys[0]._sort).toEqual([null, 'key3']);
  });
});

describe('API key aggregations', () => {
  const aggs = (a: Record<string, unknown>, body: Record<string, unknown> = {}, typedKeys = false) =>
    queryKeys(KEYS, { size: 0, aggs: a, ...body }, { now: NOW, typedKeys }).aggregations as Record<string, any>;

  it('counts keyed filters, other buckets and nested filters', () => {
    const a = aggs({
      hosts: { filters: { filters: { h1: { term: { 'metadata.environment.hostname': 'host-1' } }, h2: { match: { metadata: 'host-2' } } }, other_bucket_key: 'rest' } },
      anon: { filters: { filters: [{ match_all: {} }, { exists: { field: 'expiration' } }] }, aggs: { inv: { filter: { term: { invalidated: false } } } } },
    });
    expect(a.hosts.buckets).toEqual({ h1: { doc_count: 1 }, h2: { doc_count: 2 }, rest: { doc_count: 2 } });
    expect(a.anon.buckets).toEqual([{ doc_count: 5, inv: { doc_count: 4 } }, { doc_count: 2, inv: { doc_count: 2 } }]);
  });

  it('buckets terms by count then key, with sum_other_doc_count and typed keys', () => {
    const a = aggs({ users: { terms: { field: 'username', size: 1 } }, tags: { terms: { field: 'metadata.tags' } }, inv: { terms: { field: 'invalidated' } } }, {}, true);
    expect(a['sterms#users']).toEqual({ doc_count_error_upper_bound: 0, sum_other_doc_count: 2, buckets: [{ key: 'admin', doc_count: 3 }] });
    expect(a['sterms#tags'].buckets.slice(0, 2)).toEqual([
      { key: 'prod', doc_count: 4 },
      { key: 'west', doc_count: 2 },
    ]);
    expect(a['lterms#inv'].buckets).toEqual([
      { key: 0, key_as_string: 'false', doc_count: 4 },
      { key: 1, key_as_string: 'true', doc_count: 1 },
    ]);
  });

  it('computes missing, cardinality, value_count, date_range and composite', () => {
    const a = aggs({
      noexp: { missing: { field: 'expiration' } },
      owners: { cardinality: { field: 'username' } },
      tags: { value_count: { field: 'metadata.tags' } },
      age: { date_range: { field: 'creation', ranges: [{ to: 'now-5d/d' }, { from: 'now-5d/d', key: 'recent' }] } },
      byUser: { composite: { size: 1, sources: [{ u: { terms: { field: 'username' } } }] }, aggs: { n: { value_count: { field: 'name' } } } },
    });
    expect(a.noexp).toEqual({ doc_count: 3 });
    expect(a.owners).toEqual({ value: 2 });
    expect(a.tags).toEqual({ value: 10 });
    expect(a.age.buckets.map((b: any) => [b.key, b.doc_count])).toEqual([
      ['*-2026-03-05T00:00:00.000Z', 3],
      ['recent', 2],
    ]);
    expect(a.byUser).toEqual({ after_key: { u: 'admin' }, buckets: [{ key: { u: 'admin' }, doc_count: 3, n: { value: 3 } }] });
    const next = aggs({ byUser: { composite: { sources: [{ u: { terms: { field: 'username' } } }], after: { u: 'admin' } } } });
    expect(next.byUser.buckets).toEqual([{ key: { u: 'bob' }, doc_count: 2 }]);
  });

  it('aggregates over the matched keys only', () => {
    expect(aggs({ n: { value_count: { field: 'name' } } }, { query: { term: { username: 'bob' } } }).n).toEqual({ value: 2 });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['global', { g: { global: {}, aggs: { t: { terms: { field: 'name' } } } } }, 'Unsupported API Keys agg [g] of type [global]'],
    ['avg', { a: { avg: { field: 'creation' } } }, 'Unsupported API Keys agg [a] of type [avg]'],
    ['a pipeline', { c: { cardinality: { field: 'type' } }, cc: { cumulative_cardinality: { buckets_path: 'c' } } }, 'Unsupported aggregation of type [cumulative_cardinality]'],
    ['a script', { t: { terms: { script: 'x' } } }, 'Unsupported script value source for [t] agg'],
    ['an index field in a filter', { f: { filters: { filters: { x: { term: { api_key_invalidated: false } } } } } }, 'Field [api_key_invalidated] is not allowed for querying or aggregation'],
    ['a hidden field in a composite source', { c: { composite: { sources: [{ h: { histogram: { field: 'creator', interval: 5 } } }] } } }, 'Field [creator] is not allowed for querying or aggregation'],
    ['a runtime field name', { v: { value_count: { field: 'runtime_key_type' } } }, 'Field [runtime_key_type] is not allowed for querying or aggregation'],
  ])('refuses %s', (_what, a, reason) => {
    expect(refused(() => queryKeys(KEYS, { aggs: a }))).toEqual({ status: 400, type: 'illegal_argument_exception', reason });
  });
});

describe('user and role queries', () => {
  const user = (username: string, roles: string[], full_name: string | null, enabled = true): User => ({ username, roles, full_name, email: null, metadata: {}, enabled });
  const USERS = [user('u1', ['test-role-1'], 'Test User 1'), user('u2', ['test-role-2'], 'Test User 2'), user('admin', ['manage'], 'Read User', false)];
  const names = (body: Record<string, unknown>) => ((queryUsers(USERS, body) as { users: User[] }).users).map((u) => u.username);

  it('analyzes text fields like the standard analyzer', () => {
    expect(analyze("Test User-1 O'Neil")).toEqual(['test', 'user', '1', "o'neil"]);
    expect(names({ query: { match: { full_name: 'user 2' } } })).toEqual(['u1', 'u2', 'admin']);
    expect(names({ query: { match: { full_name: { query: 'user 2', operator: 'and' } } } })).toEqual(['u2']);
    expect(names({ query: { term: { full_name: 'Test User 1' } } })).toEqual([]);
  });

  it('wildcards roles, sorts by username desc and pages', () => {
    const r = queryUsers(USERS, { query: { wildcard: { roles: 'test-role-*' } }, sort: [{ username: { order: 'desc' } }], from: 1, size: 1 }) as any;
    expect(r).toMatchObject({ total: 2, count: 1, users: [{ username: 'u1', _sort: ['u1'] }] });
    expect(names({ query: { term: { enabled: false } } })).toEqual(['admin']);
  });

  it('refuses sorting on text fields and unknown fields', () => {
    expect(refused(() => queryUsers(USERS, { sort: ['full_name'] }))).toMatchObject({ reason: 'sorting is not supported for field [full_name]' });
    expect(refused(() => queryUsers(USERS, { query: { term: { password: 'x' } } }))).toMatchObject({ reason: 'Field [password] is not allowed for querying or aggregation' });
    expect(refused(() => queryUsers(USERS, { aggs: {} }))).toMatchObject({ type: 'x_content_parse_exception', reason: '[1:2] [query_user_request_payload] unknown field [aggs]' });
  });

  it('queries roles by name, description, applications and metadata', () => {
    const rd = (description: string | undefined, application: string, metadata: Record<string, unknown>) => ({
      cluster: [], indices: [], run_as: [], metadata, ...(description ? { description } : {}),
      applications: [{ application, privileges: ['read'], resources: ['*'] }],
    });
    const roles = [
      { name: 'r1', descriptor: rd('Grants read to kibana', 'kibana-.kibana', { team: 'a' }) },
      { name: 'r2', descriptor: rd(undefined, 'app-2', { team: 'b' }) },
    ];
    const q = (body: Record<string, unknown>) => ((queryRoles(roles, body) as any).roles as Array<{ name: string }>).map((r) => r.name);
    expect(q({ query: { match: { description: 'kibana' } } })).toEqual(['r1']);
    expect(q({ query: { prefix: { 'applications.application': 'app' } } })).toEqual(['r2']);
    expect(q({ query: { term: { 'metadata.team': 'b' } } })).toEqual(['r2']);
    expect((queryRoles(roles, { sort: [{ name: 'desc' }] }) as any).roles[0]).toMatchObject({ name: 'r2', applications: [{ application: 'app-2' }], _sort: ['r2'] });
  });
});
