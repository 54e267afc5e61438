/**
 * Rotating the id-signing key while two nodes run (3-server NATS cluster): both nodes pick up the
 * new key from the cluster bucket, sign new PIT ids with it, and ids signed with the old key keep
 * working on either node.
 */
import { connect } from '@nats-io/transport-node';
import { startTestCluster, until, type TestCluster } from '../../support/cluster';
import { rotateIdKey } from '../../../actors/cluster/identity';

let c: TestCluster;
const es = (i: number) => c.nodes[i].es;
const kidOf = (id: string) => Buffer.from(id.replace(/=+$/, ''), 'base64url')[1];

beforeAll(async () => {
  c = await startTestCluster({ nodes: 2 });
  await es(0).indices.create({ index: 'rot', settings: { number_of_shards: 2, number_of_replicas: 0 } });
  await es(0).bulk({ refresh: true, operations: Array.from({ length: 20 }, (_, i) => [{ index: { _index: 'rot', _id: String(i) } }, { n: i }]).flat() });
}, 120_000);
afterAll(async () => {
  await c?.stop();
}, 60_000);

async function hits(i: number, id: string): Promise<number> {
  const r = await es(i).search({ pit: { id, keep_alive: '1m' }, size: 100, track_total_hits: true });
  return (r.hits.total as { value: number }).value;
}

describe('id-signing key rotation on a running cluster', () => {
  it('signs new ids with the new key on every node and keeps old ids valid', async () => {
    const before = (await es(0).openPointInTime({ index: 'rot', keep_alive: '1m' })).id;
    expect(kidOf(before)).toBe(1);
    const nc = await connect({ servers: c.nats.url.split(',') });
    const kid = await rotateIdKey(nc);
    await nc.close();
    expect(kid).toBe(2);
    for (const i of [0, 1]) {
      await until(async () => kidOf((await es(i).openPointInTime({ index: 'rot', keep_alive: '1m' })).id) === kid, 10_000, `node ${i} signing with kid ${kid}`);
    }
    const after = (await es(1).openPointInTime({ index: 'rot', keep_alive: '1m' })).id;
    for (const i of [0, 1]) {
      expect(await hits(i, before)).toBe(20);
      expect(await hits(i, after)).toBe(20);
    }
  });
});
