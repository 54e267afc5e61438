/**
 * Issue 6 item 6: bounded start-up. A node restarts from its newest snapshot of the document
 * projection plus the ES_DATA tail after the snapshot's S, and ends in exactly the state a full
 * replay builds: for every shard the same doc ids (`_shard_doc` through a PIT), `_seq_no` and
 * `_version` (real-time get), sources, deletes, scores, aggregations and mappings. Writes made after the
 * snapshot come back from the tail; a corrupt snapshot is skipped (older one, or full replay); with
 * `snapshot.purge_log` the log is purged behind the snapshots and restarts still work, and a log
 * gap no snapshot covers stops start-up with a clear error.
 *
 * The `it`s of each describe run in order on one node: each restarts it a different way.
 */
import { cp, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pino from 'pino';
import { jetstreamManager } from '@nats-io/jetstream';
import { startTestNode, type TestNode } from '../../support/node';
import { raw } from '../../e2e/search/helpers';
import { rng } from '../../support/rng';
import { startSystem } from '../../../actors/system';
import { Settings } from '../../../actors/config';
import type { SnapshotResult } from '../../../actors/cluster';

jest.setTimeout(120_000);

const MAPPINGS = { properties: { n: { type: 'long' }, tag: { type: 'keyword' }, title: { type: 'text' } } };
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'naïve', '日本', '🦊', 'omega'];

const idOf = (i: number) => (i % 7 === 0 ? `ключ-${i}` : i % 11 === 0 ? `😀${i}` : `b${i}`);
const routingOf = (i: number) => (i % 5 === 0 ? `r${i % 3}é` : undefined);

const ROUTINGS = new Map(Array.from({ length: 6000 }, (_, i) => [idOf(i), routingOf(i)] as const).filter(([, r]) => r !== undefined) as Array<[string, string]>);

/** Deterministic document i, generation g (updates change the content). */
function doc(r: () => number, i: number, g: number) {
  const title = Array.from({ length: 1 + Math.floor(r() * 5) }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' ');
  return { n: i * 10 + g, tag: WORDS[(i + g) % 4], title, gen: g };
}

async function bulk(t: TestNode, index: string, lines: Array<{ op: 'index' | 'delete'; i: number; src?: unknown }>): Promise<void> {
  const body = lines
    .map(({ op, i, src }) => {
      const meta = { [op]: { _index: index, _id: idOf(i), ...(routingOf(i) ? { routing: routingOf(i) } : {}) } };
      return op === 'delete' ? `${JSON.stringify(meta)}\n` : `${JSON.stringify(meta)}\n${JSON.stringify(src)}\n`;
    })
    .join('');
  const res = await raw(t, 'POST', '/_bulk', body);
  expect(res.status).toBe(200);
}

/** Everything a restart must reproduce, per index, read through the public API. */
async function stateOf(t: TestNode, indices: string[]) {
  await t.es.indices.refresh({ index: indices.join(',') });
  const out: Record<string, unknown> = {};
  for (const index of indices) {
    const pit = await t.es.openPointInTime({ index, keep_alive: '1m' });
    const hits: unknown[] = [];
    let after: unknown[] | undefined;
    for (;;) {
      const res = await t.es.search({
        pit: { id: pit.id, keep_alive: '1m' },
        sort: ['_shard_doc'],
        size: 250,
        seq_no_primary_term: true,
        version: true,
        track_total_hits: true,
        ...(after ? { search_after: after as never } : {}),
      });
      if (!res.hits.hits.length) break;
      for (const h of res.hits.hits) hits.push([h._id, h._routing, h._source, h.sort]);
      after = res.hits.hits[res.hits.hits.length - 1].sort;
    }
    await t.es.closePointInTime({ id: pit.id });
    // search hits carry no _version/_seq_no here: read them with a real-time get of each doc
    for (let k = 0; k < hits.length; k += 50) {
      await Promise.all(hits.slice(k, k + 50).map(async (h) => {
        const id = (h as string[])[0];
        const routing = ROUTINGS.get(id);
        const got = await raw(t, 'GET', `/${index}/_doc/${encodeURIComponent(id)}${routing ? `?routing=${encodeURIComponent(routing)}` : ''}`);
        (h as unknown[]).push(got.json._seq_no, got.json._version);
      }));
    }
    const scored = await t.es.search({ index, query: { match: { title: 'alpha naïve 🦊' } }, size: 100, aggs: { tags: { terms: { field: index === 'books' ? 'tag' : 'tag.keyword' } }, n: { sum: { field: 'n' } } } });
    out[index] = {
      hits,
      scored: scored.hits.hits.map((h) => [h._id, h._score]),
      total: scored.hits.total,
      aggs: scored.aggregations,
      count: (await t.es.count({ index })).count,
      mapping: await t.es.indices.getMapping({ index }),
    };
  }
  out.indices = (await raw(t, 'GET', '/_cat/indices?h=index&s=index&format=json')).json;
  out.clusterSettings = (await raw(t, 'GET', '/_cluster/settings')).json;
  return out;
}

