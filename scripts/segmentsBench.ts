/**
 * Segments on disk (issue 19): writer, reader, cache, merges, heap per doc, disk per source byte,
 * the engine's hot paths over a disk segment against the in-memory buffer, and `_source` reads
 * through our format against LMDB (the `lmdb` package), all in one run.
 *
 *   npx tsx scripts/segmentsBench.ts [N=1000000] [--segments 10] [--quick] [--no-lmdb] [--keep]
 *
 * Documents are the bench corpus (scripts/bench/loader.mjs: id, n, ts, tag of 100, title of 2-5 of
 * 28 words). "Cold" reads start from an empty SegmentCache; the OS page cache is warm (dropping it
 * needs root and would measure the disk, not the format). Prints rows; figures vary ±20 % on a
 * shared machine: compare ratios of the same run.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { IndexMapping, ShardStore, type ShardQueryRequest } from '../actors/shard/engine';
import { executeQuery } from '../actors/shard/engine/query/search';
import { SearchCaches } from '../actors/shard/engine/index/caches';
import type { StoreView } from '../actors/shard/engine/index/storeView';
import type { IndexBuffer } from '../actors/shard/engine/index/indexBuffer';
import { MergeScheduler, openSegment, runSteps, SegmentCache, writeSegmentSteps, writeSegment, type DiskSegment, type LeafData } from '../actors/shard/engine/segments';
import { num, parseOrExit } from './cli/args';
import { rng } from '../test/support/rng';

const USAGE = 'usage: npx tsx scripts/segmentsBench.ts [N=1000000] [--segments 10] [--quick] [--no-lmdb] [--keep]';
const args = parseOrExit('segmentsBench', USAGE, process.argv.slice(2), {
  options: { segments: { type: 'string' }, quick: { type: 'boolean' }, 'no-lmdb': { type: 'boolean' }, keep: { type: 'boolean' } },
  maxPositionals: 1,
}, (p) => ({ ...p, n: num(p.positionals[0], 'N', p.values.quick ? 100_000 : 1_000_000), segs: num(p.values.segments as string | undefined, '--segments', 10) }));

const MAPPINGS = { properties: { id: { type: 'long' }, n: { type: 'long' }, ts: { type: 'date' }, tag: { type: 'keyword' }, title: { type: 'text' } } };
const WORDS = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu amber cobalt'.split(' ');
const TS0 = Date.parse('2020-01-01T00:00:00Z');
const MB = 1024 * 1024;
const gc = () => (globalThis as { gc?: () => void }).gc!();

/** Source of corpus doc i (the loader's shape). */
function corpusDoc(i: number, r: () => number): string {
  const long = Math.floor((r() * 2 - 1) * Number.MAX_SAFE_INTEGER);
  const ts = new Date(TS0 + Math.floor(r() * 4 * 365 * 86_400_000)).toISOString();
  const words = 2 + Math.floor(r() * 4);
  let title = WORDS[Math.floor(r() * WORDS.length)];
  for (let w = 1; w < words; w++) title += ' ' + WORDS[Math.floor(r() * WORDS.length)];
  return `{"id":${i},"n":${long},"ts":"${ts}","tag":"tag-${Math.floor(r() * 100)}","title":"${title}"}`;
}

function buffer(from: number, n: number, r: () => number): ShardStore {
  const s = new ShardStore({ index: 'bench', shardId: 0, mapping: new IndexMapping(MAPPINGS), settings: () => ({ maxResultWindow: 10000, maxSlicesPerScroll: 1024 }) });
  for (let i = from; i < from + n; i++) {
    const o = s.write({ op: 'index', id: String(i), source: corpusDoc(i, r) });
    if (!o.ok) throw new Error(o.error.reason);
  }
  s.refresh();
  return s;
}

/** A StoreView over one disk segment without deletions (the shard engine adds its own). */
function segmentView(seg: DiskSegment, mapping: IndexMapping): StoreView {
  return {
    index: 'bench', shardId: 0, mapping, settings: () => ({ maxResultWindow: 10000, maxSlicesPerScroll: 1024 }), caches: new SearchCaches(),
    idOf: (d) => seg.idOf(d), docId: (d) => seg.seqNoOf(d), column: (p) => seg.column(p), source: (d) => seg.source(d),
    deletedCount: () => 0, visible: () => true, lookup: (_s, id) => seg.docsOfId(id).at(-1),
    fieldType: (f) => mapping.fieldType(f),
    values: (f, d) => {
      const c = seg.column(f);
      return c?.kind === 'numeric' ? c.natural(d) : c?.kind === 'keyword' ? c.values(d) : [];
    },
  };
}

