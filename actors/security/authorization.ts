import { searchContextMissing, type EsError } from '../wire/esErrors';
import { forbidden } from './errors';
import { ownerOf, sameOwner } from './ownership';
import { checkCluster, checkIndex, checkIndicesAction } from './permission';
import { type Permission } from '../wire/security';
import { clusterPrivilegesThatGrant, indexPrivilegesThatGrant } from './privileges';
import type { Authentication, Principal } from '../wire/security';

/** ES ClusterPrivilegeResolver.isClusterAction. */
export const isClusterAction = (action: string) =>
  action.startsWith('cluster:') || action.startsWith('indices:admin/template/') || action.startsWith('indices:admin/index_template/');

/** With security on the gate has authenticated every request: `auth` is set. */
const asAuth = (auth: Authentication | undefined): Authentication => auth!;

/** ES SearchScrollAction.NAME. */
const SCROLL = 'indices:data/read/scroll';

/** The roles a permission was built from (assigned roles that were not found are not among them). */
export function effectiveRoles(p: Permission): string[] {
  return p.kind === 'role' ? p.roleNames : [];
}

/** " with effective roles [r1,r2]" plus the assigned roles that were not found (ES rolesDescription). */
function rolesText(user: { roles: string[] }, p: Permission): string {
  const effective = [...effectiveRoles(p)].sort();
  const unfound = [...new Set(user.roles)].filter((r) => !effective.includes(r)).sort();
  return ` with effective roles [${effective.join(',')}]${unfound.length ? ` (assigned roles [${unfound.join(',')}] were not found)` : ''}`;
}

/** Who authenticated: "user [bob]" or "API key id [x] of user [bob]" (ES authenticatedUserDescription). */
function authenticatedText(user: { username: string }, apiKey: { id: string } | undefined): string {
  return apiKey ? `API key id [${apiKey.id}] of user [${user.username}]` : `user [${user.username}]`;
}

/**
 * "user [bob] with effective roles [r1,r2]" / "API key id [x] of user [bob]" / "user [admin] run as
 * [bob] with effective roles [r1]" (ES AuthorizationDenialMessages.successfulAuthenticationDescription).
 */
function userText(a: Authentication): string {
  if (a.runAs) return `${authenticatedText(a.runAs.user, a.runAs.apiKey)} run as [${a.user.username}]${rolesText(a.user, a.permission)}`;
  if (a.apiKey) return authenticatedText(a.user, a.apiKey);
  // Service accounts have privileges, not roles: no roles description (spec §5 wording).
  if (a.authenticationRealm.type === '_service_account') return `user [${a.user.username}]`;
  return `user [${a.user.username}]${rolesText(a.user, a.permission)}`;
}

/**
 * ES AuthorizationDenialMessages.runAsDenied: the authenticating subject may not run as the user
 * (`action [x] is unauthorized for user [admin] with effective roles [r], because user [admin] is
 * unauthorized to run as [bob]`; an API key has privileges, not roles: no roles description).
 */
export function runAsDenied(a: Authentication, action: string): EsError {
  const r = a.runAs!;
  const who = authenticatedText(r.user, r.apiKey);
  return forbidden(`action [${action}] is unauthorized for ${who}${r.apiKey ? '' : rolesText(r.user, r.permission)}, because ${who} is unauthorized to run as [${a.user.username}]`);
}

/** ES's 403 for an action, naming the privileges that would grant it. */
export function actionDenied(auth: Authentication | undefined, action: string, context?: string, ownRequest = false): EsError {
  const a = asAuth(auth);
  let msg = `action [${action}] is unauthorized for ${userText(a)}${context ? ` ${context}` : ''}`;
  if (isClusterAction(action)) {
    const privs = clusterPrivilegesThatGrant(action, ownRequest);
    if (privs.length) msg += `, this action is granted by the cluster privileges [${privs.join(',')}]`;
  } else if (action.startsWith('indices:')) {
    const privs = indexPrivilegesThatGrant(action);
    if (privs.length) msg += `, this action is granted by the index privileges [${privs.join(',')}]`;
  }
  return forbidden(msg);
}

