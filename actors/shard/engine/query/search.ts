/**
 * The query phase on one shard: match, slice, post_filter, totals, and the best `from + size` hits
 * in sort order strictly after `search_after`. Three collection strategies:
 * - doc order (`_doc` / `_shard_doc` primary): walk doc ids from the cursor, stop after k hits;
 * - numeric primary key on a large shard: walk a cached sorted doc order from the cursor
 *   (binary search), so a deep page costs about the same as the first;
 * - otherwise: one pass over the matches with a k-sized heap.
 */
import { illegalArgument } from '../../../wire/esErrors';
import type { DocValuesReader, SearcherRef, ShardHit, ShardQueryRequest, ShardQueryResult, SortValue } from '../types';
import type { StoreView } from '../index/storeView';
import { Bitset } from '../base/bits';
import { compileQuery, type QueryContext } from './query';
import { planTopScore, runTopScore, type TopPlan } from './topScore';
import { evaluate } from './evaluate';
import { afterTest, fullComparator, resolveSort, type SortEnv, type SortKey } from './sort';
import { sliceFilter } from './slice';
import { floatValue } from '../index/analysis';
import { topK } from '../../../wire/heap';
import { createAggregators } from '../aggregations/aggs';
import { UNLIMITED_BUDGET, type SearchBudget } from '../../../wire/circuitBreaker';
import { bitsetBytes, hitsBytes, HITS_LABEL, BITSET_LABEL } from './queryBudget';
import type { TermStatistics } from './termStats';
import { finishHits } from './hitExtras';
import { aggHooks, aggsNeedScores, type AggSegment } from './aggHooks';
import { applyRescore, rescoreDepth } from './rescore';
import { addCollapseField, collapseKey, collapseTop } from './collapse';

/** Extra hooks of a query phase. */
export interface QueryOptions {
  /**
   * Custom aggregation: called with the matching docs (query, slice, min_score; not post_filter),
   * ascending; the return value becomes `aggs` of the result. Without it, `req.aggs` is collected
   * with aggs.ts (`createAggregators`) into a partial state for `reduceAggs`.
   */
  collectAggs?: (docs: Int32Array, reader: DocValuesReader) => unknown;
  /** Score every match even when the top-k path could skip (tests compare the two paths). */
  exhaustive?: boolean;
  /** The request breaker and `search.max_buckets` of this search (queryBudget.ts); default: no accounting. */
  budget?: SearchBudget;
  /**
   * Collects `req.aggs` elsewhere: called for each matching doc (as `collectAggs` is), the result
   * then has no `aggs` (a shard spanning several segments aggregates them into one partial).
   */
  aggregate?: (doc: number) => void;
  /** Shard-wide scoring statistics (several segments); default: the segment's own. */
  stats?: TermStatistics;
  /** Points the aggregators' hooks (filter, top_hits) at this segment before it is collected. */
  aggBind?: (seg: AggSegment) => void;
}

/** Shards at least this large walk a cached sorted order for numeric sorts. */
const WALK_MIN_DOCS = 20_000;

/** Candidate docs of one request: matching, visible, in the slice, above min_score. */
interface Candidates {
  bits: Bitset | null;
  from: number;
  to: number;
  accept: (d: number) => boolean;
  forEach: (fn: (d: number) => void) => void;
}

function candidates(store: StoreView, s: SearcherRef, bits: Bitset | null, range: [number, number], minScore: ((d: number) => boolean) | null): Candidates {
  const [from, to] = range;
  const deletes = store.deletedCount(s) > 0;
  const accept = (d: number) => d >= from && d < to && (!bits || bits.has(d)) && (!deletes || store.visible(s, d)) && (!minScore || minScore(d));
  const forEach = (fn: (d: number) => void) => {
    if (bits) {
      for (let d = bits.next(from); d >= 0 && d < to; d = bits.next(d + 1)) {
        if ((!deletes || store.visible(s, d)) && (!minScore || minScore(d))) fn(d);
      }
    } else {
      for (let d = from; d < to; d++) if ((!deletes || store.visible(s, d)) && (!minScore || minScore(d))) fn(d);
    }
  };
  return { bits, from, to, accept, forEach };
}

