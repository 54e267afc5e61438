/**
 * Top-k by score without scoring every match (Lucene's block-max / MaxScore approach), for
 * relevance order when nothing needs every match: no sort, no aggregations, and
 * `track_total_hits` a number (exact up to it, `gte` beyond: counting stops there) or false.
 *
 * Text queries of the common shapes become a flat plan of term clauses (flatPlan.ts) that runs
 * window by window over per-block impacts (impacts.ts): flatRun.ts for any number of clauses,
 * flatTwo.ts for two. Other shapes (a should clause that is a multi-term match, more than three
 * should terms with none required, constant-scoring clauses next to text ones, negative boosts)
 * run on the exhaustive path in search.ts. Hits, order, scores, `max_score` and totals are those of
 * the exhaustive path, to the bit.
 */
import type { Bitset } from '../base/bits';
import { filterLeads, flatPlan, rarestRequired, type FlatPlan } from './flatPlan';
import { runFlat } from './flatRun';
import { runTwo } from './flatTwo';
import type { QNode, QueryContext } from './qnode';
import type { TopScoreParams, TopScoreResult } from './flatPlan';

export type { TopScoreParams, TopScoreResult } from './flatPlan';

/** How a query runs on the top-k path. */
export interface TopPlan {
  flat: FlatPlan;
}

/**
 * The top-k plan of a compiled query, or null when the exhaustive path runs it. Filters and
 * must_not clauses are evaluated here, as evaluate.ts would.
 */
export function planTopScore(node: QNode, ctx: QueryContext): TopPlan | null {
  const flat = flatPlan(node, ctx);
  return flat ? { flat } : null;
}

/** Runs a plan from {@link planTopScore}. */
export function runTopScore(plan: TopPlan, p: TopScoreParams): TopScoreResult {
  const flat = plan.flat;
  // two clauses run in locals, unless a rare filter leads the candidates (flatRun.ts does that)
  return flat.clauses.length === 2 && !filterLeads(flat, rarestRequired(flat)) ? runTwo(flat, p) : runFlat(flat, p);
}
