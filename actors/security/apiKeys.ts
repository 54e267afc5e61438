import { EsError, illegalArgument, validationFailed } from '../wire/esErrors';
import { Aggregate, type Envelope } from '../../streams';
import { apiKeyMachine, apiKeyRecord, evolveApiKey, type ApiKeyCreated, type ApiKeyOwner, type ApiKeyRecord } from '../../machines/apiKey.machine';
import { CredentialCache } from './credentialCache';
import type { FactLog } from './factLog';
import { CacheDigest, randomUrlSafe, ssha256Hash, ssha256Verify } from './hashing';
import { limitPermission } from './permission';
import { type LimitedPermission } from '../wire/security';
import { canonicalJson, isEmptyDescriptor, parseRoleDescriptors } from './roleDescriptor';
import { ancestorsActive, deriveKey, depthOf, descendantsOf } from './derivedKeys';
import type { RoleStore } from './roleStore';
import { parseTimeValue } from '../wire/timeValue';
import type { AuthResult } from './types';
import type { Authentication, RoleDescriptor } from '../wire/security';

/** Bound of the text shortcut of interning (distinct descriptor texts; the canonical map is the truth). */
const MAX_INTERNED_TEXTS = 10_000;

/** Realm name/type of API key authentication. */
export const API_KEY_REALM = '_es_api_key';

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** The owner a key created by `caller` gets (an API key's derived keys belong to its owner in `_es_api_key`). */
export function apiKeyOwnerOf(caller: Authentication): ApiKeyOwner {
  const u = caller.user;
  const realm = caller.apiKey ? { name: API_KEY_REALM, type: API_KEY_REALM } : caller.lookupRealm; // run-as: the effective user's realm
  return { username: u.username, realm: realm.name, realmType: realm.type, full_name: u.full_name, email: u.email, metadata: u.metadata };
}

/** Validates a create/grant body's `name`, `metadata` and `expiration` (ES messages). */
export function validateKeyRequest(body: Record<string, unknown>, requireName: boolean): void {
  const errors: string[] = [];
  const name = body.name;
  if (requireName) {
    if (typeof name !== 'string' || !name.length) errors.push('api key name is required');
    else {
      if (name.length > 256) errors.push('api key name may not be more than 256 characters long');
      if (name !== name.trim()) errors.push('api key name may not begin or end with whitespace');
      if (name.startsWith('_')) errors.push('api key name may not begin with an underscore');
    }
  }
  if (body.metadata !== undefined && isObj(body.metadata) && Object.keys(body.metadata).some((k) => k.startsWith('_'))) {
    errors.push('API key metadata keys may not start with [_]');
  }
  if (errors.length) throw validationFailed(errors);
}

/**
 * The API key service (ES ApiKeyService): keys are event-sourced machine actors hydrated on demand;
 * at rest a key is one compact record (descriptor maps and owners are interned, so 100k keys of one
 * user share them). Secrets are hashed with salted SHA-256; warm checks hit the credential cache.
 */
export class ApiKeyService {
  readonly records = new Map<string, ApiKeyRecord>();
  private readonly interned = new Map<string, object>();
  /** `JSON.stringify` text → interned value (a shortcut to {@link interned}). */
  private readonly internedText = new Map<string, object>();
  private readonly cache: CredentialCache<Authentication>;
  /** Derived keys by parent id (derivedKeys.ts). */
  readonly children = new Map<string, Set<string>>();

  constructor(
    private readonly facts: FactLog,
    private readonly roles: RoleStore,
    digest: CacheDigest,
    readonly enabled: boolean,
    private readonly now: () => number = Date.now,
    /** `xpack.security.authc.api_key.derived_keys.enabled` (ours): API keys may derive narrower keys. */
    readonly derivedKeys = false,
  ) {
    this.cache = new CredentialCache<Authentication>(digest);
  }

  private indexParent(r: ApiKeyRecord): void {
    if (r.parentId === undefined) return;
    let set = this.children.get(r.parentId);
    if (!set) this.children.set(r.parentId, (set = new Set()));
    set.add(r.keyId);
  }

  /**
   * Shares equal JSON-like values between records. Most values repeat byte for byte (every key of one
   * owner carries the same `limited_by`), so the native `JSON.stringify` text finds them first; the
   * canonical (key-order independent) form is computed only for a text not seen before.
   */
  intern<T extends object>(v: T): T {
    const text = JSON.stringify(v);
    const seen = this.internedText.get(text);
    if (seen) return seen as T;
    const key = canonicalJson(v);
    const hit = this.interned.get(key);
    const shared = hit ?? v;
    if (!hit) this.interned.set(key, v);
    if (this.internedText.size < MAX_INTERNED_TEXTS) this.internedText.set(text, shared);
    return shared as T;
  }

  /**
   * Installs keys folded elsewhere (the credential checkpoint), as {@link apply} would have left
   * them: shared values interned once per distinct object, not once per key.
   */
  load(records: Iterable<ApiKeyRecord>): void {
    const shared = new Map<object, object>();
    const intern = <T extends object>(v: T): T => {
      let s = shared.get(v);
      if (!s) shared.set(v, (s = this.intern(v)));
      return s as T;
    };
    for (const r of records) {
      r.roleDescriptors = intern(r.roleDescriptors);
      r.limitedBy = intern(r.limitedBy);
      r.metadata = intern(r.metadata);
      r.owner = intern(r.owner);
      const prev = this.records.get(r.keyId);
      if (prev && prev.seq >= r.seq) continue;
      this.records.set(r.keyId, r);
      this.indexParent(r);
      this.cache.delete(r.keyId);
    }
  }

  /** Folds an `apikey.*` fact. */
  apply(e: Envelope): void {
    const prev = this.records.get(e.aggregateId);
    const next = evolveApiKey(prev, e);
    if (!next || next === prev) return;
    next.roleDescriptors = this.intern(next.roleDescriptors);
    next.limitedBy = this.intern(next.limitedBy);
    next.metadata = this.intern(next.metadata);
    next.owner = this.intern(next.owner);
    this.records.set(next.keyId, next);
    this.indexParent(next);
    this.cache.delete(next.keyId);
  }

  /** Another node invalidated keys: refuse them here at once (monotonic). */
  markInvalidated(ids: string[]): void {
    for (const id of ids) {
      const r = this.records.get(id);
      if (r && r.status === 'active') this.records.set(id, apiKeyRecord({ ...r, status: 'invalidated', invalidation: r.invalidation ?? this.now() }));
      this.cache.delete(id);
    }
  }

  /** Drops every cached verification (roles or application privileges changed; `_clear_cache`). */
  clearCache(ids?: readonly string[]): void {
    if (ids) for (const id of ids) this.cache.delete(id);
    else this.cache.deleteWhere(() => true);
  }

  /** Effective permission of a key: its descriptors ∩ its `limited_by` snapshot. */
  permissionOf(rec: ApiKeyRecord): LimitedPermission {
    const own = Object.keys(rec.roleDescriptors).length ? this.roles.permissionForDescriptors(rec.roleDescriptors) : undefined;
    return limitPermission(own, this.roles.permissionForDescriptors(rec.limitedBy));
  }

  /** Authentication as the key (`_es_api_key`, `roles: []`, the owner's name). */
  authOf(rec: ApiKeyRecord): Authentication {
    const realm = { name: API_KEY_REALM, type: API_KEY_REALM };
    return {
      user: { username: rec.owner.username, roles: [], full_name: rec.owner.full_name ?? null, email: rec.owner.email ?? null, metadata: rec.owner.metadata ?? {}, enabled: true },
      authenticationRealm: realm,
      lookupRealm: realm,
      authenticationType: 'api_key',
      apiKey: { id: rec.keyId, name: rec.name },
      permission: this.permissionOf(rec),
    };
  }

  /** Authenticator step 3 (`API key`): `ApiKey base64(id:secret)`; ES's unsuccessful messages. */
  authenticate(value: string): AuthResult {
    if (!this.enabled) return { status: 'continue' };
    const text = /^[A-Za-z0-9+/]+={0,2}$/.test(value) ? Buffer.from(value, 'base64').toString('utf8') : '';
    const i = text.indexOf(':');
    if (i <= 0 || i === text.length - 1) return { status: 'continue', message: 'invalid ApiKey value' };
    const id = text.slice(0, i);
    const secret = text.slice(i + 1);
    const rec = this.records.get(id);
    if (!rec) return { status: 'continue', message: `unable to find apikey with id ${id}`, unknown: true };
    // a derived key dies with any ancestor, even before the cascade's fact reaches this node
    if (rec.status === 'invalidated' || (rec.parentId !== undefined && !ancestorsActive(rec, this.records, this.now()))) {
      return { status: 'continue', message: `api key [${id}] has been invalidated` };
    }
    let auth = this.cache.get(id, secret);
    if (!auth) {
      if (!ssha256Verify(secret, rec.hash)) return { status: 'continue', message: `invalid credentials for API key [${id}]` };
      auth = this.authOf(rec);
      this.cache.set(id, secret, auth);
    }
    if (rec.status === 'expired' || (rec.expiration !== undefined && rec.expiration <= this.now())) return { status: 'continue', message: 'api key is expired' };
    return { status: 'success', authentication: auth };
  }

  /**
   * Creates a key owned by `owner` (the caller, or a granted user). `ownerDescriptors` is the
   * `limited_by` snapshot. Derived keys (caller authenticated by an API key) need explicit, empty
   * role descriptors.
   */
  async create(
    body: Record<string, unknown>,
    owner: Authentication,
    ownerDescriptors: Record<string, RoleDescriptor>,
    opts: { derivedCheck: boolean; correlationId?: string },
  ): Promise<Record<string, unknown>> {
    validateKeyRequest(body, true);
    let roleDescriptors = parseRoleDescriptors(body.role_descriptors);
    const now = this.now();
    let expiration = body.expiration === undefined || body.expiration === null ? undefined : now + parseTimeValue(body.expiration, 'expiration');
    // An API key, or a token it minted, creating a key (ES Authentication.isApiKey; not a run-as).
    const parent = opts.derivedCheck && owner.apiKey && !owner.runAs ? this.records.get(owner.apiKey.id) : undefined;
    let parentId: string | undefined;
    if (parent && this.derivedKeys) {
      const d = deriveKey(String(body.name), parent, this.permissionOf(parent), roleDescriptors, expiration, this.roles.privileges, depthOf(parent, this.records) + 1);
      ({ roleDescriptors, expiration } = d);
      ownerDescriptors = d.limitedBy;
      parentId = parent.keyId;
    } else if (opts.derivedCheck && owner.apiKey && !owner.runAs) {
      const list = Object.values(roleDescriptors);
      if (!list.length || list.some((rd) => !isEmptyDescriptor(rd))) {
        throw illegalArgument('creating derived api keys requires an explicit role descriptor that is empty (has no privileges)');
      }
    }
    const keyId = randomUrlSafe(15);
    const secret = randomUrlSafe(16);
    const created: ApiKeyCreated = {
      name: body.name as string,
      keyType: 'rest',
      creation: now,
      ...(expiration !== undefined ? { expiration } : {}),
      owner: apiKeyOwnerOf(owner),
      hash: ssha256Hash(secret),
      roleDescriptors,
      limitedBy: ownerDescriptors,
      metadata: isObj(body.metadata) ? body.metadata : {},
      ...(parentId !== undefined ? { parentId } : {}),
    };
    await this.facts.run(apiKeyMachine, { keyId, now, created }, [], { aggregate: Aggregate.ApiKey, id: keyId, seq: 0, correlationId: opts.correlationId });
    return {
      id: keyId,
      name: created.name,
      ...(expiration !== undefined ? { expiration } : {}),
      api_key: secret,
      encoded: Buffer.from(`${keyId}:${secret}`).toString('base64'),
    };
  }

  /** PUT /_security/api_key/{id}: owner only, not through API key auth; `{updated}`. */
  async update(id: string, body: Record<string, unknown>, caller: Authentication, callerDescriptors: Record<string, RoleDescriptor>, correlationId?: string): Promise<{ updated: boolean }> {
    if (caller.authenticationType === 'api_key') throw illegalArgument('authentication via API key not supported: only the owner user can update an API key');
    validateKeyRequest(body, false);
    return this.facts.exclusive(`apikey:${id}`, async () => {
      const rec = this.records.get(id);
      const owner = apiKeyOwnerOf(caller);
      if (!rec || rec.owner.username !== owner.username || rec.owner.realm !== owner.realm) {
        throw new EsError('resource_not_found_exception', 404, `no API key owned by requesting user found for ID [${id}]`);
      }
      const now = this.now();
      if (rec.status === 'invalidated') throw illegalArgument(`cannot update invalidated API key [${id}]`);
      if (rec.status === 'expired' || (rec.expiration !== undefined && rec.expiration <= now)) throw illegalArgument(`cannot update expired API key [${id}]`);
      const roleDescriptors = body.role_descriptors === undefined ? undefined : parseRoleDescriptors(body.role_descriptors);
      const metadata = isObj(body.metadata) ? body.metadata : undefined;
      const expiration = body.expiration === undefined ? undefined : body.expiration === null ? null : now + parseTimeValue(body.expiration, 'expiration');
      const same =
        (roleDescriptors === undefined || canonicalJson(roleDescriptors) === canonicalJson(rec.roleDescriptors)) &&
        (metadata === undefined || canonicalJson(metadata) === canonicalJson(rec.metadata)) &&
        canonicalJson(callerDescriptors) === canonicalJson(rec.limitedBy) &&
        expiration === undefined;
      if (same) return { updated: false };
      const event = {
        type: 'update',
        at: now,
        limitedBy: callerDescriptors,
        ...(roleDescriptors ? { roleDescriptors } : {}),
        ...(metadata ? { metadata } : {}),
        ...(expiration !== undefined ? { expiration } : {}),
      };
      await this.facts.run(apiKeyMachine, { keyId: id, now, record: rec }, [event], { aggregate: Aggregate.ApiKey, id, seq: rec.seq, correlationId });
      return { updated: true };
    });
  }

  /**
   * Invalidates keys; returns which were invalidated now and which already were. Derived keys of an
   * invalidated key follow it (cascade), one fact each, and are listed as invalidated too.
   */
  async invalidate(recs: ApiKeyRecord[], correlationId?: string): Promise<{ invalidated: string[]; previously: string[] }> {
    const invalidated: string[] = [];
    const previously: string[] = [];
    const done = new Set<string>();
    const one = async (id: string, cascadeOf?: string) => {
      if (done.has(id)) return;
      done.add(id);
      await this.facts.exclusive(`apikey:${id}`, async () => {
        const cur = this.records.get(id);
        if (!cur) return;
        if (cur.status === 'invalidated') {
          if (!cascadeOf) previously.push(cur.keyId);
          return;
        }
        const now = this.now();
        await this.facts.run(apiKeyMachine, { keyId: cur.keyId, now, record: cur }, [{ type: 'invalidate', at: now, ...(cascadeOf ? { cascadeOf } : {}) }], {
          aggregate: Aggregate.ApiKey,
          id: cur.keyId,
          seq: cur.seq,
          correlationId,
        });
        invalidated.push(cur.keyId);
      });
    };
    for (const r of recs) await one(r.keyId);
    if (this.children.size) {
      await this.facts.catchUp(); // children created through other nodes a moment ago
      for (const r of recs) for (const d of descendantsOf(r.keyId, this.children)) await one(d, r.keyId);
    }
    this.facts.broadcastInvalidate('apikey', invalidated);
    return { invalidated, previously };
  }

  /** Publishes `apikey.expired` for keys past their expiration (facts de-duplicated across nodes). */
  async sweep(): Promise<void> {
    const now = this.now();
    for (const r of this.records.values()) {
      if (r.status !== 'active' || r.expiration === undefined || r.expiration > now) continue;
      await this.facts.exclusive(`apikey:${r.keyId}`, async () => {
        const cur = this.records.get(r.keyId)!;
        if (cur.status !== 'active') return;
        await this.facts.run(apiKeyMachine, { keyId: cur.keyId, now, record: cur }, [], { aggregate: Aggregate.ApiKey, id: cur.keyId, seq: cur.seq, dedupe: true });
      });
    }
  }
}
