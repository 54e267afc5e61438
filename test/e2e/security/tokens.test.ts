import { Client } from 'es8';
import { basic, call, ELASTIC_PASSWORD, startSecurityHarness, type SecurityHarness } from '../../support/securityHarness';

describe('token service (spec §3, §9.3–9.9)', () => {
  let h: SecurityHarness;
  let es: Client;
  const elastic = basic('elastic', ELASTIC_PASSWORD);
  const bobAuth = basic('bob', 'bob-password');

  beforeAll(async () => {
    h = await startSecurityHarness({ settings: { 'xpack.security.authc.token.timeout': '20m' } });
    es = new Client({ node: h.url, auth: { username: 'elastic', password: ELASTIC_PASSWORD } });
    await es.security.putRole({ name: 'tokens', cluster: ['manage_token'] });
    await es.security.putRole({ name: 'manager', cluster: ['manage'] });
    await es.security.putUser({ username: 'bob', password: 'bob-password', roles: ['tokens'] });
    await es.security.putUser({ username: 'max', password: 'max-password', roles: ['manager'] });
  });
  afterAll(async () => {
    await es.close();
    await h.stop();
  });

  it('grants a password token: Bearer, 1200 s, refresh token, authentication, no scope unless sent (9.3)', async () => {
    const t = await es.security.getToken({ grant_type: 'password', username: 'bob', password: 'bob-password' });
    expect(t).toMatchObject({ type: 'Bearer', expires_in: 1200 });
    expect(t.access_token).toMatch(/^[A-Za-z0-9+/]{38,}=*$/);
    expect(t.refresh_token).toBeDefined();
    expect((t as unknown as Record<string, unknown>).scope).toBeUndefined();
    expect(t.authentication).toMatchObject({ username: 'bob', roles: ['tokens'], authentication_realm: { name: 'default_native', type: 'native' }, authentication_type: 'realm' });
    const scoped = await es.security.getToken({ grant_type: 'password', username: 'bob', password: 'bob-password', scope: 'whatever' });
    expect(scoped.scope).toBe('full');
  });

  it('grants client_credentials without a refresh token (9.3)', async () => {
    const r = await call(h.url, 'POST', '/_security/oauth2/token', { auth: bobAuth, body: { grant_type: 'client_credentials' } });
    expect(r.status).toBe(200);
    expect(r.body.refresh_token).toBeUndefined();
    expect(r.body.authentication.username).toBe('bob');
  });

  it('authenticates with the access token as the owner, type token (9.4)', async () => {
    const t = await es.security.getToken({ grant_type: 'password', username: 'bob', password: 'bob-password' });
    const bob = new Client({ node: h.url, auth: { bearer: t.access_token } });
    const me = await bob.security.authenticate();
    expect(me).toMatchObject({ username: 'bob', roles: ['tokens'], authentication_type: 'token', authentication_realm: { name: 'default_native', type: 'native' } });
    await bob.close();
  });

  it('answers token endpoint errors in the RFC 6749 shape (9.5)', async () => {
    const bad = await call(h.url, 'POST', '/_security/oauth2/token', { auth: elastic, body: { grant_type: 'magic' } });
    expect(bad).toMatchObject({
      status: 400,
      body: { error: 'unsupported_grant_type', error_description: 'Validation Failed: 1: grant_type only supports the values: [password, _kerberos, refresh_token, client_credentials];' },
    });
    const missing = await call(h.url, 'POST', '/_security/oauth2/token', { auth: elastic, body: { grant_type: 'password', username: 'bob' } });
    expect(missing).toMatchObject({ status: 400, body: { error: 'invalid_request', error_description: 'Validation Failed: 1: password is missing;' } });
    const extra = await call(h.url, 'POST', '/_security/oauth2/token', { auth: elastic, body: { grant_type: 'refresh_token', refresh_token: 'x', username: 'bob' } });
    expect(extra.body).toEqual({ error: 'invalid_request', error_description: 'Validation Failed: 1: username is not supported with the refresh_token grant_type;' });
    const unknown = await call(h.url, 'POST', '/_security/oauth2/token', { auth: elastic, body: { grant_type: 'refresh_token', refresh_token: 'nope' } });
    expect(unknown).toMatchObject({ status: 400, body: { error: 'invalid_grant', error_description: 'could not refresh the requested token' } });
  });

  it('returns the same new pair when a refresh token is reused within 30 s, then refuses (9.6)', async () => {
    // bob is the client here (the caller of the grant is the one who may refresh)
    const t = (await call(h.url, 'POST', '/_security/oauth2/token', { auth: bobAuth, body: { grant_type: 'password', username: 'bob', password: 'bob-password' } })).body;
    const refresh = () => call(h.url, 'POST', '/_security/oauth2/token', { auth: bobAuth, body: { grant_type: 'refresh_token', refresh_token: t.refresh_token } });
    const a = await refresh();
    const b = await refresh();
    expect(a.status).toBe(200);
    expect(b.body.access_token).toBe(a.body.access_token);
    expect(b.body.refresh_token).toBe(a.body.refresh_token);
    expect(a.body.access_token).not.toBe(t.access_token);
    expect((await call(h.url, 'GET', '/_security/_authenticate', { auth: `Bearer ${a.body.access_token}` })).body.username).toBe('bob');
    h.advance(31_000);
    const c = await refresh();
    expect(c.body).toEqual({ error: 'invalid_grant', error_description: 'token has already been refreshed more than 30 seconds in the past' });
  });

  it('refuses refreshing an invalidated refresh token and by another client (9.6)', async () => {
    const t = (await call(h.url, 'POST', '/_security/oauth2/token', { auth: bobAuth, body: { grant_type: 'password', username: 'bob', password: 'bob-password' } })).body;
    const other = await call(h.url, 'POST', '/_security/oauth2/token', { auth: elastic, body: { grant_type: 'refresh_token', refresh_token: t.refresh_token } });
    expect(other.body).toEqual({ error: 'invalid_grant', error_description: 'tokens must be refreshed by the creating client' });
    await es.security.invalidateToken({ refresh_token: t.refresh_token });
    const r = await call(h.url, 'POST', '/_security/oauth2/token', { auth: bobAuth, body: { grant_type: 'refresh_token', refresh_token: t.refresh_token } });
    expect(r.body).toEqual({ error: 'invalid_grant', error_description: 'token has been invalidated' });
  });

  it('refuses a refresh token older than 24h', async () => {
    const t = await es.security.getToken({ grant_type: 'password', username: 'bob', password: 'bob-password' });
    h.advance(24 * 3_600_000 + 1_000);
    const r = await call(h.url, 'POST', '/_security/oauth2/token', { auth: bobAuth, body: { grant_type: 'refresh_token', refresh_token: t.refresh_token } });
    expect(r.body).toEqual({ error: 'invalid_grant', error_description: 'token document has expired' });
  });

  it('invalidates an access token: 401 token expired with the invalid_token challenge; again → previously (9.7)', async () => {
    const t = await es.security.getToken({ grant_type: 'password', username: 'bob', password: 'bob-password' });
    const first = await es.security.invalidateToken({ token: t.access_token });
    expect(first).toEqual({ invalidated_tokens: 1, previously_invalidated_tokens: 0, error_count: 0 });
    const r = await call(h.url, 'GET', '/_security/_authenticate', { auth: `Bearer ${t.access_token}` });
    expect(r.status).toBe(401);
    expect(r.body.error.reason).toBe('token expired');
    expect(r.headers.get('www-authenticate')).toBe('Bearer realm="security", error="invalid_token", error_description="The access token expired"');
    const again = await es.security.invalidateToken({ token: t.access_token });
    expect(again).toEqual({ invalidated_tokens: 0, previously_invalidated_tokens: 1, error_count: 0 });
  });

  it('answers 404 with zero counts for an unknown token and validates the body (9.8)', async () => {
    const r = await call(h.url, 'DELETE', '/_security/oauth2/token', { auth: elastic, body: { token: 'no-such-token' } });
    expect(r).toMatchObject({ status: 404, body: { invalidated_tokens: 0, previously_invalidated_tokens: 0, error_count: 0 } });
    expect(r.body.error_details).toBeUndefined();
    const both = await call(h.url, 'DELETE', '/_security/oauth2/token', { auth: elastic, body: { token: 'a', refresh_token: 'b' } });
    expect(both.status).toBe(400);
    expect(both.body.error.reason).toBe('only one of [token, refresh_token] may be sent per request');
    const empty = await call(h.url, 'DELETE', '/_security/oauth2/token', { auth: elastic, body: {} });
    expect(empty.body.error.reason).toBe('Validation Failed: 1: token string must be provided when not specifying a realm name or a username;');
  });

  it('invalidates all tokens of a user, refresh and access tokens counted', async () => {
    await es.security.putUser({ username: 'eve', password: 'eve-password', roles: ['tokens'] });
    const t1 = await es.security.getToken({ grant_type: 'password', username: 'eve', password: 'eve-password' });
    await es.security.getToken({ grant_type: 'password', username: 'eve', password: 'eve-password' });
    const r = await es.security.invalidateToken({ username: 'eve' });
    expect(r).toEqual({ invalidated_tokens: 4, previously_invalidated_tokens: 0, error_count: 0 });
    expect((await call(h.url, 'GET', '/_security/_authenticate', { auth: `Bearer ${t1.access_token}` })).status).toBe(401);
    expect(await es.security.invalidateToken({ realm_name: 'nowhere' })).toEqual({ invalidated_tokens: 0, previously_invalidated_tokens: 0, error_count: 0 });
  });

  it('expires an access token after the configured timeout (9.9)', async () => {
    const t = await es.security.getToken({ grant_type: 'password', username: 'bob', password: 'bob-password' });
    h.advance(20 * 60_000 + 1);
    const r = await call(h.url, 'GET', '/_security/_authenticate', { auth: `Bearer ${t.access_token}` });
    expect(r.status).toBe(401);
    expect(r.body.error.reason).toBe('token expired');
  });

  it('needs manage_token: manage is not enough (9.21)', async () => {
    const r = await call(h.url, 'POST', '/_security/oauth2/token', { auth: basic('max', 'max-password'), body: { grant_type: 'client_credentials' } });
    expect(r.status).toBe(403);
    expect(r.body.error.reason).toBe(
      'action [cluster:admin/xpack/security/token/create] is unauthorized for user [max] with effective roles [manager], this action is granted by the cluster privileges [manage_token,manage_security,all]',
    );
  });

  it('refuses a wrong password in a password grant with 401', async () => {
    const r = await call(h.url, 'POST', '/_security/oauth2/token', { auth: elastic, body: { grant_type: 'password', username: 'bob', password: 'nope-nope' } });
    expect(r.status).toBe(401);
    expect(r.body.error.reason).toBe('unable to authenticate user [bob] for action [cluster:admin/xpack/security/token/create]');
  });
});

describe('token timeout setting', () => {
  it('uses xpack.security.authc.token.timeout for expires_in and expiry', async () => {
    const h = await startSecurityHarness({ settings: { 'xpack.security.authc.token.timeout': '1s' } });
    try {
      const r = await call(h.url, 'POST', '/_security/oauth2/token', { auth: basic('elastic', ELASTIC_PASSWORD), body: { grant_type: 'client_credentials' } });
      expect(r.body.expires_in).toBe(1);
      await new Promise((res) => setTimeout(res, 1_100));
      expect((await call(h.url, 'GET', '/_security/_authenticate', { auth: `Bearer ${r.body.access_token}` })).body.error.reason).toBe('token expired');
    } finally {
      await h.stop();
    }
  });

  it('refuses a timeout above 1h at start', async () => {
    await expect(startSecurityHarness({ settings: { 'xpack.security.authc.token.timeout': '2h' } })).rejects.toThrow('must be <= [1h]');
  });
});