/** See ShardStore.query. */
export function executeQuery(store: StoreView, s: SearcherRef, req: ShardQueryRequest, opts: QueryOptions = {}): ShardQueryResult {
  const from = Math.max(0, req.from ?? 0);
  const size = Math.max(0, req.size ?? 10);
  const k = from + size;
  const ctx: QueryContext = { store, s, now: req.nowMillis ?? Date.now(), ...(opts.stats ? { stats: opts.stats } : {}) };
  let scoreOf: (d: number) => number = () => 0;
  const env: SortEnv = { store, shardIndex: req.shardIndex ?? 0, scoreOf: (d) => scoreOf(d) };

  // ES order: query, sort, search_after, slice (parseSource), then the window (preProcess)
  const compiled = compileQuery(req.query, ctx);
  const keys = resolveSort(req.sort, env);
  const after = req.searchAfter && req.searchAfter.length > 0 ? req.searchAfter : undefined;
  if (after) {
    if (!keys) throw illegalArgument('Sort must contain at least one field.');
    if (after.length !== keys.length) throw illegalArgument(`search_after has ${after.length} value(s) but sort has ${keys.length}.`);
    keys.forEach((key, i) => key.setAfter(after[i]));
  }
  const slice = sliceFilter(store, s, req.slice);
  checkWindow(store, req, from, size);
  // SearchService.parseSource / DefaultSearchContext.preProcess: shard-level checks, in ES's order
  if (req.collapse && req.rescore?.length) throw illegalArgument('cannot use `collapse` in conjunction with `rescore`');
  if (req.collapse && after && !(req.sort?.length === 1 && req.sort[0].field === req.collapse.field)) {
    throw illegalArgument('Cannot use [collapse] in conjunction with [search_after] unless the search is sorted on the same field. Multiple sort fields are not allowed.');
  }
  const groupKey = req.collapse ? collapseKey(ctx, req.collapse.field) : null;
  if (req.rescore?.length && keys) throw illegalArgument('Cannot use [sort] option in conjunction with [rescore].');
  const depth = req.rescore ? rescoreDepth(req, k, store.settings().maxResultWindow) : k;
  const budget = opts.budget ?? UNLIMITED_BUDGET;
  // the hits this phase will hold: the top candidates (the rescore window if larger) and the page's hit objects
  budget.reserve(hitsBytes(Math.max(k, depth), size, keys?.length ?? 0), HITS_LABEL);
  const own = aggHooks();
  const aggregators = req.aggs && !opts.collectAggs && !opts.aggregate ? createAggregators(req.aggs, store, budget, own.hooks) : null;

  const plan = !keys && !req.aggs && !groupKey && req.trackTotalHits !== true && !opts.exhaustive ? planTopScore(compiled, ctx) : null;
  if (plan) return topScoreQuery(store, s, req, plan, ctx, slice, from, k, depth);
  const tracksScores = !keys || keys.some((x) => x.kind === 'score') || req.trackScores === true;
  const ev = evaluate(compiled, ctx, tracksScores || req.minScore !== undefined || aggsNeedScores(req.aggs));
  if (ev.score) scoreOf = ev.score;
  let bits = ev.bits;
  if (bits) budget.reserve(bitsetBytes(s.maxDoc), BITSET_LABEL); // the matching docs, one bit per doc
  if (slice?.bits) bits = bits ? bits.clone().and(slice.bits) : slice.bits;
  const range: [number, number] = slice?.range ?? [0, s.maxDoc];
  const minScore = req.minScore !== undefined ? (d: number) => scoreOf(d) >= req.minScore! : null;

  let aggs: unknown;
  if (req.aggs) (opts.aggBind ?? own.bind)({ store, ctx, scoreOf, shardIndex: req.shardIndex ?? 0 });
  if (aggregators) {
    candidates(store, s, bits, range, minScore).forEach((d) => aggregators.collect(d));
    aggs = aggregators.partial();
  } else if (opts.aggregate && req.aggs) {
    candidates(store, s, bits, range, minScore).forEach(opts.aggregate);
  } else if (opts.collectAggs && req.aggs) {
    const docs: number[] = [];
    candidates(store, s, bits, range, minScore).forEach((d) => docs.push(d));
    aggs = opts.collectAggs(Int32Array.from(docs), store);
  }
  if (req.postFilter !== undefined) {
    const pf = evaluate(compileQuery(req.postFilter, ctx), ctx, false).bits;
    if (pf) budget.reserve(2 * bitsetBytes(s.maxDoc), BITSET_LABEL); // its bits and their AND
    if (pf) bits = bits ? bits.clone().and(pf) : pf;
  }
  const cand = candidates(store, s, bits, range, minScore);
  const { totalHits, totalRelation } = countTotal(store, s, cand, req.trackTotalHits, minScore !== null);

  const afterOk = after ? afterTest(keys!) : null;
  let top: number[];
  if (k === 0) top = [];
  else if (groupKey) {
    const cmp = keys ? fullComparator(keys) : (a: number, b: number) => scoreOf(b) - scoreOf(a) || a - b;
    top = collapseTop(k, cmp, groupKey, (push) => cand.forEach(afterOk ? (d) => afterOk(d) && push(d) : push));
  } else top = collect(store, s, cand, keys, afterOk, depth, scoreOf);
  if (req.rescore && top.length) {
    const r = applyRescore(ctx, req.rescore, top, scoreOf);
    const base = scoreOf;
    top = r.docs.slice(0, k);
    scoreOf = (d) => r.scores.get(d) ?? base(d);
  }
  const docs = from > 0 ? top.slice(from) : top;
  const hits: ShardHit[] = docs.map((d) => ({
    doc: d,
    _id: store.idOf(d),
    score: tracksScores ? floatValue(scoreOf(d)) : null,
    ...(keys ? { sort: keys.map((x): SortValue => x.value(d)) } : {}),
  }));
  finishHits(ctx, req, hits);
  if (groupKey) addCollapseField(req.collapse!.field, groupKey, hits);
  let maxScore: number | null = null;
  if (!keys) maxScore = top.length ? floatValue(scoreOf(top[0])) : null;
  else if (tracksScores) {
    let m = -Infinity;
    cand.forEach((d) => (m = Math.max(m, scoreOf(d))));
    maxScore = m === -Infinity ? null : floatValue(m);
  }
  return { totalHits, totalRelation, maxScore, hits, ...(aggs !== undefined ? { aggs } : {}) };
}

