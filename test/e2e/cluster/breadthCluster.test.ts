/**
 * Issue 24 on a 3-node cluster (3 NATS servers, 3 shards with a replica): the new queries, field
 * types and aggregations give the same answers through every node, and a PIT pages them with
 * search_after across the shards.
 */
import { startTestCluster, until, type TestCluster } from '../../support/cluster';

let c: TestCluster;
const INDEX = 'breadth';

beforeAll(async () => {
  c = await startTestCluster({ nodes: 3 });
  const es = c.nodes[0].es;
  await es.indices.create({
    index: INDEX,
    settings: { number_of_shards: 3, number_of_replicas: 1 },
    mappings: {
      properties: {
        text: { type: 'text' }, ip: { type: 'ip' }, loc: { type: 'geo_point' }, n: { type: 'integer' },
        items: { type: 'nested', properties: { sku: { type: 'keyword' }, qty: { type: 'integer' } } },
      },
    },
  });
  const words = ['quick brown fox', 'lazy brown dog', 'quick red fox jumps', 'the brown fox is quick'];
  const docs = Array.from({ length: 40 }, (_, i) => ({
    text: words[i % 4], ip: `10.0.${i % 4}.${i}`, loc: { lat: (i % 10) * 4, lon: i * 3 - 60 }, n: i,
    items: [{ sku: `s${i % 5}`, qty: i % 3 }, { sku: 'common', qty: 1 }],
  }));
  await es.bulk({ refresh: true, operations: docs.flatMap((d, i) => [{ index: { _index: INDEX, _id: String(i) } }, d]) });
  await until(async () => (await es.cluster.health({ index: INDEX })).status === 'green', 60_000, 'green');
}, 180_000);
afterAll(async () => {
  await c?.stop();
}, 120_000);

const search = (i: number, body: Record<string, unknown>) => c.nodes[i].es.search({ index: INDEX, ...body } as never);

describe('the same answers through every node', () => {
  it.each<[string, Record<string, unknown>]>([
    ['intervals', { query: { intervals: { text: { match: { query: 'quick fox', max_gaps: 1, ordered: true } } } }, size: 50 }],
    ['match_phrase with slop', { query: { match_phrase: { text: { query: 'brown quick', slop: 3 } } }, size: 50 }],
    ['span_near', { query: { span_near: { clauses: [{ span_term: { text: 'brown' } }, { span_term: { text: 'fox' } }], slop: 0 } }, size: 50 }],
    ['nested with inner_hits', { query: { nested: { path: 'items', query: { term: { 'items.sku': 's1' } }, inner_hits: {} } }, size: 50 }],
    ['CIDR, sorted by ip', { query: { term: { ip: '10.0.2.0/24' } }, sort: [{ ip: 'desc' }], size: 50 }],
    ['_geo_distance sort', { query: { geo_distance: { distance: '2000km', loc: { lat: 10, lon: 0 } } }, sort: [{ _geo_distance: { loc: { lat: 10, lon: 0 }, unit: 'km' } }], size: 50 }],
    ['aggregations', { size: 0, aggs: { r: { ip_range: { field: 'ip', ranges: [{ mask: '10.0.1.0/24' }, { from: '10.0.2.0' }] } }, g: { geotile_grid: { field: 'loc', precision: 2 } }, it: { nested: { path: 'items' }, aggs: { s: { terms: { field: 'items.sku' } } } } } }],
  ])('%s', async (_name, body) => {
    const answers = await Promise.all([0, 1, 2].map(async (i) => {
      const r = await search(i, body);
      return { hits: r.hits.hits.map((h) => [h._id, h._score, h.sort ?? null, h.inner_hits ? JSON.stringify(h.inner_hits) : null]), total: r.hits.total, aggs: r.aggregations ?? null };
    }));
    expect(answers[0].hits.length + Object.keys(answers[0].aggs ?? {}).length).toBeGreaterThan(0);
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
  });
  it('ip sort merges the shards in address order', async () => {
    const r = await search(1, { sort: [{ ip: 'asc' }], size: 6 });
    expect(r.hits.hits.map((h) => h.sort![0])).toEqual(['10.0.0.0', '10.0.0.4', '10.0.0.8', '10.0.0.12', '10.0.0.16', '10.0.0.20']);
  });
});

describe('a PIT over the cluster', () => {
  it('pages a nested query with search_after through another node', async () => {
    const pit = await c.nodes[0].es.openPointInTime({ index: INDEX, keep_alive: '1m' });
    const seen: string[] = [];
    let after: unknown[] | undefined;
    for (;;) {
      const r = await c.nodes[2].es.search({ pit: { id: pit.id }, size: 3, sort: [{ n: 'asc' }], query: { nested: { path: 'items', query: { range: { 'items.qty': { gte: 2 } } } } }, ...(after ? { search_after: after as never } : {}) });
      if (!r.hits.hits.length) break;
      seen.push(...r.hits.hits.map((h) => h._id!));
      after = r.hits.hits[r.hits.hits.length - 1].sort;
    }
    await c.nodes[1].es.closePointInTime({ id: pit.id });
    expect(seen).toEqual(Array.from({ length: 40 }, (_, i) => i).filter((i) => i % 3 === 2).map(String));
  });
});
