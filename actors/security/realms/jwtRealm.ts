import { matcherAsRegExp, simpleMatcher } from '../../automaton';
import { readFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { compactVerify, createLocalJWKSet, decodeJwt, decodeProtectedHeader, type JSONWebKeySet, type JWTPayload } from 'jose';
import type { Settings } from '../../config';
import type { EsRequest } from '../../wire/rest';
import { CacheDigest, safeEqual } from '../hashing';
import { mappedRoles, type RoleMapping } from '../roleMappings';
import { parseTimeValue } from '../../wire/timeValue';
import type { User } from '../../wire/security';
import { authorizationHeader, type Realm, type RealmResult, type RealmToken } from './realm';

/** One `xpack.security.authc.realms.jwt.<name>.*` realm's settings. */
export interface JwtRealmConfig {
  name: string;
  order: number;
  tokenType: 'id_token' | 'access_token';
  allowedIssuer: string;
  allowedAudiences: string[];
  allowedSubjects: string[];
  allowedSubjectPatterns: RegExp[];
  algorithms: string[];
  hmacKey?: string;
  hmacJwkset?: string;
  pkcJwksetPath?: string;
  clockSkewMs: number;
  principalClaim: string;
  groupsClaim?: string;
  mailClaim?: string;
  nameClaim?: string;
  dnClaim?: string;
  clientAuth: 'shared_secret' | 'none';
  sharedSecret?: string;
  populateUserMetadata: boolean;
  requiredClaims: Record<string, unknown>;
  cacheTtlMs: number;
}

const PREFIX = 'xpack.security.authc.realms.jwt.';

/** Reads every configured JWT realm; throws on a realm missing required settings (as ES refuses to start). */
export function jwtRealmConfigs(settings: Settings): JwtRealmConfig[] {
  const flat = settings.group(PREFIX);
  const names = [...new Set(Object.keys(flat).map((k) => k.split('.')[0]))];
  return names
    .map((name): JwtRealmConfig | undefined => {
      const g = (k: string) => flat[`${name}.${k}`];
      const fail = (k: string) => new Error(`invalid jwt realm [${name}]: setting [${PREFIX}${name}.${k}] is required`);
      if (g('enabled') === false || g('enabled') === 'false') return undefined;
      if (g('order') === undefined) throw fail('order');
      if (!g('allowed_issuer')) throw fail('allowed_issuer');
      const audiences = listSetting(g('allowed_audiences'));
      if (!audiences.length) throw fail('allowed_audiences');
      if (!g('hmac_key') && !g('hmac_jwkset') && !g('pkc_jwkset_path')) throw fail('pkc_jwkset_path');
      const tokenType = g('token_type') === 'access_token' ? 'access_token' : 'id_token';
      const clientAuth = g('client_authentication.type') === 'none' ? 'none' : 'shared_secret';
      const requiredClaims: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(flat)) if (k.startsWith(`${name}.required_claims.`)) requiredClaims[k.slice(`${name}.required_claims.`.length)] = v;
      return {
        name,
        order: Number(g('order')),
        tokenType,
        allowedIssuer: String(g('allowed_issuer')),
        allowedAudiences: audiences,
        allowedSubjects: listSetting(g('allowed_subjects')),
        allowedSubjectPatterns: listSetting(g('allowed_subject_patterns')).map((p) => matcherAsRegExp(simpleMatcher([p]))),
        algorithms: listSetting(g('allowed_signature_algorithms') ?? 'RS256'),
        hmacKey: g('hmac_key') === undefined ? undefined : String(g('hmac_key')),
        hmacJwkset: g('hmac_jwkset') === undefined ? undefined : String(g('hmac_jwkset')),
        pkcJwksetPath: g('pkc_jwkset_path') === undefined ? undefined : String(g('pkc_jwkset_path')),
        clockSkewMs: parseTimeValue(g('allowed_clock_skew') ?? '60s', `${PREFIX}${name}.allowed_clock_skew`),
        principalClaim: String(g('claims.principal') ?? 'sub'),
        groupsClaim: g('claims.groups') as string | undefined,
        mailClaim: g('claims.mail') as string | undefined,
        nameClaim: g('claims.name') as string | undefined,
        dnClaim: g('claims.dn') as string | undefined,
        clientAuth,
        sharedSecret: g('client_authentication.shared_secret') === undefined ? undefined : String(g('client_authentication.shared_secret')),
        populateUserMetadata: g('populate_user_metadata') !== false && g('populate_user_metadata') !== 'false',
        requiredClaims,
        cacheTtlMs: parseTimeValue(g('jwt.cache.ttl') ?? '20m', `${PREFIX}${name}.jwt.cache.ttl`),
      };
    })
    .filter((c): c is JwtRealmConfig => !!c);
}