/**
 * Relevance order when nothing needs every match (no sort, no aggregations, `track_total_hits`
 * bounded or off): topScore.ts skips what cannot enter the top k; the result is the exhaustive one.
 */
function topScoreQuery(
  store: StoreView, s: SearcherRef, req: ShardQueryRequest, plan: TopPlan, ctx: QueryContext,
  slice: ReturnType<typeof sliceFilter>, from: number, k: number, depth: number,
): ShardQueryResult {
  let allowed = slice?.bits ?? null;
  if (req.postFilter !== undefined) {
    const pf = evaluate(compileQuery(req.postFilter, ctx), ctx, false).bits;
    if (pf) allowed = allowed ? allowed.clone().and(pf) : pf;
  }
  const track = req.trackTotalHits;
  const r = runTopScore(plan, {
    k: depth,
    countUpTo: track === false || (track as number) < 0 ? -1 : (track as number),
    range: slice?.range ?? [0, s.maxDoc],
    whole: !slice?.range,
    allowed,
    visible: store.deletedCount(s) > 0 ? (d) => store.visible(s, d) : null,
    minScore: req.minScore,
  });
  let docs = Array.from(r.docs);
  let scores = Array.from(r.scores);
  if (req.rescore && docs.length) {
    const byDoc = new Map(docs.map((d, i) => [d, scores[i]]));
    const rs = applyRescore(ctx, req.rescore, docs, (d) => byDoc.get(d)!);
    docs = rs.docs.slice(0, k);
    scores = docs.map((d) => rs.scores.get(d)!);
  }
  const hits: ShardHit[] = [];
  for (let i = from; i < docs.length; i++) hits.push({ doc: docs[i], _id: store.idOf(docs[i]), score: floatValue(scores[i]) });
  finishHits(ctx, req, hits);
  const maxScore = docs.length ? floatValue(scores[0]) : null;
  return { totalHits: r.totalHits, totalRelation: r.totalRelation, maxScore, hits };
}

