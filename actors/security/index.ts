import { join } from 'node:path';
import { aggregateOf, Aggregate, type Envelope } from '../../streams';
import type { Authz, EsRequest, Routes, SecurityGate } from '../wire/rest';
import type { NodeContext } from '../nodeContext';
import { ApiKeyService } from './apiKeys';
import { DERIVED_KEYS_SETTING } from './derivedKeys';
import { AuthenticatorChain } from './authenticatorChain';
import { allowedIndices, authorize } from './authorization';
import { renderAuthentication } from './authView';
import { bootstrapElastic } from './bootstrap';
import { defaultChallenges, securityDisabled } from './errors';
import { CHECKPOINT_FILE, readFactCheckpoint, writeFactCheckpoint } from './factCheckpoint';
import { FactLog, type InvalidateMessage } from './factLog';
import { loadFactSeal, secretsBucket } from './factSeal';
import { sealClearSecrets } from './logMigration';
import { CacheDigest, storedHashAlgorithm } from './hashing';
import { REUSE_DETECTION_SETTING, reuseDetectionOf, TokenService } from './oauth2Tokens';
import { ownerOf, sameOwner } from './ownership';
import { RealmChain } from './realms/realmChain';
import { RoleStore } from './roleStore';
import { PartitionPolicy } from './partitionPolicy';
import { applyRunAs, RUN_AS_HEADER } from './runAs';
import { AuditTrail } from './auditTrail';
import { apiKeyRoutes } from './routes/apiKeys';
import { privilegeRoutes } from './routes/privileges';
import { roleRoutes } from './routes/roles';
import { serviceAccountRoutes } from './routes/serviceAccounts';
import { tokenRoutes } from './routes/tokens';
import { userRoutes } from './routes/users';
import { ServiceAccountService } from './serviceAccounts';
import { FileServiceTokens } from './serviceTokenFile';
import { authOf, type SecurityServices } from './services';
import { parseTimeValue } from '../wire/timeValue';
import type { Authentication, Principal } from '../wire/security';
import { UserStore } from './userStore';
import { tokenServiceDefault } from '../tls/httpSsl';

export { ownerOf, sameOwner } from './ownership';
export { authorize, allowedIndices, authorizeScroll, checkContextOwner, mayFreeContext, actionDenied } from './authorization';
export type { AuthResult } from './types';
export type { Authentication, Principal, RoleDescriptor, User } from '../wire/security';
export type { SecurityServices } from './services';

/** What actors/system.ts gets from {@link startSecurity}. */
export interface SecurityModule {
  enabled: boolean;
  /** From actors/edge/httpEdge.ts; when !enabled, undefined is passed to the edge instead. */
  gate: SecurityGate;
  /** Filters concrete index names to those `auth` may run `action` on (for wildcard expansion, as ES does). */
  allowedIndices(auth: Authentication | undefined, action: string, indices: string[]): string[];
  ownerOf(auth: Authentication | undefined): Principal | undefined;
  sameOwner(a: Principal | undefined, b: Principal | undefined): boolean;
  stop(): Promise<void>;
}

/** Test and tooling hooks (not part of the system contract). */
export interface SecurityOptions {
  /** Clock of credential lifetimes (tests move it forward). */
  now?: () => number;
  /** Where the generated `elastic` password is printed (default: stdout, never the logger). */
  print?: (text: string) => void;
  /** Interval of the expiry sweep (default 60 s). */
  sweepMs?: number;
  /**
   * The compacted state inside NATS (ES_STATE: every credential's facts as of ES_EVT `seq`;
   * `firstSeq` is the first fact ES_EVT still holds). Used instead of the local checkpoint when that
   * one is older, or when facts after it were removed (retention).
   */
  compacted?: { seq: number; facts: Envelope[]; firstSeq: number };
  /** Reads the compacted credential facts again (a local checkpoint written after retention removed facts builds on them). */
  readCompacted?: () => Promise<{ seq: number; facts: Envelope[] }>;
}

