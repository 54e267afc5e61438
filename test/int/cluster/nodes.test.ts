/**
 * Issue 11: three nodes on a real 3-server NATS cluster (R3 streams) form one cluster: metadata
 * made through any node is seen through every node, writes through any node are read through any
 * other, index names are unique cluster-wide, every shard has a primary and a replica on different
 * nodes (green), and every node restarts from the shared log.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { startTestCluster, until, type TestCluster } from '../../support/cluster';
import { DATA_STREAM, EVENT_STREAM } from '../../../streams';

let c: TestCluster;
const [A, B, C] = [0, 1, 2];
const es = (i: number) => c.nodes[i].es;

const docs = Array.from({ length: 300 }, (_, i) => ({ n: i, tag: `t${i % 5}`, text: `doc number ${i}` }));

beforeAll(async () => {
  c = await startTestCluster({ nodes: 3 });
}, 120_000);
afterAll(async () => {
  await c?.stop();
}, 60_000);

async function green(i: number, index?: string) {
  return until(async () => {
    const h = await es(i).cluster.health(index ? { index } : {});
    return h.status === 'green' && h.number_of_nodes === c.nodes.length && h;
  }, 30_000, 'green health');
}

describe('a cluster of nodes on a NATS cluster', () => {
  it('shares one cluster uuid and sees every node', async () => {
    const uuids = await Promise.all([A, B, C].map(async (i) => (await es(i).info()).cluster_uuid));
    expect(new Set(uuids).size).toBe(1);
    const stats = await es(B).nodes.stats();
    expect(Object.keys(stats.nodes)).toHaveLength(3);
    expect(stats._nodes).toMatchObject({ total: 3, successful: 3, failed: 0 });
  });

  it('keeps its streams replicated on the three servers (cluster.stream_replicas: 3)', async () => {
    const nc = await connect({ servers: c.nats.url.split(',') });
    const jsm = await jetstreamManager(nc);
    for (const s of [DATA_STREAM, EVENT_STREAM]) expect((await jsm.streams.info(s)).config.num_replicas).toBe(3);
    await nc.close();
  });

  it('creates an index through A that B and C see, and goes green with a replica of every shard on another node', async () => {
    await es(A).indices.create({ index: 'books', settings: { number_of_shards: 3, number_of_replicas: 1 } });
    await until(async () => (await es(C).indices.exists({ index: 'books' })) === true, 5_000, 'index visible on C');
    const h = await green(B, 'books');
    expect(h).toMatchObject({ active_primary_shards: 3, active_shards: 6, unassigned_shards: 0 });
    const copies = c.nodes.map((n) => n.sys!.services.cluster.localCopies().map((x) => `${x.ref.n}:${x.role}`));
    for (let n = 0; n < 3; n++) {
      const holders = copies.map((cs, i) => (cs.some((x) => x.startsWith(`${n}:`)) ? i : -1)).filter((i) => i >= 0);
      expect(holders).toHaveLength(2); // a primary and a replica, never on one node
      expect(copies.flat().filter((x) => x === `${n}:primary`)).toHaveLength(1);
    }
  });

  it('answers the same _count, _search and GET through every node after a bulk through A and a refresh', async () => {
    const body = docs.flatMap((d, i) => [{ index: { _index: 'books', _id: String(i) } }, d]);
    const r = await es(A).bulk({ body });
    expect(r.errors).toBe(false);
    await es(B).indices.refresh({ index: 'books' });
    const counts = await Promise.all([A, B, C].map(async (i) => (await es(i).count({ index: 'books' })).count));
    expect(counts).toEqual([300, 300, 300]);
    const search = async (i: number) =>
      (await es(i).search({ index: 'books', query: { match: { text: 'number' } }, sort: [{ n: 'desc' }], size: 20 })).hits.hits.map((h) => [h._id, h.sort]);
    const [sa, sb, sc] = await Promise.all([A, B, C].map(search));
    expect(sa).toHaveLength(20);
    expect(sb).toEqual(sa);
    expect(sc).toEqual(sa);
    // Every copy answers: ask many times so the queue group reaches both copies of each shard.
    for (let k = 0; k < 12; k++) expect(await search(k % 3)).toEqual(sa);
    for (const i of [A, B, C]) {
      const got = await es(i).get({ index: 'books', id: '42' });
      expect(got._source).toEqual(docs[42]);
      expect(got._version).toBe(1);
    }
  });

  it('reads through A a write made through B, and through C a mapping change made through A', async () => {
    const w = await es(B).index({ index: 'books', id: 'fromB', document: { n: 1000, text: 'written through B' }, refresh: true });
    expect(w.result).toBe('created');
    expect((await es(A).get({ index: 'books', id: 'fromB' }))._source).toEqual({ n: 1000, text: 'written through B' });
    const hits = await Promise.all([A, C].map(async (i) => (await es(i).search({ index: 'books', query: { term: { n: 1000 } } })).hits.hits.map((h) => h._id)));
    expect(hits).toEqual([['fromB'], ['fromB']]);
    await es(A).indices.putMapping({ index: 'books', properties: { extra: { type: 'keyword' } } });
    const m = await es(C).indices.getMapping({ index: 'books' });
    expect(m.books.mappings.properties).toHaveProperty('extra', { type: 'keyword' });
    // dynamic fields added by a write through one node are in every node's mapping
    await es(C).index({ index: 'books', id: 'dyn', document: { fresh_field: 12.5 }, refresh: true });
    for (const i of [A, B]) {
      const mi = await es(i).indices.getMapping({ index: 'books' });
      expect(mi.books.mappings.properties).toHaveProperty('fresh_field', { type: 'float' });
    }
  });

  it('acknowledges a metadata change once every node applied it: read at once through the others', async () => {
    for (let i = 0; i < 8; i++) {
      const index = `acked-${i}`;
      await es(A).indices.create({ index, mappings: { properties: { a: { type: 'keyword' } } } });
      // No wait: the index is there through B and C as soon as A answered.
      const counts = await Promise.all([B, C].map(async (n) => (await es(n).count({ index })).count));
      expect(counts).toEqual([0, 0]);
      await es(B).indices.putMapping({ index, properties: { [`f${i}`]: { type: 'long' } } });
      for (const n of [A, C]) expect((await es(n).indices.getMapping({ index }))[index].mappings.properties).toHaveProperty(`f${i}`, { type: 'long' });
      await es(C).indices.putSettings({ index, settings: { refresh_interval: `${i + 2}s` } });
      for (const n of [A, B]) expect((await es(n).indices.getSettings({ index }))[index].settings?.index?.refresh_interval).toBe(`${i + 2}s`);
      await es(A).indices.delete({ index });
    }
  });

  it('gives one index and one 400 resource_already_exists_exception to two nodes racing to create it', async () => {
    for (let round = 0; round < 5; round++) {
      const name = `race-${round}`;
      const res = await Promise.allSettled([A, B, C].map((i) => es(i).indices.create({ index: name })));
      expect(res.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of res.filter((x): x is PromiseRejectedResult => x.status === 'rejected')) {
        expect(r.reason.meta.statusCode).toBe(400);
        expect(r.reason.meta.body.error.type).toBe('resource_already_exists_exception');
      }
      const uuids = await Promise.all([A, B, C].map(async (i) => (await es(i).indices.getSettings({ index: name }))[name].settings!.index!.uuid));
      expect(new Set(uuids).size).toBe(1);
    }
  });

  it('auto-creates one index when writes race through several nodes, and loses no acknowledged write', async () => {
    const res = await Promise.all([A, B, C].flatMap((i) => [0, 1, 2].map((k) => es(i).index({ index: 'auto', id: `${i}-${k}`, document: { i, k } }))));
    expect(res.every((r) => r.result === 'created')).toBe(true);
    await es(A).indices.refresh({ index: 'auto' });
    for (const i of [A, B, C]) expect((await es(i).count({ index: 'auto' })).count).toBe(9);
  });

  it('restarts every node from the shared log with the same documents', async () => {
    const before = (await es(A).search({ index: 'books', size: 400, sort: [{ n: 'asc' }] })).hits.hits.map((h) => h._id);
    for (const n of c.nodes) await n.stop();
    for (const n of c.nodes) await n.start();
    await green(C);
    await es(A).indices.refresh({ index: 'books' });
    for (const i of [A, B, C]) {
      const after = (await es(i).search({ index: 'books', size: 400, sort: [{ n: 'asc' }] })).hits.hits.map((h) => h._id);
      expect(after).toEqual(before);
    }
  });
});
