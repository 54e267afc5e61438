/**
 * Elasticsearch's YAML REST test `security/authz_api_keys/10_index_authz.yml` translated to the
 * official client against a whole node (item 1: every write route and bulk op type is authorized with
 * ES's action names), plus the same rules for users and the messages ES gives.
 */
import { Client, errors } from 'es8';
import { startTestNode, type TestNode } from '../../../support/node';

let t: TestNode;
let key: Client;
let keyId: string;
const INDICES = ['only_read', 'only_create_doc', 'only_index', 'only_delete', 'everything'];

const status = (p: Promise<unknown>) => p.then(() => 200, (e: errors.ResponseError) => e.statusCode);
const failure = (p: Promise<unknown>) => p.then(() => undefined, (e: errors.ResponseError) => e);
const total = async (index: string) => {
  const r = await t.es.search({ index });
  expect(r.hits.total).toMatchObject({ relation: 'eq' });
  return (r.hits.total as { value: number }).value;
};

beforeAll(async () => {
  t = await startTestNode({ security: true });
  await t.es.cluster.health({ wait_for_status: 'yellow' });
  for (const index of INDICES) await t.es.indices.create({ index, mappings: { properties: { name: { type: 'keyword' } } } });
  const k = await t.es.security.createApiKey({
    name: 'test-index-access',
    expiration: '1d',
    role_descriptors: {
      index_access: {
        indices: [
          { names: ['only_read'], privileges: ['read'] },
          { names: ['only_create_doc'], privileges: ['create_doc'] },
          { names: ['only_index'], privileges: ['index'] },
          { names: ['only_delete'], privileges: ['delete'] },
          { names: ['everything'], privileges: ['all'] },
        ],
      },
    },
  });
  expect(k.name).toBe('test-index-access');
  keyId = k.id;
  key = new Client({ node: t.url, auth: { apiKey: k.encoded } });
});
afterAll(async () => {
  await key.close();
  await t.stop();
});

describe('security/authz_api_keys/10_index_authz.yml: Test indexing documents with API Key', () => {
  it('successful indexing: create, index (create_doc only without an id), bulk', async () => {
    await key.create({ id: 'c1', index: 'only_create_doc', document: { name: 'create-doc-1' } });
    await key.create({ id: 'i1', index: 'only_index', document: { name: 'index-doc-1' } });
    await key.create({ id: 'e1', index: 'everything', document: { name: 'everything-doc-1' } });
    // no "id" due to create_doc privilege
    await key.index({ index: 'only_create_doc', document: { name: 'create-doc-2' } });
    await key.index({ id: 'i2', index: 'only_index', document: { name: 'index-doc-2' } });
    await key.create({ id: 'e2', index: 'everything', document: { name: 'everything-doc-2' } });
    const b = await key.bulk({
      operations: [
        { create: { _index: 'only_create_doc', _id: 'c3' } },
        { name: 'create-doc-3' },
        { index: { _index: 'only_index', _id: 'i3' } },
        { name: 'index-doc-3' },
        { index: { _index: 'everything' } },
        { name: 'everything-doc-3' },
      ],
    });
    expect(b.errors).toBe(false);
    await t.es.indices.refresh({ index: 'only_create_doc,only_index,everything' });
    expect(await total('only_create_doc')).toBe(3);
    expect(await total('only_index')).toBe(3);
    expect(await total('everything')).toBe(3);
  });

  it('authz failures: 403 for create/index on read or delete only, index with an id and update on create_doc only', async () => {
    expect(await status(key.create({ id: 'r1', index: 'only_read', document: { name: 'read-doc-1' } }))).toBe(403);
    expect(await status(key.index({ id: 'r2', index: 'only_read', document: { name: 'read-doc-2' } }))).toBe(403);
    expect(await status(key.create({ id: 'd1', index: 'only_delete', document: { name: 'delete-doc-1' } }))).toBe(403);
    expect(await status(key.index({ index: 'only_delete', document: { name: 'delete-doc-2' } }))).toBe(403);
    // the reported hole: an index op that may overwrite, with create_doc only
    expect(await status(key.index({ id: 'c4', index: 'only_create_doc', document: { name: 'create-doc-4' } }))).toBe(403);
    // (the single-document update API is another route; its bulk form is checked below)
    const b = await key.bulk({
      operations: [
        { index: { _index: 'only_read', _id: 'r3' } },
        { name: 'read-doc-3' },
        { create: { _index: 'only_delete' } },
        { name: 'delete-doc-3' },
        { update: { _index: 'only_create_doc', _id: 'c2' } },
        { doc: { name: 'updated-create-doc-2' } },
      ],
    });
    expect(b.errors).toBe(true);
    expect(b.items[0].index).toMatchObject({ status: 403, error: { type: 'security_exception' } });
    expect(b.items[1].create).toMatchObject({ status: 403, error: { type: 'security_exception' } });
    expect(b.items[2].update).toMatchObject({ status: 403, error: { type: 'security_exception' } });
    await t.es.indices.refresh({ index: 'only_create_doc,only_read,only_delete' });
    expect(await total('only_create_doc,only_read,only_delete')).toBe(3); // existing docs
    const c4 = await t.es.get({ index: 'only_create_doc', id: 'c4' }, { ignore: [404] });
    expect(c4.found).toBe(false);
  });

  it('mixed success / failure in one bulk', async () => {
    const b = await key.bulk({
      operations: [
        { index: { _index: 'only_read', _id: 'r4' } },
        { name: 'read-doc-4' },
        { index: { _index: 'only_index', _id: 'i4' } },
        { name: 'index-doc-4' },
        { create: { _index: 'only_create_doc' } },
        { name: 'create-doc-5' },
      ],
    });
    expect(b.errors).toBe(true);
    expect(b.items[0].index).toMatchObject({ status: 403, error: { type: 'security_exception' } });
    expect(b.items[1].index).toMatchObject({ status: 201, _id: 'i4' });
    expect(b.items[2].create?.status).toBe(201);
    expect(b.items[2].create?._id).toBeTruthy();
    await t.es.indices.refresh({ index: 'only_create_doc,only_read,only_index' });
    expect(await total('only_create_doc')).toBe(4);
    expect(await total('only_read')).toBe(0);
    expect(await total('only_index')).toBe(4);
  });
});

