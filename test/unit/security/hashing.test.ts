import { createHash, pbkdf2Sync } from 'node:crypto';
import { CredentialCache } from '../../../actors/security/credentialCache';
import { CacheDigest, hashSecret, isSupportedHash, ssha256Hash, ssha256Verify, verifySecret } from '../../../actors/security/hashing';
import { decodeServiceToken, encodeServiceToken, parseServiceTokensFile } from '../../../actors/security/serviceTokenFile';
import { openPair, sealPair } from '../../../actors/security/oauth2Tokens';

describe('stored hash formats (ES Hasher)', () => {
  it('writes {PBKDF2}10000$<32-byte salt>$<32-byte key> and verifies it', async () => {
    const h = await hashSecret('s3cret-pw');
    expect(h).toMatch(/^\{PBKDF2\}10000\$[A-Za-z0-9+/]{43}=\$[A-Za-z0-9+/]{43}=$/);
    expect(await verifySecret('s3cret-pw', h)).toBe(true);
    expect(await verifySecret('s3cret-px', h)).toBe(false);
    expect(isSupportedHash(h)).toBe(true);
  });

  it('stretches with the hex SHA-512 of the secret for {PBKDF2_STRETCH}', async () => {
    const h = await hashSecret('token-secret', 'pbkdf2_stretch');
    const [, salt, key] = h.slice('{PBKDF2_STRETCH}'.length).split('$');
    const hex = createHash('sha512').update('token-secret').digest('hex');
    expect(pbkdf2Sync(hex, Buffer.from(salt, 'base64'), 10_000, 32, 'sha512').toString('base64')).toBe(key);
    expect(await verifySecret('token-secret', h)).toBe(true);
  });

  it('writes {SSHA256}<12-char salt><sha256(secret‖salt)>', () => {
    const h = ssha256Hash('api-key-secret');
    const salt = Buffer.from(h.slice(9, 21), 'base64');
    expect(salt).toHaveLength(8);
    expect(h.slice(21)).toBe(createHash('sha256').update('api-key-secret').update(salt).digest('base64'));
    expect(ssha256Verify('api-key-secret', h)).toBe(true);
    expect(ssha256Verify('api-key-secreT', h)).toBe(false);
  });

  it('never verifies unknown or bcrypt hashes', async () => {
    expect(await verifySecret('x', '$2a$10$abcdefghijklmnopqrstuu5VQzm1W5aEnPqGv3B3MdUswZ2zIzWa')).toBe(false);
    expect(await verifySecret('x', 'x')).toBe(false);
  });
});

describe('credential cache', () => {
  it('returns a value only for the secret it was stored with, keyed by id', () => {
    const c = new CredentialCache<string>(new CacheDigest());
    c.set('key1', 'secret-a', 'auth-a');
    expect(c.get('key1', 'secret-a')).toBe('auth-a');
    expect(c.get('key1', 'secret-b')).toBeUndefined();
    c.delete('key1');
    expect(c.get('key1', 'secret-a')).toBeUndefined();
  });

  it('drops stale entries and stays bounded', () => {
    let now = 0;
    const c = new CredentialCache<number>(new CacheDigest(), 2, () => now);
    c.set('a', 's', 1, 10);
    c.set('b', 's', 2);
    c.set('c', 's', 3);
    expect(c.size).toBe(2);
    expect(c.get('a', 's')).toBeUndefined();
    now = 20;
    expect(c.get('c', 's')).toBe(3);
  });
});

describe('service token encoding', () => {
  const parts = { namespace: 'elastic', service: 'fleet-server', name: 'token1', secret: 'abcdefghijklmnopqrstuv' };

  it('is unpadded base64 of 00 01 00 01 + ns/svc/name:secret, starting AAEAAWVsYXN0aWMv', () => {
    const v = encodeServiceToken(parts);
    expect(v.startsWith('AAEAAWVsYXN0aWMv')).toBe(true);
    expect(v).not.toMatch(/=$/);
    expect(decodeServiceToken(v)).toEqual(parts);
  });

  it('tells other bearer values (undefined) from unparseable prefixed ones (null)', () => {
    expect(decodeServiceToken('some-access-token')).toBeUndefined();
    expect(decodeServiceToken(Buffer.from([0, 1, 0, 1, 65, 66]).toString('base64'))).toBeNull();
  });

  it('parses the service_tokens file', () => {
    expect(parseServiceTokensFile('# c\nelastic/fleet-server/t1:{PBKDF2_STRETCH}1$a$b\n\n')).toEqual(new Map([['elastic/fleet-server/t1', '{PBKDF2_STRETCH}1$a$b']]));
  });
});

describe('superseding token pair', () => {
  it('opens only with the refresh token that sealed it', () => {
    const sealed = sealPair('refresh-1', { access: 'A', refresh: 'R' });
    expect(openPair('refresh-1', sealed)).toEqual({ access: 'A', refresh: 'R' });
    expect(openPair('refresh-2', sealed)).toBeUndefined();
  });
});
