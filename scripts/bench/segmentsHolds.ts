/**
 * Issue 19 item 7, speed holds: the same documents served from memory and from segments on disk,
 * side by side in one node (a child process with a 2 GB heap, its own nats-server). Two indices of
 * 3 shards get the same seeded ~1 KB documents (50,000; 200,000 in a full run):
 *
 * - `mem` is never written to disk: `indices.memory.index_buffer_size` 70% of the heap and
 *   `indices.memory.shard_inactive_time` 1h keep its copies' in-memory buffers (the in-heap baseline,
 *   what every document was before segments); the section fails if a segment file of it appears;
 * - `disk` is flushed and force-merged to one segment per shard (read through the page cache and
 *   the segment cache).
 *
 * Interleaved rounds (medians): a whole scroll (size 1,000, `_doc`, every doc checked once) in
 * docs/s, and `match` top 10 p50 over 200 requests, one in flight. Targets: disk ≥ 1× memory for the
 * scroll, ≤ 1× for the latency (the issue's "at least as good"; ±20% is noise on this machine).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { bulkLoad, call, firstWrites, json, scrollCheck } from '../cli/scaleClient';
import { scaleDocs } from '../cli/scaleDocs';
import { onAbort } from './cleanup';
import { dropNode, heapNode, MAPPINGS } from './heapNode';
import { median, pairedRatio, row } from './stats';
import type { BenchOptions, Row } from './types';

const S = 'segments';

/** `.seg` files under an index's copy directories. */
function segFiles(dir: string): number {
  let k = 0;
  try {
    for (const shard of readdirSync(dir)) k += readdirSync(join(dir, shard)).filter((f) => f.endsWith('.seg')).length;
  } catch {
    /* no directory: none */
  }
  return k;
}

/** p50 of `match` top 10 over `k` requests, one in flight (ms). */
async function matchP50(url: string, index: string, k: number): Promise<number> {
  const words = ['zebra', 'alpha', 'harbor', 'quartz', 'glacier'];
  const ms: number[] = [];
  for (let i = 0; i < k; i++) {
    const t = performance.now();
    const a = await call(url, 'POST', `/${index}/_search`, { query: { match: { body: `${words[i % words.length]} ${words[(i + 2) % words.length]}` } }, size: 10 });
    if (a.status !== 200) throw new Error(`${index} match: HTTP ${a.status} ${a.text.slice(0, 200)}`);
    ms.push(performance.now() - t);
  }
  return median(ms);
}

export async function holds(o: BenchOptions, n = o.quick ? 50_000 : 200_000): Promise<Row[]> {
  const docs = scaleDocs(7, 1024);
  const c = await heapNode(2048, { 'indices.memory.index_buffer_size': '70%', 'indices.memory.shard_inactive_time': '1h' });
  const off = onAbort(() => dropNode(c));
  try {
    const dirs: Record<string, string> = {};
    for (const index of ['mem', 'disk']) {
      await json(c.url, 'PUT', `/${index}`, { settings: { number_of_shards: 3, number_of_replicas: 0 }, mappings: MAPPINGS });
      o.note(`segments: loading ${n.toLocaleString('en-US')} docs into [${index}] ...`);
      const r = await bulkLoad({ url: c.url, index, docs, writes: firstWrites(0, n), batch: 2000, conc: 2 });
      if (r.failures.length || r.acked !== n) throw new Error(`[${index}] load: ${r.acked} of ${n}; ${r.failures.slice(0, 2).join('; ')}`);
      await json(c.url, 'POST', `/${index}/_refresh`);
      const uuid = Object.values(await json<Record<string, { settings: { index: { uuid: string } } }>>(c.url, 'GET', `/${index}/_settings`))[0].settings.index.uuid;
      dirs[index] = join(c.dataDir, 'indices', uuid);
    }
    await json(c.url, 'POST', '/disk/_flush');
    const fm = await call(c.url, 'POST', '/disk/_forcemerge?max_num_segments=1');
    if (fm.status !== 200 || (JSON.parse(fm.text) as { _shards: { failed: number } })._shards.failed) throw new Error(`_forcemerge: HTTP ${fm.status} ${fm.text.slice(0, 300)}`);
    const scroll = async (index: string) => {
      const s = await scrollCheck(c.url, index, docs, n, (i) => docs.source(i));
      if (s.hits !== n || s.distinct !== n || s.mismatched.length) throw new Error(`[${index}] scroll: ${s.hits} hits, ${s.distinct} distinct of ${n}, ${s.mismatched.length} mismatched`);
      return (n / s.ms) * 1000;
    };
    const q = o.quick ? 100 : 200;
    await matchP50(c.url, 'mem', 20); // warm-up
    await matchP50(c.url, 'disk', 20);
    const got = { memScroll: [] as number[], diskScroll: [] as number[], memMatch: [] as number[], diskMatch: [] as number[] };
    for (let r = 0; r < o.rounds; r++) {
      o.note(`segments: memory vs disk, round ${r + 1}/${o.rounds} ...`);
      const order = r % 2 ? ['disk', 'mem'] : ['mem', 'disk'];
      for (const index of order) {
        const k = index as 'mem' | 'disk';
        got[`${k}Scroll`].push(await scroll(index));
        got[`${k}Match`].push(await matchP50(c.url, index, q));
      }
    }
    const memSegs = segFiles(dirs.mem);
    if (memSegs) throw new Error(`the in-memory baseline [mem] was written to disk (${memSegs} segment files): its figures would not be in-heap`);
    return [
      row(S, `scroll, size 1,000, ${n.toLocaleString('en-US')} docs of ~1 KB, from memory (unflushed buffers, median of ${o.rounds})`, median(got.memScroll), 'docs/s'),
      row(S, 'the same scroll from segments on disk (flushed, 1 segment per shard)', median(got.diskScroll), 'docs/s'),
      row(S, 'scroll docs/s: disk / memory (paired rounds)', pairedRatio(got.diskScroll, got.memScroll), 'ratio', { min: 1 }),
      row(S, `match top 10 p50 (${q} requests, one in flight), from memory`, median(got.memMatch), 'ms'),
      row(S, 'the same match from segments on disk', median(got.diskMatch), 'ms'),
      row(S, 'match top 10 p50: disk / memory (paired rounds)', pairedRatio(got.diskMatch, got.memMatch), 'ratio', { max: 1 }),
    ];
  } finally {
    off();
    await dropNode(c);
  }
}
