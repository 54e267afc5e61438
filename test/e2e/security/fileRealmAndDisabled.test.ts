import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { Client } from 'es8';
import { hashSecret } from '../../../actors/security/hashing';
import { basic, call, ELASTIC_PASSWORD, startSecurityHarness, type SecurityHarness } from '../../support/securityHarness';

const eventually = async (f: () => Promise<boolean>) => {
  for (let i = 0; i < 60; i++) {
    if (await f()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('condition not reached');
};

describe('file realm (config/users, config/users_roles)', () => {
  let h: SecurityHarness;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'filerealm-'));
    // carl and yuri have bcrypt hashes, as `elasticsearch-users` ($2a$) and htpasswd ($2y$) write them
    const carl = `$2a$${bcrypt.hashSync('carl-password', 10).slice(4)}`;
    const yuri = `$2y$${bcrypt.hashSync('yuri-password', 4).slice(4)}`;
    await writeFile(
      join(dir, 'users'),
      `# file users\nfiona:${await hashSecret('fiona-password')}\nstan:${await hashSecret('stan-password', 'pbkdf2_stretch')}\ncarl:${carl}\nyuri:${yuri}\n`,
    );
    await writeFile(join(dir, 'users_roles'), 'viewer:fiona,carl\nsuperuser:stan\n');
    h = await startSecurityHarness({ configDir: dir });
  });
  afterAll(async () => {
    await h.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('authenticates file users with their roles, realm default_file', async () => {
    const fiona = new Client({ node: h.url, auth: { username: 'fiona', password: 'fiona-password' } });
    expect(await fiona.security.authenticate()).toMatchObject({ username: 'fiona', roles: ['viewer'], authentication_realm: { name: 'default_file', type: 'file' } });
    await fiona.close();
    expect((await call(h.url, 'GET', '/_security/_authenticate', { auth: basic('stan', 'stan-password') })).body.roles).toEqual(['superuser']);
  });

  it('logs in file users whose hashes are bcrypt ($2a$, $2y$), and refuses a wrong password', async () => {
    const carl = await call(h.url, 'GET', '/_security/_authenticate', { auth: basic('carl', 'carl-password') });
    expect(carl.status).toBe(200);
    expect(carl.body).toMatchObject({ username: 'carl', roles: ['viewer'], authentication_realm: { name: 'default_file', type: 'file' } });
    expect((await call(h.url, 'GET', '/_security/_authenticate', { auth: basic('yuri', 'yuri-password') })).body.username).toBe('yuri');
    const wrong = await call(h.url, 'GET', '/_security/_authenticate', { auth: basic('carl', 'carl-passwort') });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.reason).toBe('unable to authenticate user [carl] for REST request [/_security/_authenticate]');
  });

  it('reloads the files without a restart', async () => {
    await writeFile(join(dir, 'users'), `fiona:${await hashSecret('fiona-new-password')}\n`);
    await eventually(async () => (await call(h.url, 'GET', '/_security/_authenticate', { auth: basic('fiona', 'fiona-new-password') })).status === 200);
    expect((await call(h.url, 'GET', '/_security/_authenticate', { auth: basic('stan', 'stan-password') })).status).toBe(401);
  });
});

describe('xpack.security.authc.password_hashing.algorithm', () => {
  it('hashes native passwords with bcrypt when asked (ES names), and they log in', async () => {
    const h = await startSecurityHarness({ settings: { 'xpack.security.authc.password_hashing.algorithm': 'bcrypt4' } });
    try {
      const elastic = basic('elastic', ELASTIC_PASSWORD);
      expect((await call(h.url, 'PUT', '/_security/user/bea', { auth: elastic, body: { password: 'bea-password', roles: [] } })).status).toBe(200);
      expect(h.security.services!.users.get('bea')!.passwordHash).toMatch(/^\$2a\$04\$/);
      expect((await call(h.url, 'GET', '/_security/_authenticate', { auth: basic('bea', 'bea-password') })).body.username).toBe('bea');
      expect((await call(h.url, 'GET', '/_security/_authenticate', { auth: basic('bea', 'bea-passwort') })).status).toBe(401);
    } finally {
      await h.stop();
    }
  });

  it.each(['bcrypt99', 'ssha256', 'argon2'])('refuses to start with the unknown or disallowed name %s (no silent fallback)', async (name) => {
    await expect(startSecurityHarness({ settings: { 'xpack.security.authc.password_hashing.algorithm': name } })).rejects.toThrow(
      `Invalid algorithm: ${name}. Valid values for password hashing are [bcrypt, bcrypt4,`,
    );
  });
});

describe('xpack.security.enabled: false', () => {
  it('turns security off: no gate, every request allowed, security APIs refuse', async () => {
    const h = await startSecurityHarness({ settings: { 'xpack.security.enabled': false } });
    try {
      expect(h.security.enabled).toBe(false);
      expect((await call(h.url, 'GET', '/_test/anything/_search')).status).toBe(200);
      const r = await call(h.url, 'GET', '/_security/_authenticate', { auth: basic('elastic', ELASTIC_PASSWORD) });
      expect(r.status).toBe(500);
      expect(r.body.error.reason).toMatch(/^Security must be explicitly enabled/);
      expect(h.security.allowedIndices(undefined, 'indices:data/read/search', ['a', 'b'])).toEqual(['a', 'b']);
      expect(h.security.sameOwner(h.security.ownerOf(undefined), undefined)).toBe(true);
    } finally {
      await h.stop();
    }
  });
});
