import type { EsRequest } from '../../wire/rest';
import type { CredentialCache } from '../credentialCache';
import { verifySecret } from '../hashing';
import type { User } from '../../wire/security';
import type { StoredUser, UserStore } from '../userStore';
import { isReservedUser } from './reserved';
import { basicToken, type Realm, type RealmResult, type RealmToken } from './realm';

/** The REST/`_authenticate` view of a stored user (no hash). */
export function toUser(u: StoredUser): User {
  return { username: u.username, roles: u.roles, full_name: u.full_name, email: u.email, metadata: u.metadata, enabled: u.enabled };
}

const CONTINUE: RealmResult = Object.freeze({ status: 'continue' });

/**
 * The native realm (ES NativeRealm): users created through PUT /_security/user, persisted as `user.*`
 * facts with a PBKDF2 password hash. Verification runs on the libuv pool, once per password per node.
 */
export class NativeRealm implements Realm {
  readonly type = 'native';

  constructor(
    readonly name: string,
    readonly order: number,
    private readonly users: UserStore,
    private readonly cache: CredentialCache<User>,
  ) {}

  token(req: EsRequest): RealmToken | undefined {
    return basicToken(req);
  }

  supports(t: RealmToken): boolean {
    return t.kind === 'basic' && !isReservedUser(t.username);
  }

  cached(t: RealmToken): RealmResult | undefined {
    if (t.kind !== 'basic') return CONTINUE;
    const stored = this.users.get(t.username);
    if (!stored || stored.realm !== 'native' || !stored.passwordHash) return CONTINUE;
    if (!stored.enabled) return { status: 'continue', message: `user [${t.username}] is disabled` };
    const hit = this.cache.get(`${this.name}\u0000${t.username}`, t.password);
    return hit ? { status: 'success', user: hit } : undefined;
  }

  async authenticate(t: RealmToken): Promise<RealmResult> {
    const known = this.cached(t);
    if (known) return known;
    if (t.kind !== 'basic') return CONTINUE;
    const stored = this.users.get(t.username);
    if (!stored?.passwordHash) return CONTINUE; // (cached() answered this case already)
    const key = `${this.name}\u0000${t.username}`;
    if (!(await verifySecret(t.password, stored.passwordHash))) return { status: 'continue' };
    // The user may have changed while the hash was being checked.
    const now = this.users.get(t.username);
    if (now !== stored) return this.authenticate(t);
    const user = toUser(stored);
    this.cache.set(key, t.password, user);
    return { status: 'success', user };
  }

  lookup(username: string): User | undefined {
    const stored = this.users.get(username);
    return stored && stored.realm === 'native' ? toUser(stored) : undefined;
  }

  forget(username: string): void {
    this.cache.delete(`${this.name}\u0000${username}`);
  }
}
