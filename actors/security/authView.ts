import type { Authentication } from '../wire/security';

/**
 * The REST view of an authentication, as `GET /_security/_authenticate` and the token endpoint's
 * `authentication` show it (spec §6).
 */
export function renderAuthentication(a: Authentication): Record<string, unknown> {
  const u = a.user;
  return {
    username: u.username,
    roles: a.apiKey && a.authenticationType === 'api_key' ? [] : u.roles,
    full_name: u.full_name,
    email: u.email,
    metadata: u.metadata,
    enabled: u.enabled,
    authentication_realm: { name: a.authenticationRealm.name, type: a.authenticationRealm.type },
    lookup_realm: { name: a.lookupRealm.name, type: a.lookupRealm.type },
    authentication_type: a.authenticationType,
    ...(a.apiKey ? { api_key: { id: a.apiKey.id, name: a.apiKey.name } } : {}),
    ...(a.token ? { token: { name: a.token.name, type: a.token.type } } : {}),
  };
}