type KeySource = Uint8Array | ReturnType<typeof createLocalJWKSet>;

/**
 * A JWT realm (ES JwtRealm): `Authorization: Bearer <JWS>` plus, with client authentication
 * `shared_secret`, `ES-Client-Authentication: SharedSecret <secret>`. Checks run in ES's order; any
 * failure is unsuccessful (the next JWT realm tries). A bearer that is not a JWT is never taken, so
 * other realms and authenticators are not blocked. Good results are cached (salted digest of the JWT
 * and secret) until `exp` + skew or the cache TTL.
 */
export class JwtRealm implements Realm {
  readonly type = 'jwt';
  readonly name: string;
  readonly order: number;
  private keys?: KeySource;
  private readonly cache = new Map<string, { user: User; until: number }>();

  constructor(
    private readonly cfg: JwtRealmConfig,
    private readonly configDir: string,
    private readonly mappings: () => Iterable<RoleMapping>,
    private readonly digest: CacheDigest,
    private readonly now: () => number = Date.now,
  ) {
    this.name = cfg.name;
    this.order = cfg.order;
  }

  /** Loads the verification keys (JWKS file or HMAC secret). */
  async start(): Promise<void> {
    this.keys = await this.loadKeys();
  }

  private async loadKeys(): Promise<KeySource> {
    if (this.cfg.hmacKey !== undefined) return new TextEncoder().encode(this.cfg.hmacKey);
    const text = this.cfg.hmacJwkset ?? (await readFile(this.jwksPath(), 'utf8'));
    return createLocalJWKSet(JSON.parse(text) as JSONWebKeySet);
  }

  private jwksPath(): string {
    const p = this.cfg.pkcJwksetPath!;
    return isAbsolute(p) ? p : join(this.configDir, p);
  }

  token(req: EsRequest): RealmToken | undefined {
    const h = authorizationHeader(req);
    if (!h || h.scheme !== 'bearer' || h.value.split('.').length !== 3) return undefined;
    try {
      const header = decodeProtectedHeader(h.value);
      const claims = decodeJwt(h.value);
      const aud = typeof claims.aud === 'string' ? [claims.aud] : claims.aud ?? [];
      const sub = claims[this.cfg.principalClaim];
      if (!claims.iss || !aud.length || typeof sub !== 'string' || !sub) return undefined;
      const principal = `${claims.iss}/${[...new Set(aud)].sort().join(',')}/${sub}`;
      const clientAuth = req.headers['es-client-authentication'];
      // Repeated headers reach us joined by ", " (the official JS client sends this one twice): use the first.
      const raw = typeof clientAuth === 'string' ? clientAuth.split(/,\s*(?=sharedsecret\s)/i)[0] : clientAuth;
      const m = typeof raw === 'string' ? /^sharedsecret\s+(.+)$/i.exec(raw.trim()) : null;
      return { kind: 'jwt', jwt: h.value, secret: m ? m[1] : raw === undefined ? undefined : '', principal, header, claims };
    } catch {
      return undefined;
    }
  }

  supports(t: RealmToken): boolean {
    return t.kind === 'jwt';
  }

