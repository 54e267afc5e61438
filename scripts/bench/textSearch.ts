/**
 * Issue 14, top-k text search: `match` (BM25) top-10 p50 next to `match_all` sorted by a long,
 * top-10, in the same interleaved rounds on the corpus index; then, in rounds of their own, the
 * same `match` with `track_total_hits: true` (which scores every match: the exhaustive path) for
 * contrast and other query shapes. Before timing, each query's hits are checked to be those of the
 * exhaustive path.
 */
import { call } from './corpus';
import { timeRequests } from './load';
import { median, percentile, row } from './stats';
import type { BenchOptions, Row } from './types';

const S = 'search';

interface Hits {
  hits: { total: { value: number; relation: string }; max_score: number | null; hits: Array<{ _id: string; _score: number | null }> };
}

const QUERIES: Array<[string, unknown]> = [
  ['match "alpha bravo" (or)', { match: { title: 'alpha bravo' } }],
  ['match "alpha"', { match: { title: 'alpha' } }],
  ['match "alpha bravo charlie" (and)', { match: { title: { query: 'alpha bravo charlie', operator: 'and' } } }],
  ['bool must match + filter tag', { bool: { must: [{ match: { title: 'delta echo' } }], filter: [{ term: { tag: 'tag-7' } }] } }],
];

export async function run(o: BenchOptions): Promise<Row[]> {
  const c = await o.corpus.get();
  const rows: Row[] = [];
  const search = (body: unknown) => ({ method: 'POST', path: `/${c.index}/_search`, body: JSON.stringify(body) });

  // the top-k path returns what scoring every match returns
  for (const [name, query] of QUERIES) {
    const fast = await call<Hits>(c.url, 'POST', `/${c.index}/_search`, { query, size: 10 });
    const full = await call<Hits>(c.url, 'POST', `/${c.index}/_search`, { query, size: 10, track_total_hits: true });
    const pick = (r: Hits) => JSON.stringify([r.hits.max_score, r.hits.hits.map((h) => [h._id, h._score])]);
    if (pick(fast) !== pick(full)) throw new Error(`${name}: top-10 differs from the exhaustive path:\n${pick(fast)}\n${pick(full)}`);
    const total = Math.min(full.hits.total.value, 10_000);
    if (fast.hits.total.value !== total) throw new Error(`${name}: total ${fast.hits.total.value} but ${total} expected`);
  }

  // the targets: match and match_all sorted, alone in their rounds (the exhaustive variant
  // allocates per-doc score arrays whose collection would land on them)
  const rounds = o.quick ? 100 : 300;
  o.note(`search: match vs match_all sorted, ${rounds} interleaved rounds ...`);
  const main = await timeRequests(c.port, {
    rounds,
    warmup: 20,
    specs: [search({ query: QUERIES[0][1], size: 10 }), search({ query: { match_all: {} }, sort: [{ n: 'asc' }], size: 10 })],
  });
  const [match, sorted] = main.ms;
  const m50 = median(match), s50 = median(sorted);
  rows.push(
    row(S, `match "alpha bravo" top-10 p50 (${c.docs.toLocaleString('en-US')} docs)`, m50, 'ms', { max: 5 }),
    row(S, 'match "alpha bravo" top-10 p99', percentile(match, 99), 'ms'),
    row(S, 'match_all sorted by n (long) top-10 p50', s50, 'ms'),
    row(S, 'match top-10 p50 / match_all sorted top-10 p50', m50 / s50, 'ratio', { max: 3 }),
  );

  const rest = o.quick ? 50 : 100;
  o.note(`search: other shapes and the exhaustive contrast, ${rest} interleaved rounds ...`);
  const more = await timeRequests(c.port, {
    rounds: rest,
    warmup: 5,
    specs: [search({ query: QUERIES[0][1], size: 10, track_total_hits: true }), ...QUERIES.slice(1).map(([, query]) => search({ query, size: 10 }))],
  });
  const [exhaustive, ...others] = more.ms;
  rows.push(
    row(S, 'match top-10 with track_total_hits:true (scores every match) p50', median(exhaustive), 'ms'),
    row(S, 'match top-10 p50 / the same scoring every match', m50 / median(exhaustive), 'ratio'),
  );
  QUERIES.slice(1).forEach(([name], i) => rows.push(row(S, `${name} top-10 p50`, median(others[i]), 'ms')));
  return rows;
}
