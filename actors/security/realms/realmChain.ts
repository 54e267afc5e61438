import type { Logger } from 'pino';
import type { Settings } from '../../config';
import type { EsRequest } from '../../wire/rest';
import { CredentialCache } from '../credentialCache';
import { unableToAuthenticateUser } from '../errors';
import type { CacheDigest } from '../hashing';
import type { RoleStore } from '../roleStore';
import type { AuthResult } from '../types';
import type { Authentication, User } from '../../wire/security';
import type { UserStore } from '../userStore';
import { FileRealm } from './file';
import { JwtRealm, jwtRealmConfigs } from './jwtRealm';
import { NativeRealm } from './native';
import { tokenPrincipal, type Realm, type RealmToken } from './realm';
import { ReservedRealm } from './reserved';

/** Builds a realm user's authentication (roles resolved now). */
export function realmAuthentication(user: User, realm: { name: string; type: string }, roles: RoleStore): Authentication {
  const ref = { name: realm.name, type: realm.type };
  return { user, authenticationRealm: ref, lookupRealm: ref, authenticationType: 'realm', permission: roles.permissionFor(user.roles) };
}

function namedRealms(settings: Settings, type: 'file' | 'native'): Array<{ name: string; order: number }> {
  const flat = settings.group(`xpack.security.authc.realms.${type}.`);
  const names = [...new Set(Object.keys(flat).map((k) => k.split('.')[0]))];
  // ES 8: file and native realms are on unless explicitly disabled; implicit ones come first.
  if (!names.length) return [{ name: `default_${type}`, order: type === 'file' ? -(2 ** 31) : -(2 ** 31) + 1 }];
  return names
    .filter((n) => flat[`${n}.enabled`] !== false && flat[`${n}.enabled`] !== 'false')
    .map((n) => ({ name: n, order: Number(flat[`${n}.order`] ?? 0) }));
}

/**
 * The realm chain (ES RealmsAuthenticator): reserved, then file, native and JWT realms by `order`. The
 * first realm that reads a credential defines it; realms supporting it try in order.
 */
export class RealmChain {
  readonly realms: Realm[];
  readonly reserved: ReservedRealm;
  readonly jwtRealms: JwtRealm[];
  readonly fileRealms: FileRealm[];
  readonly nativeRealms: NativeRealm[];
  /** Verified Basic credentials of all password realms (id = realm + username). */
  readonly passwordCache: CredentialCache<User>;

  private readonly roles: RoleStore;
  private authentications = new WeakMap<User, Authentication>();

  constructor(opts: {
    settings: Settings;
    users: UserStore;
    roles: RoleStore;
    configDir: string;
    log: Logger;
    digest: CacheDigest;
    bootstrapHash: () => string | undefined;
  }) {
    this.roles = opts.roles;
    this.passwordCache = new CredentialCache<User>(opts.digest);
    this.reserved = new ReservedRealm(opts.users, this.passwordCache, opts.bootstrapHash);
    this.fileRealms = namedRealms(opts.settings, 'file').map((r) => new FileRealm(r.name, r.order, opts.configDir, this.passwordCache, opts.log));
    this.nativeRealms = namedRealms(opts.settings, 'native').map((r) => new NativeRealm(r.name, r.order, opts.users, this.passwordCache));
    this.jwtRealms = jwtRealmConfigs(opts.settings).map((c) => new JwtRealm(c, opts.configDir, () => opts.roles.mappings.values(), opts.digest));
    this.realms = [this.reserved, ...this.fileRealms, ...this.nativeRealms, ...this.jwtRealms].sort((a, b) => a.order - b.order);
  }

  async start(): Promise<void> {
    await Promise.all([...this.fileRealms.map((r) => r.start()), ...this.jwtRealms.map((r) => r.start())]);
  }

  /** Reads the credential (first realm able to) or undefined; may throw BadCredentialsHeader. */
  token(req: EsRequest): RealmToken | undefined {
    for (const r of this.realms) {
      const t = r.token(req);
      if (t) return t;
    }
    return undefined;
  }

  /** Tries the realms supporting the token; all unsuccessful → 401 `unable to authenticate user`. */
  async authenticate(token: RealmToken, uri: string, challenges: string[], messages: string[]): Promise<AuthResult> {
    const r = await this.authenticateToken(token);
    if (r) return { status: 'success', authentication: r };
    return { status: 'terminate', error: unableToAuthenticateUser(tokenPrincipal(token), uri, challenges, messages) };
  }

  /** The authentication of a token, or undefined when no realm accepts it. */
  async authenticateToken(token: RealmToken): Promise<Authentication | undefined> {
    for (const realm of this.realms) {
      if (!realm.supports(token)) continue;
      const res = await realm.authenticate(token);
      if (res.status === 'success') return this.authenticationOf(res.user, realm);
    }
    return undefined;
  }

  /**
   * {@link authenticateToken} without waiting, when every realm in the way can answer at once (cached
   * verifications): the authentication, `null` when no realm accepts the token, or undefined when a
   * realm has slow work to do (then call authenticateToken).
   */
  authenticateCached(token: RealmToken): Authentication | null | undefined {
    for (const realm of this.realms) {
      if (!realm.supports(token)) continue;
      const res = realm.cached?.(token);
      if (!res) return undefined;
      if (res.status === 'success') return this.authenticationOf(res.user, realm);
    }
    return null;
  }

  /**
   * One authentication per verified user object (a cache entry), so warm requests build nothing;
   * dropped when roles change (the permission is resolved again).
   */
  private authenticationOf(user: User, realm: Realm): Authentication {
    const hit = this.authentications.get(user);
    if (hit && hit.authenticationRealm.name === realm.name && hit.authenticationRealm.type === realm.type) return hit;
    const a = realmAuthentication(user, realm, this.roles);
    this.authentications.set(user, a);
    return a;
  }

  /** Username/password against the password realms (token and API key `password` grants). */
  authenticatePassword(username: string, password: string): Promise<Authentication | undefined> {
    return this.authenticateToken({ kind: 'basic', username, password });
  }

  /** ES RealmsAuthenticator.lookupRunAsUser: the first realm (by order) that knows the user, and the user. */
  lookup(username: string): { user: User; realm: { name: string; type: string } } | undefined {
    for (const r of this.realms) {
      const user = r.lookup?.(username);
      if (user) return { user, realm: { name: r.name, type: r.type } };
    }
    return undefined;
  }

  /** Drops cached verifications of a user in every realm. */
  forget(username: string): void {
    for (const r of this.realms) r.forget?.(username);
  }

  /** Role mappings or roles changed: cached JWT results and resolved permissions are stale. */
  clearJwtCaches(): void {
    for (const r of this.jwtRealms) r.clearCache();
    this.authentications = new WeakMap();
  }

  stop(): void {
    for (const r of this.realms) r.stop?.();
  }
}
