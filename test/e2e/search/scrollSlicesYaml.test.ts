/**
 * Elasticsearch's YAML REST test `scroll/12_slices.yml`, case by case, with the official client
 * (issue 10 items 16 and 17). Its 5-shard index is created with `number_of_routing_shards: 5`, so
 * documents land where ES puts them only when that setting is honoured.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { failure } from './helpers';

let t: TestNode;
const index = 'test_sliced_scroll';

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index, settings: { number_of_shards: 5, number_of_routing_shards: 5 } });
  for (const id of ['1', '2', '3', '4']) await t.es.index({ index, id, document: { foo: Number(id) } });
  await t.es.indices.refresh();
});
afterAll(async () => {
  await t?.stop();
});

describe('scroll/12_slices.yml', () => {
  it('Sliced scroll: slice 0 of 2 holds ids 2, 3, 4 and slice 1 holds id 1', async () => {
    const first = await t.es.search({
      index, scroll: '1m', sort: 'foo', rest_total_hits_as_int: true, slice: { id: '0', max: 2 }, query: { match_all: {} },
    });
    expect(first.hits.total).toBe(3);
    expect(first.hits.hits.map((h) => h._id)).toEqual(['2', '3', '4']);
    const next = await t.es.scroll({ scroll_id: first._scroll_id!, scroll: '1m', rest_total_hits_as_int: true });
    expect(next.hits.total).toBe(3);
    expect(next.hits.hits).toHaveLength(0);
    await t.es.clearScroll({ scroll_id: next._scroll_id ?? first._scroll_id! });

    const other = await t.es.search({
      index, scroll: '1m', sort: 'foo', rest_total_hits_as_int: true, slice: { id: '1', max: 2 }, query: { match_all: {} },
    });
    expect(other.hits.total).toBe(1);
    expect(other.hits.hits.map((h) => h._id)).toEqual(['1']);
    const rest = await t.es.scroll({ scroll_id: other._scroll_id!, scroll: '1m', rest_total_hits_as_int: true });
    expect(rest.hits.total).toBe(1);
    expect(rest.hits.hits).toHaveLength(0);
    await t.es.clearScroll({ scroll_id: rest._scroll_id ?? other._scroll_id! });
  });

  it('Sliced scroll with invalid arguments: max 1025 is a 400 until index.max_slices_per_scroll allows it', async () => {
    const bad = await failure(t.es.search({
      index, size: 1, scroll: '1m', rest_total_hits_as_int: true, slice: { id: '0', max: 1025 }, query: { match_all: {} },
    }));
    expect(bad.status).toBe(400);
    expect(bad.body.error.root_cause[0]).toEqual({
      type: 'illegal_argument_exception',
      reason: 'The number of slices [1025] is too large. It must be less than [1024]. This limit can be set by changing the [index.max_slices_per_scroll] index level setting.',
    });

    await t.es.indices.putSettings({ index, settings: { 'index.max_slices_per_scroll': 1025 } });
    const ok = await t.es.search({
      index, size: 1, scroll: '1m', rest_total_hits_as_int: true, slice: { id: '0', max: 1025 }, query: { match_all: {} },
    });
    expect(ok._scroll_id).toEqual(expect.any(String));
    await t.es.clearScroll({ scroll_id: ok._scroll_id! });
    await t.es.indices.putSettings({ index, settings: { 'index.max_slices_per_scroll': 1024 } });
  });

  it('Sliced scroll with doc values: slice 0 of 2 on field foo finds 3 hits', async () => {
    const r = await t.es.search({
      index, sort: 'foo', scroll: '1m', rest_total_hits_as_int: true, slice: { field: 'foo', id: '0', max: 2 }, query: { match_all: {} },
    });
    expect(r.hits.total).toBe(3);
    expect(r.hits.hits).toHaveLength(3);
    await t.es.clearScroll({ scroll_id: r._scroll_id! });
  });
});

describe('index.number_of_routing_shards', () => {
  it('shows the setting in GET _settings as given', async () => {
    const s = await t.es.indices.getSettings({ index });
    expect(s[index].settings?.index?.number_of_routing_shards).toBe('5');
    expect(s[index].settings?.index?.number_of_shards).toBe('5');
  });

  it('cannot be changed on an open index', async () => {
    const r = await failure(t.es.indices.putSettings({ index, settings: { 'index.number_of_routing_shards': 10 } }));
    expect(r.status).toBe(400);
    expect(r.body.error.type).toBe('illegal_argument_exception');
    expect(r.body.error.reason).toMatch(/^Can't update non dynamic settings \[\[index\.number_of_routing_shards\]\] for open indices \[\[test_sliced_scroll\/[^\]]+\]\]$/);
  });

  it.each([
    [{ number_of_shards: 2, number_of_routing_shards: 3 }, 'the number of source shards [2] must be a factor of [3]'],
    [{ number_of_shards: 8, number_of_routing_shards: 4 }, 'index.number_of_routing_shards [4] must be >= index.number_of_shards [8]'],
    [{ number_of_shards: 3, number_of_routing_shards: 0 }, 'Failed to parse value [0] for setting [index.number_of_routing_shards] must be >= 1'],
    [{ number_of_shards: 2, number_of_routing_shards: 4, routing_partition_size: 4 }, 'routing partition size [4] should be a positive number less than the number of routing shards [4] for [bad_routing]'],
    [{ number_of_shards: 2, routing_partition_size: 0 }, 'Failed to parse value [0] for setting [index.routing_partition_size] must be >= 1'],
  ])('refuses %j at creation with ES\'s 400', async (settings, reason) => {
    const r = await failure(t.es.indices.create({ index: 'bad_routing', settings }));
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ type: 'illegal_argument_exception', reason });
    expect(await t.es.indices.exists({ index: 'bad_routing' })).toBe(false);
  });

  it('accepts a routing shard count that is a multiple of the shard count and routes with it', async () => {
    await t.es.indices.create({ index: 'routed', settings: { number_of_shards: 2, number_of_routing_shards: 6 } });
    const ids = Array.from({ length: 20 }, (_, i) => `d${i}`);
    for (const id of ids) await t.es.index({ index: 'routed', id, document: { id } });
    await t.es.indices.refresh({ index: 'routed' });
    for (const id of ids) expect((await t.es.get({ index: 'routed', id }))._id).toBe(id);
    expect((await t.es.count({ index: 'routed' })).count).toBe(20);
  });
});

describe('index.routing_partition_size', () => {
  it('needs _routing.required in explicit mappings', async () => {
    const r = await failure(t.es.indices.create({ index: 'part_bad', settings: { number_of_shards: 4, routing_partition_size: 2 }, mappings: { properties: { a: { type: 'keyword' } } } }));
    expect(r.status).toBe(400);
    expect(r.body.error.reason).toBe('mapping type [_doc] must have routing required for partitioned index [part_bad]');
  });

  it('finds every document of a partitioned index again by id and routing', async () => {
    await t.es.indices.create({ index: 'part', settings: { number_of_shards: 4, routing_partition_size: 2 }, mappings: { _routing: { required: true } } });
    const ids = Array.from({ length: 40 }, (_, i) => `p${i}`);
    for (const id of ids) await t.es.index({ index: 'part', id, routing: 'user1', document: { id } });
    await t.es.indices.refresh({ index: 'part' });
    for (const id of ids) expect((await t.es.get({ index: 'part', id, routing: 'user1' })).found).toBe(true);
    const s = await t.es.indices.getSettings({ index: 'part' });
    expect(s.part.settings?.index?.routing_partition_size).toBe('2');
  });

  it('answers a write without routing with ES\'s routing_missing_exception', async () => {
    const r = await failure(t.es.index({ index: 'part', id: 'x', document: { a: 1 } }));
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ type: 'routing_missing_exception', reason: 'routing is required for [part]/[x]' });
  });
});

describe('_routing.required', () => {
  beforeAll(async () => {
    await t.es.indices.create({ index: 'needs_routing', settings: { number_of_shards: 3 }, mappings: { _routing: { required: true } } });
  });

  it('refuses a write, a get and a delete without routing with ES\'s routing_missing_exception', async () => {
    for (const p of [
      t.es.index({ index: 'needs_routing', id: '1', document: { a: 1 } }),
      t.es.get({ index: 'needs_routing', id: '1' }),
      t.es.delete({ index: 'needs_routing', id: '1' }),
    ]) {
      const r = await failure(p);
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ type: 'routing_missing_exception', reason: 'routing is required for [needs_routing]/[1]', index: 'needs_routing' });
    }
  });

  it('fails only the bulk items that lack routing', async () => {
    const r = await t.es.bulk({ operations: [{ index: { _index: 'needs_routing', _id: '2' } }, { a: 2 }, { index: { _index: 'needs_routing', _id: '3', routing: 'x' } }, { a: 3 }] });
    expect(r.errors).toBe(true);
    expect(r.items[0].index?.status).toBe(400);
    expect(r.items[0].index?.error?.type).toBe('routing_missing_exception');
    expect(r.items[1].index?.status).toBe(201);
    expect((await t.es.get({ index: 'needs_routing', id: '3', routing: 'x' })).found).toBe(true);
  });
});

describe('search with routing', () => {
  // ids 1-4 of test_sliced_scroll live on shards 3, 2, 4, 2 (routing value = _id)
  it('searches only the shards the routing values route to', async () => {
    const one = await t.es.search({ index, routing: '2', sort: 'foo' });
    expect(one._shards.total).toBe(1);
    expect(one.hits.hits.map((h) => h._id)).toEqual(['2', '4']);
    const two = await t.es.search({ index, routing: '2,1', sort: 'foo' });
    expect(two._shards.total).toBe(2);
    expect(two.hits.hits.map((h) => h._id)).toEqual(['1', '2', '4']);
  });

  it('counts and opens point in times on the routed shards only', async () => {
    const c = await t.es.count({ index, routing: '3' });
    expect([c.count, c._shards.total]).toEqual([1, 1]);
    const pit = await t.es.openPointInTime({ index, keep_alive: '1m', routing: '1' });
    expect(pit._shards.total).toBe(1);
    const r = await t.es.search({ pit: { id: pit.id }, sort: ['_shard_doc'] });
    expect(r.hits.hits.map((h) => h._id)).toEqual(['1']);
    await t.es.closePointInTime({ id: pit.id });
  });

  it('spreads a partitioned index\'s routing over its partition', async () => {
    // with as many routing shards as shards, the partition's consecutive hashes land on 2 shards
    // (with the default 1024 they mostly share one shard, as in ES)
    await t.es.indices.create({ index: 'part4', settings: { number_of_shards: 4, number_of_routing_shards: 4, routing_partition_size: 2 }, mappings: { _routing: { required: true } } });
    await t.es.bulk({ refresh: true, operations: Array.from({ length: 40 }, (_, i) => [{ index: { _index: 'part4', _id: `q${i}`, routing: 'user1' } }, { i }]).flat() });
    const all = await t.es.search({ index: 'part4', routing: 'user1', size: 100 });
    expect(all._shards.total).toBe(2);
    expect(all.hits.hits).toHaveLength(40);
    const other = await t.es.search({ index: 'part4', routing: 'someone-else', size: 100 });
    expect(other.hits.hits.length).toBeLessThan(40);
  });
});
