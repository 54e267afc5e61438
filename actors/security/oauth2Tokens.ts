import { v7 as uuidv7 } from 'uuid';
import { Aggregate, type Envelope } from '../../streams';
import {
  accessTokenMachine,
  evolveToken,
  inRefreshWindow,
  tokenDocExpiresAt,
  type AccessTokenRecord,
  type SealedPair,
  type TokenCreated,
  type TokenSubject,
} from '../../machines/accessToken.machine';
import { oauth2Error, tokenExpired } from './errors';
import { newTokenValue, openPair, sealPair, tokenFamily } from './tokenPairSeal';
import { LostRace, type FactLog } from './factLog';
import { sha256Url } from './hashing';
import { ownerOf, sameOwner } from './ownership';
import type { Permission } from '../wire/security';
import type { RoleStore } from './roleStore';
import type { AuthResult } from './types';
import type { Authentication } from '../wire/security';

/** Refresh tokens live 24h from their document's creation (ES ExpiredTokenRemover.MAXIMUM_TOKEN_LIFETIME_HOURS). */
export const REFRESH_LIFE_MS = 24 * 3_600_000;

export { openPair, sealPair } from './tokenPairSeal';

/** The subject snapshot stored in `token.created` (never a secret). */
export function subjectOf(a: Authentication): TokenSubject {
  const u = a.user;
  return {
    username: u.username,
    roles: u.roles,
    full_name: u.full_name,
    email: u.email,
    metadata: u.metadata,
    realm: { ...(a.runAs ? a.lookupRealm : a.authenticationRealm) },
    authenticationType: a.authenticationType,
    ...(a.apiKey ? { apiKey: { ...a.apiKey } } : {}),
    ...(a.token && a.authenticationRealm.type === '_service_account' ? { serviceToken: { name: a.token.name, type: a.token.type } } : {}),
  };
}

export interface IssuedPair {
  access: string;
  refresh?: string;
  record: AccessTokenRecord;
}

/** `xpack.security.authc.token.reuse_detection`: `off` (ES) or `revoke_family` (OAuth 2.0 Security BCP). */
export type ReuseDetection = 'off' | 'revoke_family';
export const REUSE_DETECTION_SETTING = 'xpack.security.authc.token.reuse_detection';

/** Reads the setting; anything else stops the start with ES's wording for a bad value. */
export function reuseDetectionOf(v: string): ReuseDetection {
  if (v === 'off' || v === 'revoke_family') return v;
  throw new Error(`failed to parse value [${v}] for setting [${REUSE_DETECTION_SETTING}], must be one of [off, revoke_family]`);
}

export interface InvalidateResult {
  invalidated: number;
  previously: number;
}

/**
 * The token service (ES TokenService): token pairs as event-sourced machine actors hydrated on demand.
 * Lookup is by SHA-256 of the token string (the string itself is never stored, logged or published).
 */
export class TokenService {
  private readonly records = new Map<string, AccessTokenRecord>();
  private readonly byAccess = new Map<string, string>();
  private readonly byRefresh = new Map<string, string>();
  private readonly auths = new Map<string, Authentication>();
  /**
   * A service account's authentication by its token (set once service accounts are up): a token a
   * service account minted (client_credentials) carries that account's privileges.
   */
  serviceAccountAuth?: (account: string, tokenName: string, tokenType: string) => Authentication;

  constructor(
    private readonly facts: FactLog,
    private readonly roles: RoleStore,
    private readonly apiKeyPermission: (keyId: string) => Permission | undefined,
    readonly timeoutMs: number,
    private readonly now: () => number = Date.now,
    /** `xpack.security.authc.token.reuse_detection` (ours): `revoke_family` revokes a re-used token's family. */
    readonly reuseDetection: ReuseDetection = 'off',
  ) {}

  get size(): number {
    return this.records.size;
  }

  get(tokenId: string): AccessTokenRecord | undefined {
    return this.records.get(tokenId);
  }

