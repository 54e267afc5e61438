import { startNats, type TestNats } from '../support/natsServer';
import { Bus, ensureStreams, makeEnvelope, readFacts } from '../../streams';

describe('event log on a real nats-server', () => {
  let nats: TestNats;
  beforeAll(async () => {
    nats = await startNats();
  });
  afterAll(async () => {
    await nats.stop();
  });

  it('appends facts in order and reads them back through an ordered consumer', async () => {
    const nc = await nats.connect();
    await ensureStreams(nc);
    const bus = new Bus(nc);
    await Promise.all(
      [1, 2, 3].map((seq) => bus.append(makeEnvelope({ type: 'scroll.extended', aggregateId: 'a1', seq, data: { keepAliveMs: seq } }))),
    );
    const seen = [];
    for await (const e of readFacts(nc)) seen.push([e.type, e.seq]);
    expect(seen).toEqual([
      ['scroll.extended', 1],
      ['scroll.extended', 2],
      ['scroll.extended', 3],
    ]);
    await nc.drain();
  });

  it('de-duplicates a re-sent fact by its envelope id', async () => {
    const nc = await nats.connect();
    const bus = new Bus(nc);
    const env = makeEnvelope({ type: 'pit.closed', aggregateId: 'p1', seq: 1, data: {} });
    const a = await bus.append(env);
    const b = await bus.append(env);
    expect(b.duplicate).toBe(true);
    expect(b.seq).toBe(a.seq);
    await nc.drain();
  });
});
