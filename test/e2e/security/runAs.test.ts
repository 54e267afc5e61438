/**
 * Run-as (issue 22 item 4): `es-security-runas-user` with the `run_as` privilege, through the
 * official client. The effective user's roles apply, `_authenticate` shows the caller's realm as
 * `authentication_realm` and the user's as `lookup_realm`, and every refusal is ES's 403 wording
 * (AuthorizationDenialMessages.runAsDenied / actionDenied with "run as").
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, errors } from 'es8';
import { hashSecret } from '../../../actors/security/hashing';
import { call, ELASTIC_PASSWORD, startSecurityHarness, type SecurityHarness } from '../../support/securityHarness';

let h: SecurityHarness;
let configDir: string;
let es: Client;
const clients: Client[] = [];
const client = (auth: ConstructorParameters<typeof Client>[0]['auth'], runAs?: string) => {
  const c = new Client({ node: h.url, auth, ...(runAs !== undefined ? { headers: { 'es-security-runas-user': runAs } } : {}) });
  clients.push(c);
  return c;
};
const admin = (runAs?: string) => client({ username: 'admin', password: 'admin-password' }, runAs);
const refusal = async (p: Promise<unknown>) => {
  const e = (await p.catch((x: unknown) => x)) as errors.ResponseError;
  expect(e).toBeInstanceOf(errors.ResponseError);
  return { status: e.statusCode, type: e.body.error.type, reason: e.body.error.reason };
};

beforeAll(async () => {
  configDir = await mkdtemp(join(tmpdir(), 'runas-'));
  await writeFile(join(configDir, 'users'), `filey:${await hashSecret('filey-password', 'pbkdf2')}\n`);
  await writeFile(join(configDir, 'users_roles'), 'reader_b:filey\n');
  h = await startSecurityHarness({ configDir, settings: { 'xpack.security.audit.enabled': true } });
  es = client({ username: 'elastic', password: ELASTIC_PASSWORD });
  await es.security.putRole({ name: 'runner', cluster: ['manage_own_api_key', 'manage_token'], run_as: ['bob', 'file*', 'ghost', 'elastic', 'dora'] });
  await es.security.putRole({ name: 'reader_b', cluster: ['manage_own_api_key'], indices: [{ names: ['b*'], privileges: ['read'] }] });
  await es.security.putUser({ username: 'admin', password: 'admin-password', roles: ['runner'] });
  await es.security.putUser({ username: 'bob', password: 'bob-password', roles: ['reader_b', 'missing_role'], full_name: 'Bob B' });
  await es.security.putUser({ username: 'carol', password: 'carol-password', roles: ['reader_b'] });
  await es.security.putUser({ username: 'dora', password: 'dora-password', roles: ['reader_b'], enabled: false });
}, 60_000);
afterAll(async () => {
  for (const c of clients) await c.close();
  await h.stop();
  await rm(configDir, { recursive: true, force: true });
});

describe('run as a user the role names', () => {
  it('authenticates as the user: its roles, the caller\'s realm, the user\'s lookup realm', async () => {
    expect(await admin('bob').security.authenticate()).toMatchObject({
      username: 'bob',
      roles: ['reader_b', 'missing_role'],
      full_name: 'Bob B',
      authentication_realm: { name: 'default_native', type: 'native' },
      lookup_realm: { name: 'default_native', type: 'native' },
      authentication_type: 'realm',
    });
    expect(await admin('filey').security.authenticate()).toMatchObject({ username: 'filey', roles: ['reader_b'], lookup_realm: { name: 'default_file', type: 'file' } });
    expect(await admin('elastic').security.authenticate()).toMatchObject({ username: 'elastic', roles: ['superuser'], lookup_realm: { name: 'reserved', type: 'reserved' } });
  });

  it('authorizes as the user: its index grants, and 403s that name both users', async () => {
    const asBob = admin('bob');
    expect((await call(h.url, 'GET', '/_test/b1/_search', { auth: basicOf('admin', 'admin-password'), headers: { 'es-security-runas-user': 'bob' } })).status).toBe(200);
    const r = await call(h.url, 'GET', '/_test/a1/_search', { auth: basicOf('admin', 'admin-password'), headers: { 'es-security-runas-user': 'bob' } });
    expect([r.status, r.body.error.reason]).toEqual([
      403,
      'action [indices:data/read/search] is unauthorized for user [admin] run as [bob] with effective roles [reader_b] (assigned roles [missing_role] were not found) on indices [a1], this action is granted by the index privileges [read,all]',
    ]);
    // bob has no cluster privilege: the runner's manage_token does not carry over
    expect(await refusal(asBob.security.getToken({ grant_type: 'client_credentials' }))).toMatchObject({
      status: 403,
      reason: 'action [cluster:admin/xpack/security/token/create] is unauthorized for user [admin] run as [bob] with effective roles [reader_b] (assigned roles [missing_role] were not found), this action is granted by the cluster privileges [manage_token,manage_security,all]',
    });
  });

  it('refuses a user the role does not name, an unknown, a disabled and an empty one with the run-as 403', async () => {
    const denied = (who: string) =>
      `action [cluster:admin/xpack/security/user/authenticate] is unauthorized for user [admin] with effective roles [runner], because user [admin] is unauthorized to run as [${who}]`;
    for (const who of ['carol', 'ghost', 'dora', '']) {
      expect(await refusal(admin(who).security.authenticate())).toEqual({ status: 403, type: 'security_exception', reason: denied(who) });
    }
    const r = await call(h.url, 'GET', '/_test/_nodes/stats', { auth: basicOf('admin', 'admin-password'), headers: { 'es-security-runas-user': 'carol' } });
    expect([r.status, r.body.error.reason]).toEqual([403, denied('carol').replace('cluster:admin/xpack/security/user/authenticate', 'cluster:monitor/nodes/stats')]);
    // a route that authorizes itself names its own action
    expect(await refusal(admin('carol').security.createApiKey({ name: 'x' }))).toMatchObject({ status: 403, reason: denied('carol').replace('user/authenticate', 'api_key/create') });
  });

  it('keeps what the run-as user creates: an API key made as bob is bob\'s', async () => {
    const k = await admin('bob').security.createApiKey({ name: 'made-as-bob' });
    const mine = await client({ username: 'bob', password: 'bob-password' }).security.getApiKey({ owner: true });
    expect(mine.api_keys.map((x) => [x.id, x.username, x.realm])).toEqual([[k.id, 'bob', 'default_native']]);
  });
});

describe('run as from tokens, API keys and service accounts', () => {
  it('runs as from an access token (authentication_type token)', async () => {
    const t = await es.security.getToken({ grant_type: 'password', username: 'admin', password: 'admin-password' });
    const me = await client({ bearer: t.access_token }, 'bob').security.authenticate();
    expect(me).toMatchObject({ username: 'bob', authentication_type: 'token', authentication_realm: { name: 'default_native' }, lookup_realm: { name: 'default_native' } });
  });

  it('runs as from an API key whose descriptors and snapshot both grant run_as', async () => {
    const adminClient = admin();
    const withRunAs = await adminClient.security.createApiKey({ name: 'runner-key', role_descriptors: { r: { run_as: ['bob'] } } });
    const me = await client({ apiKey: withRunAs.encoded }, 'bob').security.authenticate();
    expect(me).toMatchObject({ username: 'bob', roles: ['reader_b', 'missing_role'], authentication_type: 'api_key', authentication_realm: { name: '_es_api_key', type: '_es_api_key' }, lookup_realm: { name: 'default_native' } });
    expect(me.api_key).toBeUndefined();
    // a key whose own descriptors grant no run_as: refused, described as the API key (no roles)
    const plain = await adminClient.security.createApiKey({ name: 'plain-key', role_descriptors: { r: { cluster: ['monitor'] } } });
    expect(await refusal(client({ apiKey: plain.encoded }, 'bob').security.authenticate())).toEqual({
      status: 403,
      type: 'security_exception',
      reason: `action [cluster:admin/xpack/security/user/authenticate] is unauthorized for API key id [${plain.id}] of user [admin], because API key id [${plain.id}] of user [admin] is unauthorized to run as [bob]`,
    });
  });

  it('ignores the header for a service account, as ES does', async () => {
    const tok = await es.security.createServiceToken({ namespace: 'elastic', service: 'fleet-server', name: 'runas-probe' });
    const me = await client({ bearer: tok.token.value }, 'bob').security.authenticate();
    expect(me).toMatchObject({ username: 'elastic/fleet-server', authentication_type: 'token' });
  });

  it('lets the superuser run as anyone (its role has run_as *)', async () => {
    expect(await client({ username: 'elastic', password: ELASTIC_PASSWORD }, 'carol').security.authenticate()).toMatchObject({ username: 'carol', authentication_realm: { name: 'reserved' } });
  });
});

describe('the run-as audit log (xpack.security.audit.enabled)', () => {
  /** The audit lines of one request (by its X-Opaque-Id), once `n` are written. */
  const linesOf = async (opaqueId: string, n = 1): Promise<Array<Record<string, unknown>>> => {
    for (let i = 0; i < 100; i++) {
      const text = await readFile(join(h.dataDir, 'logs', 'test_audit.json'), 'utf8').catch(() => '');
      const mine = text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.opaque_id === opaqueId);
      if (mine.length >= n) return mine;
      await new Promise((r) => setTimeout(r, 50));
    }
    return [];
  };
  const common = { type: 'audit', 'event.type': 'transport', 'origin.type': 'rest', 'user.name': 'admin', 'user.realm': 'default_native', 'user.roles': ['runner'] };

  it('writes run_as_granted with ES field names: who authenticated, who it ran as, the action', async () => {
    await admin('bob').security.authenticate(undefined, { opaqueId: 'audit-1' });
    const [l] = await linesOf('audit-1');
    expect(l).toMatchObject({ ...common, 'event.action': 'run_as_granted', 'user.run_as.name': 'bob', 'user.run_as.realm': 'default_native', action: 'cluster:admin/xpack/security/user/authenticate', 'url.path': '/_security/_authenticate', 'request.method': 'GET' });
    expect(typeof l['@timestamp']).toBe('string');
    expect(l['request.id']).toEqual(expect.any(String));
    const search = await call(h.url, 'GET', '/_test/b1/_search', { auth: basicOf('admin', 'admin-password'), headers: { 'es-security-runas-user': 'bob', 'x-opaque-id': 'audit-2' } });
    expect(search.status).toBe(200);
    const two = await linesOf('audit-2', 2);
    expect(two).toEqual([
      expect.objectContaining({ 'event.action': 'run_as_granted', action: 'indices:data/read/search', indices: ['b1'] }),
      // the action itself, authorized as bob: ES's access event names the user, and who ran as it
      expect.objectContaining({
        'event.action': 'access_granted', 'user.name': 'bob', 'user.realm': 'default_native', 'user.run_by.name': 'admin', 'user.run_by.realm': 'default_native',
        'user.roles': ['reader_b'], 'authentication.type': 'REALM', // missing_role was not found: not a role of the user's action: 'indices:data/read/search', indices: ['b1'],
      }),
    ]);
    expect(two[0]['request.id']).toBe(two[1]['request.id']);
    // an action the user may not run: granted run-as, denied access
    const denied = await call(h.url, 'GET', '/_test/a1/_search', { auth: basicOf('admin', 'admin-password'), headers: { 'es-security-runas-user': 'bob', 'x-opaque-id': 'audit-2b' } });
    expect(denied.status).toBe(403);
    expect((await linesOf('audit-2b', 2)).map((l) => [l['event.action'], l['user.name'], l.indices])).toEqual([
      ['run_as_granted', 'admin', ['a1']],
      ['access_denied', 'bob', ['a1']],
    ]);
  });

  it('writes run_as_denied for a user the role does not name, without a realm for one that does not exist', async () => {
    await admin('ghost').security.authenticate(undefined, { opaqueId: 'audit-3' }).catch(() => undefined);
    const [ghost] = await linesOf('audit-3');
    expect(ghost).toMatchObject({ ...common, 'event.action': 'run_as_denied', 'user.run_as.name': 'ghost', action: 'cluster:admin/xpack/security/user/authenticate' });
    expect(ghost['user.run_as.realm']).toBeUndefined();
    // a route that authorizes itself: the line names its action
    await admin('carol').security.createApiKey({ name: 'x' }, { opaqueId: 'audit-4' }).catch(() => undefined);
    expect(await linesOf('audit-4')).toEqual([expect.objectContaining({ 'event.action': 'run_as_denied', 'user.run_as.name': 'carol', 'user.run_as.realm': 'default_native', action: 'cluster:admin/xpack/security/api_key/create' })]);
  });

  it('names the API key that ran as a user, and writes no secret', async () => {
    const key = await admin().security.createApiKey({ name: 'audit-key', role_descriptors: { r: { run_as: ['bob'] } } });
    await client({ apiKey: key.encoded }, 'bob').security.authenticate(undefined, { opaqueId: 'audit-5' });
    expect(await linesOf('audit-5')).toEqual([
      expect.objectContaining({ 'event.action': 'run_as_granted', 'user.name': 'admin', 'user.realm': '_es_api_key', 'apikey.id': key.id, 'apikey.name': 'audit-key', 'user.run_as.name': 'bob' }),
    ]);
    const text = await readFile(join(h.dataDir, 'logs', 'test_audit.json'), 'utf8');
    for (const secret of ['admin-password', key.api_key, key.encoded, ELASTIC_PASSWORD, Buffer.from('admin:admin-password').toString('base64')]) expect(text).not.toContain(secret);
  });

  it('writes nothing for a request without the header', async () => {
    await admin().security.authenticate(undefined, { opaqueId: 'audit-6' });
    await admin('bob').security.authenticate(undefined, { opaqueId: 'audit-7' });
    expect(await linesOf('audit-7')).toHaveLength(1); // written after audit-6's request was answered
    expect(await readFile(join(h.dataDir, 'logs', 'test_audit.json'), 'utf8')).not.toContain('"audit-6"');
  });
});

function basicOf(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}