  /** Folds a `token.*` fact. */
  apply(e: Envelope): void {
    const prev = this.records.get(e.aggregateId);
    const next = evolveToken(prev, e);
    if (!next || next === prev) return;
    this.records.set(next.tokenId, next);
    this.byAccess.set(next.accessHash, next.tokenId);
    if (next.refreshHash) this.byRefresh.set(next.refreshHash, next.tokenId);
    this.auths.delete(next.tokenId);
  }

  /**
   * Another node invalidated tokens (`<tokenId>#access|refresh`): refuse them here at once, even if the
   * fact has not arrived yet (invalidation is monotonic, so marking early is safe).
   */
  markInvalidated(ids: string[]): void {
    for (const ref of ids) {
      const [id, half] = ref.split('#');
      const r = this.records.get(id);
      if (r && half === 'access' && !r.accessInvalidated) this.records.set(id, { ...r, accessInvalidated: true });
      if (r && half === 'refresh' && !r.refreshInvalidated) this.records.set(id, { ...r, refreshInvalidated: true });
      this.auths.delete(id);
    }
  }

  /** Roles changed: cached authentications are rebuilt on next use. */
  clearCache(): void {
    this.auths.clear();
  }

  /** Authenticator step 2 (`oauth2 token`): success, `invalid token` (continue) or hard `token expired`. */
  authenticate(bearer: string): AuthResult {
    const id = this.byAccess.get(sha256Url(bearer));
    const rec = id ? this.records.get(id) : undefined;
    if (!rec) return { status: 'continue', message: 'invalid token', unknown: true };
    if (rec.accessInvalidated || rec.status === 'invalidated' || rec.status === 'expired' || this.now() >= rec.accessExpiresAt) {
      return { status: 'terminate', error: tokenExpired() };
    }
    let a = this.auths.get(rec.tokenId);
    if (!a) this.auths.set(rec.tokenId, (a = this.authOf(rec)));
    return { status: 'success', authentication: a };
  }

  /** The authentication a token carries (`authentication_type: token`, owner's roles). */
  authOf(rec: Pick<AccessTokenRecord, 'subject' | 'tokenId'>): Authentication {
    const s = rec.subject;
    if (s.serviceToken && this.serviceAccountAuth) {
      // as ES shows it: the service account, `authentication_type: token`, the service token's name and type
      return { ...this.serviceAccountAuth(s.username, s.serviceToken.name, s.serviceToken.type), authenticationType: 'token', tokenId: rec.tokenId };
    }
    const permission = (s.apiKey && this.apiKeyPermission(s.apiKey.id)) || this.roles.permissionFor(s.apiKey ? [] : s.roles);
    return {
      user: { username: s.username, roles: s.roles, full_name: s.full_name, email: s.email, metadata: s.metadata, enabled: true },
      authenticationRealm: s.realm,
      lookupRealm: s.realm,
      authenticationType: 'token',
      ...(s.apiKey ? { apiKey: s.apiKey } : {}),
      tokenId: rec.tokenId,
      permission,
    };
  }

  /** Mints a pair for `subject`, created by `client`; `withRefresh` is false for client_credentials. */
  async create(subject: Authentication, client: Authentication, grantType: TokenCreated['grantType'], withRefresh: boolean, supersedes?: string, correlationId?: string): Promise<IssuedPair> {
    const now = this.now();
    const access = newTokenValue();
    const refresh = withRefresh ? newTokenValue() : undefined;
    const owner = ownerOf(client)!;
    const created: TokenCreated = {
      accessHash: sha256Url(access),
      ...(refresh ? { refreshHash: sha256Url(refresh) } : {}),
      createdAt: now,
      accessExpiresAt: now + this.timeoutMs,
      ...(refresh ? { refreshExpiresAt: now + REFRESH_LIFE_MS } : {}),
      grantType,
      subject: subjectOf(subject),
      client: { username: owner.username, realm: owner.realm, ...(client.apiKey ? { apiKeyId: client.apiKey.id } : {}) },
      ...(supersedes ? { supersedes } : {}),
    };
    const tokenId = uuidv7();
    await this.facts.run(accessTokenMachine, { tokenId, now, created }, [], { aggregate: Aggregate.Token, id: tokenId, seq: 0, correlationId });
    return { access, refresh, record: this.records.get(tokenId)! };
  }

