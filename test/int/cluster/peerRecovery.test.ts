/**
 * Issue 19 item 4 on a 3-server NATS cluster: once every copy of a shard committed, the primary
 * trims the shard's document log; a node that joins later takes a started copy's segment files
 * through the JetStream object store (peer recovery) and then reads only the log after them; it
 * answers every document, and so does the cluster after the old nodes are gone.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { startTestCluster, until, type TestCluster } from '../../support/cluster';
import { DATA_STREAM } from '../../../streams';

let c: TestCluster;
const N = 800;

beforeAll(async () => {
  c = await startTestCluster({ nodes: 2 });
}, 120_000);
afterAll(async () => {
  await c?.stop();
}, 60_000);

/** Messages the document log still holds for shard subjects. */
async function shardMessages(): Promise<number> {
  const nc = await connect({ servers: c.nats.url.split(',') });
  try {
    const info = await (await jetstreamManager(nc)).streams.info(DATA_STREAM, { subjects_filter: 'es.v1.data.shard.>' });
    return Object.values(info.state.subjects ?? {}).reduce((n, v) => n + v, 0);
  } finally {
    await nc.close();
  }
}

describe('peer recovery through the object store', () => {
  it('trims the shard log once both copies committed', async () => {
    const es = c.nodes[0].es;
    await es.indices.create({ index: 'pr', settings: { number_of_shards: 1, number_of_replicas: 1 } });
    await until(async () => (await es.cluster.health({ index: 'pr' })).status === 'green', 30_000, 'green');
    for (let i = 0; i < N; i += 200) {
      await es.bulk({ index: 'pr', operations: Array.from({ length: 200 }, (_, k) => [{ index: { _id: `d${i + k}` } }, { n: i + k, t: `doc ${i + k}` }]).flat() });
    }
    expect(await shardMessages()).toBeGreaterThan(0);
    await es.indices.flush({ index: 'pr' });
    // the replica's commit reaches the primary through its heartbeat; the next commit trims
    await until(async () => {
      await es.indices.flush({ index: 'pr' });
      return (await shardMessages()) === 0;
    }, 30_000, 'shard log trimmed');
  });

  it('a node that joins takes the segments of a started copy and serves every document', async () => {
    const fresh = await c.addNode();
    await c.nodes[0].es.indices.putSettings({ index: 'pr', settings: { number_of_replicas: 2 } });
    await until(async () => {
      const h = await fresh.es.cluster.health({ index: 'pr' });
      return h.status === 'green' && h.active_shards === 3;
    }, 60_000, 'three started copies');
    const segs = (await fresh.es.cat.segments({ index: 'pr', format: 'json', h: 'id,segment,docs.count' })) as unknown as Array<Record<string, string>>;
    const nodes = new Set(segs.map((s) => s.id));
    expect(nodes.size).toBe(3);
    // the new copy answers alone: stop the two others
    await c.nodes[0].stop();
    await c.nodes[1].stop();
    await until(async () => (await fresh.es.cluster.health({ index: 'pr' })).active_primary_shards === 1, 30_000, 'primary on the new node');
    await fresh.es.indices.refresh({ index: 'pr' });
    expect((await fresh.es.count({ index: 'pr' })).count).toBe(N);
    const got = await fresh.es.get({ index: 'pr', id: `d${N - 1}` });
    expect(got._source).toEqual({ n: N - 1, t: `doc ${N - 1}` });
  });
});
