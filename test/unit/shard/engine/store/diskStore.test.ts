/**
 * A shard store in a directory: buffers flushed to segment files, deletions and commit points,
 * reopened after a stop (or a crash: what the commit holds plus the log tail replayed), pinned
 * searchers that keep their segments.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IndexMapping, ShardStore } from '../../../../../actors/shard/engine';
import type { DocWrite, LoggedOp, SearcherRef, ShardQueryRequest } from '../../../../../actors/shard/engine';
import { SegmentCache } from '../../../../../actors/shard/engine/segments';
import { rng } from '../../../../support/rng';

const MAPPINGS = { properties: { title: { type: 'text' }, tags: { type: 'keyword' }, n: { type: 'long' } } };
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'fox'];
const settings = () => ({ maxResultWindow: 10000, maxSlicesPerScroll: 1024 });
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'shard-'));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const cache = new SegmentCache({ maxBytes: 8 << 20 });
const storeIn = (dir?: string) => new ShardStore({ index: 'idx', shardId: 0, mapping: new IndexMapping(MAPPINGS), settings, ...(dir ? { dir, cache, retentionMs: 0 } : {}) });

function history(seed: number, n: number): DocWrite[] {
  const r = rng(seed);
  const ids: string[] = [];
  const out: DocWrite[] = [];
  for (let i = 0; i < n; i++) {
    const x = r();
    if (x < 0.15 && ids.length) {
      out.push({ op: 'delete', id: ids[Math.floor(r() * ids.length)] });
      continue;
    }
    const id = x < 0.45 && ids.length ? ids[Math.floor(r() * ids.length)] : `d${i}`;
    if (!ids.includes(id)) ids.push(id);
    const title = Array.from({ length: 1 + Math.floor(r() * 5) }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' ');
    out.push({ op: 'index', id, source: JSON.stringify({ title, tags: WORDS[Math.floor(r() * WORDS.length)], n: Math.floor(r() * 100) }) });
  }
  return out;
}

/** Writes through `store`, returning what the log would hold. */
function apply(store: ShardStore, writes: DocWrite[]): LoggedOp[] {
  const logged: LoggedOp[] = [];
  for (const w of writes) {
    const p = store.prepare([w]);
    store.commit(p);
    logged.push(...p.ops);
  }
  return logged;
}

const REQS: ShardQueryRequest[] = [
  { from: 0, size: 1000, trackTotalHits: true, shardIndex: 0, sort: [{ field: '_doc', order: 'asc' }] },
  { query: { match: { title: 'alpha bravo' } }, from: 0, size: 20, trackTotalHits: true, shardIndex: 0 },
  { query: { term: { tags: 'fox' } }, from: 0, size: 20, trackTotalHits: true, shardIndex: 0, sort: [{ field: 'n', order: 'desc' }, { field: '_shard_doc', order: 'asc' }] },
  { query: { range: { n: { gte: 10, lt: 60 } } }, from: 0, size: 0, trackTotalHits: true, shardIndex: 0, aggs: { t: { terms: { field: 'tags' } } } },
];
const answers = (s: ShardStore, at: SearcherRef = s.acquireSearcher()) => REQS.map((q) => s.query(at, q));

