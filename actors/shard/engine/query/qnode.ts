/**
 * The compiled query tree and its context (a leaf module), shared by query.ts (compiles the DSL),
 * evaluate.ts (runs it), the top-k path (flatPlan.ts) and the modules of compound queries
 * (compound.ts, multiMatch.ts, queryString.ts), which compile their children through
 * `QueryContext.compile` so no module imports a sibling that imports it back.
 */
import type { SearcherRef } from '../types';
import type { StoreView } from '../index/storeView';
import type { Bitset } from '../base/bits';
import type { TextView } from '../index/columnViews';
import { segmentTermStats, type TermStatistics } from './termStats';

/** What a query needs from its surroundings. */
export interface QueryContext {
  /** The segment the query runs on. */
  store: StoreView;
  /** The searcher, bounded to that segment (its maxDoc is the segment's). */
  s: SearcherRef;
  /** Epoch millis used for `now` in date math. */
  now: number;
  /** Shard-wide statistics for scoring (default: the segment's own, termStats.ts). */
  stats?: TermStatistics;
  /** Compiles a child clause (query.ts's compileQuery, bound to this context). */
  compile?: (q: unknown) => QNode;
  /** Named clauses met while compiling (`_name`), in order: what `matched_queries` reports. */
  named?: Array<{ name: string; node: QNode }>;
  /** `inner_hits` of the nested queries met while compiling (nested.ts fills them as they run). */
  innerHits?: NestedInnerHits[];
}

/** What a nested query's `inner_hits` collect while it runs (per parent doc: matching child docs and scores). */
export interface NestedInnerHits {
  name: string;
  path: string;
  spec: Record<string, unknown>;
  /** The child docs (nested.ts ChildIndex) the matches refer to. */
  ci?: { offset: Int32Array; sources: Array<Record<string, unknown>> };
  matches: Map<number, Array<{ child: number; score: number }>>;
}

/** What a scored node gives: its matches (null = every doc < maxDoc) and, when asked, their scores. */
export interface ScoredResult {
  bits: Bitset | null;
  /** Score of a matching doc (already multiplied by the parent's boost `mult`). */
  score?: (doc: number) => number;
}

/** A compiled query node. `bits(ctx)` returns null for "every doc < maxDoc". */
export type QNode =
  | { k: 'all'; boost: number }
  | { k: 'none' }
  | { k: 'const'; boost: number; bits: () => Bitset | null; score?: (mult: number) => number }
  | { k: 'text'; col: TextView; path: string; term: string; field: string; boost: number }
  | { k: 'bool'; must: QNode[]; filter: QNode[]; should: QNode[]; mustNot: QNode[]; msm: number; boost: number }
  | { k: 'wrap'; inner: QNode; boost: number }
  /**
   * Any other scoring shape (dis_max, function_score, boosting, blended terms, phrases…): it runs
   * itself. `mult` is the product of the enclosing boosts, applied inside (as Lucene passes the
   * boost down to the weights), so scores round as ES's do.
   */
  | { k: 'scored'; run: (scoring: boolean, mult: number) => ScoredResult };

/** The statistics a query scores with. */
export const statsOf = (ctx: QueryContext): TermStatistics => (ctx.stats ??= segmentTermStats(ctx.store, ctx.s));