const rows: Array<[string, number, string]> = [];
function row(metric: string, value: number, unit: string): void {
  rows.push([metric, value, unit]);
  const v = Math.abs(value) >= 100 ? value.toFixed(0) : Math.abs(value) >= 1 ? value.toFixed(2) : value.toPrecision(3);
  console.log(`  ${metric.padEnd(70)} ${v.padStart(12)} ${unit}`);
}

/** Median of `reps` timings (ms) of fn, after a warm-up call. */
function median(reps: number, fn: () => unknown): number {
  fn();
  const t: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    fn();
    t.push(performance.now() - t0);
  }
  return t.sort((a, b) => a - b)[reps >> 1];
}

/**
 * Medians of a and b timed in alternating rounds (no order or JIT bias between the two): `reps`
 * rounds, or as many as fit in about a second (at least 21) when reps is 0.
 */
function medians(reps: number, a: () => unknown, b: () => unknown): [number, number] {
  const t0 = performance.now();
  a();
  b();
  if (reps === 0) reps = Math.max(21, Math.min(2001, Math.floor(1000 / Math.max(0.001, performance.now() - t0))) | 1);
  const ta: number[] = [], tb: number[] = [];
  for (let i = 0; i < reps; i++) {
    for (const [f, t] of [[a, ta], [b, tb]] as const) {
      const t0 = performance.now();
      f();
      t.push(performance.now() - t0);
    }
  }
  const mid = (t: number[]) => t.sort((x, y) => x - y)[reps >> 1];
  return [mid(ta), mid(tb)];
}

/** Runs `query` in a loop (a turn of the event loop between runs) until `until` settles: p50 of its times. */
async function searchWhile(until: Promise<unknown>, query: () => unknown): Promise<{ p50: number; n: number }> {
  let done = false;
  void until.then(() => (done = true), () => (done = true));
  const t: number[] = [];
  while (!done) {
    const t0 = performance.now();
    query();
    t.push(performance.now() - t0);
    await new Promise<void>((r) => setImmediate(r));
  }
  t.sort((a, b) => a - b);
  return { p50: t[t.length >> 1] ?? NaN, n: t.length };
}

/** Runs fn while sampling event-loop gaps every 2 ms; returns fn's result and the longest gap. */
async function withLag<T>(fn: () => Promise<T>): Promise<[T, number]> {
  let max = 0, last = performance.now();
  const t = setInterval(() => {
    const now = performance.now();
    max = Math.max(max, now - last);
    last = now;
  }, 2);
  try {
    return [await fn(), max];
  } finally {
    clearInterval(t);
  }
}

