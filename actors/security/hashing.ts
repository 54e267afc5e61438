import { createHash, hash as oneShotHash, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { BCRYPT_HASH, bcryptHash, bcryptVerify } from './bcrypt';

/**
 * Secret hashing in ES's stored formats (Hasher.java): `{PBKDF2}`/`{PBKDF2_STRETCH}<cost>$<salt>$<key>`
 * (HMAC-SHA512, 32-byte salt and key; stretch = PBKDF2 over the hex SHA-512 of the secret), bcrypt
 * `$2a$<cost>$…` (also `$2b$`, `$2y$` on verification), `{SSHA256}<8-byte salt><sha256(secret‖salt)>`,
 * and, for verification only, `{SHA}` and `{MD5}`. PBKDF2 runs on the libuv pool and bcrypt on a worker
 * thread, never on the event loop. Comparisons are constant-time.
 */

const pbkdf2Async = promisify(pbkdf2);
const PBKDF2_COST = 10_000;
const BCRYPT_COST = 10;

/**
 * An ES hashing algorithm name, lower case (Hasher.resolve): `bcrypt`, `bcrypt4`…`bcrypt14`, `pbkdf2`,
 * `pbkdf2_1000`…`pbkdf2_1000000`, `pbkdf2_stretch`, `pbkdf2_stretch_1000`…, or `ssha256` (API keys).
 */
export type HashAlgorithm = string;

const BCRYPT_COSTS = [4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14];
const PBKDF2_COSTS = [1000, 10000, 50000, 100000, 500000, 1000000];

/**
 * The names ES accepts for stored password and service token hashes, in ES's order
 * (Hasher.getAvailableAlgoStoredHash: the bcrypt and pbkdf2 families).
 */
export const STORED_HASH_ALGORITHMS: readonly string[] = [
  'bcrypt',
  ...BCRYPT_COSTS.map((c) => `bcrypt${c}`),
  'pbkdf2',
  ...PBKDF2_COSTS.map((c) => `pbkdf2_${c}`),
  'pbkdf2_stretch',
  ...PBKDF2_COSTS.map((c) => `pbkdf2_stretch_${c}`),
];

interface Hasher {
  kind: 'bcrypt' | 'pbkdf2' | 'pbkdf2_stretch' | 'ssha256';
  cost: number;
}

/** ES Hasher.resolve for the algorithms this node can write; undefined for anything else. */
function resolveHasher(name: string): Hasher | undefined {
  const n = name.toLowerCase();
  if (n === 'ssha256') return { kind: 'ssha256', cost: 0 };
  if (n === 'bcrypt') return { kind: 'bcrypt', cost: BCRYPT_COST };
  let m = /^bcrypt(\d+)$/.exec(n);
  if (m && BCRYPT_COSTS.includes(Number(m[1]))) return { kind: 'bcrypt', cost: Number(m[1]) };
  if (n === 'pbkdf2' || n === 'pbkdf2_stretch') return { kind: n, cost: PBKDF2_COST };
  m = /^(pbkdf2|pbkdf2_stretch)_(\d+)$/.exec(n);
  if (m && PBKDF2_COSTS.includes(Number(m[2]))) return { kind: m[1] as 'pbkdf2' | 'pbkdf2_stretch', cost: Number(m[2]) };
  return undefined;
}

/**
 * Validates a `xpack.security.authc.*_hashing.algorithm` value as ES does at start-up
 * (XPackSettings: only the stored-hash algorithms); an unknown name is a start-up error, never a
 * silent fallback.
 * @throws Error with ES's message (`Invalid algorithm: …`)
 */
export function storedHashAlgorithm(value: unknown, setting: string): HashAlgorithm {
  const v = String(value).toLowerCase();
  if (!STORED_HASH_ALGORITHMS.includes(v)) {
    throw new Error(`Invalid algorithm: ${String(value)}. Valid values for password hashing are [${STORED_HASH_ALGORITHMS.join(', ')}] (setting [${setting}])`);
  }
  return v;
}

/** A url-safe random string: 20 chars (15 bytes) for ids, 22 (16 bytes) for secrets, as ES's UUIDs. */
export const randomUrlSafe = (bytes: number): string => randomBytes(bytes).toString('base64url');

/** base64url SHA-256 (lookup key for high-entropy values such as access tokens). */
export const sha256Url = (s: string | Buffer): string => createHash('sha256').update(s).digest('base64url');

/** Constant-time string equality (lengths may differ). */
export function safeEqual(a: string | Buffer, b: string | Buffer): boolean {
  const x = typeof a === 'string' ? Buffer.from(a) : a;
  const y = typeof b === 'string' ? Buffer.from(b) : b;
  if (x.length !== y.length) {
    timingSafeEqual(x, x); // spend the same time either way
    return false;
  }
  return timingSafeEqual(x, y);
}

const hexSha512 = (s: string) => createHash('sha512').update(s, 'utf8').digest('hex');

async function pbkdf2Hash(secret: string, prefix: string, cost: number): Promise<string> {
  const salt = randomBytes(32);
  const key = await pbkdf2Async(Buffer.from(secret, 'utf8'), salt, cost, 32, 'sha512');
  return `${prefix}${cost}$${salt.toString('base64')}$${key.toString('base64')}`;
}

async function pbkdf2Verify(secret: string, hash: string, prefix: string): Promise<boolean> {
  const [costText, saltB64, keyB64] = hash.slice(prefix.length).split('$');
  const cost = Number(costText);
  if (!Number.isInteger(cost) || cost <= 0 || !saltB64 || !keyB64) return false;
  const salt = Buffer.from(saltB64, 'base64');
  const want = Buffer.from(keyB64, 'base64');
  if (salt.length < 8 || want.length === 0 || want.length % 16 !== 0) return false;
  const got = await pbkdf2Async(Buffer.from(secret, 'utf8'), salt, cost, want.length, 'sha512');
  return safeEqual(got, want);
}

function ssha256(secret: string, salt: Buffer): string {
  return createHash('sha256').update(secret, 'utf8').update(salt).digest('base64');
}

/** `{SSHA256}` hash (≈1.5 µs): for API key secrets, which are random and high-entropy. */
export function ssha256Hash(secret: string): string {
  const salt = randomBytes(8);
  return `{SSHA256}${salt.toString('base64')}${ssha256(secret, salt)}`;
}

/** Synchronous verify of a `{SSHA256}` hash (cheap enough for the event loop). */
export function ssha256Verify(secret: string, hash: string): boolean {
  if (!hash.startsWith('{SSHA256}')) return false;
  const rest = hash.slice('{SSHA256}'.length);
  return safeEqual(ssha256(secret, Buffer.from(rest.slice(0, 12), 'base64')), rest.slice(12));
}

/** Hashes a secret with the named ES algorithm (PBKDF2 on the libuv pool, bcrypt on a worker thread). */
export async function hashSecret(secret: string, algorithm: HashAlgorithm = 'pbkdf2'): Promise<string> {
  const h = resolveHasher(algorithm);
  if (!h) throw new Error(`unknown hash function [${algorithm}]`);
  switch (h.kind) {
    case 'ssha256':
      return ssha256Hash(secret);
    case 'bcrypt':
      return bcryptHash(secret, h.cost);
    case 'pbkdf2_stretch':
      return pbkdf2Hash(hexSha512(secret), '{PBKDF2_STRETCH}', h.cost);
    default:
      return pbkdf2Hash(secret, '{PBKDF2}', h.cost);
  }
}

const digest64 = (alg: string, secret: string) => createHash(alg).update(secret, 'utf8').digest('base64');

/**
 * Verifies a secret against a stored hash, the algorithm read from its prefix (ES Hasher.verifyHash).
 * A hash of no known format never verifies (ES would compare it as clear text; we refuse).
 */
export async function verifySecret(secret: string, hash: string): Promise<boolean> {
  if (hash.startsWith('$2')) return bcryptVerify(secret, hash);
  if (hash.startsWith('{PBKDF2_STRETCH}')) return pbkdf2Verify(hexSha512(secret), hash, '{PBKDF2_STRETCH}');
  if (hash.startsWith('{PBKDF2}')) return pbkdf2Verify(secret, hash, '{PBKDF2}');
  if (hash.startsWith('{SSHA256}')) return ssha256Verify(secret, hash);
  if (hash.startsWith('{SHA}')) return safeEqual(digest64('sha1', secret), hash.slice(5));
  if (hash.startsWith('{MD5}')) return safeEqual(digest64('md5', secret), hash.slice(5));
  return false;
}

const PBKDF2_HASH = /^\{PBKDF2(_STRETCH)?\}(\d+)\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/;

/**
 * Is this string a stored password hash ES accepts as `password_hash` (PUT user, change password):
 * a bcrypt or PBKDF2 hash whose cost is one of ES's algorithm names (Hasher.resolveFromHash).
 */
export function isSupportedHash(h: string): boolean {
  const b = BCRYPT_HASH.exec(h);
  if (b) return BCRYPT_COSTS.includes(Number(b[1]));
  const p = PBKDF2_HASH.exec(h);
  return !!p && PBKDF2_COSTS.includes(Number(p[2]));
}

/**
 * Per-node salted SHA-256 of a secret, for the credential cache: cache entries are keyed by credential
 * id and hold this digest, never the secret or the raw header (performance-facts.md). One-shot hashing
 * to a string keeps the warm path free of native Hash objects (less garbage per request).
 */
export class CacheDigest {
  private readonly salt = randomBytes(16).toString('base64');
  digest(secret: string): string {
    return oneShotHash('sha256', this.salt + secret, 'base64');
  }
}

/** Constant-time comparison of two equal-length ASCII strings (digests), without allocating. */
export function sameDigest(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
