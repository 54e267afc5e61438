import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { startNats, type TestNats } from '../../support/natsServer';
import { Bus, ensureStreams, EVENT_STREAM } from '../../../streams';
import { foldLog, readFactBatches } from '../../../streams/factReader';
import { openContexts } from '../../../streams/evolve';
import { syntheticFacts } from '../../../scripts/cli/syntheticFacts';

describe('readFactBatches and foldLog on a real nats-server', () => {
  let nats: TestNats;
  let nc: NatsConnection;
  const facts = syntheticFacts(10_000, 50);
  const consumers = async () => (await (await jetstreamManager(nc)).consumers.list(EVENT_STREAM).next()).length;

  beforeAll(async () => {
    nats = await startNats();
    nc = await nats.connect();
    await ensureStreams(nc);
  });
  afterAll(async () => {
    await nc.drain();
    await nats.stop();
  });

  it('finishes at once on an empty stream', async () => {
    const batches = [];
    for await (const b of readFactBatches(nc)) batches.push(b);
    expect(batches).toEqual([]);
  });

  it('reads every fact in log order, in batches, and removes its consumer', async () => {
    const bus = new Bus(nc, 1024);
    await Promise.all(facts.map((e) => bus.append(e)));
    const sizes: number[] = [];
    const ids: string[] = [];
    const progress: number[] = [];
    for await (const b of readFactBatches(nc, { batchSize: 4096, onProgress: (d, t) => progress.push(t) })) {
      sizes.push(b.length);
      for (const e of b) ids.push(e.id);
    }
    expect(ids).toEqual(facts.map((e) => e.id));
    expect(sizes).toEqual([4096, 4096, 1808]);
    expect(new Set(progress)).toEqual(new Set([10_000]));
    expect(await consumers()).toBe(0);
  });

  it('reads only what the filter matches, and nothing when it matches nothing', async () => {
    const types: string[] = [];
    for await (const b of readFactBatches(nc, { filterSubject: 'es.v1.evt.pit.>' })) types.push(...b.map((e) => e.type));
    expect(types.length).toBe(facts.filter((e) => e.type.startsWith('pit.')).length);
    expect(types.every((t) => t.startsWith('pit.'))).toBe(true);
    for await (const _ of readFactBatches(nc, { filterSubject: 'es.v1.evt.token.>' })) throw new Error('no token facts were published');
  });

  it('removes its consumer when the reader stops early', async () => {
    for await (const _ of readFactBatches(nc, { batchSize: 100 })) break;
    expect(await consumers()).toBe(0);
  });

  it('folds the log into a world for a restarting node', async () => {
    const world = await foldLog(nc, { filterSubject: 'es.v1.evt.scroll.>' });
    expect(world.pit.size).toBe(0);
    expect(world.events).toBe(facts.filter((e) => e.type.startsWith('scroll.')).length);
    const open = openContexts(world);
    expect(open.length).toBeGreaterThan(0);
    expect(open.every((c) => c.kind === 'scroll' && c.pinned.length === 1)).toBe(true);
  });
});