function isPattern(n: string): boolean {
  return n === '_all' || n.startsWith('-') || n.includes('*') || n.includes('?');
}

/**
 * The gate's authorize: a cluster action needs a cluster privilege; an index action needs the action
 * granted on some index at all, and on every explicitly named index (except a scroll continuation,
 * which needs `indices:data/read/scroll` on some index only). Wildcard expressions are not
 * refused here: they expand to the indices {@link allowedIndices} lets through (as ES's
 * IndicesAndAliasesResolver does).
 */
export function authorize(auth: Authentication | undefined, action: string, indices?: string[], ownRequest = false): void {
  const a = asAuth(auth);
  if (!a) return;
  if (a.runAs) {
    a.runAs.audit?.(action, indices);
    if (a.runAs.denied) throw runAsDenied(a, action); // ES authorizes run-as first, for every action
    const access = a.runAs.auditAccess;
    if (access) {
      try {
        check(a, action, indices, ownRequest);
      } catch (e) {
        access(action, indices, false);
        throw e;
      }
      access(action, indices, true);
      return;
    }
  }
  check(a, action, indices, ownRequest);
}

function check(a: Authentication, action: string, indices: string[] | undefined, ownRequest: boolean): void {
  const p = a.permission;
  if (isClusterAction(action) || !action.startsWith('indices:')) {
    if (!checkCluster(p, action, ownRequest)) throw actionDenied(a, action, undefined, ownRequest);
    return;
  }
  if (!checkIndicesAction(p, action)) throw actionDenied(a, action);
  // Mirrors RBACEngine: a scroll continuation needs the action on some index only; its indices were
  // authorized when the scroll was opened, and ownership is the context's check (404, not 403).
  if (!indices || action === SCROLL) return;
  let denied: string[] | undefined;
  for (const expr of indices) {
    for (const n of expr.includes(',') ? expr.split(',') : [expr]) {
      if (n && !isPattern(n) && !checkIndex(p, action, n)) (denied ??= []).push(n);
    }
  }
  if (denied) throw actionDenied(a, action, `on indices [${denied.join(',')}]`);
}

/** Concrete index names `auth` may run `action` on (wildcard expansion). All of them when security is off. */
export function allowedIndices(auth: Authentication | undefined, action: string, indices: string[]): string[] {
  const a = asAuth(auth);
  if (!a) return indices;
  return indices.filter((n) => checkIndex(a.permission, action, n));
}

/** May `auth` run a cluster action (no throw)? */
export function isClusterActionAllowed(auth: Authentication | undefined, action: string, ownRequest = false): boolean {
  const a = asAuth(auth);
  return !a || (!a.runAs?.denied && checkCluster(a.permission, action, ownRequest));
}

/**
 * Scroll continuation (spec §7): ES authorizes `indices:data/read/scroll` if the role grants it on any
 * index, then refuses a context opened by someone else with 404 `search_context_missing_exception`
 * (never 403, so ids cannot be probed).
 * @example authorizeScroll(req.auth, ctx.owner, scrollId) // before touching the context
 */
export function authorizeScroll(auth: Authentication | undefined, contextOwner: Principal | undefined, id: string | number): void {
  const a = asAuth(auth);
  if (a?.runAs?.denied) throw runAsDenied(a, SCROLL);
  if (a && !checkIndicesAction(a.permission, SCROLL)) throw actionDenied(a, SCROLL);
  checkContextOwner(auth, contextOwner, id);
}

/** A PIT or scroll context used by someone other than its owner → 404 `search_context_missing_exception`. */
export function checkContextOwner(auth: Authentication | undefined, contextOwner: Principal | undefined, id: string | number): void {
  if (!auth) return;
  if (!sameOwner(ownerOf(auth), contextOwner)) throw searchContextMissing(id);
}

/**
 * Clear scroll / close PIT are always authorized; only the caller's own contexts are freed. Returns
 * whether this context may be freed by `auth`.
 */
export function mayFreeContext(auth: Authentication | undefined, contextOwner: Principal | undefined): boolean {
  if (!auth) return true;
  return sameOwner(ownerOf(auth), contextOwner);
}
