import { validationFailed } from '../../wire/esErrors';
import { parseBool, type Routes } from '../../wire/rest';
import type { EsRequest } from '../../wire/rest';
import { queryKeys } from '../apiKeyQuery';
import { isOwnRequest, renderKey, selectKeys, validateSelector, type KeySelector } from '../apiKeyViews';
import { authorize, isClusterActionAllowed } from '../authorization';
import { featureNotEnabled, forbidden, unauthorized } from '../errors';
import { authOf, bodyOf, descriptorsOf, type SecurityServices } from '../services';
import type { Authentication } from '../../wire/security';

const A = 'cluster:admin/xpack/security/api_key/';
const truthy = (v: unknown) => v === true || v === 'true' || v === '';

function strings(v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  return Array.isArray(v) ? v.map(String) : String(v).split(',');
}

/** Create, get, invalidate, update, grant and query API keys (spec §4). */
export function apiKeyRoutes(router: Routes, s: SecurityServices): void {
  const enabled = () => {
    if (!s.apiKeysEnabled) throw featureNotEnabled('api_keys');
  };

  router.add(
    ['POST', 'PUT'],
    '/_security/api_key',
    async (req) => {
      enabled();
      const caller = authOf(req);
      const body = bodyOf(req);
      authorize(caller, `${A}create`);
      return { body: await s.apiKeys.create(body, caller, descriptorsOf(s, caller), { derivedCheck: true, correlationId: req.opaqueId }) };
    },
    { kind: 'handler' },
  );

  router.add(
    'GET',
    '/_security/api_key',
    (req) => {
      enabled();
      const q = req.query;
      const sel: KeySelector = {
        ids: q.id ? [q.id] : undefined,
        name: q.name || undefined,
        username: q.username || undefined,
        realmName: q.realm_name || undefined,
        owner: truthy(q.owner),
        activeOnly: truthy(q.active_only),
      };
      validateSelector(sel, 'retrieving');
      const caller = authOf(req);
      authorize(caller, `${A}get`, undefined, isOwnRequest(sel, caller));
      const keys = selectKeys(s.apiKeys.records.values(), sel, caller, s.now());
      const api_keys = keys.map((k) => renderKey(k, { withLimitedBy: truthy(q.with_limited_by) }));
      return { status: sel.ids && !keys.length ? 404 : 200, body: { api_keys } };
    },
    { kind: 'handler' },
  );

  router.add(
    'DELETE',
    '/_security/api_key',
    async (req) => {
      enabled();
      const body = bodyOf(req);
      const ids = strings(body.ids) ?? strings(body.id);
      if (ids && !ids.length) throw validationFailed(['Field [ids] cannot be an empty array']);
      const blank = (ids ?? []).map((x, i) => (x.trim() ? -1 : i)).filter((i) => i >= 0);
      if (blank.length) {
        throw validationFailed([`Field [ids] must not contain blank id, but got blank ${blank.length === 1 ? 'id' : 'ids'} at index ${blank.length === 1 ? 'position' : 'positions'}: [${blank.join(', ')}]`]);
      }
      const sel: KeySelector = {
        ids,
        name: typeof body.name === 'string' && body.name ? body.name : undefined,
        username: typeof body.username === 'string' && body.username ? body.username : undefined,
        realmName: typeof body.realm_name === 'string' && body.realm_name ? body.realm_name : undefined,
        owner: body.owner === true,
      };
      validateSelector(sel, 'invalidating');
      const caller = authOf(req);
      authorize(caller, `${A}invalidate`, undefined, isOwnRequest(sel, caller));
      const r = await s.apiKeys.invalidate(selectKeys(s.apiKeys.records.values(), sel, caller, s.now()), req.opaqueId);
      return { body: { invalidated_api_keys: r.invalidated, previously_invalidated_api_keys: r.previously, error_count: 0 } };
    },
    { kind: 'handler' },
  );

  router.add(
    'PUT',
    '/_security/api_key/{id}',
    async (req) => {
      enabled();
      const caller = authOf(req);
      const body = bodyOf(req);
      authorize(caller, `${A}update`);
      return { body: await s.apiKeys.update(req.params.id, body, caller, descriptorsOf(s, caller), req.opaqueId) };
    },
    { kind: 'handler' },
  );

  router.add(
    'POST',
    '/_security/api_key/grant',
    async (req) => {
      enabled();
      const body = bodyOf(req);
      const errors: string[] = [];
      const grant = body.grant_type;
      if (grant !== 'password' && grant !== 'access_token') errors.push('grant_type must be one of [password, access_token]');
      if (grant === 'password' && (typeof body.username !== 'string' || typeof body.password !== 'string')) errors.push('username and password are required for grant_type [password]');
      if (grant === 'access_token' && typeof body.access_token !== 'string') errors.push('access_token is required for grant_type [access_token]');
      const apiKey = (body.api_key ?? {}) as Record<string, unknown>;
      if (errors.length) throw validationFailed(errors);
      authorize(authOf(req), `${A}grant`);
      const owner = await grantee(s, req, body);
      return { body: await s.apiKeys.create(apiKey, owner, descriptorsOf(s, owner), { derivedCheck: false, correlationId: req.opaqueId }) };
    },
    { kind: 'handler' },
  );

  // ES RestClearApiKeyCacheAction (ClearSecurityCacheAction): drops cached verifications, here and
  // (through the role broadcast) on every other node.
  router.add(
    'POST',
    '/_security/api_key/{ids}/_clear_cache',
    (req) => {
      const ids = req.params.ids.split(',').map((x) => x.trim()).filter(Boolean);
      s.apiKeys.clearCache(ids.includes('*') ? undefined : ids);
      s.facts.broadcastInvalidate('role', ['_api_key_cache']);
      const n = s.ctx.node;
      return { body: { _nodes: { total: 1, successful: 1, failed: 0 }, cluster_name: n.clusterName, nodes: { [n.id]: { name: n.name } } } };
    },
    { kind: 'cluster', action: 'cluster:admin/xpack/security/cache/clear' },
  );

  const query = (req: EsRequest) => {
    enabled();
    const caller = authOf(req);
    const all = isClusterActionAllowed(caller, `${A}query`);
    if (!all) authorize(caller, `${A}query`, undefined, true); // manage_own_api_key: own keys only
    const sel: KeySelector = { owner: !all };
    const q = req.query;
    const opts = { withLimitedBy: parseBool(q.with_limited_by, false), typedKeys: parseBool(q.typed_keys, false), now: s.now() };
    parseBool(q.with_profile_uid, false); // accepted: no user profiles here, so no key has a `profile_uid`
    return { body: queryKeys(selectKeys(s.apiKeys.records.values(), sel, caller, s.now()), bodyOf(req), opts) };
  };
  router.add(['GET', 'POST'], '/_security/_query/api_key', query, { kind: 'handler' });
}

/** The user an API key is granted for (password or access token of that user). */
async function grantee(s: SecurityServices, req: EsRequest, body: Record<string, unknown>): Promise<Authentication> {
  if (body.grant_type === 'password') {
    const a = await s.realms.authenticatePassword(String(body.username), String(body.password));
    if (!a) throw unauthorized(`unable to authenticate user [${body.username}] for action [cluster:admin/xpack/security/api_key/grant]`, s.challenges);
    return a;
  }
  const r = s.tokens.authenticate(String(body.access_token));
  if (r.status === 'success') return r.authentication;
  if (r.status === 'terminate') throw r.error;
  throw forbidden('unable to authenticate with the provided access token');
}
