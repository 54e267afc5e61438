import { createHash, pbkdf2Sync } from 'node:crypto';
import { CredentialCache } from '../../../actors/security/credentialCache';
import bcrypt from 'bcryptjs';
import { bcryptOnWorker, stopBcryptWorker } from '../../../actors/security/bcrypt';
import { CacheDigest, hashSecret, isSupportedHash, ssha256Hash, ssha256Verify, STORED_HASH_ALGORITHMS, storedHashAlgorithm, verifySecret } from '../../../actors/security/hashing';
import { decodeServiceToken, encodeServiceToken } from '../../../actors/security/serviceTokenFile';
import { parseNameHashFile } from '../../../actors/security/nameHashFile';
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

  it('never verifies unknown formats, clear text or a malformed bcrypt hash', async () => {
    expect(await verifySecret('x', '$2a$10$abcdefghijklmnopqrstuu5VQzm1W5aEnPqGv3B3MdUswZ2zIzWa')).toBe(false);
    expect(await verifySecret('x', '$2a$10$short')).toBe(false);
    expect(await verifySecret('x', 'x')).toBe(false);
  });

  it('verifies {SHA} and {MD5} hashes (ES users files)', async () => {
    expect(await verifySecret('pw-123456', `{SHA}${createHash('sha1').update('pw-123456').digest('base64')}`)).toBe(true);
    expect(await verifySecret('pw-123456', `{MD5}${createHash('md5').update('pw-123456').digest('base64')}`)).toBe(true);
    expect(await verifySecret('pw-1234567', `{MD5}${createHash('md5').update('pw-123456').digest('base64')}`)).toBe(false);
  });
});

describe('bcrypt (ES default password hashes)', () => {
  afterAll(() => stopBcryptWorker());
  // What `elasticsearch-users` writes ($2a$) and what other tools write ($2b$, $2y$): one algorithm.
  const reference = bcrypt.hashSync('correct horse battery staple', 4).slice(4);

  it.each(['$2a$', '$2b$', '$2y$'])('verifies %s hashes made by another implementation, and refuses a wrong password', async (prefix) => {
    expect(await verifySecret('correct horse battery staple', prefix + reference)).toBe(true);
    expect(await verifySecret('correct horse battery stapler', prefix + reference)).toBe(false);
  });

  it('writes $2a$<cost>$ hashes for bcrypt, bcrypt4 … bcrypt14 and checks them', async () => {
    const h = await hashSecret('s3cret-pw', 'bcrypt4');
    expect(h).toMatch(/^\$2a\$04\$[./A-Za-z0-9]{53}$/);
    expect(bcrypt.compareSync('s3cret-pw', h)).toBe(true);
    expect(await verifySecret('s3cret-pw', h)).toBe(true);
    expect(isSupportedHash(h)).toBe(true);
    expect(isSupportedHash(h.replace('$04$', '$03$'))).toBe(false);
  });

  it('verifies off the event loop: timers keep firing during a cost-12 verification', async () => {
    const h = bcrypt.hashSync('pw', 12);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const started = Date.now();
    expect(await verifySecret('pw', h)).toBe(true);
    clearInterval(timer);
    expect(bcryptOnWorker()).toBe(true);
    // ~250 ms of bcrypt work: a blocked loop would see 0–1 ticks
    expect(ticks).toBeGreaterThan((Date.now() - started) / 5 / 4);
  });
});

describe('hashing algorithm settings (ES Hasher names)', () => {
  it.each(['bcrypt', 'BCRYPT11', 'bcrypt4', 'bcrypt14', 'pbkdf2', 'pbkdf2_1000', 'pbkdf2_10000', 'pbkdf2_1000000', 'pbkdf2_stretch', 'pbkdf2_stretch_50000'])('accepts %s', (name) => {
    expect(storedHashAlgorithm(name, 'x')).toBe(name.toLowerCase());
  });

  it.each(['bcrypt3', 'bcrypt15', 'pbkdf2_2000', 'ssha256', 'noop', 'clear_text', 'sha1', 'md5', 'argon2', ''])('refuses %j as ES does at start-up', (name) => {
    expect(() => storedHashAlgorithm(name, 'xpack.security.authc.password_hashing.algorithm')).toThrow(
      `Invalid algorithm: ${name}. Valid values for password hashing are [${STORED_HASH_ALGORITHMS.join(', ')}]`,
    );
  });

  it('hashes with every accepted name and verifies the result', async () => {
    for (const name of ['pbkdf2_1000', 'pbkdf2_stretch_1000', 'bcrypt4']) {
      const h = await hashSecret('pw-123456', name);
      expect(await verifySecret('pw-123456', h)).toBe(true);
    }
    expect(await hashSecret('pw', 'pbkdf2_1000')).toMatch(/^\{PBKDF2\}1000\$/);
    expect(await hashSecret('pw', 'pbkdf2_stretch_1000')).toMatch(/^\{PBKDF2_STRETCH\}1000\$/);
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
    expect(parseNameHashFile('# c\nelastic/fleet-server/t1:{PBKDF2_STRETCH}1$a$b\n\n')).toEqual(new Map([['elastic/fleet-server/t1', '{PBKDF2_STRETCH}1$a$b']]));
  });
});

describe('superseding token pair', () => {
  it('opens only with the refresh token that sealed it', () => {
    const sealed = sealPair('refresh-1', { access: 'A', refresh: 'R' });
    expect(openPair('refresh-1', sealed)).toEqual({ access: 'A', refresh: 'R' });
    expect(openPair('refresh-2', sealed)).toBeUndefined();
  });
});