const snapshotsDir = (t: TestNode) => join(t.dataDir, 'snapshots');
const snapshotFiles = async (t: TestNode) => (await readdir(snapshotsDir(t)).catch(() => [] as string[])).filter((f) => f.endsWith('.snap')).sort();
const started = (t: TestNode) => t.sys.services.cluster.startResult!;
const takeSnapshot = async (t: TestNode): Promise<SnapshotResult> => (await t.sys.services.cluster.snapshots.take('request'))!;

/** History before the snapshot: creates, overwrites, deletes (also of missing ids), routing, unicode. */
async function writeHead(t: TestNode): Promise<void> {
  const r = rng(11);
  await t.es.indices.create({ index: 'books', settings: { number_of_shards: 3 }, mappings: MAPPINGS as never });
  await t.es.indices.create({ index: 'gone', settings: { number_of_shards: 1 } });
  await bulk(t, 'gone', [{ op: 'index', i: 1, src: { x: 1 } }]);
  await bulk(t, 'books', Array.from({ length: 600 }, (_, i) => ({ op: 'index' as const, i, src: doc(r, i, 0) })));
  await bulk(t, 'books', Array.from({ length: 60 }, (_, k) => ({ op: 'index' as const, i: k * 9, src: doc(r, k * 9, 1) })));
  await bulk(t, 'books', Array.from({ length: 40 }, (_, k) => ({ op: 'delete' as const, i: k * 13 + 1 })));
  await bulk(t, 'books', Array.from({ length: 5 }, (_, k) => ({ op: 'delete' as const, i: 10_000 + k }))); // not_found, still sequenced
}

/** History after the snapshot (the tail): more of everything, plus metadata changes. */
async function writeTail(t: TestNode): Promise<void> {
  const r = rng(12);
  await bulk(t, 'books', Array.from({ length: 100 }, (_, k) => ({ op: 'index' as const, i: 600 + k, src: doc(r, 600 + k, 0) })));
  await bulk(t, 'books', Array.from({ length: 30 }, (_, k) => ({ op: 'index' as const, i: k * 9, src: doc(r, k * 9, 2) })));
  await bulk(t, 'books', Array.from({ length: 20 }, (_, k) => ({ op: 'delete' as const, i: k * 17 + 2 })));
  await bulk(t, 'books', Array.from({ length: 5 }, (_, k) => ({ op: 'index' as const, i: k * 13 + 1, src: doc(r, k * 13 + 1, 3) }))); // re-created
  await t.es.indices.putMapping({ index: 'books', properties: { extra: { type: 'keyword' } } });
  await bulk(t, 'books', [{ op: 'index', i: 5000, src: { extra: 'x', dyn: 'dynamic text', n: 1 } }]);
  await t.es.indices.create({ index: 'late', settings: { number_of_shards: 2 } });
  await bulk(t, 'late', Array.from({ length: 50 }, (_, i) => ({ op: 'index' as const, i, src: doc(r, i, 0) })));
  await t.es.indices.delete({ index: 'gone' });
  await t.es.cluster.putSettings({ persistent: { 'search.max_open_scroll_context': 9 } });
}

