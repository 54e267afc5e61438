import { v7 as uuidv7 } from 'uuid';
import { EsError, illegalArgument, validationFailed } from '../wire/esErrors';
import { Aggregate, type Envelope } from '../../streams';
import { evolveServiceToken, serviceTokenMachine, type ServiceTokenRecord } from '../../machines/serviceToken.machine';
import { CredentialCache } from './credentialCache';
import { serviceAccountFailed } from './errors';
import type { FactLog } from './factLog';
import { CacheDigest, hashSecret, randomUrlSafe, verifySecret, type HashAlgorithm } from './hashing';
import type { RoleStore } from './roleStore';
import { SERVICE_ACCOUNTS } from './serviceAccountDefs';
import { decodeServiceToken, encodeServiceToken, FileServiceTokens, INVALID_TOKEN_NAME_MESSAGE, VALID_TOKEN_NAME } from './serviceTokenFile';
import type { AuthResult } from './types';
import type { Authentication } from '../wire/security';

export const SERVICE_ACCOUNT_REALM = '_service_account';

const CONTINUE: AuthResult = Object.freeze({ status: 'continue' });

/**
 * Service accounts (ES ServiceAccountService): tokens from the event log (created over REST, type
 * `_service_account_index`) and from `<configDir>/service_tokens` (`_service_account_file`, checked
 * first as ES's composite store does). Verified secrets are cached by token name + salted digest.
 */
export class ServiceAccountService {
  /** Active REST-created tokens by `elastic/fleet-server/<name>`. */
  private readonly byName = new Map<string, ServiceTokenRecord>();
  private readonly byId = new Map<string, ServiceTokenRecord>();
  private readonly cache: CredentialCache<Authentication>;
  private readonly descriptorMaps = new Map(Object.entries(SERVICE_ACCOUNTS).map(([k, v]) => [k, { [k]: v }]));

  constructor(
    private readonly facts: FactLog,
    private readonly roles: RoleStore,
    readonly files: FileServiceTokens,
    digest: CacheDigest,
    private readonly algorithm: HashAlgorithm,
    private readonly now: () => number = Date.now,
  ) {
    this.cache = new CredentialCache<Authentication>(digest);
  }

  /** The file changed: forget cached file-token verifications. */
  fileReloaded(): void {
    this.cache.clear();
  }

  /** Folds a `servicetoken.*` fact. */
  apply(e: Envelope): void {
    const prev = this.byId.get(e.aggregateId);
    const next = evolveServiceToken(prev, e);
    if (!next || next === prev) return;
    this.byId.set(next.tokenId, next);
    const qualified = `${next.account}/${next.name}`;
    if (next.status === 'active') this.byName.set(qualified, next);
    else if (this.byName.get(qualified)?.tokenId === next.tokenId) this.byName.delete(qualified);
    this.cache.delete(qualified);
  }

  /** Another node deleted tokens: refuse them here at once. */
  markInvalidated(ids: string[]): void {
    for (const id of ids) {
      const r = this.byId.get(id);
      if (!r) continue;
      const q = `${r.account}/${r.name}`;
      if (this.byName.get(q)?.tokenId === id) this.byName.delete(q);
      this.cache.delete(q);
    }
  }

  authOf(account: string, tokenName: string, type: string): Authentication {
    const realm = { name: SERVICE_ACCOUNT_REALM, type: SERVICE_ACCOUNT_REALM };
    return {
      user: { username: account, roles: [], full_name: `Service account - ${account}`, email: null, metadata: { _elastic_service_account: true }, enabled: true },
      authenticationRealm: realm,
      lookupRealm: realm,
      authenticationType: 'token',
      token: { name: tokenName, type },
      permission: this.roles.permissionForDescriptors(this.descriptorsOf(account)),
    };
  }

  /** `{<principal>: descriptor}` of an account (also the `limited_by` of the API keys it creates). */
  descriptorsOf(account: string) {
    return this.descriptorMaps.get(account) ?? {};
  }

