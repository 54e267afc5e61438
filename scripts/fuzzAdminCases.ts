/**
 * Fuzz generators for the administrative surface: every documented endpoint with junk, documents
 * with wrong values, index administration and security APIs (scratch names only).
 */
import { junk, toJson, type Rng } from './fuzzValues';
import { http, scratch, type Fixtures, type Gen } from './fuzzHttp';

/** Every documented endpoint with a random method and a junk body. */
export const randomRoute: Gen = (r, f) => {
  const method = r.pick(['GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'PATCH', 'OPTIONS']);
  // a fixture index is never deleted (searches racing a deletion are not bad input)
  const i = method === 'DELETE' ? scratch(r) : r.pick(f.indices);
  const path = r.pick([
    '/', '/_cluster/health', `/_cluster/health/${i}`, '/_cluster/settings', `/${scratch(r)}`, `/${i}`, `/${i}/_mapping`, '/_mapping',
    `/${i}/_settings`, '/_settings', `/${i}/_doc/r${r.int(9)}`, `/${i}/_doc`, `/${i}/_create/c${r.int(9)}`, `/${i}/_source/1`, '/_bulk',
    '/_refresh', `/${i}/_refresh`, '/_count', `/${i}/_count`, '/_search', `/${i}/_search`, '/_search/scroll', `/${i}/_pit`, '/_pit',
    '/_scroll', '/_nodes/stats', '/_nodes/stats/indices/search', '/_security/_authenticate', '/_security/api_key', '/_security/api_key/grant',
    '/_security/_query/api_key', '/_security/oauth2/token', '/_security/service', '/_security/service/elastic/fleet-server',
    '/_security/service/elastic/fleet-server/credential/token/fz', '/_security/service/elastic/fleet-server/credential', '/_security/user',
    '/_security/user/fzuser', '/_security/user/fzuser/_password', '/_security/role/fzrole', '/_security/role_mapping/fzmap',
    '/_security/user/_privileges', '/_security/user/_has_privileges', '/_msearch', '/_mget', `/${i}/_update/1`, '/_reindex',
    `/${i}/_delete_by_query`, '/_cat/indices', '/_aliases', '/_index_template/fzt', '/_stats', '/_cluster/state', '/_tasks',
  ]);
  const body = r.chance(0.3) ? undefined : r.chance(0.5) ? toJson(junk(r)) : toJson({ [r.pick(['query', 'id', 'scroll_id', 'password', 'name', 'settings', 'properties', 'cluster', 'index', 'role_descriptors', 'grant_type', 'keep_alive', 'doc'])]: junk(r) });
  return http('random', f, method, path, body);
};

/** Documents with wrong values for every mapped type, immense terms and metadata fields. */
export const documents: Gen = (r, f) => {
  const fields = ['n', 'k', 't', 'd', 'b', 'o', 'o.x', '_id', '_source', '', ' ', '.', 'a..b', 'new.field', 'n.sub'];
  const body: Record<string, unknown> = {};
  for (let i = 0, n = 1 + r.int(4); i < n; i++) body[r.pick(fields)] = r.chance(0.1) ? 'z'.repeat(33000) : junk(r);
  return http('docs', f, r.pick(['PUT', 'POST']), r.pick([`/${r.pick(f.indices)}/_doc/d${r.int(20)}`, `/${r.pick(f.indices)}/_create/c${r.int(50)}`, `/${scratch(r)}/_doc`]), r.chance(0.9) ? toJson(body) : toJson(junk(r)));
};

/** Index administration with junk settings and mappings. */
export const admin: Gen = (r, f) => {
  const mapping = () => r.pick<unknown>([
    { properties: { a: { type: r.pick(['long', 'keyword', 'text', 'date', 'nope', junk(r)]) } } },
    { properties: { a: junk(r) } },
    { properties: junk(r) },
    { dynamic: junk(r), properties: { a: { type: 'keyword', ignore_above: junk(r) } } },
    { properties: { a: { type: 'keyword' }, 'a.b': { type: 'keyword' } } },
    { properties: { a: { type: 'date', format: junk(r) } } },
    { properties: { a: { type: 'text', fields: junk(r) } } },
    { properties: { n: { type: 'keyword' } } },
    junk(r),
  ]);
  const settings = () => r.pick<unknown>([
    { number_of_shards: junk(r) }, { index: { number_of_shards: junk(r), refresh_interval: junk(r) } }, { 'index.max_result_window': junk(r) },
    { max_slices_per_scroll: junk(r) }, { number_of_routing_shards: junk(r) }, junk(r),
  ]);
  return r.pick([
    () => http('admin', f, 'PUT', `/${scratch(r)}`, toJson({ settings: settings(), mappings: mapping(), ...(r.chance(0.2) ? { aliases: junk(r) } : {}) })),
    () => http('admin', f, 'PUT', `/${r.pick(f.indices)}/_mapping`, toJson(mapping())),
    () => http('admin', f, 'PUT', `/${r.pick(f.indices)}/_settings`, toJson(settings())),
    () => http('admin', f, 'PUT', '/_cluster/settings', toJson({ [r.pick(['persistent', 'transient', 'x'])]: { [r.pick(['search.max_keep_alive', 'search.default_keep_alive', 'search.max_open_scroll_context', 'x.y'])]: junk(r) } })),
    () => http('admin', f, 'DELETE', `/${r.pick([scratch(r), '_all', '*', 'fz*', 'missing'])}`),
    () => http('admin', f, 'PUT', `/${r.pick(['UP', '_x', '-x', 'a:b', 'a,b', '.', '..', 'x'.repeat(300), '%2A'])}`, toJson({})),
  ])();
};

/** Security APIs with junk bodies (scratch names; the superuser's password is never a target). */
export const security: Gen = (r, f) => {
  return r.pick([
    () => http('security', f, 'POST', '/_security/api_key', toJson({ name: junk(r), expiration: junk(r), role_descriptors: junk(r), metadata: junk(r) })),
    () => http('security', f, 'POST', '/_security/api_key/grant', toJson({ grant_type: junk(r), username: junk(r), password: junk(r), api_key: junk(r) })),
    () => http('security', f, 'POST', '/_security/_query/api_key', toJson({ query: junk(r), from: junk(r), size: junk(r), sort: junk(r), search_after: junk(r) })),
    () => http('security', f, 'DELETE', '/_security/api_key', toJson({ ids: junk(r), name: junk(r), owner: junk(r) })),
    () => http('security', f, 'PUT', '/_security/role/fzrole', toJson({ cluster: junk(r), indices: junk(r), applications: junk(r) })),
    () => http('security', f, 'PUT', '/_security/user/fzuser', toJson({ password: junk(r), roles: junk(r), full_name: junk(r), username: junk(r) })),
    () => http('security', f, 'POST', '/_security/oauth2/token', toJson({ grant_type: r.pick(['password', 'client_credentials', 'refresh_token', junk(r)]), username: junk(r), password: junk(r), refresh_token: junk(r) })),
    () => http('security', f, 'DELETE', '/_security/oauth2/token', toJson({ token: junk(r), refresh_token: junk(r), realm_name: junk(r) })),
    () => http('security', f, 'POST', '/_security/user/_has_privileges', toJson({ cluster: junk(r), index: junk(r), application: junk(r) })),
    () => http('security', f, 'PUT', `/_security/api_key/${encodeURIComponent(String(junk(r)).slice(0, 50))}`, toJson({ role_descriptors: junk(r), metadata: junk(r) })),
  ])();
};