  /**
   * The refresh_token grant (ES TokenService.refreshToken): checks in ES's order, then mints a new pair
   * once; re-use within 30 s returns the same pair, opened from the sealed copy in `token.refreshed`.
   */
  async refresh(refreshToken: string, client: Authentication, correlationId?: string): Promise<IssuedPair> {
    let id = this.byRefresh.get(sha256Url(refreshToken));
    if (!id) {
      await this.facts.catchUp(); // created through another node a moment ago
      id = this.byRefresh.get(sha256Url(refreshToken));
    }
    if (!id || !this.records.has(id)) throw oauth2Error('invalid_grant', 'could not refresh the requested token');
    return this.facts.exclusive(`token:${id}`, async () => {
      const rec = this.records.get(id)!;
      const now = this.now();
      if (now > rec.createdAt + REFRESH_LIFE_MS || rec.status === 'expired') throw oauth2Error('invalid_grant', 'token document has expired');
      if (rec.refreshInvalidated || rec.status === 'invalidated') throw oauth2Error('invalid_grant', 'token has been invalidated');
      const c = ownerOf(client);
      if (!sameOwner(c, { username: rec.client.username, realm: rec.client.realm })) {
        throw oauth2Error('invalid_grant', 'tokens must be refreshed by the creating client');
      }
      if (rec.status === 'refreshed') {
        if (!inRefreshWindow(rec, now)) {
          if (this.reuseDetection === 'revoke_family') await this.revokeFamily(rec, now, correlationId);
          throw oauth2Error('invalid_grant', 'token has already been refreshed more than 30 seconds in the past');
        }
        const pair = rec.superseding && openPair(refreshToken, rec.superseding);
        const next = rec.supersededBy ? this.records.get(rec.supersededBy) : undefined;
        if (!pair || !next) throw oauth2Error('invalid_grant', 'could not refresh the requested token');
        return { access: pair.access, refresh: pair.refresh, record: next };
      }
      const subject = this.authOf(rec);
      const issued = await this.create(subject, client, 'refresh_token', true, rec.tokenId, correlationId);
      const superseding = sealPair(refreshToken, { access: issued.access, refresh: issued.refresh! });
      try {
        await this.facts.run(
          accessTokenMachine,
          { tokenId: rec.tokenId, now, record: rec },
          [{ type: 'refresh', refreshedAt: now, supersededBy: issued.record.tokenId, superseding }],
          { aggregate: Aggregate.Token, id: rec.tokenId, seq: rec.seq, correlationId },
        );
      } catch (e) {
        // Another node refreshed it first (LostRace: the retry returns that node's pair): the pair
        // minted here was never handed out, and is invalidated so it never can be.
        if (e instanceof LostRace) await this.invalidate(issued.record, { access: true, refresh: true }, correlationId).catch(() => undefined);
        throw e;
      }
      return issued;
    });
  }

  /**
   * Refresh-token reuse detection (ours, OAuth 2.0 Security BCP §4.14.2): `token.reuse_detected` on
   * the re-used pair, then every pair descended from the same grant (back through `supersedes`, then
   * everything refreshed from those) has both tokens invalidated, one `token.invalidated`
   * (`reason: reuse_detected`) per pair, and every node drops them at once. Runs inside the re-used
   * pair's exclusive section (its own facts are appended here, the others' under their own).
   */
  private async revokeFamily(rec: AccessTokenRecord, now: number, correlationId?: string): Promise<void> {
    const { root, family } = tokenFamily(rec, this.records);
    const events = [
      { type: 'reuse', at: now, family: root.tokenId },
      { type: 'invalidate', access: true, refresh: true, at: now, reason: 'reuse_detected' },
    ];
    await this.facts.run(accessTokenMachine, { tokenId: rec.tokenId, now, record: rec }, events, { aggregate: Aggregate.Token, id: rec.tokenId, seq: rec.seq, correlationId });
    this.auths.delete(rec.tokenId);
    this.facts.broadcastInvalidate('token', [`${rec.tokenId}#access`, `${rec.tokenId}#refresh`]);
    for (const id of family) {
      const member = this.records.get(id);
      if (id !== rec.tokenId && member) await this.invalidate(member, { access: true, refresh: true }, correlationId, 'reuse_detected');
    }
  }

