import type { JWSHeaderParameters, JWTPayload } from 'jose';
import type { EsRequest } from '../../wire/rest';
import type { User } from '../../wire/security';

/**
 * A credential a realm reads from the request (ES AuthenticationToken). The first realm in order that
 * can read one defines it; every realm supporting that kind then tries in order.
 */
export type RealmToken =
  | { kind: 'basic'; username: string; password: string }
  | { kind: 'jwt'; jwt: string; secret?: string; principal: string; header: JWSHeaderParameters; claims: JWTPayload };

/** A realm's answer: success, or unsuccessful (the next realm tries). */
export type RealmResult = { status: 'success'; user: User } | { status: 'continue'; message?: string };

/** One realm of the chain (reserved, file, native, jwt). */
export interface Realm {
  readonly name: string;
  readonly type: string;
  readonly order: number;
  /** Reads this realm's kind of credential from the request; throws a {@link BadCredentialsHeader} for malformed ones. */
  token(req: EsRequest): RealmToken | undefined;
  supports(t: RealmToken): boolean;
  authenticate(t: RealmToken): Promise<RealmResult>;
  /**
   * The answer {@link authenticate} would give when it needs no slow work (a cached verification, or
   * a credential this realm does not hold), synchronously; undefined when only `authenticate` can
   * tell. Lets a warm request skip the promise machinery.
   */
  cached?(t: RealmToken): RealmResult | undefined;
  /** The user of this name without credentials (ES Realm.lookupUser, for run-as); realms that cannot look users up leave it out. */
  lookup?(username: string): User | undefined;
  /** Drops cached verifications of a user (password change, deletion). */
  forget?(username: string): void;
  stop?(): void;
}

/** A malformed `Authorization` value; the chain turns it into a 401 with the default challenges. */
export class BadCredentialsHeader extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BadCredentialsHeader';
  }
}

/** The `Authorization` header split into scheme (lower case) and value. */
export function authorizationHeader(req: Pick<EsRequest, 'headers'>): { scheme: string; value: string } | undefined {
  const h = req.headers.authorization;
  if (typeof h !== 'string' || !h) return undefined;
  const sp = h.indexOf(' ');
  if (sp < 0) return { scheme: h.toLowerCase(), value: '' };
  return { scheme: h.slice(0, sp).toLowerCase(), value: h.slice(sp + 1).trim() };
}

const B64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Reads `Basic base64(user:pass)` (ES UsernamePasswordToken.extractToken). */
export function basicToken(req: Pick<EsRequest, 'headers'>): RealmToken | undefined {
  const h = authorizationHeader(req);
  if (!h || h.scheme !== 'basic') return undefined;
  if (!B64.test(h.value) || h.value.length % 4 === 1) throw new BadCredentialsHeader('invalid basic authentication header encoding');
  const text = Buffer.from(h.value, 'base64').toString('utf8');
  const i = text.indexOf(':');
  if (i < 0) throw new BadCredentialsHeader('invalid basic authentication header value');
  return { kind: 'basic', username: text.slice(0, i), password: text.slice(i + 1) };
}

/** The principal a token names (for `unable to authenticate user [...]`). */
export const tokenPrincipal = (t: RealmToken) => (t.kind === 'basic' ? t.username : t.principal);
