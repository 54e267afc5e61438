import type { SecurityGate } from '../wire/rest';
import type { Authentication } from '../wire/security';

/** Last uses are recorded to the second: more often is work per request nobody reads. */
const NOTE_EVERY_MS = 1000;

/**
 * When each credential last authenticated a request on this node, kept in memory only (ES keeps no
 * such field; the console adds it). Keys: `apikey:<id>`, `token:<tokenId>`,
 * `servicetoken:<account>/<name>`. Bounded: the least recently used entries are dropped first.
 */
export class LastUse {
  private readonly at = new Map<string, number>();
  /**
   * Each (cached, shared) authentication's key, built once rather than on every request, and when
   * it was last noted: within a second of that, a request only compares two numbers.
   */
  private readonly keys = new WeakMap<object, { key: string | null; noted: number }>();

  constructor(private readonly max = 200_000, private readonly now: () => number = Date.now) {}

  /** Records a successful authentication (one Map delete+set at most a second: moves the key to the young end). */
  note(auth: Authentication | undefined): void {
    if (!auth || typeof auth !== 'object') return;
    let k = this.keys.get(auth);
    if (k === undefined) this.keys.set(auth, (k = { key: credentialKey(auth) ?? null, noted: -Infinity }));
    if (!k.key) return;
    const now = this.now();
    if (now - k.noted < NOTE_EVERY_MS && this.at.has(k.key)) return;
    k.noted = now;
    this.at.delete(k.key);
    this.at.set(k.key, now);
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
