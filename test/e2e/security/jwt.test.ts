import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'es8';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { call, ELASTIC_PASSWORD, startSecurityHarness, type SecurityHarness } from '../../support/securityHarness';

const HMAC1 = 'hmac-key-of-realm-one-is-32-bytes-long!';
const SECRET1 = 'client-secret-one';
const R = 'xpack.security.authc.realms.jwt.';

describe('JWT realms (spec §8.1, §9.23)', () => {
  let h: SecurityHarness;
  let dir: string;
  let rsa: Awaited<ReturnType<typeof generateKeyPair>>;
  let es: Client;

  const now = () => Math.floor(Date.now() / 1000);
  const hs = (claims: JWTPayload, opts: { key?: string; alg?: string } = {}) =>
    new SignJWT(claims).setProtectedHeader({ alg: opts.alg ?? 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(opts.key ?? HMAC1));
  const rs = (claims: JWTPayload) => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k2' }).sign(rsa.privateKey);
  const one = (extra: JWTPayload = {}): JWTPayload => ({ iss: 'https://issuer.one', aud: ['es'], sub: 'alice', iat: now(), exp: now() + 600, groups: ['admins'], name: 'Alice A', ...extra });
  const two = (extra: JWTPayload = {}): JWTPayload => ({ iss: 'https://issuer.two', aud: 'es-two', sub: 'svc-robot', iat: now(), exp: now() + 600, ...extra });
  const authWith = (jwt: string, secret?: string): { auth: string; headers: Record<string, string> } => ({
    auth: `Bearer ${jwt}`,
    headers: secret === undefined ? {} : { 'ES-Client-Authentication': `SharedSecret ${secret}` },
  });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'jwks-'));
    rsa = await generateKeyPair('RS256', { extractable: true });
    const jwk = { ...(await exportJWK(rsa.publicKey)), kid: 'k2', alg: 'RS256', use: 'sig' };
    await writeFile(join(dir, 'jwks2.json'), JSON.stringify({ keys: [jwk] }));
    h = await startSecurityHarness({
      configDir: dir,
      settings: {
        [`${R}jwt1.order`]: 3,
        [`${R}jwt1.allowed_issuer`]: 'https://issuer.one',
        [`${R}jwt1.allowed_audiences`]: ['es'],
        [`${R}jwt1.allowed_signature_algorithms`]: ['HS256'],
        [`${R}jwt1.hmac_key`]: HMAC1,
        [`${R}jwt1.claims.principal`]: 'sub',
        [`${R}jwt1.claims.groups`]: 'groups',
        [`${R}jwt1.claims.name`]: 'name',
        [`${R}jwt1.client_authentication.type`]: 'shared_secret',
        [`${R}jwt1.client_authentication.shared_secret`]: SECRET1,
        [`${R}jwt2.order`]: 4,
        [`${R}jwt2.token_type`]: 'access_token',
        [`${R}jwt2.allowed_issuer`]: 'https://issuer.two',
        [`${R}jwt2.allowed_audiences`]: 'es-two,other',
        [`${R}jwt2.allowed_subjects`]: 'svc-robot',
        [`${R}jwt2.allowed_signature_algorithms`]: 'RS256',
        [`${R}jwt2.pkc_jwkset_path`]: 'jwks2.json',
        [`${R}jwt2.client_authentication.type`]: 'none',
      },
    });
    es = new Client({ node: h.url, auth: { username: 'elastic', password: ELASTIC_PASSWORD } });
    await es.security.putRoleMapping({ name: 'jwt1-admins', roles: ['superuser'], rules: { all: [{ field: { 'realm.name': 'jwt1' } }, { field: { groups: 'admins' } }] } as never });
    await es.security.putRoleMapping({ name: 'jwt2-viewers', roles: ['viewer'], rules: { field: { 'realm.name': 'jwt2' } } as never });
  });
  afterAll(async () => {
    await es.close();
    await h.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('authenticates a JWT with the right client secret through the first realm, roles from the mapping (9.23)', async () => {
    const client = new Client({ node: h.url, auth: { bearer: await hs(one()) }, headers: { 'ES-Client-Authentication': `SharedSecret ${SECRET1}` } });
    const me = await client.security.authenticate();
    expect(me).toMatchObject({
      username: 'alice',
      roles: ['superuser'],
      full_name: 'Alice A',
      authentication_realm: { name: 'jwt1', type: 'jwt' },
      authentication_type: 'realm',
      metadata: { jwt_claim_iss: 'https://issuer.one', jwt_claim_sub: 'alice', jwt_token_type: 'id_token' },
    });
    await client.close();
  });

  it('authenticates through the second realm (other issuer, RS256 from a JWKS file, no client auth) (9.23)', async () => {
    const r = await call(h.url, 'GET', '/_security/_authenticate', authWith(await rs(two())));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ username: 'svc-robot', roles: ['viewer'], authentication_realm: { name: 'jwt2', type: 'jwt' } });
  });

  const refused: Array<[string, () => Promise<{ auth: string; headers: Record<string, string> }>]> = [
    ['a missing client secret', async () => authWith(await hs(one()))],
    ['a wrong client secret', async () => authWith(await hs(one()), 'nope')],
    ['a wrong issuer', async () => authWith(await hs(one({ iss: 'https://evil' })), SECRET1)],
    ['a wrong audience', async () => authWith(await hs(one({ aud: 'kibana' })), SECRET1)],
    ['a disallowed algorithm', async () => authWith(await hs(one(), { alg: 'HS512' }), SECRET1)],
    ['an expired exp', async () => authWith(await hs(one({ iat: now() - 3600, exp: now() - 120 })), SECRET1)],
    ['a bad signature', async () => authWith(await hs(one(), { key: 'another-key-of-thirty-two-bytes-length' }), SECRET1)],
    ['a subject the access_token realm does not allow', async () => authWith(await rs(two({ sub: 'mallory' })))],
  ];
  it.each(refused)('refuses %s with 401 unable to authenticate user (9.23)', async (_what, make) => {
    const req = await make();
    const r = await call(h.url, 'GET', '/_security/_authenticate', req);
    expect(r.status).toBe(401);
    expect(r.body.error.reason).toMatch(/^unable to authenticate user \[https:\/\/[^/]+\/[^/]+\/[a-z-]+\] for REST request \[\/_security\/_authenticate\]$/);
  });

  it('names the token principal iss/aud/sub in the refusal', async () => {
    const r = await call(h.url, 'GET', '/_security/_authenticate', authWith(await hs(one()), 'nope'));
    expect(r.body.error.reason).toBe('unable to authenticate user [https://issuer.one/es/alice] for REST request [/_security/_authenticate]');
  });

  it('lets a non-JWT bearer reach the token service (not blocked by the JWT realms)', async () => {
    const t = await es.security.getToken({ grant_type: 'client_credentials' });
    const r = await call(h.url, 'GET', '/_security/_authenticate', { auth: `Bearer ${t.access_token}` });
    expect(r.body).toMatchObject({ username: 'elastic', authentication_type: 'token' });
    const junk = await call(h.url, 'GET', '/_security/_authenticate', { auth: 'Bearer a.b' });
    expect(junk.body.error.additional_unsuccessful_credentials).toBe('oauth2 token: invalid token');
  });

  it('applies role mapping changes at once (cached JWT results are dropped)', async () => {
    await es.security.putRoleMapping({ name: 'jwt2-viewers', roles: ['editor'], rules: { field: { 'realm.name': 'jwt2' } } as never });
    const jwt = await rs(two());
    const r = await call(h.url, 'GET', '/_security/_authenticate', authWith(jwt));
    expect(r.body.roles).toEqual(['editor']);
    expect(await es.security.getRoleMapping({ name: 'jwt2-viewers' })).toMatchObject({ 'jwt2-viewers': { roles: ['editor'], enabled: true } });
    expect(await es.security.deleteRoleMapping({ name: 'jwt2-viewers' })).toEqual({ found: true });
    expect((await call(h.url, 'GET', '/_security/_authenticate', authWith(jwt))).body.roles).toEqual([]);
  });
});
