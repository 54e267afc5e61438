import type { SecurityGate } from '../wire/rest';
import type { Authentication } from '../wire/security';

/**
 * When each credential last authenticated a request on this node, kept in memory only (ES keeps no
 * such field; the console adds it). Keys: `apikey:<id>`, `token:<tokenId>`,
 * `servicetoken:<account>/<name>`. Bounded: the least recently used entries are dropped first.
 */
export class LastUse {
  private readonly at = new Map<string, number>();
  /** Each (cached, shared) authentication's key, built once rather than on every request. */
  private readonly keys = new WeakMap<object, string | null>();

  constructor(private readonly max = 200_000, private readonly now: () => number = Date.now) {}

  /** Records a successful authentication (one Map delete+set: moves the key to the young end). */
  note(auth: Authentication | undefined): void {
    if (!auth || typeof auth !== 'object') return;
    let key = this.keys.get(auth);
    if (key === undefined) this.keys.set(auth, (key = credentialKey(auth) ?? null));
    if (!key) return;
    this.at.delete(key);
    this.at.set(key, this.now());
    if (this.at.size > this.max) this.at.delete(this.at.keys().next().value as string);
  }

  get(key: string): number | undefined {
    return this.at.get(key);
  }

  get size(): number {
    return this.at.size;
  }
}

/** The credential a request authenticated with; undefined for passwords and JWTs (no credential record). */
export function credentialKey(a: Authentication | undefined): string | undefined {
  if (!a || !a.user) return undefined;
  if (a.authenticationType === 'api_key' && a.apiKey) return `apikey:${a.apiKey.id}`;
  if (a.tokenId) return `token:${a.tokenId}`;
  if (a.token && a.authenticationRealm.type === '_service_account') return `servicetoken:${a.user.username}/${a.token.name}`;
  return undefined;
}

/**
 * The gate the edge uses, recording each successful authentication in `lastUse`. Everything else is
 * the wrapped gate's: the same errors, the same result.
 */
export function recordingGate(gate: SecurityGate, lastUse: LastUse): SecurityGate {
  const noted = (auth: Authentication | undefined) => {
    lastUse.note(auth);
    return auth;
  };
  return {
    // A warm authentication comes back as a value: keep it one (no promise per request).
    authenticate(req) {
      const auth = gate.authenticate(req);
      return auth instanceof Promise ? auth.then(noted) : noted(auth);
    },
    authorize: (auth, action, indices) => gate.authorize(auth, action, indices),
  };
}
