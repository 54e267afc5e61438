/**
 * Shard requests of the page path go over one long-lived inbox subscription with our own
 * correlation (actors/search/requestMux.ts), not nats.js `request` (which builds Error objects with
 * stacks for every request): real nats-server, real responders.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { ShardClient } from '../../../actors/search/shardClient';
import { RequestMux, RequestTimeout } from '../../../actors/search/requestMux';
import { encodeFetchPage, encodeQueryPage } from '../../../actors/shard/pageCodec';
import { EsError } from '../../../actors/wire/esErrors';
import { startNats, type TestNats } from '../../support/natsServer';

let nats: TestNats;
let client: NatsConnection;
let server: NatsConnection;
const ref = { index: 'books', indexUuid: 'u1', n: 0 };
const enc = new TextEncoder();
const dec = new TextDecoder();

beforeAll(async () => {
  nats = await startNats({ admin: true });
  client = await nats.connect('admin');
  server = await nats.connect('admin');
});
afterAll(async () => {
  await client?.close();
  await server?.close();
  await nats?.stop();
});

const page = (ids: string[]) =>
  encodeQueryPage({ maxDoc: ids.length, seqNo: ids.length - 1 }, {
    totalHits: ids.length, totalRelation: 'eq', maxScore: null,
    hits: ids.map((id, doc) => ({ doc, _id: id, score: null, sort: [doc] })),
  }, ids.map((id) => JSON.stringify({ id })));

it('queries and fetches without nats.js request (its per-request errors never built)', async () => {
  const sub = server.subscribe('es.v1.shard.u1.0.*', {
    callback: (_e, m) => {
      m.respond(m.subject.endsWith('.query') ? page(['a', 'b']) : encodeFetchPage(['{"f":1}', '{"f":2}']));
    },
  });
  await server.flush();
  const c = new ShardClient(client);
  const original = client.request;
  client.request = () => {
    throw new Error('nc.request must not be used on the page path');
  };
  try {
    const p = await c.query(ref, { req: { from: 0, size: 2, trackTotalHits: true, shardIndex: 0 } });
    expect([p.id(0), p.id(1), p.source(1), p.head.totalHits]).toEqual(['a', 'b', '{"id":"b"}', 2]);
    const [f] = await c.fetch(ref, [0, 1]);
    expect([f.fetched, f.source(0), f.source(1)]).toEqual([2, '{"f":1}', '{"f":2}']);
  } finally {
    client.request = original;
    sub.unsubscribe();
  }
});

it('correlates many concurrent replies that come back out of order', async () => {
  const sub = server.subscribe('echo.slow', {
    callback: (_e, m) => {
      const n = Number(dec.decode(m.data));
      setTimeout(() => void m.respond(enc.encode(`re:${n}`)), (n * 7) % 23);
    },
  });
  await server.flush();
  const mux = new RequestMux(client);
  const got = await Promise.all(Array.from({ length: 300 }, (_, i) => mux.request('echo.slow', enc.encode(String(i)), 10_000)));
  expect(got.map((m) => dec.decode(m.data))).toEqual(Array.from({ length: 300 }, (_, i) => `re:${i}`));
  expect(mux.inFlight).toBe(0);
  sub.unsubscribe();
});

it('turns a shard error reply into the EsError it carries', async () => {
  const sub = server.subscribe('es.v1.shard.u1.0.query', {
    callback: (_e, m) => {
      m.respond(enc.encode(JSON.stringify({ ok: false, error: { type: 'illegal_argument_exception', status: 400, reason: 'bad sort' } })));
    },
  });
  await server.flush();
  const err = await new ShardClient(client).query(ref, { req: { from: 0, size: 1, trackTotalHits: true, shardIndex: 0 } }).catch((e) => e);
  expect(err).toBeInstanceOf(EsError);
  expect([err.type, err.status, err.message]).toEqual(['illegal_argument_exception', 400, 'bad sort']);
  sub.unsubscribe();
});

it('answers 503 when no copy subscribes, after the read wait', async () => {
  const c = new ShardClient(client, { readWaitMs: 150 });
  const t0 = Date.now();
  const err = await c.query({ ...ref, indexUuid: 'nobody' }, { req: { from: 0, size: 1, trackTotalHits: true, shardIndex: 0 } }).catch((e) => e);
  expect(Date.now() - t0).toBeGreaterThanOrEqual(50); // asked again (20, 40 ms backoff) before giving up
  expect([err.type, err.status]).toEqual(['no_shard_available_action_exception', 503]);
  expect(err.message).toMatch(/no started copy answered: no responders/);
});

it('times out a request nobody answers, and ignores the late reply', async () => {
  let late: (() => void) | undefined;
  const sub = server.subscribe('echo.never', { callback: (_e, m) => void (late = () => void m.respond(enc.encode('late'))) });
  await server.flush();
  const mux = new RequestMux(client);
  const err = await mux.request('echo.never', enc.encode('x'), 300).catch((e) => e);
  expect(err).toBeInstanceOf(RequestTimeout);
  late!();
  await client.flush();
  expect(mux.inFlight).toBe(0);
  // the mux still works afterwards
  const ok = server.subscribe('echo.ok', { callback: (_e, m) => void m.respond(m.data) });
  await server.flush();
  expect(dec.decode((await mux.request('echo.ok', enc.encode('again'), 5_000)).data)).toBe('again');
  ok.unsubscribe();
  sub.unsubscribe();
});

it('fails what is pending when the connection closes', async () => {
  const nc = await nats.connect('admin');
  const sub = server.subscribe('echo.hold', { callback: () => undefined });
  await server.flush();
  const mux = new RequestMux(nc);
  const pending = mux.request('echo.hold', enc.encode('x'), 60_000).catch((e) => e);
  await nc.flush();
  await nc.close();
  const err = await pending;
  expect(err).toBeInstanceOf(Error);
  expect((err as Error).message).toBe('connection closed');
  sub.unsubscribe();
});