  /**
   * Authenticator step 1 (`service account`): success, not ours (continue), or a hard 401; without a
   * promise when the answer needs no hashing (a cached verification, a malformed or foreign token).
   */
  authenticate(bearer: string, challenges: string[]): AuthResult | Promise<AuthResult> {
    const p = decodeServiceToken(bearer);
    if (!p) return CONTINUE;
    const account = `${p.namespace}/${p.service}`;
    if (p.namespace !== 'elastic' || !Object.hasOwn(SERVICE_ACCOUNTS, account) || p.secret.length < 10) {
      return { status: 'terminate', error: serviceAccountFailed(account, p.name, challenges) };
    }
    const qualified = `${account}/${p.name}`;
    const hit = this.cache.get(qualified, p.secret);
    if (hit) return { status: 'success', authentication: hit };
    return this.verify(account, qualified, p.name, p.secret, challenges);
  }

  /** The slow half of {@link authenticate}: the stored hash (file first, then the log's), then the cache. */
  private async verify(account: string, qualified: string, tokenName: string, secret: string, challenges: string[]): Promise<AuthResult> {
    const fail = (): AuthResult => ({ status: 'terminate', error: serviceAccountFailed(account, tokenName, challenges) });
    const p = { name: tokenName, secret };
    const fileHash = this.files.tokens.get(qualified);
    const rec = this.byName.get(qualified);
    let type: string | undefined;
    if (fileHash && (await verifySecret(p.secret, fileHash))) type = '_service_account_file';
    else if (rec && (await verifySecret(p.secret, rec.hash))) type = '_service_account_index';
    if (!type) return fail();
    // Deleted while the hash was being checked?
    if (type === '_service_account_index' && this.byName.get(qualified) !== rec) return fail();
    const auth = this.authOf(account, p.name, type);
    this.cache.set(qualified, p.secret, auth);
    return { status: 'success', authentication: auth };
  }

  private checkAccount(ns: string, svc: string): string {
    const account = `${ns}/${svc}`;
    if (!Object.hasOwn(SERVICE_ACCOUNTS, account)) throw illegalArgument(`service account [${account}] does not exist`);
    return account;
  }

  /** Creates a REST token; the secret is returned once and stored only hashed. */
  async createToken(ns: string, svc: string, name: string | undefined, creator: Authentication, correlationId?: string) {
    const account = this.checkAccount(ns, svc);
    const tokenName = name ?? `token_${randomUrlSafe(15)}`.replace(/-/g, '_');
    if (!VALID_TOKEN_NAME.test(tokenName)) throw validationFailed([INVALID_TOKEN_NAME_MESSAGE]);
    const qualified = `${account}/${tokenName}`;
    return this.facts.exclusive(`servicetoken:${qualified}`, async () => {
      if (this.byName.has(qualified)) {
        throw new EsError('version_conflict_engine_exception', 409, `[service_account_token-${qualified}]: version conflict, document already exists (current version [1])`, {
          meta: { index_uuid: '_na_', shard: '0', index: '.security-7' },
        });
      }
      const secret = randomUrlSafe(16);
      const tokenId = uuidv7();
      const created = {
        account,
        name: tokenName,
        hash: await hashSecret(secret, this.algorithm),
        creation: this.now(),
        creator: { username: creator.user.username, realm: creator.authenticationRealm.name },
      };
      await this.facts.run(serviceTokenMachine, { tokenId, created }, [], { aggregate: Aggregate.ServiceToken, id: tokenId, seq: 0, correlationId });
      return { created: true, token: { name: tokenName, value: encodeServiceToken({ namespace: ns, service: svc, name: tokenName, secret }) } };
    });
  }

  /** Deletes a REST token: true when found. */
  async deleteToken(ns: string, svc: string, name: string, correlationId?: string): Promise<boolean> {
    const qualified = `${ns}/${svc}/${name}`;
    return this.facts.exclusive(`servicetoken:${qualified}`, async () => {
      const rec = this.byName.get(qualified);
      if (!rec) return false;
      await this.facts.run(serviceTokenMachine, { tokenId: rec.tokenId, record: rec }, [{ type: 'invalidate', at: this.now() }], {
        aggregate: Aggregate.ServiceToken,
        id: rec.tokenId,
        seq: rec.seq,
        correlationId,
      });
      this.facts.broadcastInvalidate('servicetoken', [rec.tokenId]);
      return true;
    });
  }

  /** REST token names of an account. */
  indexTokenNames(account: string): string[] {
    return [...this.byName.values()].filter((r) => r.account === account).map((r) => r.name).sort();
  }
}
