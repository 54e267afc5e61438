/**
 * `rescore` (ES's QueryRescorer): the top `window_size` hits of the shard are scored again by the
 * rescore query, the two scores combined by `score_mode` with their weights, and the window
 * re-sorted; hits past the window keep their order after it. Rescorers run one after the other.
 */
import { illegalArgument } from '../../../wire/esErrors';
import type { SearcherRef, ShardQueryRequest } from '../types';
import type { StoreView } from '../index/storeView';
import { evaluate } from './evaluate';
import { compileQuery } from './query';
import type { QueryContext } from './qnode';
import type { TermStatistics } from './termStats';

type Rescore = NonNullable<ShardQueryRequest['rescore']>[number];
const f = Math.fround;

/** How many top hits the query phase must collect for the rescorers (at least `k`). */
export function rescoreDepth(req: ShardQueryRequest, k: number, maxWindow: number): number {
  let depth = k;
  for (const r of req.rescore ?? []) {
    if (r.windowSize > maxWindow) {
      throw illegalArgument(
        `Rescore window [${r.windowSize}] is too large. It must be less than [${maxWindow}]. This prevents allocating massive heaps for storing the results to be rescored. This limit can be set by changing the [index.max_rescore_window] index level setting.`,
      );
    }
    depth = Math.max(depth, r.windowSize);
  }
  return depth;
}

const COMBINE: Record<Rescore['scoreMode'], (a: number, b: number) => number> = {
  total: (a, b) => f(a + b),
  multiply: (a, b) => f(a * b),
  avg: (a, b) => f((a + b) / 2),
  max: (a, b) => Math.max(a, b),
  min: (a, b) => Math.min(a, b),
};

/**
 * Rescores `hits` (best first): `rescoreScores(query, window)` gives the rescore query's score of
 * each hit of a window (undefined: no match). Returns the new order and every hit's score.
 */
export function rescoreHits<T>(
  rescorers: Rescore[], hits: T[], scoreOf: (h: T) => number, rescoreScores: (query: unknown, window: T[]) => Array<number | undefined>, tie: (a: T, b: T) => number,
): { hits: T[]; scores: Map<T, number> } {
  const scores = new Map<T, number>();
  for (const h of hits) scores.set(h, f(scoreOf(h)));
  let order = hits;
  for (const r of rescorers) {
    const window = order.slice(0, r.windowSize);
    const rest = order.slice(r.windowSize);
    const second = rescoreScores(r.query, window);
    window.forEach((h, i) => {
      const primary = f(scores.get(h)! * r.queryWeight);
      const s = second[i];
      scores.set(h, s === undefined ? primary : COMBINE[r.scoreMode](primary, f(s * r.rescoreQueryWeight)));
    });
    window.sort((a, b) => scores.get(b)! - scores.get(a)! || tie(a, b));
    order = [...window, ...rest];
  }
  return { hits: order, scores };
}

/** The rescore query's scores of `docs` of one segment (undefined where it does not match). */
export function rescoreQueryScores(ctx: QueryContext, query: unknown, docs: number[]): Array<number | undefined> {
  const ev = evaluate(ctx.compile ? ctx.compile(query) : compileQuery(query, ctx), ctx, true);
  return docs.map((d) => (ev.bits === null || ev.bits.has(d) ? ev.score!(d) : undefined));
}

/** {@link rescoreQueryScores} on a segment of a several-segment shard (shard-wide statistics). */
export function rescoreLeafScores(store: StoreView, s: SearcherRef, stats: TermStatistics, now: number, query: unknown, docs: number[]): Array<number | undefined> {
  return rescoreQueryScores({ store, s, now, stats }, query, docs);
}

/** Rescores `docs` of one segment (best first). */
export function applyRescore(ctx: QueryContext, rescorers: Rescore[], docs: number[], scoreOf: (d: number) => number): { docs: number[]; scores: Map<number, number> } {
  const r = rescoreHits(rescorers, docs, scoreOf, (q, w) => rescoreQueryScores(ctx, q, w), (a, b) => a - b);
  return { docs: r.hits, scores: r.scores };
}