/** The module plus its services, for tests and benchmarks. */
export type SecurityModuleWithServices = SecurityModule & { services?: SecurityServices };

const PREFIX = 'xpack.security.authc.';

/** `cluster.stream_replicas` when set (the secrets bucket follows the log's replicas). */
function replicasOf(ctx: NodeContext): number | undefined {
  const r = ctx.settings.get<unknown>('cluster.stream_replicas', undefined);
  return r === undefined ? undefined : Number(r);
}

function tokenTimeout(ctx: NodeContext): number {
  const key = `${PREFIX}token.timeout`;
  const raw = ctx.settings.get<unknown>(key, '20m');
  const ms = parseTimeValue(raw, key);
  if (ms < 1_000) throw new Error(`failed to parse value [${raw}] for setting [${key}], must be >= [1s]`);
  if (ms > 3_600_000) throw new Error(`failed to parse value [${raw}] for setting [${key}], must be <= [1h]`);
  return ms;
}

/** Security off: the `/_security` APIs answer ES's "security must be enabled" error. */
function disabledModule(router: Routes): SecurityModule {
  const stub = { add: (m: string | string[], p: string) => router.add(m, p, () => { throw securityDisabled(); }, { kind: 'none' }) } as unknown as Routes;
  const none = {} as SecurityServices;
  for (const f of [userRoutes, roleRoutes, privilegeRoutes, tokenRoutes, apiKeyRoutes, serviceAccountRoutes]) f(stub, none);
  stub.add('GET', '/_security/_authenticate', () => ({}));
  return {
    enabled: false,
    gate: { authenticate: () => undefined, authorize: () => {} },
    allowedIndices: (_a, _x, indices) => indices,
    ownerOf: () => undefined,
    sameOwner,
    stop: async () => {},
  };
}

/**
 * Starts the security module: replays users, roles, tokens, API keys and service tokens from the
 * event log, follows other nodes' facts, sets up the `elastic` password, builds the authenticator
 * chain and registers every `/_security/...` route on `ctx.router`.
 */
