/**
 * Run-as (ES AuthenticatorChain.maybeLookupRunAsUser + AuthorizationService.authorizeRunAs): a caller
 * authenticated by a realm, an access token or an API key sends `es-security-runas-user: <name>` and
 * acts as that user, if its roles grant `run_as` on the name. The user is looked up in the realms
 * that can (reserved, file, native, by order); the request then carries the user's roles, its realm
 * as `lookup_realm`, and the caller as the authenticating subject. A refused run-as (no privilege, no
 * such user, a disabled one, an empty name) answers ES's run-as 403 for whatever action the request is.
 */
import type { EsRequest, Authz } from '../wire/rest';
import type { Authentication } from '../wire/security';
import { runAsDenied } from './authorization';
import { checkRunAs, compileRoles } from './permission';
import type { RealmChain } from './realms/realmChain';
import type { RoleStore } from './roleStore';
import type { AuditTrail } from './auditTrail';

/** ES AuthenticationServiceField.RUN_AS_USER_HEADER. */
export const RUN_AS_HEADER = 'es-security-runas-user';

/** Nothing granted: the permission of a refused run-as (no action, no index may slip through). */
const NOTHING = compileRoles({});

/**
 * ES Authentication.supportsRunAs: realm, token and API key authentications may run as another user;
 * service accounts may not, nor a run-as again. Other callers' header is ignored, as ES ignores it.
 */
const supportsRunAs = (a: Authentication) =>
  !a.runAs && a.authenticationRealm.type !== '_service_account' && (a.authenticationType === 'realm' || a.authenticationType === 'token' || a.authenticationType === 'api_key');

/** The action ES would authorize on routes the gate does not authorize (their run-as 403 names it). */
function actionOf(req: EsRequest): string {
  const p = req.path;
  if (p.startsWith('/_security/user/_privileges')) return 'cluster:admin/xpack/security/user/list_privileges';
  if (p.startsWith('/_security/user/_has_privileges')) return 'cluster:admin/xpack/security/user/has_privileges';
  if (p.startsWith('/_async_search/status/')) return 'cluster:monitor/async_search/status';
  if (p.startsWith('/_async_search/')) return req.method === 'DELETE' ? 'indices:data/read/async_search/delete' : 'indices:data/read/async_search/get';
  return 'cluster:admin/xpack/security/user/authenticate';
}

/**
 * The authentication a request acts with: `auth` itself without the header (the warm path: one header
 * lookup), else the run-as authentication. A refused run-as throws ES's 403 here when the route's
 * action is known or the route authorizes nothing; a route that authorizes itself gets an
 * authentication every authorization refuses.
 */
export function applyRunAs(auth: Authentication, req: EsRequest, authz: Authz | undefined, realms: RealmChain, roles: RoleStore, trail?: AuditTrail): Authentication {
  const header = req.headers[RUN_AS_HEADER];
  if (header === undefined || !supportsRunAs(auth)) return auth;
  const name = Array.isArray(header) ? (header[0] ?? '') : header;
  const found = name ? realms.lookup(name) : undefined;
  const denied = !found || !found.user.enabled || !checkRunAs(auth.permission, name);
  const ra: Authentication = {
    user: found?.user ?? { username: name, roles: [], full_name: null, email: null, metadata: {}, enabled: true },
    authenticationRealm: auth.authenticationRealm,
    lookupRealm: found && !denied ? found.realm : auth.authenticationRealm,
    authenticationType: auth.authenticationType,
    ...(auth.tokenId ? { tokenId: auth.tokenId } : {}),
    permission: found && !denied ? roles.permissionFor(found.user.roles) : NOTHING,
    runAs: { user: auth.user, ...(auth.apiKey ? { apiKey: auth.apiKey } : {}), permission: auth.permission, denied },
  };
  if (trail?.enabled) {
    // the audit line names the action authorized first: the gate's, or the one a handler authorizes itself
    const lookupRealm = found?.realm.name;
    const requestId = trail.requestId();
    ra.runAs!.audit = (action, indices) => {
      delete ra.runAs!.audit;
      trail.runAs(ra, req, requestId, { granted: !denied, action, ...(indices ? { indices } : {}), ...(lookupRealm !== undefined ? { lookupRealm } : {}) });
    };
    if (!denied) ra.runAs!.auditAccess = (action, indices, granted) => trail.access(ra, req, requestId, { granted, action, ...(indices ? { indices } : {}) });
    if (authz?.kind !== 'handler' && (denied || authz === undefined || authz.kind === 'none')) ra.runAs!.audit(authz?.kind === 'cluster' || authz?.kind === 'indices' ? authz.action : actionOf(req), authz?.kind === 'indices' ? authz.indices(req) : undefined);
  }
  if (!denied) return ra;
  if (authz?.kind === 'cluster' || authz?.kind === 'indices') throw runAsDenied(ra, authz.action);
  if (authz?.kind === 'handler') return ra; // its own authorize() call refuses it, naming its action
  throw runAsDenied(ra, actionOf(req));
}