describe('restart from a snapshot and the log tail', () => {
  let t: TestNode;
  let s1: SnapshotResult;
  let live: Awaited<ReturnType<typeof stateOf>>;
  const INDICES = ['books', 'late'];

  beforeAll(async () => {
    t = await startTestNode({ settings: { 'snapshot.interval_ms': 0 } });
    await writeHead(t);
    s1 = await takeSnapshot(t);
    await writeTail(t);
    live = await stateOf(t, INDICES);
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
  });

  it('takes a snapshot of the metadata, fingerprinted by the last metadata fact (copies keep their own commits)', async () => {
    const nc = await t.nats.connect();
    try {
      const jsm = await jetstreamManager(nc);
      expect(s1.seq).toBeGreaterThan(0);
      expect(s1.seq).toBeLessThan((await jsm.streams.info('ES_DATA')).state.last_seq);
      expect(s1.shards).toBe(0);
      expect(await snapshotFiles(t)).toEqual([`snapshot-${String(s1.seq).padStart(20, '0')}.snap`]);
    } finally {
      await nc.close();
    }
  });

  it('restarts from the snapshot taken at clean shutdown, replaying nothing, in the same state', async () => {
    await t.restart();
    expect(started(t).snapshotSeq).toBeGreaterThan(s1.seq);
    expect(started(t).ops).toBe(0);
    expect(await snapshotFiles(t)).toHaveLength(2);
    expect(await stateOf(t, INDICES)).toEqual(live);
  });

  it('still starts from its snapshot after nats-server itself restarted (the log is recognised)', async () => {
    await t.nats.restart();
    await t.restart();
    expect(started(t).snapshotSeq).toBeGreaterThan(s1.seq);
    expect(started(t).ops).toBe(0);
    expect(await stateOf(t, INDICES)).toEqual(live);
  });

  it('ignores a snapshot of another document log (a re-created stream)', async () => {
    const nc = await t.nats.connect();
    const files = await snapshotFiles(t);
    try {
      // same sequence numbers, other messages: fingerprint of message S differs
      await rename(snapshotsDir(t), `${snapshotsDir(t)}.mine`);
      const other = await startTestNode({ settings: { 'snapshot.interval_ms': 0 } });
      try {
        await writeHead(other);
        await takeSnapshot(other);
        await writeTail(other);
        await other.restart();
        await cp(snapshotsDir(other), snapshotsDir(t), { recursive: true });
      } finally {
        await other.stop();
      }
      await t.restart();
      expect(started(t).snapshotSeq).toBeUndefined(); // full replay, with a warning
      expect(await stateOf(t, INDICES)).toEqual(live);
    } finally {
      await nc.close();
      await rm(snapshotsDir(t), { recursive: true, force: true });
      await rename(`${snapshotsDir(t)}.mine`, snapshotsDir(t));
    }
    await t.restart(); // the stop after that full replay rewrites the newest snapshot (same S)
    expect(await snapshotFiles(t)).toEqual(files);
    expect(started(t).ops).toBe(0);
  });

  it('restarts from an older snapshot plus the log tail with the same doc ids, seqNos, versions and deletes', async () => {
    const [, newest] = await snapshotFiles(t);
    await rm(join(snapshotsDir(t), newest));
    await t.restart();
    expect(started(t).snapshotSeq).toBe(s1.seq);
    expect(await stateOf(t, INDICES)).toEqual(live);
  });

  it('has the writes made after the snapshot, from the tail', async () => {
    const books = (await stateOf(t, INDICES)).books as { hits: unknown[][] };
    const ids = new Set(books.hits.map((h) => h[0]));
    for (let k = 0; k < 100; k++) expect(ids.has(idOf(600 + k))).toBe(true);
    const recreated = new Set(Array.from({ length: 5 }, (_, k) => k * 13 + 1));
    for (let k = 0; k < 20; k++) expect(ids.has(idOf(k * 17 + 2))).toBe(recreated.has(k * 17 + 2));
    expect((await raw(t, 'GET', '/gone')).status).toBe(404);
    expect((await raw(t, 'GET', `/books/_doc/${encodeURIComponent(idOf(5000))}`)).json._source).toEqual({ extra: 'x', dyn: 'dynamic text', n: 1 });
  });

  it('skips a corrupt snapshot with a warning and falls back to the older one plus the tail', async () => {
    await t.restart(); // the tail replayed above makes the shutdown write a fresh newest snapshot
    const files = await snapshotFiles(t);
    expect(files).toHaveLength(2);
    const newest = join(snapshotsDir(t), files[1]);
    const bytes = await readFile(newest);
    bytes[Math.floor(bytes.length / 2)] ^= 0xff;
    await writeFile(newest, bytes);
    await t.restart();
    expect(started(t).snapshotSeq).toBe(s1.seq);
    expect(await stateOf(t, INDICES)).toEqual(live);
  });

  it('builds the same state by a full replay when no snapshot is usable', async () => {
    await t.restart(); // a stop after a tail replay writes a snapshot: flush that one first
    expect(started(t).ops).toBe(0);
    for (const f of await snapshotFiles(t)) await writeFile(join(snapshotsDir(t), f), 'garbage');
    await t.restart();
    expect(started(t).snapshotSeq).toBeUndefined();
    expect(await stateOf(t, INDICES)).toEqual(live);
  });

  it('continues versions from live docs and from tombstones, and seqNos past every logged op, after a snapshot restart', async () => {
    await t.restart(); // the full replay above makes the shutdown write a snapshot: start from it
    expect(started(t).snapshotSeq).toBeDefined();
    // [id, routing, source, sort, seqNo, version]
    const hits = (live.books as { hits: Array<[string, string | undefined, unknown, number[], number, number]> }).hits;
    const shardOf = (id: string) => Math.floor(hits.find((h) => h[0] === id)![3][0] / 2 ** 32);
    const maxSeqNo = (shard: number) => Math.max(...hits.filter((h) => Math.floor(h[3][0] / 2 ** 32) === shard).map((h) => h[4]));
    // idOf(9): created, overwritten before and after the first snapshot -> version 3 live
    const live9 = hits.find((h) => h[0] === idOf(9))!;
    expect(live9[5]).toBe(3);
    const a = await raw(t, 'PUT', `/books/_doc/${encodeURIComponent(idOf(9))}?refresh=true`, { n: 1 });
    if (a.status !== 200) console.log(JSON.stringify(a.json));
    expect(a.status).toBe(200);
    expect([a.json.result, a.json._version]).toEqual(['updated', 4]);
    expect(a.json._seq_no).toBeGreaterThan(maxSeqNo(shardOf(idOf(9))));
    // idOf(19): created (v1), deleted in the tail (v2): re-creating it continues from the tombstone
    expect(hits.some((h) => h[0] === idOf(19))).toBe(false);
    const b = await raw(t, 'PUT', `/books/_doc/${encodeURIComponent(idOf(19))}?refresh=true`, { n: 2 });
    expect([b.json.result, b.json._version]).toEqual(['created', 3]);
  });

  it('keeps a PIT opened before the restart returning exactly what it returned, from the snapshot', async () => {
    const pit = await t.es.openPointInTime({ index: 'books', keep_alive: '10m' });
    const page = async () => {
      const res = await t.es.search({ pit: { id: pit.id, keep_alive: '10m' }, sort: ['_shard_doc'], size: 1000, query: { match: { title: 'alpha 🦊' } } });
      return res.hits.hits.map((h) => [h._id, h._score, h._source, h.sort]);
    };
    const before = await page();
    // overwrite, delete and add after the PIT: none of it may show through the pinned searchers
    await bulk(t, 'books', [{ op: 'index', i: 9, src: { n: -1, title: 'alpha alpha' } }, { op: 'delete', i: 3 }, { op: 'index', i: 7000, src: { title: 'alpha' } }]);
    await t.restart(); // shutdown snapshot covers the writes; the PIT is revived on its pinned {maxDoc, seqNo}
    expect(started(t).snapshotSeq).toBeGreaterThan(s1.seq);
    expect(await page()).toEqual(before);
    await t.es.closePointInTime({ id: pit.id });
  });
});