export async function startSecurity(ctx: NodeContext, opts: SecurityOptions = {}): Promise<SecurityModuleWithServices> {
  const st = ctx.settings;
  if (!st.bool('xpack.security.enabled', true)) return disabledModule(ctx.router);
  const now = opts.now ?? Date.now;
  const digest = new CacheDigest();
  const users = new UserStore();
  const roles = new RoleStore();
  // ES ties the token service's default to HTTP TLS: on with HTTPS, off with ssl.enabled: false; on
  // with the loopback default (plain HTTP on 127.0.0.1, README Differences).
  const tokensEnabled = st.bool(`${PREFIX}token.enabled`, tokenServiceDefault(st));
  const apiKeysEnabled = st.bool(`${PREFIX}api_key.enabled`, true);
  const audit = new AuditTrail({ enabled: st.bool('xpack.security.audit.enabled', false), dataDir: ctx.dataDir, clusterName: ctx.node.clusterName, nodeId: ctx.node.id });
  // Unknown names stop the start (as ES refuses to start); ES's default for passwords is bcrypt, ours
  // PBKDF2 (native, on the libuv pool; bcrypt here is pure JavaScript on a worker thread).
  const passwordAlgorithm = storedHashAlgorithm(st.str(`${PREFIX}password_hashing.algorithm`, 'pbkdf2'), `${PREFIX}password_hashing.algorithm`);
  const serviceTokenAlgorithm = storedHashAlgorithm(st.str(`${PREFIX}service_token_hashing.algorithm`, 'pbkdf2_stretch'), `${PREFIX}service_token_hashing.algorithm`);

  let tokens!: TokenService;
  let apiKeys!: ApiKeyService;
  let serviceAccounts!: ServiceAccountService;
  let realms!: RealmChain;
  const apply = (e: Envelope) => {
    switch (aggregateOf(e.type)) {
      case Aggregate.Token:
        return tokens.apply(e);
      case Aggregate.ApiKey:
        return apiKeys.apply(e);
      case Aggregate.ServiceToken:
        return serviceAccounts.apply(e);
      case Aggregate.User:
        return users.apply(e);
      case Aggregate.Role:
        return roles.apply(e);
    }
  };
  const onInvalidate = (m: InvalidateMessage) => {
    if (m.kind === 'apikey') apiKeys.markInvalidated(m.ids);
    else if (m.kind === 'token') tokens.markInvalidated(m.ids);
    else if (m.kind === 'servicetoken') serviceAccounts.markInvalidated(m.ids);
    else if (m.kind === 'user') for (const u of m.ids) realms.forget(u);
    else if (m.kind === 'role') {
      tokens.clearCache();
      apiKeys.clearCache();
      realms.clearJwtCaches();
    }
  };
  // Secret fields of credential facts are sealed under a node-only key (factSeal.ts); a log written
  // before that is rewritten once, sealed (logMigration.ts).
  const secrets = await secretsBucket(ctx.nc, replicasOf(ctx));
  const seal = await loadFactSeal(secrets);
  await sealClearSecrets(ctx.nc, secrets, seal, ctx.log, ctx.node.id);
  const facts = new FactLog(ctx, apply, onInvalidate, seal, { now });
  const partition = new PartitionPolicy(ctx, facts);
  let bootstrapHash: string | undefined;
  realms = new RealmChain({ settings: st, users, roles, configDir: ctx.configDir, log: ctx.log, digest, bootstrapHash: () => bootstrapHash });
  tokens = new TokenService(facts, roles, (id) => {
    const rec = apiKeys.records.get(id);
    return rec && apiKeys.permissionOf(rec);
  }, tokenTimeout(ctx), now, reuseDetectionOf(st.str(REUSE_DETECTION_SETTING, 'off')));
  apiKeys = new ApiKeyService(facts, roles, digest, apiKeysEnabled, now, st.bool(DERIVED_KEYS_SETTING, false));
  const files = new FileServiceTokens(ctx.configDir, () => serviceAccounts?.fileReloaded());
  serviceAccounts = new ServiceAccountService(facts, roles, files, digest, serviceTokenAlgorithm, now);
  tokens.serviceAccountAuth = (account, name, type) => serviceAccounts.authOf(account, name, type);
  // Cached authentications hold compiled permissions: a role or application privilege change drops them.
  roles.onChange(() => {
    tokens.clearCache();
    apiKeys.clearCache();
    realms.clearJwtCaches();
  });
  users.onChange((u) => realms.forget(u));

  // Credentials start from a compacted checkpoint of their facts plus the log after it (factCheckpoint.ts).
  const aggregates = [Aggregate.User, Aggregate.Role, Aggregate.ApiKey, Aggregate.Token, Aggregate.ServiceToken];
  const checkpointPath = join(ctx.dataDir, CHECKPOINT_FILE);
  const loaded = await readFactCheckpoint(ctx.nc, checkpointPath);
  if (loaded.why && loaded.why !== 'no checkpoint') ctx.log.warn({ why: loaded.why }, 'security checkpoint not used');
  const c = opts.compacted;
  // The local checkpoint is faster (API keys folded, in columns) but may be older than the compacted
  // state, or have lost the facts after it to retention: then ES_STATE is the starting point.
  const local = loaded.cp && (!c || (loaded.cp.seq >= c.seq && loaded.cp.seq + 1 >= c.firstSeq)) ? loaded.cp : undefined;
  if (loaded.cp && !local) ctx.log.info({ checkpoint: loaded.cp.seq, compacted: c!.seq }, 'security starts from the compacted state (ES_STATE), not the local checkpoint');
  // API keys come folded (installed before the live subscription starts: later facts fold on top).
  if (local) apiKeys.load(local.apiKeys);
  await facts.start(aggregates, local ?? (c && (c.seq > 0 || c.firstSeq > 1) ? { seq: c.seq, facts: c.facts } : undefined));
  // The checkpoint is a fold of the log alone: a credential another node just created may not be
  // in this node's memory yet, and must not be dropped from it for that (factCheckpoint.ts).
  let writing: Promise<unknown> = Promise.resolve();
  const checkpoint = () =>
    (writing = writing.then(() =>
      writeFactCheckpoint(ctx.nc, checkpointPath, aggregates, (e) => seal.open(e), opts.readCompacted).catch((e: Error) => ctx.log.warn({ err: e.message }, 'security checkpoint failed')),
    ));
  // A first checkpoint soon after start (not during it: it would compete with start-up), then periodically.
  const firstCheckpoint = setTimeout(() => void checkpoint(), Math.min(30_000, st.num('snapshot.interval_ms', 300_000)));
  firstCheckpoint.unref();
  const checkpointTimer = setInterval(() => void checkpoint(), st.num('snapshot.interval_ms', 300_000));
  checkpointTimer.unref();
  await Promise.all([realms.start(), files.start()]);
  bootstrapHash = await bootstrapElastic(users, facts, st, passwordAlgorithm, opts.print ?? ((t) => process.stdout.write(t)));

  const challenges = defaultChallenges({ bearer: tokensEnabled || realms.jwtRealms.length > 0, apiKey: apiKeysEnabled });
  const chain = new AuthenticatorChain({ serviceAccounts, tokens, apiKeys, realms, tokensEnabled, apiKeysEnabled, challenges, catchUp: () => facts.catchUp() });
  const services: SecurityServices = { ctx, facts, users, roles, realms, tokens, apiKeys, serviceAccounts, tokensEnabled, apiKeysEnabled, passwordAlgorithm, challenges, now };

  const r = ctx.router;
  r.add('GET', '/_security/_authenticate', (req) => ({ body: renderAuthentication(authOf(req)) }), { kind: 'none' });
  userRoutes(r, services);
  roleRoutes(r, services);
  privilegeRoutes(r, services);
  tokenRoutes(r, services);
  apiKeyRoutes(r, services);
  serviceAccountRoutes(r, services);

  // Run-as (es-security-runas-user) once the caller is known; without the header one property lookup.
  const authenticateAs = (req: EsRequest, authz: Authz | undefined): Authentication | Promise<Authentication> => {
    const a = chain.authenticate(req);
    if (req.headers[RUN_AS_HEADER] === undefined) return a;
    return a instanceof Promise ? a.then((x) => applyRunAs(x, req, authz, realms, roles, audit)) : applyRunAs(a, req, authz, realms, roles, audit);
  };

  let sweeping = false;
  const sweep = async () => {
    if (sweeping) return;
    sweeping = true;
    try {
      await tokens.sweep();
      await apiKeys.sweep();
    } catch (e) {
      ctx.log.warn({ err: e }, 'credential expiry sweep failed');
    } finally {
      sweeping = false;
    }
  };
  const timer = setInterval(() => void sweep(), opts.sweepMs ?? 60_000);
  timer.unref();

  ctx.log.info({ realms: realms.realms.map((x) => `${x.type}/${x.name}`), tokens: tokens.size, apiKeys: apiKeys.records.size }, 'security started');
  return {
    enabled: true,
    gate: {
      // After a reconnect, credentials are checked once the facts missed meanwhile are folded.
      authenticate: (req, authz) => {
        const f = facts.fresh(partition.waitMs);
        if (!f) return authenticateAs(req, authz);
        return f.then(() => {
          partition.check(); // fail_closed: a 503 when the log still cannot be confirmed
          return authenticateAs(req, authz);
        });
      },
      authorize: (auth, action, indices) => authorize(auth, action, indices) },
    allowedIndices,
    ownerOf,
    sameOwner,
    services,
    async stop() {
      clearInterval(timer);
      clearTimeout(firstCheckpoint);
      clearInterval(checkpointTimer);
      await checkpoint();
      files.stop();
      realms.stop();
      await facts.stop();
      await audit.close();
    },
  };
}
