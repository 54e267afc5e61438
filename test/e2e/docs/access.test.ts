/**
 * Issue 13 with security on: the new APIs authorize exactly as the calls they are made of. An
 * msearch item or an mget doc on a forbidden index is that item's 403; update needs a write
 * privilege; reindex and delete-by-query scroll as the caller (the scroll contexts are the caller's,
 * in the lifecycle log) and write through the bulk path, whose per-index refusals become failures.
 */
import { startTestNode, ELASTIC_PASSWORD, type TestNode } from '../../support/node';
import { allFacts, raw } from '../search/helpers';

let t: TestNode;
const PASSWORD = 'docs-access-pw';
const basic = (user: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${PASSWORD}`).toString('base64')}` });
const as = (user: string, method: string, path: string, body?: unknown) => raw(t, method, path, body, basic(user));
const ndjson = (lines: unknown[]) => lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
/** ES's 403 reason; `on indices [...]` only when the role grants the action on some other index (RBACEngine). */
const denied = (user: string, roles: string, action: string, privileges: string, index?: string) =>
  `action [${action}] is unauthorized for user [${user}] with effective roles [${roles}]${index ? ` on indices [${index}]` : ''}, this action is granted by the index privileges [${privileges}]`;

beforeAll(async () => {
  t = await startTestNode({ security: true });
  for (const index of ['pub', 'priv']) {
    await t.es.indices.create({ index, settings: { number_of_shards: 2 }, mappings: { properties: { n: { type: 'long' } } } });
    await t.es.bulk({ refresh: true, operations: Array.from({ length: 6 }, (_, i) => [{ index: { _index: index, _id: String(i + 1) } }, { n: i + 1 }]).flat() });
  }
  await t.es.security.putRole({ name: 'pub_reader', cluster: [], indices: [{ names: ['pub'], privileges: ['read'] }] });
  await t.es.security.putRole({ name: 'copier', cluster: [], indices: [{ names: ['pub'], privileges: ['read'] }, { names: ['copy*'], privileges: ['write', 'create_index'] }] });
  await t.es.security.putUser({ username: 'reader', password: PASSWORD, roles: ['pub_reader'] });
  await t.es.security.putUser({ username: 'copier', password: PASSWORD, roles: ['copier'] });
}, 120_000);
afterAll(async () => {
  await t?.stop();
});

describe('msearch and mget authorize item by item', () => {
  it('answers an msearch item on a forbidden index with its 403, narrows a wildcard, runs the rest', async () => {
    const r = await as('reader', 'POST', '/_msearch', ndjson([{ index: 'pub' }, { size: 0 }, { index: 'priv' }, { size: 0 }, { index: '*' }, { size: 100 }]));
    expect(r.status).toBe(200);
    const [pub, priv, all] = r.json.responses;
    expect([pub.status, pub.hits.total.value]).toEqual([200, 6]);
    expect(priv.status).toBe(403);
    expect(priv.error.type).toBe('security_exception');
    expect(priv.error.reason).toBe(denied('reader', 'pub_reader', 'indices:data/read/search', 'read,all', 'priv'));
    expect(new Set(all.hits.hits.map((h: { _index: string }) => h._index))).toEqual(new Set(['pub']));
  });

  it('answers an mget doc of a forbidden index with its 403, the others found', async () => {
    const r = await as('reader', 'POST', '/_mget', { docs: [{ _index: 'pub', _id: '1' }, { _index: 'priv', _id: '1' }] });
    expect(r.status).toBe(200);
    expect(r.json.docs[0].found).toBe(true);
    expect(r.json.docs[1]).toMatchObject({ _index: 'priv', _id: '1', error: { type: 'security_exception', reason: denied('reader', 'pub_reader', 'indices:data/read/mget[shard]', 'read,all', 'priv') } });
  });
});

describe('update needs a write privilege', () => {
  it('refuses a reader, lets a writer update', async () => {
    const r = await as('reader', 'POST', '/pub/_update/1', { doc: { n: 100 } });
    expect(r.status).toBe(403);
    expect(r.json.error.reason).toBe(denied('reader', 'pub_reader', 'indices:data/write/update', 'index,write,all'));
    const ok = await as('copier', 'POST', '/copy-upd/_update/1', { doc: { n: 1 }, doc_as_upsert: true });
    expect([ok.status, ok.json.result]).toEqual([201, 'created']);
  });

  it('refuses a bulk update item on a forbidden index, not the whole bulk', async () => {
    const r = await as('copier', 'POST', '/_bulk', ndjson([{ update: { _index: 'pub', _id: '1' } }, { doc: { n: 1 } }, { update: { _index: 'copy-upd', _id: '1' } }, { doc: { n: 2 } }]));
    expect(r.json.errors).toBe(true);
    expect(r.json.items[0].update.status).toBe(403);
    // ES authorizes the shard-level bulk[s] before the item's own action (AuthorizationService.authorizeBulkItems)
    expect(r.json.items[0].update.error.reason).toBe(denied('copier', 'copier', 'indices:data/write/bulk[s]', 'create_doc,delete,create,index,write,all', 'pub'));
    expect(r.json.items[1].update.result).toBe('updated');
  });
});

describe('reindex and delete_by_query run as the caller', () => {
  it('reindexes with the caller\'s scroll (owned, in the lifecycle log) and bulk writes', async () => {
    const before = new Set((await allFacts(t.sys.ctx.nc)).map((f) => f.id));
    const r = await as('copier', 'POST', '/_reindex?refresh=true', { source: { index: 'pub' }, dest: { index: 'copy1' } });
    expect([r.status, r.json.created]).toEqual([200, 6]);
    const opened = (await allFacts(t.sys.ctx.nc)).filter((f) => !before.has(f.id) && f.type === 'scroll.opened');
    expect(opened).toHaveLength(1);
    expect((opened[0].data as { owner?: { username: string } }).owner?.username).toBe('copier');
  });

  it('refuses reading a forbidden source with the search 403', async () => {
    const r = await as('copier', 'POST', '/_reindex', { source: { index: 'priv' }, dest: { index: 'copy2' } });
    expect(r.status).toBe(403);
    expect(r.json.error.reason).toBe(denied('copier', 'copier', 'indices:data/read/search', 'read,all', 'priv'));
  });

  it('reports writes into a forbidden destination as 403 failures', async () => {
    const r = await as('reader', 'POST', '/_reindex', { source: { index: 'pub' }, dest: { index: 'pub-copy' } });
    expect(r.status).toBe(403);
    expect(r.json.created).toBe(0);
    expect(r.json.failures[0]).toMatchObject({ index: 'pub-copy', status: 403, cause: { type: 'security_exception' } });
  });

  it('refuses a delete-by-query by a reader item by item: nothing is deleted', async () => {
    const r = await as('reader', 'POST', '/pub/_delete_by_query', { query: { match_all: {} } });
    expect(r.status).toBe(403);
    expect(r.json.deleted).toBe(0);
    expect(r.json.failures[0].cause.reason).toBe(denied('reader', 'pub_reader', 'indices:data/write/bulk[s]', 'create_doc,delete,create,index,write,all'));
    expect((await t.es.count({ index: 'pub' })).count).toBe(6);
  });

  it('needs monitor for _tasks', async () => {
    const r = await as('reader', 'GET', '/_tasks');
    expect(r.status).toBe(403);
    const ok = await raw(t, 'GET', '/_tasks', undefined, { authorization: `Basic ${Buffer.from(`elastic:${ELASTIC_PASSWORD}`).toString('base64')}` });
    expect(ok.status).toBe(200);
  });
});
