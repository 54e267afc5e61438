/**
 * Issue 4, scroll: scroll the corpus (size 1,000, sort `_doc`) through the HTTP edge from a child
 * that reads the bytes and cuts out only `_scroll_id`, next to JSON.stringify of the same pages in
 * this process (the rate a server that re-serialized hits could not beat); sliced scroll with max
 * 1, 2 and 4 slices at once; heap per open scroll context with 10,000 open; open+clear pairs.
 */
import { call, MAPPINGS } from './corpus';
import { freeMany, httpRate, loadBulk, openFreePairs, openMany, scrollAll, scrollPages } from './load';
import { median, pairedRatio, percentile, row, settledHeap } from './stats';
import type { BenchOptions, Row } from './types';

const S = 'scroll';

/** Docs/s of JSON.stringify + UTF-8 encoding of parsed pages, for about `ms` milliseconds. */
function stringifyRate(pages: Array<{ hits: { hits: unknown[] } }>, ms: number): number {
  let docs = 0;
  let bytes = 0;
  const t0 = performance.now();
  let t = t0;
  for (let i = 0; t - t0 < ms; i++) {
    const p = pages[i % pages.length];
    bytes += Buffer.from(JSON.stringify(p)).length;
    docs += p.hits.hits.length;
    t = performance.now();
  }
  if (!bytes) throw new Error('nothing serialized');
  return (docs / (t - t0)) * 1000;
}

