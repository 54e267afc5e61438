/**
 * Application privileges (items 2 and 22): PUT/GET/DELETE /_security/privilege as event-sourced facts,
 * roles' `applications`, and `_has_privileges` answering application entries as ES's
 * ApplicationPermission does — never true for what was not granted.
 */
import { Client } from 'es8';
import { basic, call, ELASTIC_PASSWORD, startSecurityHarness, type SecurityHarness } from '../../support/securityHarness';

let h: SecurityHarness;
let es: Client;
const elastic = basic('elastic', ELASTIC_PASSWORD);
const PW = 'app-user-password';
const user = (name: string) => basic(name, PW);

async function has(auth: string, application: Array<{ application: string; privileges: string[]; resources: string[] }>) {
  const r = await call(h.url, 'POST', '/_security/user/_has_privileges', { auth, body: { application } });
  if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { has_all_requested: boolean; application: Record<string, Record<string, Record<string, boolean>>> };
}

beforeAll(async () => {
  h = await startSecurityHarness();
  es = new Client({ node: h.url, auth: { username: 'elastic', password: ELASTIC_PASSWORD } });
  await es.security.putPrivileges({
    privileges: {
      myapp: {
        read: { actions: ['data:read/*', 'action:login'], metadata: { description: 'read data' } },
        write: { actions: ['data:write/*'] },
      },
      'kibana-.kibana': { all: { actions: ['*'] }, read: { actions: ['ui:read/*'] } },
    },
  });
  const roles: Record<string, object> = {
    app_reader: { applications: [{ application: 'myapp', privileges: ['read'], resources: ['space:a*'] }] },
    app_all: { cluster: ['manage_own_api_key'], applications: [{ application: 'myapp', privileges: ['*'], resources: ['*'] }] },
    app_reader_owner: { cluster: ['manage_own_api_key'], applications: [{ application: 'myapp', privileges: ['read'], resources: ['*'] }] },
    kibana_star: { applications: [{ application: 'kibana-*', privileges: ['read'], resources: ['*'] }] },
    sec_reader: { cluster: ['read_security'] },
  };
  for (const [name, body] of Object.entries(roles)) await call(h.url, 'PUT', `/_security/role/${name}`, { auth: elastic, body });
  for (const [username, role] of [['ann', 'app_reader'], ['abe', 'app_all'], ['ola', 'app_reader_owner'], ['kai', 'kibana_star'], ['sid', 'sec_reader']]) {
    await es.security.putUser({ username, password: PW, roles: [role] });
  }
});
afterAll(async () => {
  await es.close();
  await h.stop();
});

