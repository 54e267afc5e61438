/**
 * Issue 21 item 3: the log followers never stall. A follower pulled by bytes (nats.js 3.4
 * `consume({ max_bytes })`) stopped getting messages after some thousands of small ones (the
 * client counted the bytes of finished pulls as still outstanding), and one whose ordered consumer
 * was reset (its nats-server restarted) waited for two missed idle heartbeats (30 s) before it got
 * anything again. Both are measured here on a real nats-server: every message dispatched, in order,
 * with no stall found by the follower's own watchdog.
 */
import pino from 'pino';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { DATA_STREAM, StreamFollower, type LoggedMessage } from '../../../streams';
import { startNats, type TestNats } from '../../support/natsServer';
import { poll } from '../../support/poll';

jest.setTimeout(120_000);

let nats: TestNats;
let nc: NatsConnection;
let pub: NatsConnection;

beforeAll(async () => {
  nats = await startNats();
  nc = await nats.connect();
  pub = await nats.connect();
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'ES_EVT', subjects: ['es.v1.evt.>'] });
  await jsm.streams.add({ name: DATA_STREAM, subjects: ['es.v1.data.>'] });
});

afterAll(async () => {
  await nc?.close();
  await pub?.close();
  await nats?.stop();
});

function follow(stream: string, filter: string) {
  const seen: number[] = [];
  const f = new StreamFollower(nc, stream, filter, (m: LoggedMessage) => seen.push(m.seq), pino({ level: 'silent' }));
  return { f, seen };
}

async function publishBursts(subject: (i: number) => string, total: number, size: (i: number) => number): Promise<number> {
  const js = jetstream(pub);
  let last = 0;
  for (let i = 0; i < total; ) {
    const burst = Math.min(total - i, 1 + Math.floor(Math.random() * 60));
    const acks = await Promise.all(Array.from({ length: burst }, (_, k) => js.publish(subject(i + k), new Uint8Array(size(i + k)))));
    last = acks.at(-1)!.seq;
    i += burst;
    if (Math.random() < 0.2) await new Promise((r) => setTimeout(r, 2));
  }
  return last;
}

it('follows 20,000 small facts published in bursts without a stall', async () => {
  const { f, seen } = follow('ES_EVT', 'es.v1.evt.>');
  await f.start(0);
  const last = await publishBursts((i) => `es.v1.evt.scroll.s${i % 13}.extended`, 20_000, (i) => 300 + (i % 700));
  await poll(() => f.position >= last, 30_000, 'the follower at the end');
  expect(seen.length).toBe(20_000);
  expect(seen.every((s, i) => i === 0 || s === seen[i - 1] + 1)).toBe(true);
  expect(f.stats()).toMatchObject({ stalls: 0, restarts: 0, heartbeats_missed: 0 });
  await f.stop();
});

it('follows a document log of mixed small writes and large batches without a stall', async () => {
  const { f, seen } = follow(DATA_STREAM, 'es.v1.data.>');
  await f.start(0);
  const last = await publishBursts((i) => `es.v1.data.shard.u${i % 3}.0`, 3_000, (i) => (i % 40 === 0 ? 600_000 : 400));
  await poll(() => f.position >= last, 60_000, 'the follower at the end');
  expect(seen.length).toBe(3_000);
  expect(f.stats()).toMatchObject({ stalls: 0, restarts: 0, heartbeats_missed: 0 });
  await f.stop();
});

it('goes on at once after its nats-server restarted (a reset consumer is replaced, not left to stall)', async () => {
  const { f, seen } = follow('ES_EVT', 'es.v1.evt.>');
  const before = (await (await jetstreamManager(nc)).streams.info('ES_EVT')).state.last_seq;
  await f.start(before);
  await publishBursts((i) => `es.v1.evt.pit.p${i % 7}.extended`, 2_000, () => 500);
  await nats.restart();
  await poll(async () => (await (await jetstreamManager(pub)).streams.info('ES_EVT').then(() => true, () => false)), 20_000, 'JetStream back');
  const start = Date.now();
  const last = await publishBursts((i) => `es.v1.evt.pit.q${i % 7}.extended`, 2_000, () => 500);
  await poll(() => f.position >= last, 30_000, 'the follower at the end');
  expect(Date.now() - start).toBeLessThan(10_000); // a stalled consumer waited 30 s
  expect(seen.length).toBe(4_000);
  expect(f.stats()).toMatchObject({ stalls: 0, heartbeats_missed: 0 });
  await f.stop();
});
