import { Client } from 'es8';
import { basic, call, ELASTIC_PASSWORD, startSecurityHarness, type SecurityHarness } from '../../support/securityHarness';

const UNSUCCESSFUL = 'unable to authenticate with provided credentials and anonymous access is not allowed for this request';

describe('API keys (spec §4, §9.10–9.16)', () => {
  let h: SecurityHarness;
  let es: Client;
  let bob: Client;
  const elastic = basic('elastic', ELASTIC_PASSWORD);
  const apiKey = (encoded: string) => `ApiKey ${encoded}`;

  beforeAll(async () => {
    h = await startSecurityHarness();
    es = new Client({ node: h.url, auth: { username: 'elastic', password: ELASTIC_PASSWORD } });
    await es.security.putRole({ name: 'ab_reader', cluster: ['manage_own_api_key'], indices: [{ names: ['ab*'], privileges: ['read'] }] });
    await es.security.putUser({ username: 'bob', password: 'bob-password', roles: ['ab_reader'] });
    bob = new Client({ node: h.url, auth: { username: 'bob', password: 'bob-password' } });
  });
  afterAll(async () => {
    await bob.close();
    await es.close();
    await h.stop();
  });

  it('creates a key whose encoded value is base64(id:api_key), expiration only when asked (9.10)', async () => {
    const k = await es.security.createApiKey({ name: 'plain' });
    expect(k.id).toMatch(/^[A-Za-z0-9_-]{20}$/);
    expect(k.api_key).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(k.encoded).toBe(Buffer.from(`${k.id}:${k.api_key}`).toString('base64'));
    expect(k.expiration).toBeUndefined();
    const before = Date.now();
    const e = await es.security.createApiKey({ name: 'expiring', expiration: '1d' });
    expect(e.expiration).toBeGreaterThanOrEqual(before + 86_400_000);
  });

  it('authenticates as the key: api_key type, _es_api_key realm, id and name, no roles, owner name (9.11)', async () => {
    const k = await bob.security.createApiKey({ name: 'bobs-key' });
    const viaKey = new Client({ node: h.url, auth: { apiKey: k.encoded } });
    const me = await viaKey.security.authenticate();
    expect(me).toMatchObject({
      username: 'bob',
      roles: [],
      authentication_realm: { name: '_es_api_key', type: '_es_api_key' },
      lookup_realm: { name: '_es_api_key', type: '_es_api_key' },
      authentication_type: 'api_key',
      api_key: { id: k.id, name: 'bobs-key' },
    });
    await viaKey.close();
  });

  it('limits a key to the intersection of its descriptors and the owner snapshot (9.12)', async () => {
    const k = await bob.security.createApiKey({ name: 'a-star', role_descriptors: { r: { indices: [{ names: ['a*'], privileges: ['read'] }] } } });
    const ok = await call(h.url, 'GET', '/_test/ab1/_search', { auth: apiKey(k.encoded) });
    expect(ok.status).toBe(200);
    const denied = await call(h.url, 'GET', '/_test/ac1/_search', { auth: apiKey(k.encoded) });
    expect(denied.status).toBe(403);
    expect(denied.body.error.reason).toBe(
      `action [indices:data/read/search] is unauthorized for API key id [${k.id}] of user [bob] on indices [ac1], this action is granted by the index privileges [read,all]`,
    );
    const expanded = await call(h.url, 'GET', '/_test/*/_search', { auth: apiKey(k.encoded) });
    expect(expanded.body.indices).toEqual([]); // '*' itself is not a concrete name; filtering happens on concrete names
    expect(h.security.allowedIndices(undefined, 'x', ['a'])).toEqual(['a']);
  });

  it('keeps the owner snapshot: a later role change does not reach the key until it is updated', async () => {
    await es.security.putRole({ name: 'wide', cluster: ['manage_own_api_key'], indices: [{ names: ['*'], privileges: ['read'] }] });
    await es.security.putUser({ username: 'walt', password: 'walt-password', roles: ['wide'] });
    const walt = new Client({ node: h.url, auth: { username: 'walt', password: 'walt-password' } });
    const k = await walt.security.createApiKey({ name: 'snap' });
    await es.security.putRole({ name: 'wide', cluster: ['manage_own_api_key'], indices: [{ names: ['x*'], privileges: ['read'] }] });
    expect((await call(h.url, 'GET', '/_test/y1/_search', { auth: apiKey(k.encoded) })).status).toBe(200);
    expect(await walt.security.updateApiKey({ id: k.id })).toEqual({ updated: true });
    expect((await call(h.url, 'GET', '/_test/y1/_search', { auth: apiKey(k.encoded) })).status).toBe(403);
    expect(await walt.security.updateApiKey({ id: k.id })).toEqual({ updated: false });
    await walt.close();
  });

  it('refuses expired, invalidated, unknown and wrong-secret keys with the matching message (9.13)', async () => {
    const k = await es.security.createApiKey({ name: 'short', expiration: '1s' });
    const inv = await es.security.createApiKey({ name: 'doomed' });
    await es.security.invalidateApiKey({ ids: [inv.id] });
    h.advance(2_000);
    const cases: Array<[string, string]> = [
      [k.encoded, 'API key: api key is expired'],
      [inv.encoded, `API key: api key [${inv.id}] has been invalidated`],
      [Buffer.from('unknownid:whatever').toString('base64'), 'API key: unable to find apikey with id unknownid'],
      [Buffer.from(`${inv.id}x:wrong`).toString('base64'), `API key: unable to find apikey with id ${inv.id}x`],
      [Buffer.from(`${k.id}:wrong-secret`).toString('base64'), `API key: invalid credentials for API key [${k.id}]`],
      ['%%%', 'API key: invalid ApiKey value'],
    ];
    for (const [value, message] of cases) {
      const r = await call(h.url, 'GET', '/_security/_authenticate', { auth: apiKey(value) });
      expect(r.status).toBe(401);
      expect(r.body.error.reason).toBe(UNSUCCESSFUL);
      expect(r.body.error.additional_unsuccessful_credentials).toBe(message);
    }
  });

  it('gets keys: 404 {api_keys:[]} for a missing id, 200 for other empty results (9.14)', async () => {
    const missing = await call(h.url, 'GET', '/_security/api_key?id=nope', { auth: elastic });
    expect(missing).toMatchObject({ status: 404, body: { api_keys: [] } });
    const byName = await call(h.url, 'GET', '/_security/api_key?name=nothing-like-this', { auth: elastic });
    expect(byName).toMatchObject({ status: 200, body: { api_keys: [] } });
    const k = await es.security.createApiKey({ name: 'listed', metadata: { team: 'a' }, role_descriptors: { r1: { cluster: ['monitor'] } } });
    const got = await es.security.getApiKey({ id: k.id, with_limited_by: true });
    expect(got.api_keys[0]).toMatchObject({
      id: k.id,
      name: 'listed',
      type: 'rest',
      invalidated: false,
      username: 'elastic',
      realm: 'reserved',
      realm_type: 'reserved',
      metadata: { team: 'a' },
      role_descriptors: { r1: { cluster: ['monitor'] } },
    });
    expect(got.api_keys[0].limited_by?.[0]).toHaveProperty('superuser');
    expect((await es.security.getApiKey({ name: 'list*' })).api_keys.map((x) => x.id)).toContain(k.id);
    const bad = await call(h.url, 'GET', `/_security/api_key?id=${k.id}&name=listed`, { auth: elastic });
    expect(bad.body.error.reason).toBe('Validation Failed: 1: only one of [api key id, api key name] can be specified;');
  });

  it('invalidates keys: unknown ids → 200 empty arrays; ids:[] → 400; again → previously (9.14)', async () => {
    const unknown = await es.security.invalidateApiKey({ ids: ['does-not-exist'] });
    expect(unknown).toEqual({ invalidated_api_keys: [], previously_invalidated_api_keys: [], error_count: 0 });
    const empty = await call(h.url, 'DELETE', '/_security/api_key', { auth: elastic, body: { ids: [] } });
    expect(empty.status).toBe(400);
    expect(empty.body.error.reason).toBe('Validation Failed: 1: Field [ids] cannot be an empty array;');
    const none = await call(h.url, 'DELETE', '/_security/api_key', { auth: elastic, body: {} });
    expect(none.body.error.reason).toBe('Validation Failed: 1: One of [api key id(s), api key name, username, realm name] must be specified if [owner] flag is false;');
    const k = await es.security.createApiKey({ name: 'twice' });
    expect((await es.security.invalidateApiKey({ ids: [k.id] })).invalidated_api_keys).toEqual([k.id]);
    expect(await es.security.invalidateApiKey({ ids: [k.id] })).toEqual({ invalidated_api_keys: [], previously_invalidated_api_keys: [k.id], error_count: 0 });
  });

  it('refuses a derived key with privileges, accepts one with an empty descriptor (9.15)', async () => {
    const parent = await es.security.createApiKey({ name: 'parent' });
    const r = await call(h.url, 'POST', '/_security/api_key', { auth: apiKey(parent.encoded), body: { name: 'child', role_descriptors: { r: { cluster: ['monitor'] } } } });
    expect(r.status).toBe(400);
    expect(r.body.error.type).toBe('illegal_argument_exception');
    expect(r.body.error.reason).toBe('creating derived api keys requires an explicit role descriptor that is empty (has no privileges)');
    const ok = await call(h.url, 'POST', '/_security/api_key', { auth: apiKey(parent.encoded), body: { name: 'child', role_descriptors: { r: {} } } });
    expect(ok.status).toBe(200);
  });

  it('lets manage_own_api_key read its own keys only (9.16)', async () => {
    await bob.security.createApiKey({ name: 'bob-own' });
    const own = await call(h.url, 'GET', '/_security/api_key?owner=true', { auth: basic('bob', 'bob-password') });
    expect(own.status).toBe(200);
    expect(own.body.api_keys.every((k: { username: string }) => k.username === 'bob')).toBe(true);
    const scoped = await call(h.url, 'GET', '/_security/api_key?username=bob&realm_name=default_native', { auth: basic('bob', 'bob-password') });
    expect(scoped.status).toBe(200);
    const all = await call(h.url, 'GET', '/_security/api_key', { auth: basic('bob', 'bob-password') });
    expect(all.status).toBe(403);
    expect(all.body.error.reason).toBe(
      'action [cluster:admin/xpack/security/api_key/get] is unauthorized for user [bob] with effective roles [ab_reader], this action is granted by the cluster privileges [read_security,manage_api_key,manage_security,all]',
    );
  });

  it('lets a key read and invalidate itself', async () => {
    const k = await bob.security.createApiKey({ name: 'self' });
    const viaKey = new Client({ node: h.url, auth: { apiKey: k.encoded } });
    expect((await viaKey.security.getApiKey({ id: k.id })).api_keys).toHaveLength(1);
    expect((await viaKey.security.invalidateApiKey({ ids: [k.id] })).invalidated_api_keys).toEqual([k.id]);
    await viaKey.close();
  });

  it('validates names and metadata', async () => {
    const r = await call(h.url, 'POST', '/_security/api_key', { auth: elastic, body: { name: '_hidden', metadata: { _x: 1 } } });
    expect(r.body.error.reason).toBe('Validation Failed: 1: api key name may not begin with an underscore;2: API key metadata keys may not start with [_];');
  });

  it('refuses updates through API key auth and on invalidated keys', async () => {
    const k = await bob.security.createApiKey({ name: 'upd' });
    const viaKey = await call(h.url, 'PUT', `/_security/api_key/${k.id}`, { auth: apiKey(k.encoded), body: {} });
    expect(viaKey.body.error.reason).toBe('authentication via API key not supported: only the owner user can update an API key');
    await bob.security.invalidateApiKey({ ids: [k.id], owner: true }); // manage_own_api_key needs owner=true
    const inv = await call(h.url, 'PUT', `/_security/api_key/${k.id}`, { auth: basic('bob', 'bob-password'), body: { metadata: { a: 1 } } });
    expect(inv.body.error.reason).toBe(`cannot update invalidated API key [${k.id}]`);
    const other = await call(h.url, 'PUT', `/_security/api_key/${k.id}`, { auth: elastic, body: {} });
    expect(other.status).toBe(404);
  });

  it('grants a key for a user with grant_api_key', async () => {
    const k = await es.security.grantApiKey({ grant_type: 'password', username: 'bob', password: 'bob-password', api_key: { name: 'granted' } });
    const me = await call(h.url, 'GET', '/_security/_authenticate', { auth: apiKey(k.encoded) });
    expect(me.body).toMatchObject({ username: 'bob', api_key: { id: k.id, name: 'granted' } });
  });

  it('queries keys with a small query DSL, own keys only under manage_own_api_key', async () => {
    const r = await es.security.queryApiKeys({ query: { bool: { filter: [{ term: { username: 'bob' } }, { prefix: { name: 'bob' } }] } }, sort: ['name'] });
    expect(r.api_keys.length).toBeGreaterThan(0);
    expect(r.api_keys.every((k) => k.username === 'bob' && k.name!.startsWith('bob'))).toBe(true);
    const own = await call(h.url, 'POST', '/_security/_query/api_key', { auth: basic('bob', 'bob-password'), body: {} });
    expect(own.body.api_keys.every((k: { username: string }) => k.username === 'bob')).toBe(true);
  });
});
