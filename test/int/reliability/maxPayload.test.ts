/**
 * Issue 10 item 13: a nats-server with a small `max_payload` (64 KB here; 1 MB by default). The node
 * warns at start-up; a document that cannot travel in one message is sent to its primary in parts
 * and logged in parts (issue 21: documents up to http.max_content_length whatever max_payload);
 * search pages, scroll pages, aggregations and gets whose replies exceed the limit still succeed
 * (the shard sends them in parts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Settings } from '../../../actors/config';
import { startSystem, type System } from '../../../actors/system';
import { raw } from '../../e2e/search/helpers';

jest.setTimeout(60_000);

const MAX_PAYLOAD = 64 * 1024;
let dir: string;
let proc: ChildProcess;
let sys: System;
let t: { url: string };
let natsUrlOf: string;
const logs: string[] = [];

async function startSmallNats(): Promise<string> {
  dir = await mkdtemp(join(tmpdir(), 'nats-small-'));
  const conf = join(dir, 'nats.conf');
  writeFileSync(conf, `listen: "127.0.0.1:-1"\nmax_payload: ${MAX_PAYLOAD}\njetstream { store_dir: "${join(dir, 'js')}" }\nports_file_dir: "${dir}"\n`);
  proc = spawn('nats-server', ['-c', conf], { stdio: 'ignore' });
  const ports = join(dir, `nats-server_${proc.pid}.ports`);
  for (let i = 0; i < 500 && !existsSync(ports); i++) await new Promise((r) => setTimeout(r, 20));
  for (let i = 0; i < 50; i++) {
    try {
      return (JSON.parse(readFileSync(ports, 'utf8')) as { nats: string[] }).nats[0];
    } catch {
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  throw new Error('nats-server did not start');
}

// ~1 KB documents, quote-heavy so that JSON escaping grows them in `get` replies
const doc = (i: number, size = 1000) => ({ n: i, k: `key-${i}`, body: `"q" ${i} `.repeat(Math.ceil(size / 8)).slice(0, size) });

beforeAll(async () => {
  const url = await startSmallNats();
  natsUrlOf = url;
  const sink = new Writable({ write: (c, _e, cb) => (logs.push(c.toString()), cb()) });
  sys = await startSystem({
    host: '127.0.0.1',
    port: 0,
    natsUrl: url,
    dataDir: join(dir, 'data'),
    configDir: join(dir, 'config'),
    settings: new Settings({ 'xpack.security.enabled': false }),
    log: pino({ level: 'warn' }, sink),
  });
  t = { url: sys.url };
  for (const [index, shards] of [['one', 1], ['two', 2]] as const) {
    expect((await raw(t, 'PUT', `/${index}`, { settings: { number_of_shards: shards }, mappings: { properties: { k: { type: 'keyword' } } } })).status).toBe(200);
    const lines = Array.from({ length: 300 }, (_, i) => `{"index":{"_id":"${i}"}}\n${JSON.stringify(doc(i))}\n`).join('');
    const bulk = await raw(t, 'POST', `/${index}/_bulk?refresh=true`, lines);
    expect([bulk.status, bulk.json.errors]).toEqual([200, false]);
  }
});

const MANY = 2500;

beforeAll(async () => {
  // small documents, many per page: the query reply's hit list alone is over the limit
  expect((await raw(t, 'PUT', '/many', { settings: { number_of_shards: 2 } })).status).toBe(200);
  const lines = Array.from({ length: MANY }, (_, i) => `{"index":{"_id":"m${i}"}}\n{"n":${i}}\n`).join('');
  expect((await raw(t, 'POST', '/many/_bulk?refresh=true', lines)).json.errors).toBe(false);
});

afterAll(async () => {
  await sys?.stop();
  proc?.kill();
  await rm(dir, { recursive: true, force: true });
});

it('warns at start-up that max_payload is below what the README asks', () => {
  const warn = logs.map((l) => JSON.parse(l)).find((l) => /max_payload/.test(l.msg));
  expect(warn).toMatchObject({ level: 40, max_payload: MAX_PAYLOAD, recommended: 8 * 1024 * 1024 });
});

it('takes documents larger than max_payload (their request and their log batch go in parts), in a bulk too', async () => {
  const big = doc(1, 100 * 1024);
  const single = await raw(t, 'PUT', '/other/_doc/big?refresh=true', big);
  expect(single.status).toBe(201);
  expect((await raw(t, 'GET', '/other/_doc/big')).json._source).toEqual(big);
  const huge = doc(2, 1024 * 1024); // 16 parts of 64 KB
  const lines = `{"index":{"_id":"a"}}\n{"n":1}\n{"index":{"_id":"huge"}}\n${JSON.stringify(huge)}\n{"index":{"_id":"b"}}\n{"n":2}\n`;
  const bulk = await raw(t, 'POST', '/other/_bulk?refresh=true', lines);
  expect(bulk.status).toBe(200);
  expect(bulk.json.items.map((i: { index: { _id: string; status: number } }) => [i.index._id, i.index.status])).toEqual([['a', 201], ['huge', 201], ['b', 201]]);
  expect((await raw(t, 'GET', '/other/_doc/huge')).json._source).toEqual(huge);
  const hit = await raw(t, 'POST', '/other/_search', { query: { ids: { values: ['huge'] } } });
  expect(hit.json.hits.hits[0]._source).toEqual(huge);
  expect((await raw(t, 'GET', '/other/_doc/b')).json._source).toEqual({ n: 2 });
});

it('serves search and scroll pages whose replies exceed max_payload', async () => {
  for (const index of ['one', 'two']) {
    const page = await raw(t, 'POST', `/${index}/_search`, { size: 300, sort: [{ n: 'asc' }], query: { range: { n: { gte: 0 } } } });
    expect([index, page.status]).toEqual([index, 200]);
    expect(page.text.length).toBeGreaterThan(4 * MAX_PAYLOAD);
    expect(page.json.hits.hits.map((h: { _source: { n: number } }) => h._source.n)).toEqual(Array.from({ length: 300 }, (_, i) => i));
    expect(page.json.hits.hits[17]._source).toEqual(doc(17));

    const first = await raw(t, 'POST', `/${index}/_search?scroll=1m`, { size: 250, sort: ['_doc'] });
    expect(first.status).toBe(200);
    const second = await raw(t, 'POST', '/_search/scroll', { scroll: '1m', scroll_id: first.json._scroll_id });
    expect(second.status).toBe(200);
    const seen = [...first.json.hits.hits, ...second.json.hits.hits].map((h: { _id: string }) => Number(h._id)).sort((a, b) => a - b);
    expect(seen.filter((n) => n < 300)).toEqual(Array.from({ length: 300 }, (_, i) => i));
  }
});

it('serves search and scroll pages whose hit lists alone exceed max_payload', async () => {
  const all = Array.from({ length: MANY }, (_, i) => i);
  const page = await raw(t, 'POST', '/many/_search', { size: MANY, sort: [{ n: 'desc' }], track_total_hits: true });
  expect(page.status).toBe(200);
  expect(page.json.hits.hits.map((h: { _source: { n: number } }) => h._source.n)).toEqual([...all].reverse());
  const scroll = await raw(t, 'POST', '/many/_search?scroll=1m', { size: MANY, sort: [{ n: 'asc' }] });
  expect(scroll.status).toBe(200);
  expect(scroll.json.hits.hits.map((h: { _id: string }) => h._id)).toEqual(all.map((i) => `m${i}`));
  const docOrder = await raw(t, 'POST', '/many/_search?scroll=1m', { size: MANY, sort: ['_doc'] });
  expect([docOrder.status, docOrder.json.hits.hits.length]).toEqual([200, MANY]);
});

it('serves an aggregation and a get whose replies exceed max_payload', async () => {
  const aggs = await raw(t, 'POST', '/two/_search', { size: 0, aggs: { keys: { terms: { field: 'k', size: 5000 } } } });
  expect(aggs.status).toBe(200);
  expect(aggs.json.aggregations.keys.buckets).toHaveLength(300);
  const near = doc(5, MAX_PAYLOAD - 6000); // fits a message; escaped in the get reply, it does not
  expect((await raw(t, 'PUT', '/one/_doc/near?refresh=true', near)).status).toBe(201);
  const got = await raw(t, 'GET', '/one/_doc/near');
  expect([got.status, got.json._source]).toEqual([200, near]);
  const hit = await raw(t, 'POST', '/one/_search', { query: { ids: { values: ['near'] } } });
  expect(hit.json.hits.hits[0]._source).toEqual(near);
});

it('rebuilds documents logged in parts when it replays the log after a restart', async () => {
  await sys.stop();
  sys = await startSystem({
    host: '127.0.0.1',
    port: 0,
    natsUrl: natsUrlOf,
    dataDir: join(dir, 'data'),
    configDir: join(dir, 'config'),
    settings: new Settings({ 'xpack.security.enabled': false, 'snapshot.enabled': false }), // the whole log, no snapshot
    log: pino({ level: 'silent' }),
  });
  t = { url: sys.url };
  const got = await raw(t, 'GET', '/other/_doc/huge');
  expect([got.status, got.json._source]).toEqual([200, doc(2, 1024 * 1024)]);
  expect((await raw(t, 'GET', '/other/_count')).json.count).toBe(4);
});
