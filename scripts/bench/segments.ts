/**
 * Issue 19, segments on disk: the figures of a node whose index is larger than its heap, and
 * whether speed holds against documents kept in memory (segmentsHolds.ts). A node in a child
 * process under `NODE_OPTIONS=--max-old-space-size=<H>` (H = 512 MB, 128 MB with `--quick`; its own
 * nats-server and temp DATA_DIR, served by scripts/segmentsScale.ts) loads 3× H of seeded ~1 KB
 * documents (scripts/cli/scaleDocs.ts) through `_bulk` into one shard, then:
 *
 * - heap per document: the idle heap (`_nodes/stats/jvm`, smallest sample) after the load minus
 *   before it, per document (target ≤ 40 B per 1 KB document), and the idle heap / the limit; the
 *   baseline follows a first 5 % of the load and both follow a `_flush` (see `larger`);
 * - disk per source byte: after `_flush` (the log trimmed behind the commit), the copy's directory
 *   plus the node's JetStream store over the source bytes acknowledged (target ≤ 2.5);
 * - a scroll over the whole index (3× the heap limit), size 1,000: docs/s and MB/s of source, every
 *   document once and byte-identical (else the section fails), the heap's highest sample meanwhile;
 * - merge MB/s: `_forcemerge?max_num_segments=1` of what the load left, store bytes before / time;
 *   disk per source byte again after it;
 * - start-up: SIGTERM, start again on the same DATA_DIR, until `_count` answers every document;
 *   next to the same node's first start on an empty DATA_DIR (target ≤ 2×: start-up does not read
 *   the documents, only segment metadata and the log's tail).
 *
 * The issue asks for start-up with 10M documents; on this machine the index is 3× the heap
 * (1.3M documents, 1.5 GB of source in a full run).
 */
import { join } from 'node:path';
import { stopChildNode } from '../cli/childNode';
import { bulkLoad, call, firstWrites, idleHeap, json, MB, nodeHeap, scrollCheck } from '../cli/scaleClient';
import { scaleDocs } from '../cli/scaleDocs';
import { du } from '../segmentsScaleRun';
import { onAbort } from './cleanup';
import { row } from './stats';
import { holds } from './segmentsHolds';
import { dropNode, heapNode, MAPPINGS } from './heapNode';
import type { BenchOptions, Row } from './types';

const S = 'segments';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function run(o: BenchOptions): Promise<Row[]> {
  const rows = await larger(o);
  rows.push(...(await holds(o)));
  return rows;
}

