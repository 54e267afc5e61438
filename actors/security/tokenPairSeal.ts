/**
 * Token values and the superseding pair of a refresh (ES TokenService): values are opaque to clients,
 * shaped like late 8.x; the new pair is encrypted with a key derived from the spent refresh token, so
 * a retried refresh within 30 s gets the same pair and only that token's holder can open it.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { SealedPair } from '../../machines/accessToken.machine';

// Token strings are opaque to clients; shaped like late 8.x: VInt(version) + VInt(24) + 24 random bytes.
const VERSION_PREFIX = Buffer.from([0x83, 0xe2, 0x86, 0x04, 24]);
export const newTokenValue = () => Buffer.concat([VERSION_PREFIX, randomBytes(24)]).toString('base64');

function keyFor(refreshToken: string, salt: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', refreshToken, salt, 'es-token-refresh', 32));
}

/** Encrypts the superseding pair with a key derived from the spent refresh token (ES does the same). */
export function sealPair(refreshToken: string, pair: { access: string; refresh: string }): SealedPair {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', keyFor(refreshToken, salt), iv);
  const data = Buffer.concat([c.update(`${pair.access}|${pair.refresh}`, 'utf8'), c.final()]);
  return { salt: salt.toString('base64'), iv: iv.toString('base64'), tag: c.getAuthTag().toString('base64'), data: data.toString('base64') };
}

/** Decrypts a sealed pair; undefined when the refresh token does not open it. */
export function openPair(refreshToken: string, s: SealedPair): { access: string; refresh: string } | undefined {
  try {
    const d = createDecipheriv('aes-256-gcm', keyFor(refreshToken, Buffer.from(s.salt, 'base64')), Buffer.from(s.iv, 'base64'));
    d.setAuthTag(Buffer.from(s.tag, 'base64'));
    const [access, refresh] = Buffer.concat([d.update(Buffer.from(s.data, 'base64')), d.final()]).toString('utf8').split('|');
    return { access, refresh };
  } catch {
    return undefined;
  }
}


/** The family of a pair: its first pair (back through `supersedes`) and every pair refreshed from it since. */
export function tokenFamily<R extends { tokenId: string; supersedes?: string }>(rec: R, records: ReadonlyMap<string, R>): { root: R; family: Set<string> } {
    let root = rec;
    for (let up = root.supersedes && records.get(root.supersedes); up; up = root.supersedes && records.get(root.supersedes)) root = up;
    const family = new Set([root.tokenId]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const r of records.values()) {
        if (!family.has(r.tokenId) && r.supersedes && family.has(r.supersedes)) (family.add(r.tokenId), (grew = true));
      }
    }
  return { root, family };
}
