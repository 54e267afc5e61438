/**
 * Issue 20 part 1 on a 3-server NATS cluster with 3 nodes (R3 streams): with `events.retention: 5s`,
 * once history has aged out, a node started with an empty DATA_DIR knows every credential and open
 * context from the compacted state (ES_STATE) plus the tail: keys, users, tokens and service tokens
 * work through it, an invalidated key stays refused, a scroll continues and a PIT searches through it.
 */
import { Client } from 'es8';
import { startTestCluster, CLUSTER_PASSWORD, until, type TestCluster } from '../../support/cluster';
import { connectBus } from '../../../streams/busConnection';
import { readFacts } from '../../../streams';

jest.setTimeout(240_000);
let c: TestCluster;
const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

beforeAll(async () => {
  c = await startTestCluster({ nodes: 3, security: true, settings: { 'events.retention': '5s', 'xpack.security.authc.token.timeout': '1h' } });
});
afterAll(async () => {
  await c?.stop();
});

it('a node with an empty DATA_DIR gets every live credential and context after the history aged out', async () => {
  const es = c.nodes[0].es;
  await es.security.putUser({ username: 'carol', password: 'carol-password-1', roles: ['superuser'] });
  const carol = new Client({ node: c.nodes[1].url, auth: { username: 'carol', password: 'carol-password-1' } });
  const key = await carol.security.createApiKey({ name: 'kept' });
  const dead = await carol.security.createApiKey({ name: 'dead' });
  await es.security.invalidateApiKey({ ids: [dead.id] });
  const token = await carol.security.getToken({ grant_type: 'client_credentials' });
  const svc = await es.security.createServiceToken({ namespace: 'elastic', service: 'fleet-server', name: 'kept' });
  await es.indices.create({ index: 'books', settings: { number_of_shards: 1, number_of_replicas: 2 } });
  await es.bulk({ refresh: true, operations: [1, 2, 3].flatMap((n) => [{ index: { _index: 'books', _id: String(n) } }, { n }]) });
  const scroll = await es.search({ index: 'books', scroll: '3m', size: 1, sort: ['_doc'] });
  const pit = await es.openPointInTime({ index: 'books', keep_alive: '3m' });

  // The credential facts age out of ES_EVT (what a new node could have folded).
  const nc = await connectBus(c.nats.connection('node'));
  await until(async () => {
    for await (const f of readFacts(nc)) if (f.type === 'user.created' || f.type === 'apikey.created') return false;
    return true;
  }, 60_000, 'the credential facts aged out');
  await nc.close();

  const fresh = await c.addNode(); // empty DATA_DIR
  const status = async (authorization: string) => (await fetch(`${fresh.url}/_security/_authenticate`, { headers: { authorization } })).status;
  expect(await status(basic('carol', 'carol-password-1'))).toBe(200);
  expect(await status(basic('elastic', CLUSTER_PASSWORD))).toBe(200);
  expect(await status(`ApiKey ${key.encoded}`)).toBe(200);
  expect(await status(`ApiKey ${dead.encoded}`)).toBe(401);
  expect(await status(`Bearer ${token.access_token}`)).toBe(200);
  expect(await status(`Bearer ${svc.token.value}`)).toBe(200);
  const page2 = await fresh.es.scroll({ scroll_id: scroll._scroll_id!, scroll: '3m' });
  expect(page2.hits.hits.map((h) => h._id)).toEqual(['2']);
  expect((await fresh.es.search({ pit: { id: pit.id, keep_alive: '3m' }, size: 10 })).hits.hits).toHaveLength(3);
  await carol.close();
});