describe('a shard store in a directory', () => {
  it('sets aside (never deletes) a directory committed while following another document log', async () => {
    const dir = tmp();
    const withLog = (logId: string) => new ShardStore({ index: 'idx', shardId: 0, mapping: new IndexMapping(MAPPINGS), settings, dir, cache, retentionMs: 0, logId });
    const first = withLog('log-a');
    apply(first, history(7, 50));
    await first.flushAsync();
    first.refresh();
    const docs = first.stats().docs;
    first.close();
    const other = withLog('log-b');
    expect(other.stats().docs).toBe(0);
    expect(other.setAside).toMatch(/\.stale-\d+$/);
    other.close();
    // the files are where it says, whole: a store following the first log opens them again
    const back = new ShardStore({ index: 'idx', shardId: 0, mapping: new IndexMapping(MAPPINGS), settings, dir: other.setAside!, cache, retentionMs: 0, logId: 'log-a' });
    expect(back.stats().docs).toBe(docs);
    expect(docs).toBeGreaterThan(0);
    back.close();
    dirs.push(other.setAside!);
  });

  it('answers from segment files as from memory, and again after reopening', async () => {
    const dir = tmp();
    const disk = storeIn(dir);
    const mem = storeIn();
    const writes = history(1, 1200);
    for (let i = 0; i < writes.length; i += 150) {
      apply(disk, writes.slice(i, i + 150));
      apply(mem, writes.slice(i, i + 150));
      disk.markApplied(i / 150 + 1);
      await disk.flushAsync();
    }
    disk.refresh();
    mem.refresh();
    expect(disk.segmentNames().length).toBeGreaterThan(3);
    expect(readdirSync(dir).filter((f) => f.endsWith('.seg')).length).toBe(disk.segmentNames().length);
    expect(answers(disk)).toEqual(answers(mem));
    disk.close();
    const again = storeIn(dir);
    expect(again.maxSeqNo()).toBe(mem.maxSeqNo());
    expect(again.committedPoint().applied).toBe(8);
    expect(answers(again)).toEqual(answers(mem));
    for (const id of ['d0', 'd5', 'd77', 'd500', 'd1199']) expect(again.get(id)).toEqual(mem.get(id));
    again.close();
  });

  it('after a crash, the commit plus the log after it rebuild the shard exactly', async () => {
    const dir = tmp();
    const disk = storeIn(dir);
    const mem = storeIn();
    const writes = history(2, 900);
    const logged = apply(disk, writes.slice(0, 400));
    apply(mem, writes);
    disk.markApplied(1);
    await disk.flushAsync();
    // more writes that no flush reaches, including deletes of flushed docs (deletions are committed by the next commit only)
    logged.push(...apply(disk, writes.slice(400, 900)));
    disk.markApplied(2);
    await disk.commitAsync();
    // crash: no close, no flush
    const again = storeIn(dir);
    const from = again.committedPoint().seqNo;
    for (const op of logged) if (op.seqNo > from) again.applyLogged(op);
    again.refresh();
    mem.refresh();
    expect(answers(again)).toEqual(answers(mem));
    again.close();
    disk.close();
  });

  it('merges segments into one that answers the same, dropping deleted docs, and reopens', async () => {
    const dir = tmp();
    const disk = storeIn(dir);
    const mem = storeIn();
    const writes = history(4, 1600);
    for (let i = 0; i < writes.length; i += 200) {
      apply(disk, writes.slice(i, i + 200));
      apply(mem, writes.slice(i, i + 200));
      await disk.flushAsync();
    }
    disk.refresh();
    mem.refresh();
    const before = disk.stats();
    expect(before.deleted).toBeGreaterThan(100);
    expect(await disk.merge(disk.segmentNames())).toBe(true);
    expect(disk.segmentNames().length).toBe(1);
    disk.refresh();
    expect(disk.stats()).toEqual({ docs: before.docs, deleted: 0, maxDoc: before.docs });
    expect(answers(disk)).toEqual(answers(mem));
    expect(readdirSync(dir).filter((f) => f.endsWith('.seg'))).toEqual([`${disk.segmentNames()[0]}.seg`]);
    // deletes after the merge, then a restart
    const more = apply(disk, writes.slice(0, 100).filter((w) => w.op === 'delete'));
    apply(mem, writes.slice(0, 100).filter((w) => w.op === 'delete'));
    await disk.commitAsync();
    disk.close();
    const again = storeIn(dir);
    for (const op of more) if (op.seqNo > again.maxSeqNo()) again.applyLogged(op);
    again.refresh();
    mem.refresh();
    expect(answers(again)).toEqual(answers(mem));
    again.close();
  });

  it('a pinned searcher reads the old versions after every doc was updated and merged; unpinned, the next merge reclaims them', async () => {
    const dir = tmp();
    const disk = storeIn(dir);
    apply(disk, Array.from({ length: 200 }, (_, i) => ({ op: 'index' as const, id: `d${i}`, source: `{"title":"old","n":${i}}` })));
    await disk.flushAsync();
    disk.refresh();
    const old = disk.acquireSearcher();
    disk.pin('scroll-1', old.seqNo);
    const req: ShardQueryRequest = { query: { match: { title: 'old' } }, from: 0, size: 1000, trackTotalHits: true, shardIndex: 0, sort: [{ field: '_doc', order: 'asc' }] };
    const before = disk.query(old, req);
    apply(disk, Array.from({ length: 200 }, (_, i) => ({ op: 'index' as const, id: `d${i}`, source: `{"title":"new","n":${i}}` })));
    await disk.flushAsync();
    disk.refresh();
    await disk.merge(disk.segmentNames());
    disk.refresh();
    expect(disk.stats()).toEqual({ docs: 200, deleted: 0, maxDoc: 200 });
    expect(disk.query(old, req)).toEqual(before);
    const pinned = disk.pinned()[0].segments;
    expect(pinned.length).toBeGreaterThan(0);
    expect(pinned.every((s) => !s.live)).toBe(true);
    const files = () => readdirSync(dir).filter((f) => f.endsWith('.seg')).length;
    expect(files()).toBe(1 + pinned.length);
    disk.unpin('scroll-1');
    await disk.commitAsync();
    expect(files()).toBe(1);
    expect(() => disk.query(old, req)).toThrow(/No search context found/);
    disk.close();
  });

  it('keeps the segments a pinned searcher reads, and frees them once it is unpinned', async () => {
    const dir = tmp();
    const disk = storeIn(dir);
    apply(disk, history(3, 300));
    await disk.flushAsync();
    disk.refresh();
    const old = disk.acquireSearcher();
    const before = answers(disk, old);
    expect(disk.pin('ctx-1', old.seqNo)).toBe(true);
    // every doc updated after the pin, flushed again
    apply(disk, Array.from({ length: 300 }, (_, i) => ({ op: 'index' as const, id: `d${i}`, source: '{"title":"zulu","n":1}' })));
    await disk.flushAsync();
    disk.refresh();
    expect(answers(disk, old)).toEqual(before);
    expect(disk.pinned()).toEqual([expect.objectContaining({ seqNo: old.seqNo, contexts: ['ctx-1'] })]);
    disk.unpin('ctx-1');
    expect(disk.pinned()).toEqual([]);
    disk.close();
  });
});
