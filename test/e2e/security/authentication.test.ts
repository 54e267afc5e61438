import { Client } from 'es8';
import { Client as Client9 } from 'es9';
import { basic, call, ELASTIC_PASSWORD, startSecurityHarness, type SecurityHarness } from '../../support/securityHarness';

const CHALLENGES = ['Basic realm="security", charset="UTF-8"', 'Bearer realm="security"', 'ApiKey'];

describe('authentication and authorization (spec §2, §6, §7, §9.1, 9.2, 9.13, 9.21, 9.24)', () => {
  let h: SecurityHarness;
  let es: Client;
  const elastic = basic('elastic', ELASTIC_PASSWORD);

  beforeAll(async () => {
    h = await startSecurityHarness();
    es = new Client({ node: h.url, auth: { username: 'elastic', password: ELASTIC_PASSWORD } });
    await es.security.putRole({ name: 'reader_ab', indices: [{ names: ['ab*'], privileges: ['read'] }] });
    await es.security.putRole({ name: 'monitor_only', cluster: ['monitor'] });
    await es.security.putUser({ username: 'bob', password: 'bob-password', roles: ['reader_ab', 'ghost_role'], full_name: 'Bob B', email: 'bob@example.com' });
    await es.security.putUser({ username: 'mona', password: 'mona-password', roles: ['monitor_only'] });
  });
  afterAll(async () => {
    await es.close();
    await h.stop();
  });

  it('refuses a request without credentials with 401, ES body and all challenges (9.1)', async () => {
    const r = await call(h.url, 'GET', '/_security/_authenticate?pretty=false&x=1');
    expect(r.status).toBe(401);
    expect(r.body.error.type).toBe('security_exception');
    expect(r.body.error.reason).toBe('missing authentication credentials for REST request [/_security/_authenticate?pretty=false&x=1]');
    expect(r.body.error.header).toEqual({ 'WWW-Authenticate': CHALLENGES });
    expect(r.body.error.root_cause[0].header).toEqual({ 'WWW-Authenticate': CHALLENGES });
    expect(r.headers.get('www-authenticate')).toBe(CHALLENGES.join(', '));
  });

  it('refuses a bad Basic password naming the user (9.2)', async () => {
    const r = await call(h.url, 'GET', '/_security/_authenticate', { auth: basic('bob', 'wrong-password') });
    expect(r.status).toBe(401);
    expect(r.body.error.reason).toBe('unable to authenticate user [bob] for REST request [/_security/_authenticate]');
  });

  it('refuses a malformed Basic header', async () => {
    const r = await call(h.url, 'GET', '/_security/_authenticate', { auth: 'Basic !!!' });
    expect(r.status).toBe(401);
    expect(r.body.error.reason).toBe('invalid basic authentication header encoding');
  });

  it('shows a native user through _authenticate with the official client (9.2)', async () => {
    const bob = new Client({ node: h.url, auth: { username: 'bob', password: 'bob-password' } });
    const me = await bob.security.authenticate();
    expect(me).toMatchObject({
      username: 'bob',
      roles: ['reader_ab', 'ghost_role'],
      full_name: 'Bob B',
      email: 'bob@example.com',
      enabled: true,
      authentication_realm: { name: 'default_native', type: 'native' },
      lookup_realm: { name: 'default_native', type: 'native' },
      authentication_type: 'realm',
    });
    await bob.close();
  });

  it('shows the reserved elastic user with the v9 client', async () => {
    const es9 = new Client9({ node: h.url, auth: { username: 'elastic', password: ELASTIC_PASSWORD } });
    const me = await es9.security.authenticate();
    expect(me).toMatchObject({ username: 'elastic', roles: ['superuser'], metadata: { _reserved: true }, authentication_realm: { name: 'reserved', type: 'reserved' } });
    await es9.close();
  });

  it('keeps the unsuccessful step messages when nothing succeeds (9.24)', async () => {
    const r = await call(h.url, 'GET', '/_security/_authenticate', { auth: 'Bearer not-a-token-and-not-a-jwt' });
    expect(r.status).toBe(401);
    expect(r.body.error.reason).toBe('unable to authenticate with provided credentials and anonymous access is not allowed for this request');
    expect(r.body.error.additional_unsuccessful_credentials).toBe('oauth2 token: invalid token');
  });

  it('refuses an unknown API key with the API key message (9.13)', async () => {
    const r = await call(h.url, 'GET', '/_security/_authenticate', { auth: `ApiKey ${Buffer.from('nope:secret').toString('base64')}` });
    expect(r.status).toBe(401);
    expect(r.body.error.additional_unsuccessful_credentials).toBe('API key: unable to find apikey with id nope');
  });

  it('refuses an index action without the privilege, naming action, roles, index and privileges (9.21)', async () => {
    const r = await call(h.url, 'GET', '/_test/ac1/_search', { auth: basic('bob', 'bob-password') });
    expect(r.status).toBe(403);
    expect(r.body.error.reason).toBe(
      'action [indices:data/read/search] is unauthorized for user [bob] with effective roles [reader_ab] (assigned roles [ghost_role] were not found) on indices [ac1], this action is granted by the index privileges [read,all]',
    );
    expect(r.body.error.header).toBeUndefined();
  });

  it('allows an index action on granted names and filters wildcard expansions', async () => {
    const r = await call(h.url, 'GET', '/_test/ab1,ab*/_search', { auth: basic('bob', 'bob-password') });
    expect(r.status).toBe(200);
    expect(h.security.allowedIndices(undefined, 'indices:data/read/search', ['x'])).toEqual(['x']);
  });

  it('refuses a cluster action without monitor (9.21)', async () => {
    const r = await call(h.url, 'GET', '/_test/_nodes/stats', { auth: basic('bob', 'bob-password') });
    expect(r.status).toBe(403);
    expect(r.body.error.reason).toBe(
      'action [cluster:monitor/nodes/stats] is unauthorized for user [bob] with effective roles [reader_ab] (assigned roles [ghost_role] were not found), this action is granted by the cluster privileges [monitor,manage,all]',
    );
    expect((await call(h.url, 'GET', '/_test/_nodes/stats', { auth: basic('mona', 'mona-password') })).status).toBe(200);
  });

  it('refuses an index action when no role grants it anywhere, without naming indices', async () => {
    const r = await call(h.url, 'GET', '/_test/*/_search', { auth: basic('mona', 'mona-password') });
    expect(r.status).toBe(403);
    expect(r.body.error.reason).toBe(
      'action [indices:data/read/search] is unauthorized for user [mona] with effective roles [monitor_only], this action is granted by the index privileges [read,all]',
    );
  });

  it('checks security API privileges: manage_security for users', async () => {
    const r = await call(h.url, 'DELETE', '/_security/user/mona', { auth: basic('mona', 'mona-password') });
    expect(r.status).toBe(403);
    expect(r.body.error.reason).toBe(
      'action [cluster:admin/xpack/security/user/delete] is unauthorized for user [mona] with effective roles [monitor_only], this action is granted by the cluster privileges [manage_security,all]',
    );
  });

  it('manages users: get, update, disable, delete with ES bodies', async () => {
    const got = await es.security.getUser({ username: 'bob' });
    expect(got.bob).toMatchObject({ username: 'bob', roles: ['reader_ab', 'ghost_role'], enabled: true });
    expect(Object.keys(await es.security.getUser())).toEqual(expect.arrayContaining(['elastic', 'bob', 'mona']));
    expect((await call(h.url, 'GET', '/_security/user/nobody', { auth: elastic })).status).toBe(404);
    expect(await es.security.putUser({ username: 'carl', password: 'carl-password', roles: [] })).toEqual({ created: true });
    expect(await es.security.putUser({ username: 'carl', roles: ['monitor_only'] })).toEqual({ created: false });
    expect((await call(h.url, 'GET', '/_security/_authenticate', { auth: basic('carl', 'carl-password') })).body.roles).toEqual(['monitor_only']);
    await es.security.disableUser({ username: 'carl' });
    expect((await call(h.url, 'GET', '/_security/_authenticate', { auth: basic('carl', 'carl-password') })).status).toBe(401);
    await es.security.enableUser({ username: 'carl' });
    await es.security.changePassword({ username: 'carl', password: 'carl-password-2' });
    expect((await call(h.url, 'GET', '/_security/_authenticate', { auth: basic('carl', 'carl-password') })).status).toBe(401);
    expect((await call(h.url, 'GET', '/_security/_authenticate', { auth: basic('carl', 'carl-password-2') })).status).toBe(200);
    expect(await es.security.deleteUser({ username: 'carl' })).toEqual({ found: true });
    const again = await call(h.url, 'DELETE', '/_security/user/carl', { auth: elastic });
    expect(again).toMatchObject({ status: 404, body: { found: false } });
  });

  it('validates users: short password, reserved names', async () => {
    const r = await call(h.url, 'PUT', '/_security/user/dave', { auth: elastic, body: { password: 'short', roles: [] } });
    expect(r.status).toBe(400);
    expect(r.body.error.type).toBe('action_request_validation_exception');
    expect(r.body.error.reason).toBe('Validation Failed: 1: passwords must be at least [6] characters long;');
    const reserved = await call(h.url, 'PUT', '/_security/user/elastic', { auth: elastic, body: { password: 'whatever1', roles: [] } });
    expect(reserved.status).toBe(400);
    expect(reserved.body.error.reason).toBe('user [elastic] is reserved and only the password can be changed');
  });

  it('manages roles and refuses reserved ones', async () => {
    expect(await es.security.putRole({ name: 'tmp', cluster: ['monitor'] })).toEqual({ role: { created: true } });
    expect(await es.security.putRole({ name: 'tmp', cluster: ['manage'] })).toEqual({ role: { created: false } });
    const got = await es.security.getRole({ name: 'tmp' });
    expect(got.tmp).toMatchObject({ cluster: ['manage'], indices: [], run_as: [], metadata: {}, transient_metadata: { enabled: true } });
    expect((await es.security.getRole()).superuser).toBeDefined();
    expect(await es.security.deleteRole({ name: 'tmp' })).toEqual({ found: true });
    expect(await call(h.url, 'DELETE', '/_security/role/tmp', { auth: elastic })).toMatchObject({ status: 404, body: { found: false } });
    const bad = await call(h.url, 'PUT', '/_security/role/bad', { auth: elastic, body: { cluster: ['fly'] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.reason).toContain('unknown cluster privilege [fly]');
    const reserved = await call(h.url, 'DELETE', '/_security/role/superuser', { auth: elastic });
    expect(reserved.status).toBe(400);
  });

  it('reports the caller privileges and has_privileges', async () => {
    const bob = new Client({ node: h.url, auth: { username: 'bob', password: 'bob-password' } });
    const privs = await bob.security.getUserPrivileges();
    expect(privs).toEqual({ cluster: [], global: [], indices: [{ names: ['ab*'], privileges: ['read'], allow_restricted_indices: false }], applications: [], run_as: [] });
    const has = await bob.security.hasPrivileges({ cluster: ['monitor'], index: [{ names: ['ab1', 'ac1', 'ab*'], privileges: ['read', 'write'] }] });
    expect(has).toEqual({
      username: 'bob',
      has_all_requested: false,
      cluster: { monitor: false },
      index: { ab1: { read: true, write: false }, ac1: { read: false, write: false }, 'ab*': { read: true, write: false } },
      application: {},
    });
    const su = await es.security.hasPrivileges({ cluster: ['all'], index: [{ names: ['*'], privileges: ['all'] }] });
    expect(su.has_all_requested).toBe(true);
    await bob.close();
  });

  it('changes the elastic password through the API and uses it', async () => {
    await es.security.changePassword({ username: 'elastic', password: 'new-elastic-pw' });
    expect((await call(h.url, 'GET', '/_security/_authenticate', { auth: elastic })).status).toBe(401);
    expect((await call(h.url, 'GET', '/_security/_authenticate', { auth: basic('elastic', 'new-elastic-pw') })).status).toBe(200);
    await call(h.url, 'PUT', '/_security/user/elastic/_password', { auth: basic('elastic', 'new-elastic-pw'), body: { password: ELASTIC_PASSWORD } });
    expect((await call(h.url, 'GET', '/_security/_authenticate', { auth: elastic })).status).toBe(200);
  });
});
