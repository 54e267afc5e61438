/**
 * Views list only what the caller may see: `_cat/indices`, `_cat/count`, `_cat/shards`,
 * `_cat/aliases`, `_stats` and `GET _alias` are filtered to the caller's authorized indices, as ES.
 */
import { Client } from 'es8';
import { startTestNode, type TestNode } from '../../support/node';

let t: TestNode;
let alice: Client;

beforeAll(async () => {
  t = await startTestNode({ security: true });
  await t.es.indices.create({ index: 'open-1', aliases: { 'open-alias': {} } });
  await t.es.indices.create({ index: 'secret-1', aliases: { 'secret-alias': {} } });
  await t.es.index({ index: 'open-1', document: { a: 1 }, refresh: true });
  await t.es.index({ index: 'secret-1', document: { a: 1 }, refresh: true });
  await t.es.index({ index: 'secret-1', document: { a: 2 }, refresh: true });
  await t.es.security.putRole({ name: 'open-reader', cluster: ['monitor'], indices: [{ names: ['open-*'], privileges: ['read', 'monitor', 'view_index_metadata'] }] });
  await t.es.security.putUser({ username: 'alice', password: 'alice-password', roles: ['open-reader'] });
  alice = new Client({ node: t.url, auth: { username: 'alice', password: 'alice-password' } });
});
afterAll(async () => {
  await alice?.close();
  await t?.stop();
});

it('lists only authorized indices in _cat and _stats', async () => {
  expect((await alice.cat.indices({ format: 'json' })).map((r) => r.index)).toEqual(['open-1']);
  expect((await alice.cat.count({ format: 'json' }))[0].count).toBe('1');
  expect(new Set((await alice.cat.shards({ format: 'json' })).map((r) => r.index))).toEqual(new Set(['open-1']));
  expect((await alice.cat.aliases({ format: 'json' })).map((r) => r.alias)).toEqual(['open-alias']);
  expect(Object.keys((await alice.indices.stats()).indices!)).toEqual(['open-1']);
  expect(Object.keys(await alice.indices.getAlias())).toEqual(['open-1']);
  // the superuser sees both
  expect((await t.es.cat.indices({ format: 'json', s: 'index' })).map((r) => r.index)).toEqual(['open-1', 'secret-1']);
});
