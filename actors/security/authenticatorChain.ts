import type { EsRequest } from '../wire/rest';
import type { ApiKeyService } from './apiKeys';
import { anonymousNotAllowed, missingCredentials, unableToAuthenticateUser, unauthorized } from './errors';
import type { TokenService } from './oauth2Tokens';
import { authorizationHeader, BadCredentialsHeader, tokenPrincipal, type RealmToken } from './realms/realm';
import type { RealmChain } from './realms/realmChain';
import type { ServiceAccountService } from './serviceAccounts';
import type { AuthResult } from './types';
import type { Authentication } from '../wire/security';

export interface ChainParts {
  serviceAccounts: ServiceAccountService;
  tokens: TokenService;
  apiKeys: ApiKeyService;
  realms: RealmChain;
  tokensEnabled: boolean;
  apiKeysEnabled: boolean;
  /** Default `WWW-Authenticate` challenges of this node. */
  challenges: string[];
  /** Waits until this node has folded every credential fact appended so far (another node's). */
  catchUp?: () => Promise<void>;
}

/** One step's result: the authentication, a thrown 401, or its message kept for later. */
function take(r: AuthResult, prefix: string, messages: string[]): Authentication | undefined {
  if (r.status === 'success') return r.authentication;
  if (r.status === 'terminate') throw r.error;
  if (r.message) messages.push(`${prefix}: ${r.message}`);
  return undefined;
}

/**
 * ES AuthenticatorChain, in the seed's order: service accounts → token service → API key service →
 * realm chain. Each step succeeds (stop), is unsuccessful (continue; its message is kept for
 * `additional_unsuccessful_credentials`) or terminates with a 401.
 *
 * Warm requests (a cached verification at every step in the way) are answered without a promise, so
 * they cost no promise allocations and no microtask trips; anything that must hash or wait returns
 * a promise.
 */
export class AuthenticatorChain {
  constructor(private readonly p: ChainParts) {}

  /** Resolves who is calling or throws ES's 401; a value when nothing had to wait, else a promise. */
  authenticate(req: EsRequest): Authentication | Promise<Authentication> {
    const { p } = this;
    const h = authorizationHeader(req);
    const messages: string[] = [];
    if (h?.scheme === 'bearer' && h.value) {
      // Service tokens start with the base64 of their magic bytes 00 01 00 01: skip the step otherwise.
      if (h.value.startsWith('AAEAA')) {
        const r = p.serviceAccounts.authenticate(h.value, p.challenges);
        if (r instanceof Promise) return r.then((x) => this.afterServiceAccount(req, h.value, x, messages));
        return this.afterServiceAccount(req, h.value, r, messages);
      }
      return this.afterServiceAccount(req, h.value, undefined, messages);
    }
    if (h?.scheme === 'apikey' && p.apiKeysEnabled) {
      const r = this.known(() => p.apiKeys.authenticate(h.value));
      if (r instanceof Promise) {
        return r.then((x) => take(x, 'API key', messages) ?? this.realmStep(req, messages));
      }
      const k = take(r, 'API key', messages);
      if (k) return k;
    }
    return this.realmStep(req, messages);
  }

  /** Steps 2 and 4 for a Bearer credential, once the service account step answered (or was skipped). */
  private afterServiceAccount(req: EsRequest, bearer: string, sa: AuthResult | undefined, messages: string[]): Authentication | Promise<Authentication> {
    const { p } = this;
    if (sa) {
      const a = take(sa, 'service account', messages);
      if (a) return a;
    }
    if (p.tokensEnabled) {
      const r = this.known(() => p.tokens.authenticate(bearer));
      if (r instanceof Promise) {
        return r.then((x) => take(x, 'oauth2 token', messages) ?? this.realmStep(req, messages));
      }
      const t = take(r, 'oauth2 token', messages);
      if (t) return t;
    }
    return this.realmStep(req, messages);
  }

  /** Step 4, the realm chain (reserved, file, native, JWT), or ES's 401 when nothing authenticated. */
  private realmStep(req: EsRequest, messages: string[]): Authentication | Promise<Authentication> {
    const { p } = this;
    let token;
    try {
      token = p.realms.token(req);
    } catch (e) {
      if (e instanceof BadCredentialsHeader) throw unauthorized(e.message, p.challenges);
      throw e;
    }
    if (token) {
      const warm = p.realms.authenticateCached(token);
      if (warm) return warm;
      if (warm === undefined) return this.realmsSlow(token, req, messages);
      throw unableToAuthenticateUser(tokenPrincipal(token), req.uri, p.challenges, messages);
    }
    if (messages.length) throw anonymousNotAllowed(p.challenges, messages);
    throw missingCredentials(req.uri, p.challenges);
  }

  private async realmsSlow(token: RealmToken, req: EsRequest, messages: string[]): Promise<Authentication> {
    const r = await this.p.realms.authenticate(token, req.uri, this.p.challenges, messages);
    if (r.status === 'success') return r.authentication;
    if (r.status === 'terminate') throw r.error;
    // authenticate answers success or terminate only
    throw unableToAuthenticateUser(tokenPrincipal(token), req.uri, this.p.challenges, messages);
  }

  /**
   * A step's result; a credential this node does not know is asked again once the node has read
   * the log's end: a token or API key created through another node a moment ago works at once.
   */
  private known(step: () => AuthResult): AuthResult | Promise<AuthResult> {
    const r = step();
    if (r.status !== 'continue' || !r.unknown || !this.p.catchUp) return r;
    return this.p.catchUp().then(step);
  }
}