/** index.max_result_window checks of a request (ES's texts), once per shard. */
export function checkWindow(store: Pick<StoreView, 'settings'>, req: ShardQueryRequest, from: number, size: number): void {
  if (!req.checkWindow) return;
  const max = store.settings().maxResultWindow;
  if (req.checkWindow === 'scroll') {
    if (size > max) {
      throw illegalArgument(
        `Batch size is too large, size must be less than or equal to: [${max}] but was [${size}]. Scroll batch sizes cost as much memory as result windows so they are controlled by the [index.max_result_window] index level setting.`,
      );
    }
  } else if (from + size > max) {
    throw illegalArgument(
      `Result window is too large, from + size must be less than or equal to: [${max}] but was [${from + size}]. See the scroll api for a more efficient way to request large data sets. This limit can be set by changing the [index.max_result_window] index level setting.`,
    );
  }
}

function countTotal(store: StoreView, s: SearcherRef, c: Candidates, track: boolean | number, hasMinScore: boolean): { totalHits: number | null; totalRelation: 'eq' | 'gte' } {
  if (track === false || (typeof track === 'number' && track < 0)) return { totalHits: null, totalRelation: 'eq' };
  const bound = track === true ? Infinity : track;
  let n: number;
  const deletes = store.deletedCount(s) > 0;
  if (!c.bits && !hasMinScore && c.from === 0 && c.to === s.maxDoc) n = s.maxDoc - store.deletedCount(s);
  else if (!c.bits && !hasMinScore && !deletes) n = c.to - c.from;
  else if (c.bits && !hasMinScore && !deletes && c.from === 0 && c.to === s.maxDoc) n = c.bits.count();
  else {
    n = 0;
    try {
      c.forEach(() => {
        if (++n > bound) throw STOP;
      });
    } catch (e) {
      if (e !== STOP) throw e;
    }
  }
  return n > bound ? { totalHits: bound, totalRelation: 'gte' } : { totalHits: n, totalRelation: 'eq' };
}

const STOP = Symbol('stop');

function collect(
  store: StoreView, s: SearcherRef, c: Candidates, keys: SortKey[] | null,
  afterOk: ((d: number) => boolean) | null, k: number, scoreOf: (d: number) => number,
): number[] {
  const primary = keys?.[0];
  if (primary && (primary.kind === 'doc' || primary.kind === 'shardDoc')) return walkDocOrder(c, primary, afterOk, k);
  const cmp = keys ? fullComparator(keys) : (a: number, b: number) => scoreOf(b) - scoreOf(a) || a - b;
  if (primary?.kind === 'num' && s.maxDoc >= WALK_MIN_DOCS) {
    const m = c.bits ? c.bits.count() : c.to - c.from;
    if (m >= 4 * Math.sqrt(k * s.maxDoc)) return walkSorted(store, s, c, keys!, afterOk, k, cmp);
  }
  return topK(k, cmp, (push) => c.forEach(afterOk ? (d) => afterOk(d) && push(d) : push));
}

