/**
 * Issue 3, point in time: walk the whole corpus with PIT + search_after (size 1,000, sorted by the
 * long `n`); page latency at three depths side by side; from/size at from=9000 vs from=0 for
 * contrast; a PIT page vs the same plain search; heap per open PIT with 10,000 open; open+close
 * pairs per second next to a trivial request's rate.
 */
import { call } from './corpus';
import { freeMany, httpRate, openFreePairs, openMany, pitWalk, timeRequests } from './load';
import { median, row, settledHeap } from './stats';
import type { BenchOptions, Row } from './types';

const S = 'pit';

export async function run(o: BenchOptions): Promise<Row[]> {
  const c = await o.corpus.get();
  const rows: Row[] = [];
  // Depths as in the issue for 1M documents, scaled to the corpus (--quick: 0, 10k, 99k).
  const scale = c.docs / 1_000_000;
  const depths = [0, Math.round(100_000 * scale), Math.round(990_000 * scale)];
  const label = (d: number) => (d >= 1000 ? `${d / 1000}k` : String(d));

  const { id: pitId } = await call<{ id: string }>(c.url, 'POST', `/${c.index}/_pit?keep_alive=30m`);
  try {
    o.note(`pit: walking ${c.docs.toLocaleString('en-US')} documents with PIT + search_after ...`);
    const walk = await pitWalk(c.port, { index: c.index, pitId, size: 1000, sortField: 'n', marks: depths });
    if (walk.docs !== c.docs) throw new Error(`the PIT walk returned ${walk.docs} documents, expected ${c.docs}`);
    rows.push(
      row(S, `whole walk, PIT + search_after, size 1000, sort n (${c.docs.toLocaleString('en-US')} docs)`, (walk.docs / walk.ms) * 1000, 'docs/s'),
      row(S, 'walk: median page latency (all pages)', median(walk.pageMs.slice(0, -1)), 'ms'),
    );

    // Side by side: the same page at three depths, from/size at 0 and 9000, and the plain search
    // equal to the PIT's first page; one request in flight, interleaved rounds.
    const pitPage = (d: number) => {
      const sa = walk.after[String(d)];
      return {
        method: 'POST',
        path: '/_search',
        body: `{"size":1000,"pit":{"id":"${pitId}","keep_alive":"30m"},"sort":[{"n":"asc"}]${sa ? `,"search_after":${sa}` : ''}}`,
      };
    };
    const plain = (from: number) => ({ method: 'POST', path: `/${c.index}/_search`, body: JSON.stringify({ from, size: 1000, sort: [{ n: 'asc' }] }) });
    const rounds = o.quick ? 9 : 25;
    o.note(`pit: page latencies, ${rounds} interleaved rounds ...`);
    const { ms } = await timeRequests(c.port, { rounds, warmup: 1, specs: [...depths.map(pitPage), plain(0), plain(9000)] });
    const [d0, dMid, dDeep, from0, from9000] = ms.map(median);
    for (const [i, d] of depths.entries()) rows.push(row(S, `PIT page at depth ${label(d)} (median)`, [d0, dMid, dDeep][i], 'ms'));
    rows.push(
      row(S, `PIT page depth ${label(depths[1])} / depth 0`, dMid / d0, 'ratio'),
      row(S, `PIT page depth ${label(depths[2])} / depth 0`, dDeep / d0, 'ratio', { max: 1.1 }),
      row(S, 'from/size page: from=0 (median)', from0, 'ms'),
      row(S, 'from/size page: from=9000 (median)', from9000, 'ms'),
      row(S, 'from/size from=9000 / from=0 (contrast)', from9000 / from0, 'ratio'),
    );
    // The PIT first page next to the same plain search, alternating on their own: in the rounds
    // above, the from=9000 page (ten times the hits) leaves garbage that the next request, the PIT
    // page at depth 0, would pay for.
    const pair = await timeRequests(c.port, { rounds: rounds * 2, warmup: 2, specs: [pitPage(0), plain(0)] });
    const [pitFirst, plainFirst] = pair.ms.map(median);
    rows.push(
      row(S, 'PIT first page (median, paired rounds)', pitFirst, 'ms'),
      row(S, 'the same plain search (median, paired rounds)', plainFirst, 'ms'),
      row(S, 'PIT first page / the same plain search', pitFirst / plainFirst, 'ratio', { max: 1.05 }),
    );
  } finally {
    await call(c.url, 'DELETE', '/_pit', { id: pitId });
  }

  // Heap per open PIT: 10,000 open at once (they live in this process, with the node).
  const N = 10_000;
  const h0 = await settledHeap();
  o.note(`pit: opening ${N.toLocaleString('en-US')} PITs ...`);
  const opened = await openMany(c.port, { path: `/${c.index}/_pit?keep_alive=30m`, n: N, conc: 16, extract: 'id' });
  const h1 = await settledHeap();
  const closed = await freeMany(c.port, { path: '/_pit', key: 'id', ids: opened.ids, conc: 16 });
  if (closed.bad) throw new Error(`${closed.bad} PITs did not close`);
  rows.push(
    row(S, `heap per open PIT (${N.toLocaleString('en-US')} open, gc)`, (h1 - h0) / N, 'B', { max: 8192 }),
    row(S, `open ${N.toLocaleString('en-US')} PITs, 16 in flight`, (N / opened.ms) * 1000, 'opens/s'),
    row(S, `close ${N.toLocaleString('en-US')} PITs, 16 in flight`, (N / closed.ms) * 1000, 'closes/s'),
  );

  // Open+close pairs next to a trivial request (GET /) at the same concurrency, interleaved.
  const pairs = o.quick ? 500 : 2000;
  const pairRate: number[] = [];
  const trivial: number[] = [];
  for (let r = 0; r < o.rounds; r++) {
    const p = await openFreePairs(c.port, { kind: 'pit', index: c.index, n: pairs, conc: 8 });
    pairRate.push((p.n / p.ms) * 1000);
    const t = await httpRate(c.port, { path: '/', seconds: 1, conc: 8 });
    trivial.push(t.rate);
  }
  rows.push(
    row(S, 'PIT open+close pairs, 8 in flight', median(pairRate), 'pairs/s'),
    row(S, 'trivial request GET /, 8 in flight (same rounds)', median(trivial), 'req/s'),
    row(S, 'PIT pairs/s / trivial req/s', median(pairRate.map((x, i) => x / trivial[i])), 'ratio'),
  );
  return rows;
}
