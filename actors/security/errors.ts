import { EsError, HttpBodyError } from '../wire/esErrors';

/**
 * Security error bodies in ES's wording (spec security-tokens.md §1–§3). 401s carry the
 * `WWW-Authenticate` challenges both as headers and in the body's `header`.
 */

/** Default challenges: realms (Basic), token service (Bearer), API keys. */
export function defaultChallenges(opts: { bearer: boolean; apiKey: boolean }): string[] {
  const out = ['Basic realm="security", charset="UTF-8"'];
  if (opts.bearer) out.push('Bearer realm="security"');
  if (opts.apiKey) out.push('ApiKey');
  return out;
}

/** A 401 `security_exception` with challenges and optional `es.*` metadata. */
export function unauthorized(reason: string, challenges: string[], meta?: Record<string, unknown>): EsError {
  return new EsError('security_exception', 401, reason, { header: { 'WWW-Authenticate': challenges }, ...(meta ? { meta } : {}) });
}

/** `unsuccessful` messages become `additional_unsuccessful_credentials` (string if one, else array). */
export function unsuccessfulMeta(messages: string[]): Record<string, unknown> | undefined {
  if (!messages.length) return undefined;
  return { additional_unsuccessful_credentials: messages.length === 1 ? messages[0] : messages };
}

export const missingCredentials = (uri: string, challenges: string[]) =>
  unauthorized(`missing authentication credentials for REST request [${uri}]`, challenges);

export const unableToAuthenticateUser = (principal: string, uri: string, challenges: string[], messages: string[] = []) =>
  unauthorized(`unable to authenticate user [${principal}] for REST request [${uri}]`, challenges, unsuccessfulMeta(messages));

export const anonymousNotAllowed = (challenges: string[], messages: string[]) =>
  unauthorized('unable to authenticate with provided credentials and anonymous access is not allowed for this request', challenges, unsuccessfulMeta(messages));

/** Expired or invalidated access token (ES TokenService.expiredTokenException). */
export const tokenExpired = () =>
  unauthorized('token expired', ['Bearer realm="security", error="invalid_token", error_description="The access token expired"']);

export const serviceAccountFailed = (account: string, tokenName: string, challenges: string[]) =>
  unauthorized(`failed to authenticate service account [${account}] with token name [${tokenName}]`, challenges);

/** A 403 `security_exception` (never carries `header`). */
export const forbidden = (reason: string) => new EsError('security_exception', 403, reason);

/** RFC 6749 error body of the token endpoint (HTTP 400, not the ES envelope). */
export const oauth2Error = (error: 'unsupported_grant_type' | 'invalid_request' | 'invalid_grant', description: string) =>
  new HttpBodyError(400, { error, error_description: description });

/** 400 `feature_not_enabled_exception` for the token service or API keys. */
export const featureNotEnabled = (feature: 'security_tokens' | 'api_keys') =>
  new EsError('feature_not_enabled_exception', 400, feature === 'api_keys' ? 'api keys are not enabled' : 'security tokens are not enabled', {
    meta: { 'disabled.feature': feature },
  });

/** Security APIs called while `xpack.security.enabled: false`. */
export const securityDisabled = () =>
  new EsError(
    'exception',
    500,
    'Security must be explicitly enabled when using a [basic] license. Enable security by setting [xpack.security.enabled] to [true] in the elasticsearch.yml file and restart the node.',
  );
