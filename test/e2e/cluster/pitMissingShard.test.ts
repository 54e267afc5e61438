/**
 * Issue 22 item 2, `allow_partial_search_results` on opening a PIT when a shard has no copy: two
 * nodes on a real NATS cluster, an index of two shards without replicas, the node holding one of
 * them stopped. ES's default (false) refuses the open naming the missing shard; `true` opens the PIT
 * on the shards there are, counted as failed, and it pages through what they hold.
 */
import { errors } from 'es8';
import { startTestCluster, until, type TestCluster } from '../../support/cluster';

let c: TestCluster;
const INDEX = 'partial';

beforeAll(async () => {
  c = await startTestCluster({ nodes: 2, settings: { 'cluster.node_timeout_ms': 2_000 } });
  await c.nodes[0].es.indices.create({ index: INDEX, settings: { number_of_shards: 2, number_of_replicas: 0, 'unassigned.node_left.delayed_timeout': '10m' } });
  await c.nodes[0].es.bulk({ refresh: true, operations: Array.from({ length: 40 }, (_, i) => [{ index: { _index: INDEX, _id: String(i) } }, { n: i }]).flat() });
  await until(async () => (await c.nodes[0].es.cluster.health({ index: INDEX })).status === 'green', 30_000, 'green');
}, 120_000);
afterAll(async () => {
  await c?.stop();
}, 60_000);

describe('a PIT opened while a shard has no copy', () => {
  it('is refused by default with ES\'s missing-shards 503, and opens on the other shard with allow_partial_search_results', async () => {
    const es = c.nodes[0].es;
    const shards = (await es.cat.shards({ index: INDEX, format: 'json', h: 'shard,node,docs' })) as Array<{ shard: string; node: string; docs: string }>;
    const lost = shards.find((x) => x.node === c.nodes[1].name)!;
    const kept = shards.find((x) => x.node === c.nodes[0].name)!;
    await c.nodes[1].stop();
    await until(async () => (await es.cluster.health()).number_of_nodes === 1, 30_000, 'node 1 gone');
    const e = (await es.openPointInTime({ index: INDEX, keep_alive: '1m' }).catch((x: unknown) => x)) as errors.ResponseError;
    expect(e).toBeInstanceOf(errors.ResponseError);
    expect(e.statusCode).toBe(503);
    expect(e.body.error).toMatchObject({
      type: 'search_phase_execution_exception',
      reason: `Search rejected due to missing shards [[${INDEX}][${lost.shard}]]. Consider using \`allow_partial_search_results\` setting to bypass this error.`,
      phase: 'open_pit',
      grouped: true,
      failed_shards: [],
    });
    // no PIT was left open by the refused attempt
    expect(((await (await fetch(`${c.nodes[0].url}/_pit`)).json()) as { count: number }).count).toBe(0);
    const p = await es.openPointInTime({ index: INDEX, keep_alive: '1m', allow_partial_search_results: true });
    expect(p._shards).toEqual({ total: 2, successful: 1, skipped: 0, failed: 1 });
    const r = await es.search({ pit: { id: p.id }, size: 100, track_total_hits: true });
    expect(r._shards).toMatchObject({ total: 1, successful: 1, failed: 0 });
    expect(r.hits.total).toEqual({ value: Number(kept.docs), relation: 'eq' });
    await es.closePointInTime({ id: p.id });
  }, 120_000);
});