describe('snapshot.purge_log', () => {
  let t: TestNode;
  let live: Awaited<ReturnType<typeof stateOf>>;
  let s1: SnapshotResult;
  const INDICES = ['books', 'late'];
  const firstSeq = async () => {
    const nc = await t.nats.connect();
    try {
      return (await (await jetstreamManager(nc)).streams.info('ES_DATA')).state.first_seq;
    } finally {
      await nc.close();
    }
  };

  beforeAll(async () => {
    t = await startTestNode({ settings: { 'snapshot.interval_ms': 0, 'snapshot.purge_log': true } });
    await writeHead(t);
    s1 = await takeSnapshot(t);
    await writeTail(t);
    live = await stateOf(t, INDICES);
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
  });

  it('purges the metadata facts behind the snapshot once it is durable (shard messages are trimmed behind commits)', async () => {
    expect(s1.purgedBelow).toBe(s1.seq);
    expect(await firstSeq()).toBeGreaterThan(1);
  });

  it('restarts correctly on the purged log, from the snapshot and the tail', async () => {
    await t.restart(); // shutdown snapshot S2; metadata facts are purged only below the older kept one (S1)
    expect(await stateOf(t, INDICES)).toEqual(live);
    const [, newest] = await snapshotFiles(t);
    await rm(join(snapshotsDir(t), newest));
    await t.restart();
    expect(started(t).snapshotSeq).toBe(s1.seq);
    expect(await stateOf(t, INDICES)).toEqual(live);
  });

  it('refuses to start when the log is purged beyond every usable snapshot', async () => {
    await t.restart(); // flush the shutdown snapshot the tail replay above calls for
    const aside = `${snapshotsDir(t)}.aside`;
    await cp(snapshotsDir(t), aside, { recursive: true });
    for (const f of await snapshotFiles(t)) await writeFile(join(snapshotsDir(t), f), 'garbage');
    await expect(t.restart()).rejects.toThrow(/ES_DATA starts at sequence \d+ but no usable snapshot was found.*purged/);
    await rm(snapshotsDir(t), { recursive: true });
    await rename(aside, snapshotsDir(t));
    // the harness's node is stopped; boot one by hand on the same log and data dir
    t.sys = await startSystem({
      host: '127.0.0.1', port: 0, natsUrl: t.nats.url, dataDir: t.dataDir, configDir: t.configDir,
      settings: new Settings({ 'xpack.security.enabled': false, 'snapshot.interval_ms': 0, 'snapshot.purge_log': true, ...t.nats.settings }),
      log: pino({ level: 'silent' }),
    });
    t.url = t.sys.url;
    expect(started(t).snapshotSeq).toBeGreaterThanOrEqual(s1.seq);
    const books = (await raw(t, 'GET', '/books/_count')).json;
    expect(books.count).toBe((live.books as { count: number }).count);
  });
});