describe('write authorization with ES action names (item 1)', () => {
  const who = () => `API key id [${keyId}] of user [elastic]`;

  it('names the implied op-type action and the privileges that grant it', async () => {
    const e = await failure(key.index({ id: 'c9', index: 'only_create_doc', document: { name: 'x' } }));
    expect(e?.body.error.reason).toBe(
      `action [indices:data/write/index:op_type/index] is unauthorized for ${who()} on indices [only_create_doc], this action is granted by the index privileges [create,index,write,all]`,
    );
    const r = await failure(key.index({ id: 'r9', index: 'only_read', document: { name: 'x' } }));
    expect(r?.body.error.reason).toBe(
      `action [indices:data/write/index] is unauthorized for ${who()} on indices [only_read], this action is granted by the index privileges [create_doc,create,index,write,all]`,
    );
  });

  it('lets create_doc create through _create and op_type=create, never overwrite', async () => {
    expect(await status(key.create({ id: 'c10', index: 'only_create_doc', document: { name: 'x' } }))).toBe(200);
    expect(await status(key.index({ id: 'c11', index: 'only_create_doc', op_type: 'create', document: { name: 'x' } }))).toBe(200);
    const again = await failure(key.create({ id: 'c10', index: 'only_create_doc', document: { name: 'y' } }));
    expect(again?.statusCode).toBe(409);
    expect((await t.es.get<{ name: string }>({ index: 'only_create_doc', id: 'c10' }))._source?.name).toBe('x');
  });

  it('authorizes deletes with indices:data/write/delete: delete and all may, index and create_doc may not', async () => {
    await t.es.index({ index: 'only_delete', id: 'd5', document: { name: 'x' }, refresh: true });
    await t.es.index({ index: 'only_index', id: 'i5', document: { name: 'x' }, refresh: true });
    expect(await status(key.delete({ index: 'only_delete', id: 'd5' }))).toBe(200);
    const e = await failure(key.delete({ index: 'only_index', id: 'i5' }));
    expect(e?.statusCode).toBe(403);
    expect(e?.body.error.reason).toMatch(/^action \[indices:data\/write\/delete\] is unauthorized for .* on indices \[only_index\], this action is granted by the index privileges \[delete,write,all\]$/);
    const b = await key.bulk({ operations: [{ delete: { _index: 'only_create_doc', _id: 'c1' } }, { delete: { _index: 'everything', _id: 'e1' } }] });
    expect(b.items[0].delete).toMatchObject({ status: 403, error: { type: 'security_exception' } });
    expect(b.items[1].delete).toMatchObject({ status: 200, result: 'deleted' });
  });

  it('refuses the bulk[s] shard action on an index with read only, naming it', async () => {
    const b = await key.bulk({ operations: [{ create: { _index: 'only_read', _id: 'x' } }, { name: 'x' }] });
    expect(b.items[0].create?.error?.reason).toBe(
      `action [indices:data/write/bulk[s]] is unauthorized for ${who()} on indices [only_read], this action is granted by the index privileges [create_doc,delete,create,index,write,all]`,
    );
  });

  it('needs indices:admin/auto_create to write into a missing index, and tells nothing about a missing index to a non-writer', async () => {
    const e = await failure(key.index({ index: 'only_create_doc_missing', document: { name: 'x' } }));
    expect(e?.statusCode).toBe(403);
    const b = await key.bulk({ operations: [{ delete: { _index: 'no-such-index', _id: '1' } }] });
    expect(b.items[0].delete).toMatchObject({ status: 403, error: { type: 'security_exception' } });
    const single = await failure(key.delete({ index: 'no-such-index', id: '1' }));
    expect(single?.statusCode).toBe(403);
    expect(await t.es.indices.exists({ index: 'only_create_doc_missing' })).toBe(false);
  });

  it('creates a missing index only with a privilege granting indices:admin/auto_create', async () => {
    await t.es.security.putRole({ name: 'logs_writer', indices: [{ names: ['logs-*'], privileges: ['create_doc'] }] });
    await t.es.security.putRole({ name: 'logs_creator', indices: [{ names: ['logs-*'], privileges: ['create_doc', 'auto_configure'] }] });
    await t.es.security.putUser({ username: 'wes', password: 'wes-password', roles: ['logs_writer'] });
    await t.es.security.putUser({ username: 'cleo', password: 'cleo-password', roles: ['logs_creator'] });
    const wes = new Client({ node: t.url, auth: { username: 'wes', password: 'wes-password' } });
    const cleo = new Client({ node: t.url, auth: { username: 'cleo', password: 'cleo-password' } });
    try {
      const e = await failure(wes.index({ index: 'logs-a', document: { name: 'x' } }));
      expect(e?.statusCode).toBe(403);
      // no auto_create on any index: ES denies before resolving, without naming indices (RBACEngine)
      expect(e?.body.error.reason).toBe(
        'action [indices:admin/auto_create] is unauthorized for user [wes] with effective roles [logs_writer], this action is granted by the index privileges [auto_configure,create_index,manage,all]',
      );
      const b = await wes.bulk({ operations: [{ create: { _index: 'logs-b' } }, { name: 'x' }] });
      expect(b.items[0].create).toMatchObject({ status: 403, error: { type: 'security_exception' } });
      expect(await t.es.indices.exists({ index: 'logs-a,logs-b' })).toBe(false);
      expect((await cleo.index({ index: 'logs-a', document: { name: 'x' } })).result).toBe('created');
      expect((await wes.index({ index: 'logs-a', document: { name: 'y' } })).result).toBe('created');
    } finally {
      await wes.close();
      await cleo.close();
    }
  });

  it('refuses a whole bulk when the caller writes to no index at all', async () => {
    await t.es.security.putRole({ name: 'reader_only', indices: [{ names: ['*'], privileges: ['read'] }] });
    await t.es.security.putUser({ username: 'rita', password: 'rita-password', roles: ['reader_only'] });
    const rita = new Client({ node: t.url, auth: { username: 'rita', password: 'rita-password' } });
    try {
      const e = await failure(rita.bulk({ operations: [{ index: { _index: 'everything' } }, { name: 'x' }] }));
      expect(e?.statusCode).toBe(403);
      expect(e?.body.error.reason).toBe(
        'action [indices:data/write/bulk] is unauthorized for user [rita] with effective roles [reader_only], this action is granted by the index privileges [create_doc,delete,create,index,write,all]',
      );
    } finally {
      await rita.close();
    }
  });
});
