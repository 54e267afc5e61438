/**
 * A coordinator asks its own node's started shard copies in process (actors/shard/localCopies.ts)
 * and the queue group otherwise: the query and fetch requests of a search, a scroll and a PIT on a
 * node holding every copy never cross NATS, and give the same answers as when they do.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { localCopy } from '../../../actors/shard/localCopies';
import type { ShardActor } from '../../../actors/shard/shardActor';
import { startTestNode, type TestNode } from '../../support/node';

jest.setTimeout(120_000);

let t: TestNode;
let watcher: NatsConnection;
const seen: string[] = [];

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'books', settings: { number_of_shards: 3, number_of_replicas: 0 }, mappings: { properties: { n: { type: 'long' } } } });
  const body = Array.from({ length: 60 }, (_, i) => [{ index: { _index: 'books', _id: `b${i}` } }, { n: i, title: `book ${i}` }]).flat();
  expect((await t.es.bulk({ body, refresh: true })).errors).toBe(false);
  // A plain (non-queue) subscriber sees every request published to the shards' read subjects.
  watcher = await t.nats.connect();
  watcher.subscribe('es.v1.shard.*.*.query', { callback: (_e, m) => void seen.push(m.subject) });
  watcher.subscribe('es.v1.shard.*.*.fetch', { callback: (_e, m) => void seen.push(m.subject) });
  await watcher.flush();
});
afterAll(async () => {
  await watcher?.close();
  await t?.stop();
});

const copies = (): ShardActor[] => {
  const uuid = t.sys.services.cluster.get('books')!.uuid;
  return [0, 1, 2].map((n) => localCopy(t.sys.ctx.nc, uuid, n) as ShardActor);
};

async function searches() {
  const sorted = await t.es.search({ index: 'books', sort: [{ n: 'desc' }], size: 7, from: 3 });
  const first = await t.es.search({ index: 'books', scroll: '1m', size: 25, sort: ['_doc'] });
  let scrolled = first.hits.hits.length;
  for (let page = first; page.hits.hits.length; scrolled += page.hits.hits.length) {
    page = await t.es.scroll({ scroll_id: page._scroll_id!, scroll: '1m' });
  }
  await t.es.clearScroll({ scroll_id: first._scroll_id! });
  const pit = await t.es.openPointInTime({ index: 'books', keep_alive: '1m' });
  const inPit = await t.es.search({ pit: { id: pit.id }, sort: [{ n: 'asc' }], size: 5 });
  await t.es.closePointInTime({ id: pit.id });
  return {
    sorted: sorted.hits.hits.map((h) => [h._id, h._source, h.sort]),
    scrolled,
    inPit: inPit.hits.hits.map((h) => [h._id, h.sort?.[0]]),
  };
}

it('holds a local copy of each shard', () => {
  expect(copies().every((c) => c !== undefined)).toBe(true);
});

it('answers searches, scrolls and PITs from the node’s own copies without a NATS request', async () => {
  await t.sys.ctx.nc.flush();
  seen.length = 0;
  const got = await searches();
  await t.sys.ctx.nc.flush();
  await watcher.flush();
  expect(seen).toEqual([]);
  expect(got.scrolled).toBe(60);
  expect(got.sorted).toEqual([56, 55, 54, 53, 52, 51, 50].map((n) => [`b${n}`, { n, title: `book ${n}` }, [n]]));
  expect(got.inPit).toEqual([0, 1, 2, 3, 4].map((n) => [`b${n}`, n]));
});

it('asks the queue group when its own copy cannot answer in process, with the same results', async () => {
  const local = await searches();
  const saved = copies().map((c) => c.answerLocally);
  for (const c of copies()) c.answerLocally = () => undefined; // as a copy that is not started here
  try {
    seen.length = 0;
    const remote = await searches();
    await t.sys.ctx.nc.flush();
    await watcher.flush();
    expect(seen.length).toBeGreaterThan(0);
    expect(remote).toEqual(local);
  } finally {
    copies().forEach((c, i) => (c.answerLocally = saved[i]));
  }
});

it('turns a shard error into the same ES error in process as over NATS', async () => {
  const bad = () => t.es.search({ index: 'books', sort: [{ nope: 'asc' }] }).catch((e) => e.meta.body);
  const local = await bad();
  const saved = copies().map((c) => c.answerLocally);
  for (const c of copies()) c.answerLocally = () => undefined;
  try {
    expect(await bad()).toEqual(local);
  } finally {
    copies().forEach((c, i) => (c.answerLocally = saved[i]));
  }
  expect(local.error.root_cause[0].reason).toBe('No mapping found for [nope] in order to sort on');
  expect(local.status).toBe(400);
});