describe('PUT / GET / DELETE /_security/privilege', () => {
  it('creates and updates, answering created per privilege', async () => {
    const first = await call(h.url, 'PUT', '/_security/privilege', { auth: elastic, body: { tmpapp: { one: { actions: ['a:b'] } } } });
    expect(first).toMatchObject({ status: 200, body: { tmpapp: { one: { created: true } } } });
    const again = await call(h.url, 'POST', '/_security/privilege', { auth: elastic, body: { tmpapp: { one: { actions: ['a:c'] }, two: { actions: ['x/*'] } } } });
    expect(again.body).toEqual({ tmpapp: { one: { created: false }, two: { created: true } } });
    expect((await call(h.url, 'GET', '/_security/privilege/tmpapp/one', { auth: elastic })).body).toEqual({ tmpapp: { one: { application: 'tmpapp', name: 'one', actions: ['a:c'], metadata: {} } } });
  });

  it('gets all, by application, by names; 404 {} only when asked names are all missing', async () => {
    const all = await es.security.getPrivileges();
    expect(Object.keys(all)).toEqual(expect.arrayContaining(['myapp', 'kibana-.kibana']));
    expect(all.myapp.read).toEqual({ application: 'myapp', name: 'read', actions: ['data:read/*', 'action:login'], metadata: { description: 'read data' } });
    expect(Object.keys((await es.security.getPrivileges({ application: 'myapp' })).myapp).sort()).toEqual(['read', 'write']);
    expect(Object.keys((await es.security.getPrivileges({ application: 'myapp', name: 'write,nope' })).myapp)).toEqual(['write']);
    expect(await call(h.url, 'GET', '/_security/privilege/myapp/nope', { auth: elastic })).toMatchObject({ status: 404, body: {} });
    expect(await call(h.url, 'GET', '/_security/privilege/noapp', { auth: elastic })).toMatchObject({ status: 200, body: {} });
  });

  it('deletes: found per name, 404 when none was found', async () => {
    const d = await call(h.url, 'DELETE', '/_security/privilege/tmpapp/one,ghost', { auth: elastic });
    expect(d).toMatchObject({ status: 200, body: { tmpapp: { one: { found: true }, ghost: { found: false } } } });
    expect(await call(h.url, 'DELETE', '/_security/privilege/tmpapp/one', { auth: elastic })).toMatchObject({ status: 404, body: { tmpapp: { one: { found: false } } } });
  });

  it.each([
    [{ ab: { read: { actions: ['a:b'] } } }, "An application name prefix must be at least 3 characters long (found 'ab')"],
    [{ Myapp: { read: { actions: ['a:b'] } } }, "An application name prefix must match the pattern ^[a-z][A-Za-z0-9]*$ (found 'Myapp')"],
    [{ 'my*': { read: { actions: ['a:b'] } } }, "Application names may not contain '*' (found 'my*')"],
    [{ myapp: { Read: { actions: ['a:b'] } } }, "Application privilege names must match the pattern ^[a-z][a-zA-Z0-9_.-]*$ (found 'Read')"],
    [{ myapp: { read2: { actions: ['login'] } } }, 'action [login] must contain one of [/ , * , :]'],
    [{ myapp: { read2: { actions: [] } } }, 'Application privileges must have at least one action'],
    [{ myapp: { read2: { actions: ['a:b'], metadata: { _x: 1 } } } }, 'metadata keys may not start with [_] (in privilege myapp read2)'],
    [{}, 'At least one application privilege must be provided'],
  ])('refuses %j with ES validation 400', async (body, message) => {
    const r = await call(h.url, 'PUT', '/_security/privilege', { auth: elastic, body });
    expect(r.status).toBe(400);
    expect(r.body.error.type).toBe('action_request_validation_exception');
    expect(r.body.error.reason).toContain(message);
  });

  it('refuses a body whose application or name differs from its key, and unknown fields', async () => {
    const app = await call(h.url, 'PUT', '/_security/privilege', { auth: elastic, body: { myapp: { read2: { application: 'other', actions: ['a:b'] } } } });
    expect(app.body.error).toMatchObject({ type: 'illegal_argument_exception', reason: 'privilege application [other] in source does not match the provided application [myapp]' });
    const name = await call(h.url, 'PUT', '/_security/privilege', { auth: elastic, body: { myapp: { read2: { name: 'read3', actions: ['a:b'] } } } });
    expect(name.body.error.reason).toBe('privilege name [read3] in source does not match the provided name [read2]');
    expect((await call(h.url, 'PUT', '/_security/privilege', { auth: elastic, body: { myapp: { read2: { actions: ['a:b'], color: 'red' } } } })).status).toBe(400);
  });

  it('needs manage_security to change and read_security to read', async () => {
    expect((await call(h.url, 'GET', '/_security/privilege/myapp', { auth: user('sid') })).status).toBe(200);
    const put = await call(h.url, 'PUT', '/_security/privilege', { auth: user('sid'), body: { myapp: { x: { actions: ['a:b'] } } } });
    expect(put.status).toBe(403);
    expect(put.body.error.reason).toBe(
      'action [cluster:admin/xpack/security/privilege/put] is unauthorized for user [sid] with effective roles [sec_reader], this action is granted by the cluster privileges [manage_security,all]',
    );
  });

  it('lists the built-in privileges', async () => {
    const b = await es.security.getBuiltinPrivileges();
    expect(b.cluster).toEqual(expect.arrayContaining(['all', 'manage', 'manage_own_api_key', 'monitor']));
    expect(b.index).toEqual(expect.arrayContaining(['create_doc', 'read', 'write']));
  });

  it('keeps privileges across a restart (they are facts in the event log)', async () => {
    await h.restart();
    await es.close();
    es = new Client({ node: h.url, auth: { username: 'elastic', password: ELASTIC_PASSWORD } }); // the edge's port changed
    expect((await call(h.url, 'GET', '/_security/privilege/myapp/read', { auth: elastic })).body.myapp.read.actions).toEqual(['data:read/*', 'action:login']);
    expect((await has(user('ann'), [{ application: 'myapp', privileges: ['read'], resources: ['space:a1'] }])).has_all_requested).toBe(true);
  });
});

