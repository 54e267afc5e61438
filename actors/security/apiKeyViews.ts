import { validationFailed } from '../wire/esErrors';
import type { ApiKeyRecord } from '../../machines/apiKey.machine';
import { API_KEY_REALM, apiKeyOwnerOf } from './apiKeys';
import { indexNamesRegExp } from './permission';
import { renderRoleDescriptor } from './roleDescriptor';
import type { Authentication, RoleDescriptor } from '../wire/security';

/** Selectors of GET/DELETE /_security/api_key (query params or body). */
export interface KeySelector {
  ids?: string[];
  name?: string;
  username?: string;
  realmName?: string;
  owner: boolean;
  activeOnly?: boolean;
}

/** ES GetApiKeyRequest / InvalidateApiKeyRequest validation. */
export function validateSelector(s: KeySelector, verb: 'retrieving' | 'invalidating'): void {
  const errors: string[] = [];
  const plural = verb === 'invalidating';
  if (verb === 'invalidating' && !s.realmName && !s.username && !s.ids && !s.name && !s.owner) {
    errors.push('One of [api key id(s), api key name, username, realm name] must be specified if [owner] flag is false');
  }
  if ((s.ids || s.name) && (s.realmName || s.username)) {
    errors.push(
      plural
        ? 'username or realm name must not be specified when the api key id(s) or api key name are specified'
        : 'username or realm name must not be specified when the api key id or api key name is specified',
    );
  }
  if (s.owner && (s.realmName || s.username)) errors.push(`neither username nor realm-name may be specified when ${verb} owned API keys`);
  if (s.ids && s.name) errors.push(plural ? 'only one of [api key id(s), api key name] can be specified' : 'only one of [api key id, api key name] can be specified');
  if (errors.length) throw validationFailed(errors);
}

/**
 * Is the request about the caller's own keys (what `manage_own_api_key` allows)? An API key may always
 * address its own id.
 */
export function isOwnRequest(s: KeySelector, caller: Authentication): boolean {
  if (caller.apiKey && caller.authenticationType === 'api_key' && s.ids?.length === 1 && s.ids[0] === caller.apiKey.id && !s.name) return true;
  if (s.owner) return true;
  if (caller.authenticationType === 'api_key') return false;
  return !!s.username && !!s.realmName && s.username === caller.user.username && s.realmName === caller.lookupRealm.name; // the effective user's realm (run-as: where it was looked up)
}

/** Keys matching a selector (the caller's own when `owner`). */
export function selectKeys(all: Iterable<ApiKeyRecord>, s: KeySelector, caller: Authentication, now: number): ApiKeyRecord[] {
  const owner = s.owner ? apiKeyOwnerOf(caller) : undefined;
  const nameRe = s.name && s.name !== '*' ? indexNamesRegExp([s.name]) : undefined;
  const ids = s.ids ? new Set(s.ids) : undefined;
  const out: ApiKeyRecord[] = [];
  for (const r of all) {
    if (ids && !ids.has(r.keyId)) continue;
    if (nameRe && !nameRe.test(r.name)) continue;
    if (s.username && r.owner.username !== s.username) continue;
    if (s.realmName && r.owner.realm !== s.realmName) continue;
    if (owner && (r.owner.username !== owner.username || r.owner.realm !== owner.realm)) continue;
    if (s.activeOnly && (r.status !== 'active' || (r.expiration !== undefined && r.expiration <= now))) continue;
    out.push(r);
  }
  return out;
}

const renderDescriptors = (d: Record<string, RoleDescriptor>) =>
  Object.fromEntries(Object.entries(d).map(([n, rd]) => [n, renderRoleDescriptor(rd)]));

/** The GET view of a key. */
export function renderKey(r: ApiKeyRecord, opts: { withLimitedBy?: boolean } = {}): Record<string, unknown> {
  return {
    id: r.keyId,
    name: r.name,
    type: r.keyType,
    creation: r.creation,
    ...(r.expiration !== undefined ? { expiration: r.expiration } : {}),
    invalidated: r.status === 'invalidated',
    ...(r.invalidation !== undefined ? { invalidation: r.invalidation } : {}),
    username: r.owner.username,
    realm: r.owner.realm,
    realm_type: r.owner.realmType,
    metadata: r.metadata,
    role_descriptors: renderDescriptors(r.roleDescriptors),
    ...(opts.withLimitedBy && r.owner.realm !== API_KEY_REALM ? { limited_by: [renderDescriptors(r.limitedBy)] } : {}),
  };
}
