/**
 * A context's old owner (cut off, taken for dead) and the node adopting it append the context's
 * next fact at the same seq: JetStream keeps the first (context fact ids derive from kind, id and
 * seq), the node whose fact was the duplicate lets the context go, and the log folds to one owner.
 * Real nats-server; two registries on two connections stand for the two nodes.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { startNats, type TestNats } from '../../support/natsServer';
import { Bus, ensureStreams, readFacts } from '../../../streams';
import { evolveContext, type ContextState } from '../../../streams/evolve';
import { ContextRegistry } from '../../../actors/contexts';

let nats: TestNats;
let ncA: NatsConnection;
let ncB: NatsConnection;

beforeAll(async () => {
  nats = await startNats();
  ncA = await nats.connect();
  ncB = await nats.connect();
  await ensureStreams(ncA);
}, 30_000);
afterAll(async () => {
  await ncA?.drain();
  await ncB?.drain();
  await nats?.stop();
});

const shards = [{ index: 'i', indexUuid: 'u', n: 0, shardIndex: 0, searcher: { maxDoc: 1, seqNo: 0 } }];

async function fold(id: string): Promise<{ state?: ContextState; types: string[]; nodes: Array<string | undefined> }> {
  let state: ContextState | undefined;
  const types: string[] = [];
  const nodes: Array<string | undefined> = [];
  for await (const e of readFacts(ncA)) {
    if (e.aggregateId !== id) continue;
    types.push(e.type);
    nodes.push(e.node);
    state = evolveContext(state, e);
  }
  return { state, types, nodes };
}

/** A opens a scroll and B holds its state as the log had it (what an adopter folds). */
async function openOnA(a: ContextRegistry) {
  const rec = a.open({ kind: 'scroll', indices: ['i'], shards, keepAliveMs: 60_000 });
  await rec.appended;
  const { state } = await fold(rec.id);
  return { rec, state: state! };
}

describe('an adoption racing the old owner for one seq', () => {
  it('keeps the old owner when its fact lands first: the adopter lets go', async () => {
    const a = new ContextRegistry(new Bus(ncA), Date, 'node-a');
    const b = new ContextRegistry(new Bus(ncB), Date, 'node-b');
    const { rec, state } = await openOnA(a);
    a.use(rec, 120_000); // seq 2 from the old owner (a new keep-alive: logged)…
    a.done(rec);
    await rec.appended;
    const adopted = b.adopt(state, undefined, 'node-a'); // …and seq 2 again from the adopter
    await adopted.appended;
    await new Promise((r) => setImmediate(r));
    expect(b.get(rec.id)).toBeUndefined();
    expect(a.get(rec.id)).toBe(rec);
    const f = await fold(rec.id);
    expect(f.types).toEqual(['scroll.opened', 'scroll.extended']);
    expect(f.state!.node).toBe('node-a');
    a.stopAll();
    b.stopAll();
  });

  it('moves the context to the adopter when its fact lands first: the old owner lets go', async () => {
    const a = new ContextRegistry(new Bus(ncA), Date, 'node-a');
    const b = new ContextRegistry(new Bus(ncB), Date, 'node-b');
    const { rec, state } = await openOnA(a);
    const adopted = b.adopt(state, undefined, 'node-a');
    await adopted.appended;
    a.use(rec, 120_000); // the cut-off owner's seq 2, too late
    a.done(rec);
    await rec.appended;
    await new Promise((r) => setImmediate(r));
    expect(a.get(rec.id)).toBeUndefined();
    expect(b.get(rec.id)).toBe(adopted);
    const f = await fold(rec.id);
    expect(f.types).toEqual(['scroll.opened', 'scroll.adopted']);
    expect(f.nodes).toEqual(['node-a', 'node-b']);
    expect(f.state!.node).toBe('node-b');
    a.stopAll();
    b.stopAll();
  });
});
