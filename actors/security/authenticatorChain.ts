import type { EsRequest } from '../edge/router';
import type { ApiKeyService } from './apiKeys';
import { anonymousNotAllowed, missingCredentials, unauthorized } from './errors';
import type { TokenService } from './oauth2Tokens';
import { authorizationHeader, BadCredentialsHeader } from './realms/realm';
import type { RealmChain } from './realms/realmChain';
import type { ServiceAccountService } from './serviceAccounts';
import type { Authentication, AuthResult } from './types';

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
 */
export class AuthenticatorChain {
  constructor(private readonly p: ChainParts) {}

  /** Resolves who is calling or throws ES's 401. */
  async authenticate(req: EsRequest): Promise<Authentication> {
    const { p } = this;
    const h = authorizationHeader(req);
    const messages: string[] = [];
    if (h?.scheme === 'bearer' && h.value) {
      // Service tokens start with the base64 of their magic bytes 00 01 00 01: skip the async step otherwise.
      if (h.value.startsWith('AAEAA')) {
        const sa = take(await p.serviceAccounts.authenticate(h.value, p.challenges), 'service account', messages);
        if (sa) return sa;
      }
      if (p.tokensEnabled) {
        const t = take(await this.known(() => p.tokens.authenticate(h.value)), 'oauth2 token', messages);
        if (t) return t;
      }
    } else if (h?.scheme === 'apikey' && p.apiKeysEnabled) {
      const k = take(await this.known(() => p.apiKeys.authenticate(h.value)), 'API key', messages);
      if (k) return k;
    }
    let token;
    try {
      token = p.realms.token(req);
    } catch (e) {
      if (e instanceof BadCredentialsHeader) throw unauthorized(e.message, p.challenges);
      throw e;
    }
    if (token) {
      const r = await p.realms.authenticate(token, req.uri, p.challenges, messages);
      if (r.status === 'success') return r.authentication;
      if (r.status === 'terminate') throw r.error;
    }
    if (messages.length) throw anonymousNotAllowed(p.challenges, messages);
    throw missingCredentials(req.uri, p.challenges);
  }

  /**
   * A step's result; a credential this node does not know is asked again once the node has read
   * the log's end: a token or API key created through another node a moment ago works at once.
   */
  private async known(step: () => AuthResult): Promise<AuthResult> {
    const r = step();
    if (r.status !== 'continue' || !r.unknown || !this.p.catchUp) return r;
    await this.p.catchUp();
    return step();
  }
}
