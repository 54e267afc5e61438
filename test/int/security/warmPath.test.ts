import { makeRequest } from '../../../actors/edge/router';
import { basic, call, ELASTIC_PASSWORD, startSecurityHarness, type SecurityHarness } from '../../support/securityHarness';

const req = (authorization?: string) =>
  makeRequest({ method: 'GET', path: '/_security/_authenticate', uri: '/_security/_authenticate', params: {}, query: {}, headers: authorization ? { authorization } : {}, body: undefined });

/**
 * A warm request (the credential verified before on this node) is answered by the gate without a
 * promise and without building a new authentication: under HTTP load the async chain cost more than
 * the checks themselves. Cold and failing requests answer exactly as before.
 */
describe('the warm authentication path', () => {
  let h: SecurityHarness;
  const creds: Record<string, string> = {};
  beforeAll(async () => {
    h = await startSecurityHarness();
    const elastic = basic('elastic', ELASTIC_PASSWORD);
    await call(h.url, 'PUT', '/_security/user/bob', { auth: elastic, body: { password: 'bob-password', roles: ['viewer'] } });
    creds.basic = elastic;
    creds.native = basic('bob', 'bob-password');
    creds.apikey = `ApiKey ${(await call(h.url, 'POST', '/_security/api_key', { auth: elastic, body: { name: 'w' } })).body.encoded}`;
    creds.bearer = `Bearer ${(await call(h.url, 'POST', '/_security/oauth2/token', { auth: elastic, body: { grant_type: 'client_credentials' } })).body.access_token}`;
    creds.service = `Bearer ${(await call(h.url, 'POST', '/_security/service/elastic/fleet-server/credential/token/w', { auth: elastic })).body.token.value}`;
  });
  afterAll(async () => {
    await h.stop();
  });

  it.each(['basic', 'native', 'apikey', 'bearer', 'service'])('answers a warm %s credential at once, with the same authentication each time', async (c) => {
    const gate = h.security.gate;
    const cold = await gate.authenticate(req(creds[c])); // verifies (slow hash) and caches
    const warm = gate.authenticate(req(creds[c]));
    expect(warm).not.toBeInstanceOf(Promise);
    expect(warm).toBe(cold);
    expect(gate.authenticate(req(creds[c]))).toBe(warm);
  });

  it('builds a new authentication after a role change (permissions are resolved again)', async () => {
    const gate = h.security.gate;
    const before = await gate.authenticate(req(creds.native));
    await call(h.url, 'PUT', '/_security/role/extra', { auth: creds.basic, body: { cluster: ['monitor'] } });
    const after = await gate.authenticate(req(creds.native));
    expect(after).not.toBe(before);
    expect(after).toEqual(before);
  });

  it('refuses a wrong password of a warm user with the same 401 as a cold one', async () => {
    await h.security.gate.authenticate(req(creds.native));
    const wrong = await call(h.url, 'GET', '/_security/_authenticate', { auth: basic('bob', 'not-the-password') });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toMatchObject({ type: 'security_exception', reason: 'unable to authenticate user [bob] for REST request [/_security/_authenticate]' });
    expect(wrong.headers.get('www-authenticate')).toContain('Basic realm="security"');
  });
});
