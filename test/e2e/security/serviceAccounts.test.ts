import { Client } from 'es8';
import { serviceTokensCli } from '../../../scripts/serviceTokens';
import { basic, call, ELASTIC_PASSWORD, startSecurityHarness, type SecurityHarness } from '../../support/securityHarness';

const waitFor = async <T>(f: () => Promise<T | undefined>, ms = 5_000): Promise<T> => {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe('service accounts (spec §5, §9.17–9.20)', () => {
  let h: SecurityHarness;
  let es: Client;
  const elastic = basic('elastic', ELASTIC_PASSWORD);

  beforeAll(async () => {
    h = await startSecurityHarness();
    es = new Client({ node: h.url, auth: { username: 'elastic', password: ELASTIC_PASSWORD } });
  });
  afterAll(async () => {
    await es.close();
    await h.stop();
  });

  it('creates a token in ES encoding and authenticates with it: roles [], token name and type (9.17)', async () => {
    const r = await es.security.createServiceToken({ namespace: 'elastic', service: 'fleet-server', name: 'token1' });
    expect(r.created).toBe(true);
    expect(r.token.name).toBe('token1');
    expect(r.token.value.startsWith('AAEAAWVsYXN0aWMv')).toBe(true);
    expect(r.token.value.endsWith('=')).toBe(false);
    const decoded = Buffer.from(r.token.value, 'base64');
    expect([...decoded.subarray(0, 4)]).toEqual([0, 1, 0, 1]);
    expect(decoded.subarray(4).toString()).toMatch(/^elastic\/fleet-server\/token1:[A-Za-z0-9_-]{22}$/);
    const fleet = new Client({ node: h.url, auth: { bearer: r.token.value } });
    const me = await fleet.security.authenticate();
    expect(me).toMatchObject({
      username: 'elastic/fleet-server',
      roles: [],
      full_name: 'Service account - elastic/fleet-server',
      metadata: { _elastic_service_account: true },
      authentication_realm: { name: '_service_account', type: '_service_account' },
      authentication_type: 'token',
      token: { name: 'token1', type: '_service_account_index' },
    });
    await fleet.close();
  });

  it('refuses a duplicate token name with 409 and unknown accounts with 400', async () => {
    const dup = await call(h.url, 'POST', '/_security/service/elastic/fleet-server/credential/token/token1', { auth: elastic });
    expect(dup.status).toBe(409);
    expect(dup.body.error.type).toBe('version_conflict_engine_exception');
    const unknown = await call(h.url, 'POST', '/_security/service/elastic/nope/credential/token/t', { auth: elastic });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.reason).toBe('service account [elastic/nope] does not exist');
  });

  it('refuses a wrong secret and unknown accounts with the hard 401 (9.18)', async () => {
    const enc = (s: string) => Buffer.concat([Buffer.from([0, 1, 0, 1]), Buffer.from(s)]).toString('base64').replace(/=+$/, '');
    const wrong = await call(h.url, 'GET', '/_security/_authenticate', { auth: `Bearer ${enc('elastic/fleet-server/token1:wrong-secret-value')}` });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.reason).toBe('failed to authenticate service account [elastic/fleet-server] with token name [token1]');
    const none = await call(h.url, 'GET', '/_security/_authenticate', { auth: `Bearer ${enc('elastic/nonexistent/t1:abcdefghijklmnop')}` });
    expect(none.body.error.reason).toBe('failed to authenticate service account [elastic/nonexistent] with token name [t1]');
    const short = await call(h.url, 'GET', '/_security/_authenticate', { auth: `Bearer ${enc('elastic/fleet-server/token1:short')}` });
    expect(short.body.error.reason).toBe('failed to authenticate service account [elastic/fleet-server] with token name [token1]');
  });

  it('refuses Basic auth as a service account (9.18)', async () => {
    const r = await call(h.url, 'GET', '/_security/_authenticate', { auth: basic('elastic/fleet-server', 'whatever-password') });
    expect(r.status).toBe(401);
    expect(r.body.error.reason).toBe('unable to authenticate user [elastic/fleet-server] for REST request [/_security/_authenticate]');
  });

  it('gives service accounts only their descriptor: 403 without roles text', async () => {
    const t = await es.security.createServiceToken({ namespace: 'elastic', service: 'fleet-server', name: 'limited' });
    const r = await call(h.url, 'DELETE', '/_security/user/someone', { auth: `Bearer ${t.token.value}` });
    expect(r.status).toBe(403);
    expect(r.body.error.reason).toBe(
      'action [cluster:admin/xpack/security/user/delete] is unauthorized for user [elastic/fleet-server], this action is granted by the cluster privileges [manage_security,all]',
    );
    const own = await call(h.url, 'POST', '/_security/api_key', { auth: `Bearer ${t.token.value}`, body: { name: 'fleet-key' } });
    expect(own.status).toBe(200);
    const cc = await call(h.url, 'POST', '/_security/oauth2/token', { auth: `Bearer ${t.token.value}`, body: { grant_type: 'client_credentials' } });
    expect(cc.status).toBe(403); // the fleet-server descriptor has no manage_token
  });

  it('lists credentials with count, tokens and nodes_credentials; deletes once (9.19)', async () => {
    const creds = await es.security.getServiceCredentials({ namespace: 'elastic', service: 'fleet-server' });
    expect(creds).toMatchObject({ service_account: 'elastic/fleet-server', count: 2, tokens: { token1: {}, limited: {} } });
    expect(creds.nodes_credentials._nodes).toEqual({ total: 1, successful: 1, failed: 0 });
    expect(await es.security.deleteServiceToken({ namespace: 'elastic', service: 'fleet-server', name: 'limited' })).toEqual({ found: true });
    const again = await call(h.url, 'DELETE', '/_security/service/elastic/fleet-server/credential/token/limited', { auth: elastic });
    expect(again).toMatchObject({ status: 404, body: { found: false } });
  });

  it('lists built-in accounts with their role descriptor; unknown namespace → {} (9.20)', async () => {
    const all = await es.security.getServiceAccounts();
    expect(Object.keys(all)).toEqual(expect.arrayContaining(['elastic/fleet-server', 'elastic/kibana']));
    expect(all['elastic/fleet-server'].role_descriptor.cluster).toEqual(expect.arrayContaining(['monitor', 'manage_own_api_key']));
    expect(await es.security.getServiceAccounts({ namespace: 'elastic', service: 'kibana' })).toHaveProperty(['elastic/kibana']);
    const none = await call(h.url, 'GET', '/_security/service/nobody', { auth: elastic });
    expect(none).toMatchObject({ status: 200, body: {} });
  });

  it('picks up file tokens written by the CLI without a restart, and forgets deleted ones', async () => {
    const out = await serviceTokensCli(['--config-dir', h.configDir, 'create', 'elastic/kibana', 'file-tok']);
    const value = out.trim().split(' = ')[1];
    const me = await waitFor(async () => {
      const r = await call(h.url, 'GET', '/_security/_authenticate', { auth: `Bearer ${value}` });
      return r.status === 200 ? r.body : undefined;
    });
    expect(me).toMatchObject({ username: 'elastic/kibana', token: { name: 'file-tok', type: '_service_account_file' } });
    const creds = await es.security.getServiceCredentials({ namespace: 'elastic', service: 'kibana' });
    expect(creds.nodes_credentials.file_tokens).toEqual({ 'file-tok': { nodes: ['node0'] } });
    expect(await serviceTokensCli(['--config-dir', h.configDir, 'list'])).toBe('elastic/kibana/file-tok\n');
    await serviceTokensCli(['--config-dir', h.configDir, 'delete', 'elastic/kibana', 'file-tok']);
    await waitFor(async () => ((await call(h.url, 'GET', '/_security/_authenticate', { auth: `Bearer ${value}` })).status === 401 ? true : undefined));
  });

  describe('POST /_security/oauth2/token with the elastic/kibana service token (item 6)', () => {
    let kibana: string;
    beforeAll(async () => {
      kibana = `Bearer ${(await es.security.createServiceToken({ namespace: 'elastic', service: 'kibana', name: 'kbn-oauth' })).token.value}`;
      await es.security.putUser({ username: 'kuser', password: 'kuser-password', roles: ['viewer'] });
    });

    it('mints a client_credentials token for elastic/kibana as service_accounts/30_oauth_token.yml (issue 22 table)', async () => {
      const r = await call(h.url, 'POST', '/_security/oauth2/token', { auth: kibana, body: { grant_type: 'client_credentials' } });
      expect(r.status).toBe(200);
      expect(r.body.type).toBe('Bearer');
      expect(r.body.expires_in).toBe(1200);
      expect(r.body.refresh_token).toBeUndefined();
      const who = await call(h.url, 'GET', '/_security/_authenticate', { auth: `Bearer ${r.body.access_token}` });
      expect(who.status).toBe(200);
      expect(who.body).toMatchObject({ username: 'elastic/kibana', authentication_type: 'token', metadata: { _elastic_service_account: true }, token: { name: 'kbn-oauth', type: '_service_account_index' } });
    });

    it('refuses client_credentials for elastic/fleet-server with a 403 security_exception', async () => {
      const fleet = (await es.security.createServiceToken({ namespace: 'elastic', service: 'fleet-server', name: 'oauth-fleet' })).token.value;
      const r = await call(h.url, 'POST', '/_security/oauth2/token', { auth: `Bearer ${fleet}`, body: { grant_type: 'client_credentials' } });
      expect(r.status).toBe(403);
      expect(r.body.error.type).toBe('security_exception');
    });

    it('grants a password token for a user (what Kibana does), refreshes and invalidates it as the same client', async () => {
      const t = await call(h.url, 'POST', '/_security/oauth2/token', { auth: kibana, body: { grant_type: 'password', username: 'kuser', password: 'kuser-password' } });
      expect(t.status).toBe(200);
      expect(t.body.authentication).toMatchObject({ username: 'kuser', roles: ['viewer'], authentication_type: 'realm' });
      expect((await call(h.url, 'GET', '/_security/_authenticate', { auth: `Bearer ${t.body.access_token}` })).body).toMatchObject({ username: 'kuser', authentication_type: 'token' });
      const r = await call(h.url, 'POST', '/_security/oauth2/token', { auth: kibana, body: { grant_type: 'refresh_token', refresh_token: t.body.refresh_token } });
      expect(r.status).toBe(200);
      const other = await call(h.url, 'POST', '/_security/oauth2/token', { auth: elastic, body: { grant_type: 'refresh_token', refresh_token: r.body.refresh_token } });
      expect(other.body).toEqual({ error: 'invalid_grant', error_description: 'tokens must be refreshed by the creating client' });
      const d = await call(h.url, 'DELETE', '/_security/oauth2/token', { auth: kibana, body: { token: r.body.access_token } });
      expect(d).toMatchObject({ status: 200, body: { invalidated_tokens: 1 } });
    });

    it('answers a wrong user password and a bad refresh token with 4xx, never 5xx', async () => {
      const wrong = await call(h.url, 'POST', '/_security/oauth2/token', { auth: kibana, body: { grant_type: 'password', username: 'kuser', password: 'nope-nope' } });
      expect(wrong.status).toBe(401);
      const self = await call(h.url, 'POST', '/_security/oauth2/token', { auth: kibana, body: { grant_type: 'password', username: 'elastic/kibana', password: 'whatever' } });
      expect(self.status).toBe(401);
      const bad = await call(h.url, 'POST', '/_security/oauth2/token', { auth: kibana, body: { grant_type: 'refresh_token', refresh_token: 'AAEAAWVsYXN0aWMv' } });
      expect(bad).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    });
  });
});
