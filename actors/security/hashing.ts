import { createHash, hash as oneShotHash, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

/**
 * Secret hashing in ES's stored formats (Hasher.java): `{PBKDF2}`/`{PBKDF2_STRETCH}<cost>$<salt>$<key>`
 * (HMAC-SHA512, 32-byte salt and key; stretch = PBKDF2 over the hex SHA-512 of the secret) and
 * `{SSHA256}<8-byte salt><sha256(secret‖salt)>`. PBKDF2 runs on the libuv pool (async), never on the
 * event loop. Comparisons are constant-time.
 */

const pbkdf2Async = promisify(pbkdf2);
const PBKDF2_COST = 10_000;

export type HashAlgorithm = 'pbkdf2' | 'pbkdf2_stretch' | 'ssha256';

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

/** Hashes a secret with the named algorithm (PBKDF2 variants on the libuv pool). */
export async function hashSecret(secret: string, algorithm: HashAlgorithm = 'pbkdf2'): Promise<string> {
  switch (algorithm) {
    case 'ssha256':
      return ssha256Hash(secret);
    case 'pbkdf2_stretch':
      return pbkdf2Hash(hexSha512(secret), '{PBKDF2_STRETCH}', PBKDF2_COST);
    default:
      return pbkdf2Hash(secret, '{PBKDF2}', PBKDF2_COST);
  }
}

/**
 * Verifies a secret against a stored hash, the algorithm read from its prefix (ES Hasher.verifyHash).
 * bcrypt hashes are not supported here and never verify.
 */
export async function verifySecret(secret: string, hash: string): Promise<boolean> {
  if (hash.startsWith('{PBKDF2_STRETCH}')) return pbkdf2Verify(hexSha512(secret), hash, '{PBKDF2_STRETCH}');
  if (hash.startsWith('{PBKDF2}')) return pbkdf2Verify(secret, hash, '{PBKDF2}');
  if (hash.startsWith('{SSHA256}')) return ssha256Verify(secret, hash);
  if (hash.startsWith('{SHA}')) return safeEqual(createHash('sha1').update(secret, 'utf8').digest('base64'), hash.slice(5));
  return false;
}

/** Is this string a stored hash this node can verify (for `password_hash` on PUT user)? */
export const isSupportedHash = (h: string): boolean =>
  /^\{PBKDF2(_STRETCH)?\}\d+\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/.test(h) || /^\{SSHA256\}/.test(h);

/** Maps ES's `*.hashing.algorithm` setting values onto what this node implements. */
export function algorithmFromSetting(v: string, fallback: HashAlgorithm): HashAlgorithm {
  const s = v.toLowerCase();
  if (s.startsWith('pbkdf2_stretch')) return 'pbkdf2_stretch';
  if (s.startsWith('pbkdf2')) return 'pbkdf2';
  if (s === 'ssha256') return 'ssha256';
  return fallback;
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