/** The node with a heap of `heapMb` and `times` its heap of source (the smoke test of the section passes less). */
export async function larger(o: BenchOptions, heapMb = o.quick ? 128 : 512, times = 3): Promise<Row[]> {
  const docs = scaleDocs(19, 1024);
  const n = Math.ceil((times * heapMb * MB) / docs.docBytes);
  const rows: Row[] = [];
  let c = await heapNode(heapMb, {});
  const off = onAbort(() => dropNode(c));
  try {
    const emptyStart = c.startMs;
    await json(c.url, 'PUT', '/big', { settings: { number_of_shards: 1, number_of_replicas: 0 }, mappings: MAPPINGS });
    const settle = o.quick ? 5_000 : 15_000;
    // The heap per document is the marginal one: a first 5 % of the documents warms the write path
    // (compiled code, pools) before the baseline, and both samples follow a `_flush`, so the index
    // buffer (bounded by indices.memory.index_buffer_size, 10 % of the heap) is empty in both.
    const warm = Math.ceil(n / 20);
    const loadRange = async (from: number, to: number) => {
      let next = from;
      const r = await bulkLoad({
        url: c.url, index: 'big', docs, writes: firstWrites(from, to), batch: 2000, conc: 2,
        tick: (x) => from + x.acked >= next && (next += Math.ceil(n / 5)) && o.note(`segments: ${(from + x.acked).toLocaleString('en-US')} acknowledged`),
      });
      if (r.failures.length || r.acked !== to - from) throw new Error(`load: ${r.acked} of ${to - from} acknowledged; ${r.failures.slice(0, 3).join('; ')}`);
      await json(c.url, 'POST', '/big/_refresh');
      await json(c.url, 'POST', '/big/_flush');
      return r;
    };
    o.note(`segments: loading ${n.toLocaleString('en-US')} docs of ~1 KB (${times}× a ${heapMb} MB heap), the first ${warm.toLocaleString('en-US')} before the baseline ...`);
    // a full collection first (SIGUSR2 to the bench's child, cli/childNode.ts), then the smallest sample
    const collected = async () => {
      for (let i = 0; i < 2; i++) {
        c.proc.kill('SIGUSR2');
        await sleep(500);
      }
      return idleHeap(c.url, settle);
    };
    const first = await loadRange(0, warm);
    const h0 = await collected();
    const rest = await loadRange(warm, n);
    const load = { acked: first.acked + rest.acked, ms: first.ms + rest.ms, bytes: first.bytes + rest.bytes };
    const h1 = await collected();
    rows.push(
      row(S, `bulk ingest of ~1 KB docs into a ${heapMb} MB heap (${(load.bytes / MB).toFixed(0)} MB of source)`, (load.acked / load.ms) * 1000, 'docs/s'),
      row(S, 'bulk ingest MB/s of source', load.bytes / MB / (load.ms / 1000), 'MB/s'),
      row(S, `heap per ~1 KB document (idle heap after − before ${(n - warm).toLocaleString('en-US')} docs, both after _flush and a full GC)`, (h1.used - h0.used) / (n - warm), 'B/doc', { max: 40 }),
      row(S, `idle heap after the load / heap limit (source ${(load.bytes / h1.max).toFixed(1)}× the limit)`, h1.used / h1.max, 'ratio', { max: 0.5 }),
    );

    await json(c.url, 'POST', '/big/_flush');
    await sleep(2_000); // the primary trims the log behind the commit
    const uuid = Object.values(await json<Record<string, { settings: { index: { uuid: string } } }>>(c.url, 'GET', '/big/_settings'))[0].settings.index.uuid;
    const [copy, store] = [du(join(c.dataDir, 'indices', uuid)), du(join(c.dataDir, 'nats'))];
    rows.push(row(S, `disk per source byte after _flush (segments ${(copy / MB).toFixed(0)} MB + JetStream store ${(store / MB).toFixed(0)} MB)`, (copy + store) / load.bytes, 'ratio', { max: 2.5 }));

    o.note(`segments: scrolling the ${(load.bytes / MB).toFixed(0)} MB index ...`);
    let peak = 0;
    let sampling = true;
    const sampler = (async () => {
      for (; sampling; await sleep(500)) peak = Math.max(peak, (await nodeHeap(c.url).catch(() => ({ used: 0 }))).used);
    })();
    const s = await scrollCheck(c.url, 'big', docs, n, (i) => docs.source(i));
    sampling = false;
    await sampler;
    if (s.hits !== n || s.distinct !== n || s.duplicates || s.mismatched.length || s.unknown) {
      throw new Error(`scroll: ${s.hits} hits, ${s.distinct} distinct of ${n}, ${s.duplicates} twice, ${s.mismatched.length} mismatched, ${s.unknown} unknown`);
    }
    rows.push(
      row(S, `scroll, size 1,000, over an index ${(load.bytes / h1.max).toFixed(1)}× the heap limit (every doc once, byte-identical)`, (n / s.ms) * 1000, 'docs/s'),
      row(S, 'that scroll, MB/s of source', load.bytes / MB / (s.ms / 1000), 'MB/s'),
      row(S, 'heap used at most while it ran / heap limit', peak / h1.max, 'ratio', { max: 0.95 }),
    );

    const st = await json(c.url, 'GET', '/big/_stats/store,segments');
    const before = st._all.primaries as { store: { size_in_bytes: number }; segments: { count: number } };
    const tm = Date.now();
    const fm = await call(c.url, 'POST', '/big/_forcemerge?max_num_segments=1');
    if (fm.status !== 200 || (JSON.parse(fm.text) as { _shards: { failed: number } })._shards.failed) throw new Error(`_forcemerge: HTTP ${fm.status} ${fm.text.slice(0, 300)}`);
    const mergeS = (Date.now() - tm) / 1000;
    rows.push(row(S, `_forcemerge to 1 segment of ${before.segments.count} (${(before.store.size_in_bytes / MB).toFixed(0)} MB), store bytes merged per second`, before.store.size_in_bytes / MB / mergeS, 'MB/s'));
    await json(c.url, 'POST', '/big/_flush');
    await sleep(2_000);
    const [copy2, store2] = [du(join(c.dataDir, 'indices', uuid)), du(join(c.dataDir, 'nats'))];
    rows.push(row(S, `disk per source byte after the force merge (segment ${(copy2 / MB).toFixed(0)} MB + JetStream store ${(store2 / MB).toFixed(0)} MB)`, (copy2 + store2) / load.bytes, 'ratio', { max: 2.5 }));

    o.note('segments: restarting the node on its DATA_DIR ...');
    await stopChildNode(c);
    const t = Date.now();
    c = await heapNode(heapMb, {}, c.dataDir);
    for (const deadline = Date.now() + 300_000; ; await sleep(100)) {
      const a = await call(c.url, 'GET', '/big/_count').catch(() => undefined);
      if (a?.status === 200 && (JSON.parse(a.text) as { count: number }).count === n) break;
      if (Date.now() > deadline) throw new Error(`after the restart, [big] did not count ${n} docs within 300 s`);
    }
    const fullStart = Date.now() - t;
    rows.push(
      row(S, 'start-up on an empty DATA_DIR (child process to listening)', emptyStart / 1000, 's'),
      row(S, `start-up with ${n.toLocaleString('en-US')} docs (${(load.bytes / MB).toFixed(0)} MB of source) until _count answers them all`, fullStart / 1000, 's'),
      row(S, 'start-up with that index / on an empty DATA_DIR', fullStart / emptyStart, 'ratio', { max: 2 }),
    );
  } finally {
    off();
    await dropNode(c);
  }
  return rows;
}
