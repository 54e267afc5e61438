/**
 * Issue 10 item 12: while the node's NATS connection is down, requests that need a shard fail at
 * once with ES's 503 instead of hanging for the shard timeout; when nats-server is back (same port,
 * same store), the node serves again without a restart. A search `timeout` bounds the wait for a
 * shard that does not answer: the response is partial, `timed_out: true`, as ES.
 */
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import type { NatsConnection } from '@nats-io/transport-node';
import { startEmbeddedNats, type EmbeddedNats } from '../../../actors/embeddedNats';
import { startTestNode, type TestNode } from '../../support/node';
import { raw } from '../../e2e/search/helpers';

jest.setTimeout(60_000);

let t: TestNode;
let revived: EmbeddedNats | undefined;

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'o', settings: { number_of_shards: 2 } });
  await t.es.bulk({ refresh: true, operations: Array.from({ length: 20 }, (_, i) => [{ index: { _index: 'o', _id: String(i) } }, { n: i }]).flat() });
});

afterAll(async () => {
  // t.stop() would wait for the exit of the nats-server this suite killed: clean up by hand
  await t.es.close();
  await t.es9.close();
  await t.sys.stop();
  await revived?.stop();
  await rm(t.nats.dir, { recursive: true, force: true });
  await rm(t.dataDir, { recursive: true, force: true });
});

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const start = Date.now();
  const out = await fn();
  return [out, Date.now() - start];
}

it('answers writes 503 at once while NATS is down (reads from its own copies go on, as ES without a master), and serves again once it is back', async () => {
  const port = Number(t.nats.url.split(':').pop());
  const nc = (t.sys.ctx as { nc: NatsConnection }).nc;
  const disconnected = (async () => {
    for await (const s of nc.status()) if (s.type === 'disconnect') return;
  })();
  t.nats.proc.kill('SIGKILL');
  await once(t.nats.proc, 'exit');
  await disconnected;

  // ES's default `cluster.no_master_block: write`: a node cut off still answers reads from the
  // shard copies it holds (possibly stale), and refuses writes.
  for (const [method, path, body] of [['GET', '/o/_search'], ['POST', '/o/_search', { query: { match_all: {} }, size: 5 }], ['GET', '/o/_count'], ['GET', '/o/_doc/3']] as Array<[string, string, unknown?]>) {
    const [res, ms] = await timed(() => raw(t, method, path, body));
    expect([method, path, res.status, ms < 2_000]).toEqual([method, path, 200, true]);
  }
  const requests: Array<[string, string, unknown?]> = [
    ['PUT', '/o/_doc/new', { n: 99 }],
    ['POST', '/_bulk', '{"index":{"_index":"o","_id":"b1"}}\n{"n":1}\n'],
    ['POST', '/o/_search?scroll=1m', { size: 2 }],
  ];
  for (const [method, path, body] of requests) {
    const [res, ms] = await timed(() => raw(t, method, path, body));
    const status = path === '/_bulk' ? res.json?.items?.[0]?.index?.status ?? res.status : res.status;
    expect([method, path, status]).toEqual([method, path, 503]);
    expect(ms).toBeLessThan(2_000); // was: 60 s
    if (res.status === 503) expect(res.json.error.root_cause[0].type).toBe('no_shard_available_action_exception');
  }
  // what needs a JetStream append (here: creating an index) waits for JetStream's own timeout, then ES's 503
  const [create, createMs] = await timed(() => raw(t, 'PUT', '/later', {}));
  expect([create.status, create.json.error.type, createMs < 20_000]).toEqual([503, 'cluster_block_exception', true]);
  // broadcast APIs report the shards they could not reach
  const [refresh, ms] = await timed(() => raw(t, 'POST', '/o/_refresh'));
  expect([refresh.status, refresh.json._shards.failed, ms < 2_000]).toEqual([200, 2, true]);

  revived = await startEmbeddedNats(t.nats.dir, { port });
  // Reads never stopped (local copies); a write tells when the node is back on NATS.
  const deadline = Date.now() + 20_000;
  let res = await raw(t, 'PUT', '/o/_doc/after?refresh=true', { n: 100 });
  while (res.status !== 201 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    res = await raw(t, 'PUT', '/o/_doc/after?refresh=true', { n: 100 });
  }
  expect(res.status).toBe(201);
  expect((await raw(t, 'GET', '/o/_count')).json.count).toBe(21);
  expect((await t.es.search({ index: 'o', query: { term: { n: 100 } } })).hits.hits.map((h) => h._id)).toEqual(['after']);
});

it('returns partial results with timed_out when a shard does not answer within the search timeout', async () => {
  const idx = t.sys.services.cluster.get('o')!;
  const copy = t.sys.services.cluster.localCopy(idx.uuid, 1)!;
  await copy.stop(); // shard 1 no longer answers…
  const nc = (t.sys.ctx as { nc: NatsConnection }).nc;
  const silent = nc.subscribe(`es.v1.shard.${idx.uuid}.1.*`, { callback: () => undefined }); // …but someone listens
  try {
    const [res, ms] = await timed(() => raw(t, 'POST', '/o/_search?timeout=300ms', { size: 100, track_total_hits: true }));
    expect(ms).toBeLessThan(5_000);
    expect(res.status).toBe(200);
    expect(res.json.timed_out).toBe(true);
    expect(res.json._shards).toEqual({ total: 2, successful: 2, skipped: 0, failed: 0 });
    // shard 0's hits only (21 documents over two shards)
    expect(res.json.hits.hits.length).toBeGreaterThan(0);
    expect(res.json.hits.hits.length).toBeLessThan(21);
  } finally {
    silent.unsubscribe();
    copy.start();
  }
});
