/**
 * Issue 22 item 1 with security on: an async search is its submitter's. Another user's GET, status
 * and DELETE are ES's 404 (as if it did not exist), a holder of `monitor` may read the status of
 * anyone's search (ES TransportGetAsyncStatusAction) but not its result, and the search runs with the
 * submitter's index privileges.
 */
import { Client, errors } from 'es8';
import { startTestNode, type TestNode } from '../../support/node';

let t: TestNode;
const PW = 'async-owner-pw';
const clients: Client[] = [];
const as = (username: string) => {
  const c = new Client({ node: t.url, auth: { username, password: PW } });
  clients.push(c);
  return c;
};
const notFound = async (p: Promise<unknown>) => {
  const e = (await p.catch((x: unknown) => x)) as errors.ResponseError;
  expect(e).toBeInstanceOf(errors.ResponseError);
  return [e.statusCode, e.body.error.type];
};

beforeAll(async () => {
  t = await startTestNode({ security: true });
  await t.es.indices.create({ index: 'logs-a', settings: { number_of_shards: 2, number_of_replicas: 0 } });
  await t.es.indices.create({ index: 'secret', settings: { number_of_shards: 1, number_of_replicas: 0 } });
  await t.es.bulk({ refresh: true, operations: [{ index: { _index: 'logs-a', _id: '1' } }, { m: 1 }, { index: { _index: 'secret', _id: '1' } }, { m: 2 }] });
  await t.es.security.putRole({ name: 'logs_reader', indices: [{ names: ['logs-*'], privileges: ['read'] }] });
  await t.es.security.putRole({ name: 'monitoring', cluster: ['monitor'] });
  for (const [u, roles] of [['bob', ['logs_reader']], ['alice', ['logs_reader']], ['mon', ['monitoring']]] as const) await t.es.security.putUser({ username: u, password: PW, roles: [...roles] });
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await t?.stop();
});

describe('async searches and their owner', () => {
  it("answers another user's GET, status and DELETE with ES's 404; monitor reads any status, not the result", async () => {
    const bob = as('bob');
    const r = await bob.asyncSearch.submit({ index: 'logs-*', keep_on_completion: true, wait_for_completion_timeout: '10s' });
    const id = r.id!;
    expect(r.response.hits.hits.map((h) => h._index)).toEqual(['logs-a']);
    const alice = as('alice');
    expect(await notFound(alice.asyncSearch.get({ id }))).toEqual([404, 'resource_not_found_exception']);
    expect(await notFound(alice.asyncSearch.status({ id }))).toEqual([404, 'resource_not_found_exception']);
    expect(await notFound(alice.asyncSearch.delete({ id }))).toEqual([404, 'resource_not_found_exception']);
    const mon = as('mon');
    expect(await mon.asyncSearch.status({ id })).toMatchObject({ id, is_running: false, completion_status: 200 });
    expect(await notFound(mon.asyncSearch.get({ id }))).toEqual([404, 'resource_not_found_exception']);
    expect(await t.es.asyncSearch.status({ id })).toMatchObject({ id, completion_status: 200 }); // elastic (superuser)
    // still there for its owner
    expect((await bob.asyncSearch.get({ id })).response.hits.hits).toHaveLength(1);
    expect(await bob.asyncSearch.delete({ id })).toEqual({ acknowledged: true });
  });

  it("runs with the submitter's index privileges: 403 on an index it may not read", async () => {
    const e = (await as('bob').asyncSearch.submit({ index: 'secret', wait_for_completion_timeout: '10s' }).catch((x: unknown) => x)) as errors.ResponseError;
    expect(e.statusCode).toBe(403);
    expect(e.body.error.reason).toMatch(/^action \[indices:data\/read\/search\] is unauthorized for user \[bob\]/);
  });
});
