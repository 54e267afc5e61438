import { illegalArgument, validationFailed } from '../../wire/esErrors';
import type { Routes } from '../../wire/rest';
import { authorize } from '../authorization';
import { renderAuthentication } from '../authView';
import { featureNotEnabled, forbidden, oauth2Error, unauthorized } from '../errors';
import type { IssuedPair } from '../oauth2Tokens';
import { authOf, bodyOf, type SecurityServices } from '../services';
import type { AuthenticationType } from '../../wire/security';

const A = 'cluster:admin/xpack/security/token/';
const GRANTS = ['password', '_kerberos', 'refresh_token', 'client_credentials'];

/** ES CreateTokenRequest.validate, per grant type. */
function validateGrant(body: Record<string, unknown>): string[] {
  const grant = body.grant_type as string;
  const has = (k: string) => body[k] !== undefined && body[k] !== null;
  const errors: string[] = [];
  const forbid = (...fields: string[]) => {
    for (const f of fields) if (has(f)) errors.push(`${f} is not supported with the ${grant} grant_type`);
  };
  if (grant === 'password') {
    if (!has('username')) errors.push('username is missing');
    if (!has('password')) errors.push('password is missing');
    forbid('refresh_token', 'kerberos_ticket');
  } else if (grant === 'client_credentials') {
    forbid('username', 'password', 'refresh_token', 'kerberos_ticket');
  } else if (grant === 'refresh_token') {
    forbid('username', 'password', 'kerberos_ticket');
    if (!has('refresh_token')) errors.push('refresh_token is missing');
  } else if (grant === '_kerberos') {
    errors.push('kerberos_ticket is not supported by this node');
  }
  return errors;
}

/** POST and DELETE /_security/oauth2/token. */
export function tokenRoutes(router: Routes, s: SecurityServices): void {
  router.add(
    'POST',
    '/_security/oauth2/token',
    async (req) => {
      if (!s.tokensEnabled) throw featureNotEnabled('security_tokens');
      const body = bodyOf(req);
      const grant = body.grant_type;
      if (typeof grant !== 'string' || !GRANTS.includes(grant)) {
        throw oauth2Error('unsupported_grant_type', `Validation Failed: 1: grant_type only supports the values: [${GRANTS.join(', ')}];`);
      }
      const errors = validateGrant(body);
      if (errors.length) throw oauth2Error('invalid_request', validationFailed(errors).message);
      const caller = authOf(req);
      const action = grant === 'refresh_token' ? `${A}refresh` : `${A}create`;
      authorize(caller, action);
      let issued: IssuedPair;
      if (grant === 'password') {
        const username = String(body.username);
        const subject = await s.realms.authenticatePassword(username, String(body.password));
        if (!subject) throw unauthorized(`unable to authenticate user [${username}] for action [${A}create]`, s.challenges);
        issued = await s.tokens.create(subject, caller, 'password', true, undefined, req.opaqueId);
      } else if (grant === 'client_credentials') {
        // A service account may mint a token when its role grants token creation (elastic/kibana,
        // service_accounts/30_oauth_token.yml); elastic/fleet-server was refused above with ES's 403.
        issued = await s.tokens.create(caller, caller, 'client_credentials', false, undefined, req.opaqueId);
      } else {
        issued = await s.tokens.refresh(String(body.refresh_token), caller, req.opaqueId);
      }
      return {
        body: {
          access_token: issued.access,
          type: 'Bearer',
          expires_in: Math.round(s.tokens.timeoutMs / 1000),
          ...(body.scope !== undefined ? { scope: 'full' } : {}),
          ...(issued.refresh ? { refresh_token: issued.refresh } : {}),
          // The authentication the token stands for, as it was granted (`realm` for a password grant).
          authentication: renderAuthentication({ ...s.tokens.authOf(issued.record), authenticationType: issued.record.subject.authenticationType as AuthenticationType }),
        },
      };
    },
    { kind: 'handler' },
  );

  router.add(
    'DELETE',
    '/_security/oauth2/token',
    async (req) => {
      if (!s.tokensEnabled) throw featureNotEnabled('security_tokens');
      const body = bodyOf(req);
      const str = (k: string) => (typeof body[k] === 'string' && body[k] ? (body[k] as string) : undefined);
      const token = str('token');
      const refresh = str('refresh_token');
      const realm = str('realm_name');
      const username = str('username');
      if (token && refresh) throw illegalArgument('only one of [token, refresh_token] may be sent per request');
      if ((realm || username) && (token || refresh)) throw validationFailed(['token string must not be provided when realm name or username is specified']);
      if (!realm && !username && !token && !refresh) throw validationFailed(['token string must be provided when not specifying a realm name or a username']);
      authorize(authOf(req), `${A}invalidate`);
      let invalidated = 0;
      let previously = 0;
      if (token || refresh) {
        const rec = s.tokens.find((token ?? refresh)!, token ? 'access' : 'refresh');
        if (!rec) return { status: 404, body: { invalidated_tokens: 0, previously_invalidated_tokens: 0, error_count: 0 } };
        const r = await s.tokens.invalidate(rec, { access: !!token, refresh: !!refresh }, req.opaqueId);
        invalidated = r.invalidated;
        previously = r.previously;
      } else {
        for (const rec of s.tokens.activeFor(realm, username)) {
          const r = await s.tokens.invalidate(rec, { access: true, refresh: true }, req.opaqueId);
          invalidated += r.invalidated;
          previously += r.previously;
        }
      }
      return { body: { invalidated_tokens: invalidated, previously_invalidated_tokens: previously, error_count: 0 } };
    },
    { kind: 'handler' },
  );
}
