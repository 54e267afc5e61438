/**
 * Top-k by score without scoring every match (Lucene's block-max approach): the query's scorers
 * (scorers.ts) walk matches in doc order window by window, a window ending where the first of the
 * clauses' impact blocks ends; once the k best are held and the total hit count has passed its
 * threshold, a window whose score bound cannot beat the k-th best is skipped without touching its
 * postings.
 *
 * Used for relevance order (no sort) when nothing needs every match: no aggregations and
 * `track_total_hits` a number (exact up to it, `gte` beyond: counting stops there) or false.
 * Hits, order, scores, `max_score` and totals are those of the exhaustive path in search.ts.
 */
import type { Bitset } from './bits';
import { ScoreHeap } from './scoreHeap';
import { buildScorer, NO_MORE, topScorable, type Scorer } from './scorers';
import { flatPlan, type FlatPlan } from './flatPlan';
import { runFlat } from './flatRun';
import { runTwo } from './flatTwo';
import type { QNode, QueryContext } from './query';

const f = Math.fround;

/** Windows are cut at this many docs when no clause has impact blocks (constant clauses only). */
const MAX_WINDOW = 4096;

/** What the top-k path needs besides the query. */
export interface TopScoreParams {
  /** Best `k` hits wanted (from + size). */
  k: number;
  /** Count matches exactly up to this bound; -1 = no count. */
  countUpTo: number;
  /** Doc-id range searched (a PIT slice), [from, to). */
  range: [number, number];
  /** Docs allowed besides the query (slice, post_filter); null = all. */
  allowed: Bitset | null;
  /** Visibility under deletions; null = no deletes. */
  visible: ((d: number) => boolean) | null;
  minScore?: number;
}

/** The k best docs (score desc, doc asc) with their scores, and the total. */
export interface TopScoreResult {
  docs: number[];
  scores: number[];
  totalHits: number | null;
  totalRelation: 'eq' | 'gte';
}

/** How a query runs on the top-k path. */
export type TopPlan = { flat: FlatPlan; root?: undefined } | { root: Scorer; flat?: undefined };

/**
 * The top-k plan of a compiled query, or null when it has no text clause that scores or has a
 * clause whose bound would not hold (negative boosts): the exhaustive path runs it. Filters and
 * must_not clauses are evaluated here, as evaluate.ts would.
 */
export function planTopScore(node: QNode, ctx: QueryContext): TopPlan | null {
  const flat = flatPlan(node, ctx);
  if (flat) return { flat };
  return topScorable(node) ? { root: buildScorer(node, ctx, 1, true) } : null;
}

/** Runs a plan from {@link planTopScore}. */
export function runTopScore(plan: TopPlan, p: TopScoreParams): TopScoreResult {
  if (plan.flat) return plan.flat.clauses.length === 2 ? runTwo(plan.flat, p) : runFlat(plan.flat, p);
  return topScore(plan.root, p);
}

/** Collects the k best docs of a scorer tree. */
function topScore(root: Scorer, p: TopScoreParams): TopScoreResult {
  const { k, countUpTo, allowed, visible, minScore } = p;
  const [from, to] = p.range;
  const heap = new ScoreHeap(k);
  let counting = countUpTo >= 0;
  let count = 0;
  const hasMin = minScore !== undefined;
  const min = hasMin ? minScore : -Infinity;

  let target = from;
  while (target < to) {
    if (!counting && heap.k === 0) break;
    let end = Math.min(root.blockEnd(target), to - 1, target + MAX_WINDOW - 1);
    if (end < target) end = target;
    const ub = f(root.addMaxTo(0, target, end));
    if (ub === -Infinity || ub < min) {
      target = end + 1;
      continue;
    }
    let compet = ub > heap.threshold;
    if (!compet && !counting) {
      target = end + 1;
      continue;
    }
    for (let d = root.advance(target); d <= end; d = root.advance(d + 1)) {
      if ((allowed && !allowed.has(d)) || (visible && !visible(d))) continue;
      let score = NaN;
      if (compet || hasMin) {
        score = f(root.addTo(0));
        if (score < min) continue;
      }
      if (counting && ++count > countUpTo) counting = false;
      if (compet) {
        heap.offer(score, d);
        compet = ub > heap.threshold;
      }
      if (!compet && !counting) break;
    }
    if (root.doc === NO_MORE) break;
    target = end + 1;
  }
  const { docs, scores } = heap.sorted();
  const totalHits = countUpTo < 0 ? null : count > countUpTo ? countUpTo : count;
  return { docs, scores, totalHits, totalRelation: countUpTo >= 0 && count > countUpTo ? 'gte' : 'eq' };
}
