import type { Authentication, Principal } from '../wire/security';

/**
 * Ownership of contexts and credentials, after ES `Authentication.canAccessResourcesOf`:
 * - a user (Basic, JWT, or an access token: the token's owner) is its username in its realm;
 * - an API key owns only what it created itself: two different keys of one user do not share, and the
 *   key's owner (as a user) does not share with the key. We encode that as realm `_es_api_key/<keyId>`;
 * - a service account is its principal in realm `_service_account`.
 */
export function ownerOf(auth: Authentication | undefined): Principal | undefined {
  const a = auth;
  if (!a || !a.user) return undefined;
  if (a.apiKey) return { username: a.user.username, realm: `_es_api_key/${a.apiKey.id}` };
  // run-as: the effective user, in the realm that looked it up (ES canAccessResourcesOf compares effective subjects)
  if (a.runAs) return { username: a.user.username, realm: a.runAs.denied ? '__run_as_denied__' : a.lookupRealm.name };
  return { username: a.user.username, realm: a.authenticationRealm.name };
}

/**
 * Same owner? Both undefined (security disabled) counts as the same; one undefined does not.
 */
export function sameOwner(a: Principal | undefined, b: Principal | undefined): boolean {
  if (!a || !b) return !a && !b;
  return a.username === b.username && a.realm === b.realm;
}
