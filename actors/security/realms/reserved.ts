import type { EsRequest } from '../../wire/rest';
import type { CredentialCache } from '../credentialCache';
import { verifySecret } from '../hashing';
import type { User } from '../../wire/security';
import type { UserStore } from '../userStore';
import { basicToken, type Realm, type RealmResult, type RealmToken } from './realm';

/** Built-in users of the reserved realm and their roles. Only `elastic` has a bootstrap password. */
export const RESERVED_USERS: Record<string, { roles: string[] }> = {
  elastic: { roles: ['superuser'] },
  kibana_system: { roles: ['kibana_system'] },
};

export const isReservedUser = (name: string) => Object.hasOwn(RESERVED_USERS, name);

const CONTINUE: RealmResult = Object.freeze({ status: 'continue' });

/** The user object of a reserved user (`metadata._reserved`). */
export function reservedUser(username: string, enabled = true): User {
  return { username, roles: RESERVED_USERS[username].roles, full_name: null, email: null, metadata: { _reserved: true }, enabled };
}

/**
 * The reserved realm (ES ReservedRealm): `elastic` authenticates with the password changed through the
 * API, else `bootstrap.password` (ELASTIC_PASSWORD), else the one generated at first start (persisted
 * hashed as a `user.password_changed` fact). Other reserved users need a password set through the API.
 */
export class ReservedRealm implements Realm {
  readonly name = 'reserved';
  readonly type = 'reserved';
  readonly order = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly users: UserStore,
    private readonly cache: CredentialCache<User>,
    /** Hash of `bootstrap.password`, used while `elastic` has no stored password. */
    private readonly bootstrapHash: () => string | undefined,
  ) {}

  token(req: EsRequest): RealmToken | undefined {
    return basicToken(req);
  }

  supports(t: RealmToken): boolean {
    return t.kind === 'basic' && isReservedUser(t.username);
  }

  /** The stored hash of a reserved user's password, if it has one. */
  passwordHash(username: string): string | undefined {
    return this.users.get(username)?.passwordHash ?? (username === 'elastic' ? this.bootstrapHash() : undefined);
  }

  cached(t: RealmToken): RealmResult | undefined {
    if (t.kind !== 'basic' || !isReservedUser(t.username)) return CONTINUE;
    const stored = this.users.get(t.username);
    if (stored && !stored.enabled) return { status: 'continue', message: `user [${t.username}] is disabled` };
    const hit = this.cache.get(`reserved\u0000${t.username}`, t.password);
    return hit ? { status: 'success', user: hit } : undefined;
  }

  async authenticate(t: RealmToken): Promise<RealmResult> {
    const known = this.cached(t);
    if (known) return known;
    if (t.kind !== 'basic') return CONTINUE;
    const key = `reserved\u0000${t.username}`;
    const hash = this.passwordHash(t.username);
    if (!hash || !(await verifySecret(t.password, hash))) return { status: 'continue' };
    if (this.passwordHash(t.username) !== hash) return this.authenticate(t); // changed meanwhile
    const user = reservedUser(t.username);
    this.cache.set(key, t.password, user);
    return { status: 'success', user };
  }

  lookup(username: string): User | undefined {
    return isReservedUser(username) ? reservedUser(username, this.users.get(username)?.enabled ?? true) : undefined;
  }

  forget(username: string): void {
    this.cache.delete(`reserved\u0000${username}`);
  }
}
