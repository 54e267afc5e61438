/**
 * Issue 10 item 16: `index.number_of_routing_shards` and `index.routing_partition_size` are fixed at
 * creation and survive a restart, from a snapshot and from a full replay of the document log:
 * documents are found again where they were routed, and slices keep ES's shard assignment.
 */
import { startTestNode, type TestNode } from '../../support/node';

jest.setTimeout(120_000);

const settings: Record<string, unknown> = { 'snapshot.interval_ms': 0 };
let t: TestNode;

beforeAll(async () => {
  t = await startTestNode({ settings });
  await t.es.indices.create({ index: 'rs', settings: { number_of_shards: 5, number_of_routing_shards: 5 } });
  for (const id of ['1', '2', '3', '4']) await t.es.index({ index: 'rs', id, document: { foo: Number(id) } });
  await t.es.indices.create({ index: 'pt', settings: { number_of_shards: 4, routing_partition_size: 3 }, mappings: { _routing: { required: true } } });
  for (let i = 0; i < 30; i++) await t.es.index({ index: 'pt', id: `p${i}`, routing: `r${i % 3}`, document: { i } });
  await t.es.indices.refresh();
});
afterAll(async () => {
  await t?.stop();
});

async function expectRoutedAsCreated(): Promise<void> {
  const s = await t.es.search({ index: 'rs', scroll: '1m', sort: 'foo', slice: { id: '0', max: 2 } });
  expect(s.hits.hits.map((h) => h._id)).toEqual(['2', '3', '4']);
  await t.es.clearScroll({ scroll_id: s._scroll_id! });
  for (const id of ['1', '2', '3', '4']) expect((await t.es.get({ index: 'rs', id })).found).toBe(true);
  for (let i = 0; i < 30; i++) expect((await t.es.get({ index: 'pt', id: `p${i}`, routing: `r${i % 3}` })).found).toBe(true);
  const got = await t.es.indices.getSettings({ index: 'rs,pt' });
  expect(got.rs.settings?.index?.number_of_routing_shards).toBe('5');
  expect(got.pt.settings?.index?.routing_partition_size).toBe('3');
  const fixed = t.sys.services.cluster.get('rs')!.settings;
  expect([fixed.numberOfRoutingShards, fixed.routingPartitionSize]).toEqual([5, 1]);
  expect(t.sys.services.cluster.get('pt')!.settings.numberOfRoutingShards).toBe(4 * 256);
}

it('routes as created before any restart', async () => {
  await expectRoutedAsCreated();
});

it('keeps the routing settings through a restart from a snapshot', async () => {
  await t.restart();
  expect(t.sys.services.cluster.startResult!.snapshotSeq).toBeDefined();
  await expectRoutedAsCreated();
});

it('keeps the routing settings through a full replay of the document log', async () => {
  settings['snapshot.enabled'] = false;
  await t.restart();
  expect(t.sys.services.cluster.startResult!.snapshotSeq).toBeUndefined();
  await expectRoutedAsCreated();
});
