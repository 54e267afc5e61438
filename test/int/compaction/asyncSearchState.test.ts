/**
 * ES_STATE keeps async searches that have not ended (issue 20: nothing live is lost when history
 * ages out), and an ES_STATE written by an earlier build, which did not keep them, is completed from
 * the whole log once by the compactor that takes it over. Real nats-server; the compactor on its own.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import pino from 'pino';
import { startNats, type TestNats } from '../../support/natsServer';
import { poll } from '../../support/poll';
import { Aggregate, Bus, ensureStreams, makeEnvelope, subjects } from '../../../streams';
import { readCompactedState } from '../../../streams/compactedState';
import { Compactor } from '../../../actors/compaction/compactor';
import { leasesBucket } from '../../../actors/cluster/allocator';

let nats: TestNats;
let nc: NatsConnection;

beforeAll(async () => {
  nats = await startNats();
  nc = await nats.connect();
  await ensureStreams(nc);
}, 30_000);
afterAll(async () => {
  await nc?.drain();
  await nats?.stop();
});

const submitted = (id: string) => ({ keepAliveMs: 600_000, esId: `es-${id}`, node: 'n1', indices: ['books'], request: { body: '{}', params: {} } });

async function facts(bus: Bus, id: string, types: Array<[string, unknown]>): Promise<number> {
  let seq = 0;
  let last = 0;
  for (const [type, data] of types) last = (await bus.append(makeEnvelope({ type: `${Aggregate.AsyncSearch}.${type}`, aggregateId: id, seq: ++seq, data, node: 'n1' }))).seq;
  return last;
}

it('keeps live async searches, drops ended ones, and completes an earlier build\'s state from the log', async () => {
  const bus = new Bus(nc);
  await facts(bus, 'live-1', [['submitted', submitted('live-1')], ['completed', { total: 3 }]]);
  await facts(bus, 'gone-1', [['submitted', submitted('gone-1')], ['deleted', { by: 'elastic' }]]);
  // an earlier build's ES_STATE: a position covering those facts, no async search kept, no flag
  const upTo = await facts(bus, 'running-1', [['submitted', submitted('running-1')]]);
  await bus.publish(subjects.statePosition, new TextEncoder().encode(JSON.stringify({ kind: 'position', seq: upTo, at: Date.now(), node: 'old' })));
  const before = await readCompactedState(nc);
  expect(before).toMatchObject({ seq: upTo, asyncSearchesKept: false, asyncSearches: [] });

  const compactor = new Compactor({ nc, leases: await leasesBucket(nc), nodeId: 'n1', log: pino({ level: 'silent' }), retentionMs: 0, flushMs: 100 });
  compactor.start();
  try {
    const after = await poll(async () => {
      const cs = await readCompactedState(nc);
      return cs.asyncSearchesKept && cs;
    }, 15_000, 'the compactor writing a state that keeps async searches');
    expect(after.asyncSearches.map((a) => [a.id, a.status]).sort()).toEqual([['live-1', 'completed'], ['running-1', 'running']]);

    // then as facts come: an ended search leaves ES_STATE, a new one enters it
    await bus.append(makeEnvelope({ type: `${Aggregate.AsyncSearch}.expired`, aggregateId: 'running-1', seq: 2, data: {}, node: 'n1' }));
    await facts(bus, 'live-2', [['submitted', submitted('live-2')]]);
    await poll(async () => {
      const cs = await readCompactedState(nc);
      const ids = cs.asyncSearches.map((a) => a.id).sort();
      return ids.join(',') === 'live-1,live-2';
    }, 15_000, 'ES_STATE following the async searches');
  } finally {
    await compactor.stop();
  }
});