/** `_doc` / `_shard_doc` first: doc ids are the order, so stop after k accepted docs. */
function walkDocOrder(c: Candidates, primary: SortKey, afterOk: ((d: number) => boolean) | null, k: number): number[] {
  const out: number[] = [];
  if (!primary.desc) {
    // first doc strictly after the cursor on the primary key (monotonic in d)
    let lo = c.from, hi = c.to;
    if (afterOk) {
      while (lo < hi) {
        const m = (lo + hi) >>> 1;
        if (primary.cmpAfter(m) < 0) lo = m + 1;
        else hi = m;
      }
    }
    for (let d = c.bits ? c.bits.next(lo) : lo; d >= 0 && d < c.to && out.length < k; d = c.bits ? c.bits.next(d + 1) : d + 1) {
      if (c.accept(d) && (!afterOk || afterOk(d))) out.push(d);
    }
  } else {
    // last doc strictly after the cursor in descending doc order
    let lo = c.from, hi = c.to;
    if (afterOk) {
      while (lo < hi) {
        const m = (lo + hi) >>> 1;
        if (primary.cmpAfter(m) >= 0) lo = m + 1;
        else hi = m;
      }
    } else lo = c.to;
    for (let d = c.bits ? c.bits.prev(lo - 1) : lo - 1; d >= c.from && out.length < k; d = c.bits ? c.bits.prev(d - 1) : d - 1) {
      if (c.accept(d) && (!afterOk || afterOk(d))) out.push(d);
    }
  }
  return out;
}

/**
 * Numeric primary key: walk the cached doc order of that key (in final order, ties by doc id) from
 * the search_after position. When the remaining keys cannot reorder ties (none, or `_doc` /
 * `_shard_doc` asc) the order is exact: binary search the full cursor, stop after k hits. Otherwise
 * collect k hits plus the rest of the last tie run and sort those.
 */
function walkSorted(
  store: StoreView, s: SearcherRef, c: Candidates, keys: SortKey[],
  afterOk: ((d: number) => boolean) | null, k: number, cmp: (a: number, b: number) => number,
): number[] {
  const primary = keys[0];
  const r = primary.reader!;
  const exact = keys.length === 1 || ((keys[1].kind === 'doc' || keys[1].kind === 'shardDoc') && !keys[1].desc);
  const cacheKey = `${primary.spec.field}|${r.src}|${r.res}|${r.mode}|${r.missing.hi}|${r.missing.lo}|${r.missing.big ?? ''}|${primary.desc}`;
  const { perm, size } = store.caches.sortedOrder(cacheKey, r, s.maxDoc, primary.desc);
  let start = 0;
  if (afterOk) {
    // both predicates are monotonic along the order: false…false true…true
    const pred = exact ? (i: number) => afterOk(perm[i]) : (i: number) => primary.cmpAfter(perm[i]) >= 0;
    let hi = size;
    while (start < hi) {
      const m = (start + hi) >>> 1;
      if (pred(m)) hi = m;
      else start = m + 1;
    }
  }
  const out: number[] = [];
  for (let i = start; i < size; i++) {
    const d = perm[i];
    if (d >= s.maxDoc || !c.accept(d) || (afterOk && !afterOk(d))) continue;
    if (out.length >= k && (exact || primary.cmp(d, out[k - 1]) !== 0)) break;
    out.push(d);
  }
  return exact ? out : out.sort(cmp).slice(0, k);
}

/** See ShardStore.count. */
export function executeCount(store: StoreView, s: SearcherRef, query?: unknown): number {
  const ctx: QueryContext = { store, s, now: Date.now() };
  const { bits } = evaluate(compileQuery(query, ctx), ctx, false);
  const c = candidates(store, s, bits, [0, s.maxDoc], null);
  return countTotal(store, s, c, true, false).totalHits!;
}