describe('_has_privileges with application entries', () => {
  it('grants a held privilege by name and by its actions, only on its resources', async () => {
    const r = await has(user('ann'), [
      { application: 'myapp', privileges: ['read', 'write', 'data:read/users', 'data:write/users', 'action:login', 'admin'], resources: ['space:a1', 'space:a*', 'space:b', '*'] },
    ]);
    expect(r.has_all_requested).toBe(false);
    for (const res of ['space:a1', 'space:a*']) {
      expect(r.application.myapp[res]).toEqual({ read: true, write: false, 'data:read/users': true, 'data:write/users': false, 'action:login': true, admin: false });
    }
    for (const res of ['space:b', '*']) expect(Object.values(r.application.myapp[res]).every((v) => v === false)).toBe(true);
  });

  it('answers false for another application and for undefined privileges', async () => {
    const r = await has(user('ann'), [{ application: 'otherapp', privileges: ['read'], resources: ['space:a1'] }]);
    expect(r.application).toEqual({ otherapp: { 'space:a1': { read: false } } });
  });

  it('lets * grant every privilege of its application and no other', async () => {
    const r = await has(user('abe'), [
      { application: 'myapp', privileges: ['write', 'anything', 'x:y/z'], resources: ['r1'] },
      { application: 'otherapp', privileges: ['read'], resources: ['r1'] },
    ]);
    expect(r.application).toEqual({ myapp: { r1: { write: true, anything: true, 'x:y/z': true } }, otherapp: { r1: { read: false } } });
  });

  it('resolves an application pattern in a role against the stored applications', async () => {
    const r = await has(user('kai'), [{ application: 'kibana-.kibana', privileges: ['read', 'all', 'ui:read/discover'], resources: ['space:default'] }]);
    expect(r.application['kibana-.kibana']['space:default']).toEqual({ read: true, all: false, 'ui:read/discover': true });
  });

  it('follows privilege definitions as they change', async () => {
    await es.security.putPrivileges({ privileges: { myapp: { read: { actions: ['data:read/*', 'action:login', 'data:write/*'] } } } });
    expect((await has(user('ann'), [{ application: 'myapp', privileges: ['data:write/x'], resources: ['space:a1'] }])).has_all_requested).toBe(true);
    await es.security.putPrivileges({ privileges: { myapp: { read: { actions: ['data:read/*', 'action:login'] } } } });
    expect((await has(user('ann'), [{ application: 'myapp', privileges: ['data:write/x'], resources: ['space:a1'] }])).has_all_requested).toBe(false);
  });

  it('limits an API key by its descriptors and its owner: a key limited to read never holds write (item 2)', async () => {
    const own = await call(h.url, 'POST', '/_security/api_key', {
      auth: user('abe'),
      body: { name: 'read-only', role_descriptors: { r: { applications: [{ application: 'myapp', privileges: ['read'], resources: ['*'] }] } } },
    });
    const r = await has(`ApiKey ${own.body.encoded}`, [{ application: 'myapp', privileges: ['read', 'write', 'data:write/x'], resources: ['*'] }]);
    expect(r.application.myapp['*']).toEqual({ read: true, write: false, 'data:write/x': false });
    // the key asks for more than its owner holds: the owner's read-only grant wins
    const wide = await call(h.url, 'POST', '/_security/api_key', {
      auth: user('ola'),
      body: { name: 'wide', role_descriptors: { r: { applications: [{ application: 'myapp', privileges: ['*'], resources: ['*'] }] } } },
    });
    const w = await has(`ApiKey ${wide.body.encoded}`, [{ application: 'myapp', privileges: ['read', 'write'], resources: ['*'] }]);
    expect(w.application.myapp['*']).toEqual({ read: true, write: false });
  });

  it('refuses application patterns and empty requests with ES 400s', async () => {
    const star = await call(h.url, 'POST', '/_security/user/_has_privileges', { auth: user('ann'), body: { application: [{ application: 'my*', privileges: ['read'], resources: ['*'] }] } });
    expect(star).toMatchObject({ status: 400, body: { error: { type: 'action_request_validation_exception', reason: "Validation Failed: 1: Application names may not contain '*' (found 'my*');" } } });
    const empty = await call(h.url, 'POST', '/_security/user/_has_privileges', { auth: user('ann'), body: {} });
    expect(empty.body.error.reason).toBe('Validation Failed: 1: must specify at least one privilege;');
    const noRes = await call(h.url, 'POST', '/_security/user/_has_privileges', { auth: user('ann'), body: { application: [{ application: 'myapp', privileges: ['read'], resources: [] }] } });
    expect(noRes.status).toBe(400);
  });

  it('validates role applications as ES does', async () => {
    const r = await call(h.url, 'PUT', '/_security/role/bad_app', { auth: elastic, body: { applications: [{ application: 'a*b', privileges: ['read'], resources: ['*'] }] } });
    expect(r.status).toBe(400);
    expect(r.body.error.reason).toContain("Application name patterns only support trailing wildcards (found 'a*b')");
    const shape = await call(h.url, 'PUT', '/_security/role/bad_app', { auth: elastic, body: { applications: [{ application: 'myapp', privileges: ['read'] }] } });
    expect(shape.status).toBe(400);
  });
});
