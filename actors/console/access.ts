import { isClusterActionAllowed } from '../security/authorization';
import { apiKeyOwnerOf } from '../security/apiKeys';
import type { Authentication } from '../wire/security';
import type { Owner } from '../../streams';

/**
 * What a console user may see, from their cluster privileges (ES names). The console reads the same
 * facts and registries for everyone; this decides, per fact and per row, what reaches the browser.
 *
 * | sees | needs (any of) |
 * |---|---|
 * | scroll contexts, PITs, cluster, log chart | `monitor`, `manage`, `all` |
 * | every API key | `manage_api_key`, `read_security`, `manage_security`, `all` |
 * | own API keys only | `manage_own_api_key` |
 * | OAuth2 token pairs | `manage_token`, `manage_security`, `all` |
 * | service account tokens | `manage_service_account`, `read_security`, `manage_security`, `all` |
 * | user and role facts | `read_security`, `manage_security`, `all` |
 */
export interface Access {
  monitor: boolean;
  apiKeysAll: boolean;
  apiKeysOwn: boolean;
  tokens: boolean;
  serviceTokens: boolean;
  users: boolean;
  /** The caller as an API key owner (manage_own_api_key compares against it); undefined without security. */
  self?: Owner;
}

/** Console actions, named like ES's so a 403 names the privileges that would grant them. */
export const ACTIONS = {
  contexts: 'cluster:monitor/xpack/console/contexts',
  cluster: 'cluster:monitor/xpack/console/cluster',
  chart: 'cluster:monitor/xpack/console/chart',
  apiKeys: 'cluster:admin/xpack/security/api_key/get',
  tokens: 'cluster:admin/xpack/security/token/invalidate',
  serviceTokens: 'cluster:admin/xpack/security/service_account/credential/get',
  users: 'cluster:admin/xpack/security/user/get',
} as const;

/** Everything is visible when security is off (no authentication to judge). */
const ALL: Access = { monitor: true, apiKeysAll: true, apiKeysOwn: true, tokens: true, serviceTokens: true, users: true };

/** The privileges of `auth` as the console applies them (undefined `auth`: security is disabled). */
export function accessOf(auth: Authentication | undefined): Access {
  if (!auth) return ALL;
  const can = (action: string, own = false) => isClusterActionAllowed(auth, action, own);
  const a = auth;
  const owner = apiKeyOwnerOf(a);
  return {
    monitor: can(ACTIONS.contexts),
    apiKeysAll: can(ACTIONS.apiKeys),
    apiKeysOwn: can(ACTIONS.apiKeys, true),
    tokens: can(ACTIONS.tokens),
    serviceTokens: can(ACTIONS.serviceTokens),
    users: can(ACTIONS.users),
    self: { username: owner.username, realm: owner.realm },
  };
}

/** May `access` see this API key (owner as stored on the key)? */
export function seesApiKey(access: Access, owner: Owner | undefined): boolean {
  if (access.apiKeysAll) return true;
  if (!access.apiKeysOwn || !access.self || !owner) return false;
  return owner.username === access.self.username && owner.realm === access.self.realm;
}

/** Aggregate-level visibility (API keys also need {@link seesApiKey} per key). */
export function seesAggregate(access: Access, aggregate: string): boolean {
  switch (aggregate) {
    case 'scroll':
    case 'pit':
    case 'asyncsearch':
    case 'node':
      return access.monitor;
    case 'apikey':
      return access.apiKeysAll || access.apiKeysOwn;
    case 'token':
      return access.tokens;
    case 'servicetoken':
      return access.serviceTokens;
    case 'user':
    case 'role':
      return access.users;
    default:
      // An aggregate this console does not know yet: only those who may see all security facts.
      return access.users && access.monitor;
  }
}

/** The JSON the session endpoint returns (what the page shows or hides). */
export function renderAccess(a: Access) {
  return {
    monitor: a.monitor,
    api_keys: a.apiKeysAll ? 'all' : a.apiKeysOwn ? 'own' : 'none',
    tokens: a.tokens,
    service_tokens: a.serviceTokens,
    users: a.users,
  };
}