async function main(): Promise<void> {
  const N = args.n, K = args.segs, per = Math.ceil(N / K);
  const dir = mkdtempSync(join(tmpdir(), 'segbench-'));
  console.log(`segments bench: ${N.toLocaleString('en-US')} docs in ${K} segments, ${dir}; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  try {
    // ---- write ----
    const r = rng(42);
    let writeMs = 0, srcBytes = 0, fileBytes = 0, stepLag = 0, stepMs = 0;
    let first: ShardStore | undefined;
    const paths: string[] = [];
    for (let k = 0; k < K; k++) {
      const store = buffer(k * per, Math.min(per, N - k * per), r);
      const leaf: LeafData = store.activeBuffer();
      if (k === 0) {
        // once in steps on the main thread, as a flush runs: the longest event-loop gap
        const t0 = performance.now();
        [, stepLag] = await withLag(() => runSteps(writeSegmentSteps(dir, 'stepped', { leaves: [{ leaf }] })));
        stepMs = performance.now() - t0;
        first = store;
      }
      const t0 = performance.now();
      const meta = writeSegment(dir, `s${k}`, { leaves: [{ leaf }] });
      writeMs += performance.now() - t0;
      srcBytes += meta.sourceBytes;
      fileBytes += meta.sizeBytes;
      paths.push(join(dir, `s${k}.seg`));
    }
    row('writer: docs/s (sync, worker-style)', N / (writeMs / 1000), 'docs/s');
    row('writer: source MB/s', srcBytes / MB / (writeMs / 1000), 'MB/s');
    row('writer: file MB/s', fileBytes / MB / (writeMs / 1000), 'MB/s');
    row(`writer in steps (main thread): ${per} docs`, stepMs, 'ms');
    row('writer in steps: longest event-loop gap', stepLag, 'ms');
    row('disk per source byte (segment files / _source bytes)', fileBytes / srcBytes, 'x');
    row('  of which the _source section and its offsets', (srcBytes + 4 * N) / srcBytes, 'x');
    row('segment bytes per doc', fileBytes / N, 'B');

    // ---- heap per doc: open every segment, run queries on each ----
    const buf0 = first!.activeBuffer();
    const mapping = new IndexMapping(MAPPINGS);
    gc();
    const h0 = process.memoryUsage();
    const cache = new SegmentCache({ maxBytes: 512 * MB });
    const segs = paths.map((p) => openSegment(p, cache));
    const views = segs.map((s) => segmentView(s, mapping));
    const q = (r: Partial<ShardQueryRequest>): ShardQueryRequest => ({ from: 0, size: 10, trackTotalHits: false, shardIndex: 0, ...r });
    const MATCH = q({ query: { match: { title: 'alpha bravo' } } });
    const SORT = q({ sort: [{ field: 'n', order: 'asc' }] });
    const TERMS = q({ size: 0, aggs: { tags: { terms: { field: 'tag', size: 10 } } } });
    const searcher = (s: DiskSegment) => ({ maxDoc: s.maxDoc, seqNo: s.meta.maxSeqNo });
    for (let i = 0; i < segs.length; i++) {
      for (const rq of [MATCH, SORT, TERMS]) executeQuery(views[i], searcher(segs[i]), rq);
      segs[i].sourcesOf(Array.from({ length: 1000 }, (_, d) => d));
      segs[i].docsOfId(String(i * per + 7));
    }
    gc();
    const h1 = process.memoryUsage();
    row('heap per doc after opening all segments and querying each (V8 heap)', (h1.heapUsed - h0.heapUsed) / N, 'B/doc');
    row('  off-heap (ArrayBuffers) per doc, in the cache', (h1.arrayBuffers - h0.arrayBuffers) / N, 'B/doc');
    row('  cache bytes after the queries', cache.stats().bytes / MB, 'MB');
    row('  per-segment resident bytes (bloom filter + footer)', segs[0].residentBytes, 'B');

    // ---- hot paths: disk segment 0 vs the buffer it was written from ----
    const seg0 = segs[0], view0 = views[0];
    const sBuf = { maxDoc: buf0.maxDoc, seqNo: buf0.maxSeqNo };
    const pairs: Array<[string, ShardQueryRequest]> = [['match top-10 (block-max impacts)', MATCH], ['sort on a long, top-10', SORT], ['terms agg on a keyword (100 terms)', TERMS]];
    for (const [name, rq] of pairs) {
      const [heap, disk] = medians(0, () => executeQuery(buf0, sBuf, rq), () => executeQuery(view0, searcher(seg0), rq));
      row(`${name}: buffer`, heap, 'ms');
      row(`${name}: disk segment (cached)`, disk, 'ms');
      row(`${name}: disk / buffer`, disk / heap, 'x');
    }
    const page = Array.from({ length: 1000 }, (_, d) => d + 5000);
    const [heapPage, diskPage] = medians(0, () => page.map((d) => Buffer.from(buf0.source(d))), () => seg0.sourcesOf(page));
    row('scroll page, 1,000 consecutive sources as bytes: buffer (UTF-8 encode)', heapPage, 'ms');
    row('scroll page, 1,000 consecutive sources as bytes: disk (one pread)', diskPage, 'ms');
    row('scroll page: disk / buffer', diskPage / heapPage, 'x');

    // ---- reader costs, cold (empty SegmentCache, warm page cache) and warm ----
    const t0 = performance.now();
    const fresh = openSegment(paths[1], new SegmentCache({ maxBytes: 256 * MB }));
    row('open a segment (footer + bloom filter)', performance.now() - t0, 'ms');
    const title = () => fresh.column('title') as import('../actors/shard/engine/index/columnViews').TextView;
    let t = performance.now();
    title().postings('alpha');
    row('postings of a term, cold (dictionary + directory + pread)', performance.now() - t, 'ms');
    row('postings of a term, warm', median(1001, () => title().postings('alpha')) * 1000, 'µs');
    row('dictionary lookup (ordOf), warm', median(1001, () => (fresh.column('tag') as import('../actors/shard/engine/index/columnViews').KeywordView).ordOf('tag-57')) * 1000, 'µs');
    t = performance.now();
    fresh.docsOfId(String(per + 123));
    row('docsOfId, cold (loads ids + hash sections)', performance.now() - t, 'ms');
    row('docsOfId, warm', median(1001, () => fresh.docsOfId(String(per + 4567))) * 1000, 'µs');
    row('mayContainId (bloom), absent id', median(1001, () => fresh.mayContainId('absent-id')) * 1000, 'µs');
    t = performance.now();
    fresh.sourcesOf(page);
    row('1,000 consecutive sources, first read (offsets section cold)', performance.now() - t, 'ms');
    row('1 source (random doc), warm', median(1001, () => fresh.sourceBytes(Math.floor(Math.random() * fresh.maxDoc))) * 1000, 'µs');
    fresh.close();

    // ---- merges in a worker, and a search loop on the main thread meanwhile ----
    const matchOnce = () => executeQuery(view0, searcher(seg0), MATCH);
    const idle = await searchWhile(new Promise((r) => setTimeout(r, 1500)), matchOnce);
    const merges = new MergeScheduler();
    const all = merges.merge({ dir, name: 'merged', inputs: paths.map((path) => ({ path })), forced: true });
    const [during, lag] = await withLag(() => searchWhile(all, matchOnce));
    const res = await all;
    row(`merge of ${K} segments (worker, unthrottled): time`, res.ms, 'ms');
    row('merge: output MB/s', res.meta.sizeBytes / MB / (res.ms / 1000), 'MB/s');
    row('merge: docs/s', res.meta.maxDoc / (res.ms / 1000), 'docs/s');
    row('merge: longest event-loop gap on the main thread', lag, 'ms');
    row('match top-10 p50 on the main thread, no merge running', idle.p50, 'ms');
    row('match top-10 p50 during the unthrottled merge', during.p50, 'ms');
    await merges.close();
    // the auto-throttle's start rate (20 MB/s) on a merge of three segments
    const slow = new MergeScheduler({ minBigMergeBytes: 0 });
    const three = slow.merge({ dir, name: 'merged3', inputs: paths.slice(0, 3).map((path) => ({ path })) });
    const throttled = await searchWhile(three, matchOnce);
    const r3 = await three;
    await slow.close();
    row('throttled merge of 3 segments (20 MB/s): output MB/s', r3.meta.sizeBytes / MB / (r3.ms / 1000), 'MB/s');
    row('  time throttled', r3.throttledMs, 'ms');
    row('match top-10 p50 during the throttled merge', throttled.p50, 'ms');

    if (!args.values['no-lmdb']) await lmdbCompare(dir, segs, srcBytes, page);
    segs.forEach((s) => s.close());
  } finally {
    if (!args.values.keep) rmSync(dir, { recursive: true, force: true });
  }
  console.log(`load at the end ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
}

/** The same sources in LMDB: write rate, size, 1,000 consecutive and random single reads. */
async function lmdbCompare(dir: string, segs: DiskSegment[], srcBytes: number, page: number[]): Promise<void> {
  const { open } = await import('lmdb');
  const path = join(dir, 'lmdb');
  const db = open<Buffer, number>({ path, encoding: 'binary', keyEncoding: 'uint32', compression: false, noSync: false });
  let k = 0;
  const t0 = performance.now();
  for (const s of segs) {
    for (let from = 0; from < s.maxDoc; from += 10000) {
      const docs = Array.from({ length: Math.min(10000, s.maxDoc - from) }, (_, i) => from + i);
      const srcs = s.sourcesOf(docs);
      db.transactionSync(() => {
        for (const b of srcs) db.putSync(k++, b as Buffer);
      });
    }
  }
  await db.flushed;
  const ms = performance.now() - t0;
  row('lmdb: source MB/s written (10k-doc transactions, synced)', srcBytes / MB / (ms / 1000), 'MB/s');
  const size = statSync(join(path, 'data.mdb')).size;
  row('lmdb: file bytes per source byte (sources only)', size / srcBytes, 'x');
  const seg0 = segs[0];
  const first = page[0];
  const [lm, ours] = medians(0, () => {
    const out: Buffer[] = [];
    for (const { value } of db.getRange({ start: first, end: first + 1000 })) out.push(value);
    return out;
  }, () => seg0.sourcesOf(page));
  row('1,000 consecutive sources: lmdb getRange', lm, 'ms');
  const [lmGets] = medians(25, () => Array.from({ length: 1000 }, (_, i) => db.getBinary(first + i)), () => undefined);
  row('1,000 consecutive sources: lmdb getBinary x 1,000', lmGets, 'ms');
  row('1,000 consecutive sources: segment sourcesOf (pread)', ours, 'ms');
  const [lmOne, oursOne] = medians(2001, () => db.getBinaryFast(Math.floor(Math.random() * k)), () => seg0.sourceBytes(Math.floor(Math.random() * seg0.maxDoc)));
  row('1 random source: lmdb getBinaryFast', lmOne * 1000, 'µs');
  row('1 random source: segment sourceBytes (pread)', oursOne * 1000, 'µs');
  await db.close();
}

/** Heap figures need `global.gc`: run again under `node --expose-gc --import tsx` when missing. */
if (typeof (globalThis as { gc?: unknown }).gc !== 'function') {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  child.on('exit', (code) => process.exit(code ?? 1));
} else {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
