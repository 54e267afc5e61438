/**
 * Issue 21 item 1: a JetStream store that fills up (a real nats-server with a 40 MB
 * `max_file_store` and the default 1 MB `max_payload`, so bulk batches travel in several messages).
 * Every write reported failed is invisible and every acknowledged one visible, exactly; the
 * store's refusals are ES's 429, never a 500; the room kept for lifecycle facts lets PITs open,
 * scrolls clear and API keys be invalidated while the document log is full; over the flood-stage
 * watermark writes get ES's 429 block and deletes go on; deleting an index frees the room and
 * lifts the block, without a restart.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Settings } from '../../../actors/config';
import { startSystem, type System } from '../../../actors/system';
import { maxStorageFromLog } from '../../../actors/cluster/floodStage';
import { raw } from '../../e2e/search/helpers';
import { poll } from '../../support/poll';

jest.setTimeout(120_000);

const STORE = 40 * 1024 * 1024;
const PASSWORD = 'store-full-pw';
const auth = { authorization: `Basic ${Buffer.from(`elastic:${PASSWORD}`).toString('base64')}` };
let dir: string;
let proc: ChildProcess;
let sys: System;
let t: { url: string };
const req = (method: string, path: string, body?: unknown) => raw(t, method, path, body, auth);

async function startSmallStore(): Promise<string> {
  dir = await mkdtemp(join(tmpdir(), 'nats-full-'));
  const conf = join(dir, 'nats.conf');
  writeFileSync(conf, `listen: "127.0.0.1:-1"\njetstream { store_dir: "${join(dir, 'js')}", max_file_store: ${STORE} }\nports_file_dir: "${dir}"\nlog_file: "${join(dir, 'nats.log')}"\n`);
  proc = spawn('nats-server', ['-c', conf], { stdio: 'ignore' });
  const ports = join(dir, `nats-server_${proc.pid}.ports`);
  return poll(() => {
    try {
      return existsSync(ports) && (JSON.parse(readFileSync(ports, 'utf8')) as { nats: string[] }).nats[0];
    } catch {
      return undefined;
    }
  }, 10_000, 'nats-server ports file');
}

beforeAll(async () => {
  const url = await startSmallStore();
  sys = await startSystem({
    host: '127.0.0.1',
    port: 0,
    natsUrl: url,
    dataDir: join(dir, 'data'),
    configDir: join(dir, 'config'),
    settings: new Settings({
      'bootstrap.password': PASSWORD,
      'nats.max_file_store': '40mb',
      // the soft block off: the writes run into the store's own limit first
      'cluster.routing.allocation.disk.threshold_enabled': false,
      'snapshot.interval_ms': 3_600_000,
    }),
    log: pino({ level: 'silent' }),
  });
  t = { url: sys.url };
});

afterAll(async () => {
  await sys?.stop();
  proc?.kill();
  await rm(dir, { recursive: true, force: true });
});

const acked = new Set<string>();
const failed = new Set<string>();

it('reads the store size a nats-server prints at start', () => {
  expect(maxStorageFromLog(readFileSync(join(dir, 'nats.log'), 'utf8'))).toBe(STORE);
});

it('reports every bulk item exactly once the document log is full: failed items are invisible, acknowledged ones visible', async () => {
  expect((await req('PUT', '/fill', { settings: { number_of_shards: 2 } })).status).toBe(200);
  const filler = 'x'.repeat(2000);
  let rounds = 0;
  const statuses = new Map<number, number>();
  while (failed.size < 1500 && rounds++ < 200) {
    const lines = Array.from({ length: 500 }, (_, i) => `{"index":{"_id":"r${rounds}-${i}"}}\n{"n":${i},"pad":"${filler}"}\n`).join('');
    const res = await req('POST', '/fill/_bulk', lines);
    expect(res.status).toBe(200);
    for (const item of res.json.items as Array<{ index: { _id: string; status: number; error?: { type: string } } }>) {
      statuses.set(item.index.status, (statuses.get(item.index.status) ?? 0) + 1);
      if (item.index.status === 201) acked.add(item.index._id);
      else {
        expect([item.index.status, item.index.error?.type]).toEqual([429, 'cluster_block_exception']);
        failed.add(item.index._id);
      }
    }
  }
  expect(acked.size).toBeGreaterThan(10_000);
  expect(failed.size).toBeGreaterThan(0);
  expect([...statuses.keys()].sort()).toEqual([201, 429]); // never a 500
  // a single write gets the same 429
  const one = await req('PUT', '/fill/_doc/single', { pad: filler.repeat(300) }); // more than the room left
  expect([one.status, one.json.error.type]).toEqual([429, 'cluster_block_exception']);
  expect(one.json.error.reason).toBe('index [fill] blocked by: [TOO_MANY_REQUESTS/12/disk usage exceeded flood-stage watermark, index has read-only-allow-delete block];');
  failed.add('single');

  expect((await req('POST', '/fill/_refresh')).status).toBe(200);
  expect((await req('GET', '/fill/_count')).json.count).toBe(acked.size);
  const ghosts = await req('POST', '/fill/_search', { size: 0, track_total_hits: true, query: { ids: { values: [...failed] } } });
  expect(ghosts.json.hits.total.value).toBe(0);
});

it('keeps room for lifecycle facts: a PIT opens, a scroll clears and an API key is invalidated while the document log is full', async () => {
  const pit = await req('POST', '/fill/_pit?keep_alive=1m');
  expect(pit.status).toBe(200);
  const scroll = await req('POST', '/fill/_search?scroll=1m', { size: 1 });
  expect(scroll.status).toBe(200);
  expect((await req('DELETE', '/_search/scroll', { scroll_id: scroll.json._scroll_id })).json).toMatchObject({ succeeded: true, num_freed: 2 }); // one per shard, as ES
  expect((await req('DELETE', '/_pit', { id: pit.json.id })).json).toMatchObject({ succeeded: true, num_freed: 2 });
  const key = await req('POST', '/_security/api_key', { name: 'while-full' });
  expect(key.status).toBe(200);
  const inv = await req('DELETE', '/_security/api_key', { ids: [key.json.id] });
  expect([inv.status, inv.json.invalidated_api_keys]).toEqual([200, [key.json.id]]);
});

it('deletes an index even at the document log’s cap, and the freed room takes writes again', async () => {
  expect((await req('DELETE', '/fill')).status).toBe(200);
  const stats = async () => (await req('GET', '/_nodes/_local/stats/fs')).json.nodes[sys.ctx.node.id].fs;
  const room = await poll(async () => {
    const fs = await stats();
    return fs.total.free_in_bytes > STORE * 0.9 && fs;
  }, 20_000, 'the room freed');
  expect(room.document_log.watermark_level).toBe('ok');
  const ok = await poll(async () => {
    const r = await req('PUT', '/again/_doc/1?refresh=true', { a: 1 });
    return r.status === 201 && r;
  }, 20_000, 'a write after the deletion');
  expect(ok.status).toBe(201);
});

it('blocks writes over the flood stage with ES’s 429 while deletes go on, and lifts the block once deleting an index freed the room', async () => {
  expect((await req('PUT', '/_cluster/settings', { persistent: { 'cluster.routing.allocation.disk.threshold_enabled': true } })).status).toBe(200);
  expect((await req('PUT', '/fill2', { settings: { number_of_shards: 1 } })).status).toBe(200);
  const filler = 'y'.repeat(2000);
  const statuses = new Map<number, number>();
  for (let round = 0; round < 200; round++) {
    const lines = Array.from({ length: 200 }, (_, i) => `{"index":{"_id":"f${round}-${i}"}}\n{"n":${i},"pad":"${filler}"}\n`).join('');
    const res = await req('POST', '/fill2/_bulk', lines);
    const items = res.json.items as Array<{ index: { status: number } }>;
    for (const it of items) statuses.set(it.index.status, (statuses.get(it.index.status) ?? 0) + 1);
    if (items.every((it) => it.index.status === 429)) break;
  }
  expect([...statuses.keys()].sort()).toEqual([201, 429]);
  const stats = async () => (await req('GET', '/_nodes/_local/stats/fs')).json.nodes[sys.ctx.node.id].fs;
  // blocked at the flood stage (counting this node's writes since the last look); the store may be
  // measured just under it afterwards: the block stays until the high watermark
  const fs = await stats();
  expect([fs.document_log.read_only_allow_delete, ['high', 'flood'].includes(fs.document_log.watermark_level)]).toEqual([true, true]);

  const blocked = await req('PUT', '/other/_doc/1', { a: 1 });
  expect([blocked.status, blocked.json.error.type, blocked.json.error.reason]).toEqual([
    429, 'cluster_block_exception', 'index [other] blocked by: [TOO_MANY_REQUESTS/12/disk usage exceeded flood-stage watermark, index has read-only-allow-delete block];',
  ]);
  // deletes go on (the flood stage leaves the document log room for them), writes do not
  const mixed = await req('POST', '/fill2/_bulk', '{"delete":{"_id":"f0-0"}}\n{"index":{"_id":"late"}}\n{"a":1}\n');
  expect(mixed.json.items.map((i: Record<string, { status: number }>) => Object.values(i)[0].status)).toEqual([200, 429]);
  expect((await req('DELETE', '/fill2/_doc/f0-1')).status).toBe(200);
  expect((await req('PUT', '/fill2/_mapping', { properties: { z: { type: 'keyword' } } })).status).toBe(429);
  expect((await req('PUT', '/fill2/_settings', { 'index.blocks.read_only_allow_delete': null })).status).toBe(200);

  expect((await req('DELETE', '/fill2')).status).toBe(200);
  await poll(async () => !(await stats()).document_log.read_only_allow_delete, 20_000, 'the block lifted');
  const after = await req('PUT', '/other/_doc/1?refresh=true', { a: 1 });
  expect(after.status).toBe(201);
  expect((await req('GET', '/other/_count')).json.count).toBe(1);
});
