import { applySettings, defaultIndexSettings, normalizeSettings, routingSpec, validateCreate } from '../../../actors/cluster';

const create = (settings: Record<string, unknown>, mappings: unknown = {}) => {
  const changes = normalizeSettings(settings);
  const s = applySettings(defaultIndexSettings(), changes, true, { name: 'i' });
  validateCreate(changes, s, mappings, 'i');
  return s;
};

describe('routing settings at creation', () => {
  // ES MetadataCreateIndexService.calculateNumRoutingShards
  it.each([[1, 1024], [3, 768], [5, 640], [30, 960]])('defaults number_of_routing_shards of %i shards to %i', (shards, routing) => {
    expect(create({ number_of_shards: shards }).numberOfRoutingShards).toBe(routing);
  });

  it('keeps a given number_of_routing_shards and partition size', () => {
    const s = create({ index: { number_of_shards: 3, number_of_routing_shards: 12, routing_partition_size: 2 } }, { _routing: { required: true } });
    expect(routingSpec(s)).toEqual({ numberOfShards: 3, routingNumShards: 12, routingPartitionSize: 2 });
  });

  it('accepts number_of_routing_shards equal to number_of_shards', () => {
    expect(create({ number_of_shards: 5, number_of_routing_shards: 5 }).numberOfRoutingShards).toBe(5);
  });

  it.each([
    [{ number_of_shards: 4, number_of_routing_shards: 6 }, 'the number of source shards [4] must be a factor of [6]'],
    [{ number_of_shards: 4, number_of_routing_shards: 2 }, 'index.number_of_routing_shards [2] must be >= index.number_of_shards [4]'],
    [{ number_of_shards: 4, number_of_routing_shards: 'x' }, 'Failed to parse value [x] for setting [index.number_of_routing_shards]'],
    [{ number_of_shards: 1, number_of_routing_shards: 2, routing_partition_size: 2 }, 'routing partition size [2] should be a positive number less than the number of routing shards [2] for [i]'],
  ])('refuses %j', (settings, reason) => {
    expect(() => create(settings)).toThrow(reason);
  });

  it('refuses explicit mappings of a partitioned index that do not require routing', () => {
    expect(() => create({ number_of_shards: 2, routing_partition_size: 2 }, { properties: { a: { type: 'keyword' } } }))
      .toThrow('mapping type [_doc] must have routing required for partitioned index [i]');
  });

  it('folds a logged create leniently (a value refused today falls back to the default)', () => {
    const s = applySettings(defaultIndexSettings(), normalizeSettings({ number_of_shards: 2, number_of_routing_shards: 'x' }), true);
    expect(s.numberOfRoutingShards).toBe(1024);
  });

  it('completes settings restored from a snapshot written before the routing fields existed', () => {
    const old = { ...defaultIndexSettings(), numberOfShards: 5, raw: { 'index.number_of_shards': '5', 'index.number_of_routing_shards': '5' } };
    expect(routingSpec(old)).toEqual({ numberOfShards: 5, routingNumShards: 5, routingPartitionSize: 1 });
    expect(routingSpec({ ...old, raw: {} })).toEqual({ numberOfShards: 5, routingNumShards: 640, routingPartitionSize: 1 });
  });

  it('refuses to change the routing settings of an existing index', () => {
    const s = create({ number_of_shards: 2 });
    expect(() => applySettings(s, normalizeSettings({ number_of_routing_shards: 4 }), false, { name: 'i', uuid: 'u1' }))
      .toThrow("Can't update non dynamic settings [[index.number_of_routing_shards]] for open indices [[i/u1]]");
  });
});
