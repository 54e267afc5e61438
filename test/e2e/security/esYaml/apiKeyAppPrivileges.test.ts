/**
 * The application-privilege parts of Elasticsearch's YAML REST tests `api_key/10_basic.yml` and
 * `api_key/60_admin_user.yml` (items 2 and 22), translated to the official client against a whole
 * node: `security.put_privileges` in the setup, roles and API keys granting `myapp` privileges,
 * `_has_privileges` with application entries, `clear_api_key_cache`, and `manage` implying `manage`.
 */
import { Client } from 'es8';
import { startTestNode, type TestNode } from '../../../support/node';

let t: TestNode;
const clients: Client[] = [];
const track = (c: Client) => (clients.push(c), c);
const PW = 'x-pack-test-password';

const roleDescriptors = (withApp: boolean) => ({
  'role-a': {
    cluster: ['all'],
    index: [{ names: ['index-a'], privileges: ['read'] }],
    ...(withApp ? { applications: [{ application: 'myapp', privileges: ['read'], resources: ['*'] }] } : {}),
  },
  'role-b': { cluster: ['manage'], index: [{ names: ['index-b'], privileges: ['all'] }] },
});

const hasPrivilegesBody = {
  index: [
    { names: ['*', 'index-a'], privileges: ['read', 'index', 'write'] },
    { names: ['index-a', 'index-b'], privileges: ['read', 'write'] },
  ],
  application: [{ application: 'myapp', resources: ['*', 'some-other-res'], privileges: ['data:read/me', 'data:write/me'] }],
};
const expectedIndex = {
  '*': { read: false, index: false, write: false },
  'index-a': { read: true, index: false, write: false },
  'index-b': { read: true, write: true },
};
const expectedApplication = {
  myapp: {
    '*': { 'data:read/me': true, 'data:write/me': false },
    'some-other-res': { 'data:read/me': true, 'data:write/me': false },
  },
};

beforeAll(async () => {
  t = await startTestNode({ security: true });
  await t.es.cluster.health({ wait_for_status: 'yellow' });
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await t.stop();
});

// setup / teardown of both files
beforeEach(async () => {
  const put = await t.es.security.putPrivileges({
    privileges: {
      myapp: {
        read: { application: 'myapp', name: 'read', actions: ['data:read/*'] },
        write: { application: 'myapp', name: 'write', actions: ['data:write/*'] },
      },
    },
  });
  expect(put.myapp.read).toBeDefined();
});
afterEach(async () => {
  await t.es.security.deletePrivileges({ application: 'myapp', name: 'read,write' }, { ignore: [404] });
});

describe('api_key/10_basic.yml (api_key_user with admin_role)', () => {
  let user: Client;
  beforeAll(async () => {
    await t.es.security.putRole({
      name: 'admin_role',
      cluster: ['manage_api_key'],
      indices: [{ names: ['*'], privileges: ['all'] }],
      applications: [{ application: 'myapp', privileges: ['*'], resources: ['*'] }],
    });
    await t.es.security.putUser({ username: 'api_key_user', password: PW, roles: ['admin_role'], full_name: 'API key user' });
    user = track(new Client({ node: t.url, auth: { username: 'api_key_user', password: PW } }));
  });

  it('Test create api key', async () => {
    const k = await user.security.createApiKey({ name: 'my-api-key', expiration: '1d', role_descriptors: roleDescriptors(false) });
    expect(k).toMatchObject({ name: 'my-api-key' });
    expect(k.encoded).toBe(Buffer.from(`${k.id}:${k.api_key}`).toString('base64'));
    const me = await track(new Client({ node: t.url, auth: { apiKey: k.encoded } })).security.authenticate();
    expect(me).toMatchObject({ username: 'api_key_user', roles: [], authentication_realm: { name: '_es_api_key', type: '_es_api_key' }, api_key: { name: 'my-api-key' } });
    const cleared = await t.es.security.clearApiKeyCache({ ids: k.id });
    expect(cleared._nodes.failed).toBe(0);
  });

  it('Test has privileges API for api key', async () => {
    const k = await user.security.createApiKey({ name: 'my-api-key', expiration: '1d', role_descriptors: roleDescriptors(true) });
    const r = await track(new Client({ node: t.url, auth: { apiKey: k.encoded } })).security.hasPrivileges(hasPrivilegesBody);
    expect(r.username).toBe('api_key_user');
    expect(r.has_all_requested).toBe(false);
    expect(r.index).toEqual(expectedIndex);
    expect(r.application).toEqual(expectedApplication);
  });
});

describe('api_key/60_admin_user.yml (the test runner admin)', () => {
  it('Test create api key', async () => {
    const k = await t.es.security.createApiKey({ name: 'api-key-1', expiration: '1d', role_descriptors: roleDescriptors(false) });
    const me = await track(new Client({ node: t.url, auth: { apiKey: k.encoded } })).security.authenticate();
    expect(me).toMatchObject({ username: 'elastic', roles: [], api_key: { id: k.id, name: 'api-key-1' } });
    expect((await t.es.security.clearApiKeyCache({ ids: k.id }))._nodes.failed).toBe(0);
  });

  it('Test has privileges API for api key', async () => {
    const k = await t.es.security.createApiKey({ name: 'my-api-key', expiration: '1d', role_descriptors: roleDescriptors(true) });
    const r = await track(new Client({ node: t.url, auth: { apiKey: k.encoded } })).security.hasPrivileges(hasPrivilegesBody);
    expect(r).toMatchObject({ username: 'elastic', has_all_requested: false });
    expect(r.index).toEqual(expectedIndex);
    expect(r.application).toEqual(expectedApplication);
  });

  it('Test update api keys: manage is false, then true after the update (item 3)', async () => {
    const k = await t.es.security.createApiKey({ name: 'api-key-update', expiration: '1d', role_descriptors: { access: { cluster: ['monitor'] } }, metadata: { step: 1 } });
    const key = track(new Client({ node: t.url, auth: { apiKey: k.encoded } }));
    expect((await key.security.hasPrivileges({ cluster: ['manage'] })).has_all_requested).toBe(false);
    expect((await t.es.security.updateApiKey({ id: k.id, role_descriptors: { access: { cluster: ['manage'] } }, metadata: { step: 2 } })).updated).toBe(true);
    expect((await t.es.security.getApiKey({ id: k.id })).api_keys[0].metadata).toEqual({ step: 2 });
    expect((await key.security.hasPrivileges({ cluster: ['manage'] })).has_all_requested).toBe(true);
  });
});
