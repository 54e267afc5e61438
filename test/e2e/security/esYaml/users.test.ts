/**
 * Elasticsearch's YAML REST test `users/10_basic.yml` (x-pack/plugin/src/yamlRestTest), translated
 * case by case to the official client against a whole node. The password-hash case reads the stored
 * hash from `.security` in ES; here the test makes the hash itself (bcrypt, ES's default format).
 */
import bcrypt from 'bcryptjs';
import { Client, errors } from 'es8';
import { startTestNode, type TestNode } from '../../../support/node';

let t: TestNode;
const joeBasic = `Basic ${Buffer.from('joe:s3krit-password').toString('base64')}`;
const joeBody = {
  password: 's3krit-password',
  roles: ['superuser'],
  full_name: 'Bazooka Joe',
  email: 'joe@bazooka.gum',
  metadata: { key1: 'val1', key2: 'val2' },
};

beforeAll(async () => {
  t = await startTestNode({ security: true });
  await t.es.cluster.health({ wait_for_status: 'yellow' });
});
afterAll(() => t.stop());
// teardown of the YAML file
afterEach(async () => {
  for (const username of ['joe', 'bob']) await t.es.security.deleteUser({ username }, { ignore: [404] });
});

async function expectJoe() {
  const asJoe = new Client({ node: t.url, headers: { authorization: joeBasic } });
  try {
    expect((await asJoe.cluster.health()).timed_out).toBe(false);
  } finally {
    await asJoe.close();
  }
  const got = await t.es.security.getUser({ username: 'joe' });
  expect(got.joe).toMatchObject({ username: 'joe', roles: ['superuser'], full_name: 'Bazooka Joe', email: 'joe@bazooka.gum', metadata: { key1: 'val1', key2: 'val2' } });
}

describe('users/10_basic.yml', () => {
  it('Test put user api', async () => {
    expect(await t.es.security.putUser({ username: 'joe', ...joeBody })).toMatchObject({ created: true });
    await expectJoe();
  });

  it('Test put user with username in body', async () => {
    const r = await t.es.transport.request<{ created: boolean }>({ method: 'PUT', path: '/_security/user/joe', body: { username: 'joe', ...joeBody } });
    expect(r.created).toBe(true);
    await expectJoe();
  });

  it('Test put user with different username in body', async () => {
    const e = await t.es.transport.request({ method: 'PUT', path: '/_security/user/joe', body: { username: 'joey', ...joeBody } }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(errors.ResponseError);
    const err = e as errors.ResponseError;
    expect(err.statusCode).toBe(400);
    expect(err.body).toMatchObject({ error: { type: 'illegal_argument_exception', reason: '[username] in source does not match the username provided [joe]' }, status: 400 });
    // nothing was created under either name
    await expect(t.es.security.getUser({ username: 'joe' })).rejects.toMatchObject({ statusCode: 404 });
    await expect(t.es.security.getUser({ username: 'joey' })).rejects.toMatchObject({ statusCode: 404 });
  });

  it('Test put user with password hash', async () => {
    const hash = bcrypt.hashSync('correct horse battery staple', 10).replace(/^\$2b\$/, '$2a$');
    await t.es.security.putUser({ username: 'joe', password_hash: hash, roles: ['superuser'] });
    const asJoe = new Client({ node: t.url, auth: { username: 'joe', password: 'correct horse battery staple' } });
    const wrong = new Client({ node: t.url, headers: { authorization: joeBasic } });
    try {
      expect((await asJoe.security.authenticate()).username).toBe('joe');
      await expect(wrong.security.authenticate()).rejects.toMatchObject({ statusCode: 401 });
    } finally {
      await asJoe.close();
      await wrong.close();
    }
  });

  it('refuses a password_hash of no supported algorithm with ES 400 (ours: also an unknown field)', async () => {
    const bad = await t.es.security.putUser({ username: 'joe', password_hash: 'not-a-hash', roles: [] }).catch((x: errors.ResponseError) => x);
    expect(bad).toMatchObject({ statusCode: 400, body: { error: { type: 'illegal_argument_exception' } } });
    expect((bad as errors.ResponseError).body.error.reason).toMatch(/^The provided password hash is not a hash or it could not be resolved to a supported hash algorithm\. The supported password hash algorithms are \[bcrypt, bcrypt4, /);
    const unknown = await t.es.transport.request({ method: 'PUT', path: '/_security/user/joe', body: { password: 'abcdef', roles: [], shoe_size: 42 } }).catch((x: errors.ResponseError) => x);
    expect(unknown).toMatchObject({ statusCode: 400, body: { error: { type: 'parse_exception', reason: 'failed to parse add user request. unexpected field [shoe_size]' } } });
  });
});