export async function run(o: BenchOptions): Promise<Row[]> {
  const c = await o.corpus.get();
  const rows: Row[] = [];
  await call(c.url, 'PUT', '/_cluster/settings', { persistent: { 'search.max_open_scroll_context': 100_000 } });

  // The same pages, parsed once here, for the serialization comparator.
  const pages: Array<{ _scroll_id: string; hits: { hits: unknown[] } }> = [];
  let page = await call<(typeof pages)[number]>(c.url, 'POST', `/${c.index}/_search?scroll=1m`, { size: 1000, sort: ['_doc'] });
  for (let i = 0; i < 8 && page.hits.hits.length; i++) {
    pages.push(page);
    page = await call(c.url, 'POST', '/_search/scroll', { scroll: '1m', scroll_id: page._scroll_id });
  }
  await call(c.url, 'DELETE', '/_search/scroll', { scroll_id: page._scroll_id });

  const rounds = o.quick ? o.rounds : Math.min(o.rounds, 3);
  const rate = { scroll: [] as number[], stringify: [] as number[], max2: [] as number[], max4: [] as number[] };
  for (let r = 0; r < rounds; r++) {
    o.note(`scroll: round ${r + 1}/${rounds}: max 1, stringify, max 2, max 4 ...`);
    for (const max of [1, 0, 2, 4]) {
      if (max === 0) {
        rate.stringify.push(stringifyRate(pages, 1500));
        continue;
      }
      const s = await scrollAll(c.port, { index: c.index, size: 1000, max });
      if (s.docs !== c.docs) throw new Error(`scroll with max ${max} returned ${s.docs} documents, expected ${c.docs}`);
      (max === 1 ? rate.scroll : max === 2 ? rate.max2 : rate.max4).push((s.docs / s.ms) * 1000);
    }
  }
  rows.push(
    row(S, `scroll through HTTP, size 1000, sort _doc (${c.docs.toLocaleString('en-US')} docs)`, median(rate.scroll), 'docs/s'),
    row(S, 'JSON.stringify + UTF-8 of the same pages (this process)', median(rate.stringify), 'docs/s'),
    // Issue 14's target (issue 4 asked for 0.8).
    row(S, 'scroll / stringify', pairedRatio(rate.scroll, rate.stringify), 'ratio', { min: 0.35 }),
    row(S, 'sliced scroll, max 2 at once', median(rate.max2), 'docs/s'),
    row(S, 'sliced scroll, max 4 at once', median(rate.max4), 'docs/s'),
    row(S, 'speed-up max 2 / max 1', pairedRatio(rate.max2, rate.scroll), 'ratio'),
    row(S, 'speed-up max 4 / max 1', pairedRatio(rate.max4, rate.scroll), 'ratio'),
  );

  // Next-page latency on a 50,000-doc index as a plain keep-alive client sees it, next to the
  // stringify time of one such page in the same rounds (ES's best Rally nightly figure: 5.3 ms).
  const small = `${c.index}-50k`;
  o.note('scroll: next-page latency on a 50,000-doc index ...');
  await call(c.url, 'PUT', `/${small}`, { settings: { number_of_shards: 3, number_of_replicas: 0 }, mappings: MAPPINGS });
  try {
    const loaded = await loadBulk(c.port, { index: small, docs: 50_000, batch: 5000, conc: 2, refresh: true });
    if (loaded.errorBatches) throw new Error(`${loaded.errorBatches} bulk batches into ${small} had item errors`);
    const nextMs: number[] = [];
    const pageMs: number[] = [];
    for (let r = 0; r < rounds; r++) {
      nextMs.push(...(await scrollPages(c.port, { index: small, size: 1000, pages: 49 })).ms);
      pageMs.push(1e6 / stringifyRate(pages, 500));
    }
    rows.push(
      row(S, 'scroll next page p50, size 1000, 50,000-doc index, keep-alive client', median(nextMs), 'ms', { max: 5.3 }),
      row(S, 'scroll next page p99 (same)', percentile(nextMs, 99), 'ms'),
      row(S, 'JSON.stringify + UTF-8 of one 1,000-doc page (same rounds)', median(pageMs), 'ms'),
      row(S, 'scroll next page p50 / stringify of one page', median(nextMs) / median(pageMs), 'ratio'),
    );
  } finally {
    await call(c.url, 'DELETE', `/${small}`);
  }

  // Heap per open scroll context (each pins one searcher per shard: 3 here).
  const N = 10_000;
  const h0 = await settledHeap();
  o.note(`scroll: opening ${N.toLocaleString('en-US')} scroll contexts ...`);
  const opened = await openMany(c.port, { path: `/${c.index}/_search?scroll=30m`, body: '{"size":1,"sort":["_doc"]}', n: N, conc: 16, extract: '_scroll_id' });
  const h1 = await settledHeap();
  const cleared = await freeMany(c.port, { path: '/_search/scroll', key: 'scroll_id', ids: opened.ids, conc: 16 });
  if (cleared.bad) throw new Error(`${cleared.bad} scroll contexts did not clear`);
  rows.push(
    row(S, `heap per open scroll context (${N.toLocaleString('en-US')} open, 3 shards each, gc)`, (h1 - h0) / N, 'B'),
    row(S, `open ${N.toLocaleString('en-US')} scrolls (size 1), 16 in flight`, (N / opened.ms) * 1000, 'opens/s'),
    row(S, `clear ${N.toLocaleString('en-US')} scrolls, 16 in flight`, (N / cleared.ms) * 1000, 'clears/s'),
  );

  // Open+clear of 1,000 scrolls, next to a trivial request at the same concurrency.
  const pairs: number[] = [];
  const trivial: number[] = [];
  for (let r = 0; r < o.rounds; r++) {
    const p = await openFreePairs(c.port, { kind: 'scroll', index: c.index, n: 1000, conc: 8 });
    pairs.push((p.n / p.ms) * 1000);
    trivial.push((await httpRate(c.port, { path: '/', seconds: 1, conc: 8 })).rate);
  }
  rows.push(
    row(S, 'scroll open+clear pairs (1,000), 8 in flight', median(pairs), 'pairs/s'),
    row(S, 'trivial request GET /, 8 in flight (same rounds)', median(trivial), 'req/s'),
    row(S, 'scroll pairs/s / trivial req/s', pairedRatio(pairs, trivial), 'ratio'),
  );
  return rows;
}