  /** Record of an access or refresh token string. */
  find(value: string, kind: 'access' | 'refresh'): AccessTokenRecord | undefined {
    const id = (kind === 'access' ? this.byAccess : this.byRefresh).get(sha256Url(value));
    return id ? this.records.get(id) : undefined;
  }

  /** Invalidates one half (or both) of a pair; counts as ES does (each token separately). */
  async invalidate(rec: AccessTokenRecord, what: { access: boolean; refresh: boolean }, correlationId?: string, reason?: 'reuse_detected'): Promise<InvalidateResult> {
    return this.facts.exclusive(`token:${rec.tokenId}`, async () => {
      const cur = this.records.get(rec.tokenId)!;
      const res: InvalidateResult = { invalidated: 0, previously: 0 };
      const access = what.access && !cur.accessInvalidated;
      const refresh = what.refresh && !!cur.refreshHash && !cur.refreshInvalidated;
      if (what.access) res[access ? 'invalidated' : 'previously']++;
      if (what.refresh && cur.refreshHash) res[refresh ? 'invalidated' : 'previously']++;
      if (!access && !refresh) return res;
      const now = this.now();
      await this.facts.run(accessTokenMachine, { tokenId: cur.tokenId, now, record: cur }, [{ type: 'invalidate', access, refresh, at: now, ...(reason ? { reason } : {}) }], {
        aggregate: Aggregate.Token,
        id: cur.tokenId,
        seq: cur.seq,
        correlationId,
      });
      this.auths.delete(cur.tokenId);
      this.facts.broadcastInvalidate('token', [...(access ? [`${cur.tokenId}#access`] : []), ...(refresh ? [`${cur.tokenId}#refresh`] : [])]);
      return res;
    });
  }

  /** Live (not fully invalidated, not ended) pairs of a realm and/or user. */
  activeFor(realm?: string, username?: string): AccessTokenRecord[] {
    const now = this.now();
    return [...this.records.values()].filter(
      (r) =>
        (r.status === 'active' || r.status === 'refreshed') &&
        now < tokenDocExpiresAt(r) &&
        (realm === undefined || r.subject.realm.name === realm) &&
        (username === undefined || r.subject.username === username),
    );
  }

  /** Publishes `token.expired` for ended documents and forgets records no one can use any more. */
  async sweep(): Promise<void> {
    const now = this.now();
    for (const r of [...this.records.values()]) {
      if (now < tokenDocExpiresAt(r)) continue;
      if (r.status === 'active' || r.status === 'refreshed') {
        await this.facts.exclusive(`token:${r.tokenId}`, () =>
          this.facts.run(accessTokenMachine, { tokenId: r.tokenId, now, record: this.records.get(r.tokenId)! }, [], {
            aggregate: Aggregate.Token,
            id: r.tokenId,
            seq: this.records.get(r.tokenId)!.seq,
            dedupe: true,
          }),
        );
      }
      const cur = this.records.get(r.tokenId)!;
      if (cur.status === 'expired' || cur.status === 'invalidated') {
        this.records.delete(cur.tokenId);
        this.byAccess.delete(cur.accessHash);
        if (cur.refreshHash) this.byRefresh.delete(cur.refreshHash);
        this.auths.delete(cur.tokenId);
      }
    }
  }
}