  async authenticate(t: RealmToken): Promise<RealmResult> {
    if (t.kind !== 'jwt') return { status: 'continue' };
    const key = this.digest.digest(`${t.jwt}\u0000${t.secret ?? ''}`);
    const hit = this.cache.get(key);
    if (hit && hit.until > this.now()) return { status: 'success', user: hit.user };
    const why = this.validateClaims(t);
    if (why) return { status: 'continue', message: why };
    if (!(await this.verifySignature(t.jwt))) return { status: 'continue', message: 'signature verification failed' };
    const user = this.toUser(t.claims);
    if (!user) return { status: 'continue', message: `principal claim [${this.cfg.principalClaim}] is missing` };
    const expMs = (t.claims.exp ?? 0) * 1000 + this.cfg.clockSkewMs;
    if (this.cache.size >= 100_000) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, { user, until: Math.min(expMs, this.now() + this.cfg.cacheTtlMs) });
    return { status: 'success', user };
  }

  /** ES JwtValidateUtil order: client secret, typ, iss, sub, aud, alg, iat, exp, nbf, auth_time, required claims. */
  private validateClaims(t: Extract<RealmToken, { kind: 'jwt' }>): string | undefined {
    const c = this.cfg;
    const claims = t.claims;
    if (c.clientAuth === 'shared_secret') {
      if (!t.secret || !c.sharedSecret || !safeEqual(t.secret, c.sharedSecret)) return 'client authentication failed';
    } else if (t.secret !== undefined) return 'unexpected client authentication header';
    const typ = t.header.typ?.toLowerCase();
    const typs = c.tokenType === 'id_token' ? ['jwt'] : ['jwt', 'at+jwt'];
    if (typ !== undefined && !typs.includes(typ)) return `invalid typ [${t.header.typ}]`;
    if (claims.iss !== c.allowedIssuer) return `issuer [${claims.iss}] not allowed`;
    const sub = claims.sub;
    if (c.tokenType === 'access_token' || c.allowedSubjects.length || c.allowedSubjectPatterns.length) {
      const ok = typeof sub === 'string' && (c.allowedSubjects.includes(sub) || c.allowedSubjectPatterns.some((r) => r.test(sub)));
      if (!ok) return `subject [${sub}] not allowed`;
    }
    const aud = typeof claims.aud === 'string' ? [claims.aud] : claims.aud ?? [];
    if (!aud.some((a) => c.allowedAudiences.includes(a))) return 'audiences not allowed';
    if (!t.header.alg || !c.algorithms.includes(t.header.alg)) return `algorithm [${t.header.alg}] not allowed`;
    const now = this.now();
    const skew = c.clockSkewMs;
    if (typeof claims.iat !== 'number') return 'iat claim is missing';
    if (claims.iat * 1000 > now + skew) return 'iat claim is in the future';
    if (typeof claims.exp !== 'number') return 'exp claim is missing';
    if (claims.exp * 1000 <= now - skew) return 'token is expired';
    if (c.tokenType === 'id_token') {
      if (typeof claims.nbf === 'number' && claims.nbf * 1000 > now + skew) return 'token is not yet valid';
      const authTime = (claims as JWTPayload & { auth_time?: unknown }).auth_time;
      if (typeof authTime === 'number' && authTime * 1000 > now + skew) return 'auth_time is in the future';
    }
    for (const [k, want] of Object.entries(c.requiredClaims)) {
      const have = claims[k];
      const wants = Array.isArray(want) ? want.map(String) : String(want).split(',');
      const haves = Array.isArray(have) ? have.map(String) : have === undefined ? [] : [String(have)];
      if (!haves.some((h) => wants.includes(h))) return `required claim [${k}] does not match`;
    }
    return undefined;
  }

  private async verifySignature(jwt: string): Promise<boolean> {
    const tryVerify = async () => {
      const k = this.keys ?? (this.keys = await this.loadKeys());
      await compactVerify(jwt, k as Parameters<typeof compactVerify>[1], { algorithms: this.cfg.algorithms });
    };
    try {
      await tryVerify();
      return true;
    } catch {
      if (!this.cfg.pkcJwksetPath) return false;
      try {
        this.keys = await this.loadKeys(); // JWKS reloaded once on failure (key rotation)
        await tryVerify();
        return true;
      } catch {
        return false;
      }
    }
  }

  private toUser(claims: JWTPayload): User | undefined {
    const c = this.cfg;
    const principal = claims[c.principalClaim];
    if (typeof principal !== 'string' || !principal) return undefined;
    const g = c.groupsClaim ? claims[c.groupsClaim] : undefined;
    const groups = Array.isArray(g) ? g.map(String) : typeof g === 'string' ? [g] : [];
    const metadata: Record<string, unknown> = {};
    if (c.populateUserMetadata) {
      metadata.jwt_token_type = c.tokenType;
      for (const [k, v] of Object.entries(claims)) {
        if (['string', 'number', 'boolean'].includes(typeof v) || (Array.isArray(v) && v.every((x) => typeof x !== 'object'))) metadata[`jwt_claim_${k}`] = v;
      }
    }
    const str = (name?: string) => (name && typeof claims[name] === 'string' ? (claims[name] as string) : null);
    const dn = str(c.dnClaim);
    const roles = mappedRoles(this.mappings(), { username: principal, dn, groups, metadata, realm: { name: this.name } });
    return { username: principal, roles, full_name: str(c.nameClaim), email: str(c.mailClaim), metadata, enabled: true };
  }

  /** Drops cached results (role mappings changed). */
  clearCache(): void {
    this.cache.clear();
  }
}

/** Reads a list setting given as a YAML array or a comma-separated string. */
export function listSetting(v: unknown): string[] {
  if (v === undefined || v === null || v === '') return [];
  if (Array.isArray(v)) return v.map(String);
  return String(v)
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}
