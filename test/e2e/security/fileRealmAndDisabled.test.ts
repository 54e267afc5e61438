import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
    await writeFile(join(dir, 'users'), `# file users\nfiona:${await hashSecret('fiona-password')}\nstan:${await hashSecret('stan-password', 'pbkdf2_stretch')}\n`);
    await writeFile(join(dir, 'users_roles'), 'viewer:fiona\nsuperuser:stan\n');
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

  it('reloads the files without a restart', async () => {
    await writeFile(join(dir, 'users'), `fiona:${await hashSecret('fiona-new-password')}\n`);
    await eventually(async () => (await call(h.url, 'GET', '/_security/_authenticate', { auth: basic('fiona', 'fiona-new-password') })).status === 200);
    expect((await call(h.url, 'GET', '/_security/_authenticate', { auth: basic('stan', 'stan-password') })).status).toBe(401);
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
