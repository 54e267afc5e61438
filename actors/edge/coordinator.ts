import { allShardsFailed, asEsError, EsError } from '../wire/esErrors';
import { stringify } from '../wire/json';
import { RawJson } from './router';
import type { EdgeServices } from './services';
import { ShardTimeoutError } from './shardClient';
import type { ShardRef } from '../shard/shardActor';
import { filterSource, reduceAggs, reduceHits, renderAggs, type SearchRequest } from '../shard/engine';
import type { LocalSlice, SearcherRef, ShardHit, ShardQueryRequest, ShardQueryResult } from '../shard/engine/types';

/** One shard a search runs on. */
export interface ShardTarget {
  ref: ShardRef;
  /** Rank of the shard in the request (PIT: in the PIT's shard list); `_shard_doc` high bits. */
  shardIndex: number;
  /** Pinned searcher (PIT/scroll); absent = the shard's current one. */
  searcher?: SearcherRef;
  slice?: LocalSlice;
  /** Alias filter of this shard's index (a search through a filtered alias), ANDed with the query. */
  filter?: unknown;
}

/** The query a target runs: the request's, restricted by the target's alias filter if any. */
export function targetQuery(query: unknown, t: { filter?: unknown }): unknown {
  if (t.filter === undefined) return query;
  return { bool: { must: [query ?? { match_all: {} }], filter: [t.filter] } };
}

export interface ShardFailure {
  shard: number;
  index: string | null;
  node: string;
  reason: { type: string; reason: string; [k: string]: unknown };
}

export interface SearchOutcome {
  /** Searchers each target used (the ones to pin for a new scroll). */
  searchers: Array<SearcherRef | undefined>;
  hits: Array<ShardHit & { shardIndex: number }>;
  total: { value: number; relation: 'eq' | 'gte' } | undefined;
  maxScore: number | null;
  aggregations?: Record<string, unknown>;
  shards: { total: number; successful: number; skipped: number; failed: number; failures?: ShardFailure[] };
  tookMs: number;
  /** A shard did not answer within the search's `timeout`: its hits are missing (ES: partial results). */
  timedOut?: boolean;
}

/** Options of one search execution. */
export interface ExecuteOptions {
  /** The search's `timeout`: shards that have not answered by then are left out and `timed_out` is true. */
  timeoutMs?: number;
}

export interface RenderExtra {
  scrollId?: string;
  pitId?: string;
  restTotalHitsAsInt?: boolean;
  /** Sort values rendered per hit (scroll hides its internal tiebreaker). */
  sortLength?: number;
  /** Override total (scroll continuations reuse the first page's exact total). */
  total?: { value: number; relation: 'eq' | 'gte' };
  /** Hide `hits.total` (track_total_hits:false). */
  noTotal?: boolean;
  /** A `_doc` scroll walks by `_shard_doc`: show each hit's doc id (its low 32 bits), as ES shows `_doc`. */
  docSortValues?: boolean;
}

/**
 * Assigns a global slice to shards (search-paging.md §10 shard step): returns the targets that take
 * part, each with its local slice (undefined = the whole shard).
 */
export function sliceTargets(targets: ShardTarget[], slice: { id: number; max: number; field?: string } | undefined, mode: 'scroll' | 'pit'): ShardTarget[] {
  if (!slice) return targets;
  const S = targets.length;
  const { id, max, field } = slice;
  // Every taking part carries the request's max (index.max_slices_per_scroll is checked against it)
  // and the field (checked on every shard, as ES's SliceBuilder.toFilter does); max 1 = whole shard.
  const local = (localId: number, n: number): LocalSlice => ({ id: localId, max: n, ...(field !== undefined ? { field } : {}), mode, requestMax: max });
  if (S === 1) return [{ ...targets[0], slice: local(id, max) }];
  if (max >= S) {
    const t = targets[id % S];
    const n = Math.floor(max / S) + (max % S > t.shardIndex ? 1 : 0);
    return [{ ...t, slice: local(n === 1 ? 0 : Math.floor(id / S), n) }];
  }
  return targets.filter((t) => t.shardIndex % max === id).map((t) => ({ ...t, slice: local(0, 1) }));
}

function failureOf(t: ShardTarget, e: unknown, node: string): ShardFailure {
  const err = asEsError(e);
  return { shard: t.ref.n, index: t.ref.index, node, reason: { type: err.type, reason: err.message, ...(err.extra.meta ?? {}) } };
}

/**
 * Query-then-fetch over shard actors: fans out, merges the top hits, fetches only the winners'
 * sources (inline when there is a single shard), and reduces aggregations. Partial failures go in
 * `_shards.failures`; when every shard fails, ES's `all shards failed` error.
 */
export async function executeSearch(s: EdgeServices, req: SearchRequest, targets: ShardTarget[], opts: ExecuteOptions = {}): Promise<SearchOutcome> {
  if (targets.length > 1 && isShardDocWalk(req)) return walkShardDocOrder(s, req, targets);
  const start = Date.now();
  const single = targets.length === 1;
  const shardReq = (t: ShardTarget): ShardQueryRequest => ({
    query: targetQuery(req.query, t),
    postFilter: req.postFilter,
    sort: req.sort,
    from: single ? req.from : 0,
    size: single ? req.size : req.from + req.size,
    searchAfter: req.searchAfter,
    trackTotalHits: req.trackTotalHits,
    trackScores: req.trackScores,
    minScore: req.minScore,
    aggs: req.aggs,
    slice: t.slice,
    shardIndex: t.shardIndex,
    checkWindow: req.checkWindow,
  });
  s.stats.queryCurrent += targets.length;
  const settled = await Promise.allSettled(
    targets.map((t) => s.shards.query(t.ref, { req: shardReq(t), searcher: t.searcher, fetch: single }, { timeoutMs: opts.timeoutMs })),
  );
  s.stats.queryCurrent -= targets.length;
  const qTime = Date.now() - start;
  const failures: ShardFailure[] = [];
  const errors: EsError[] = [];
  const ok: Array<{ t: ShardTarget; searcher: SearcherRef; result: ShardQueryResult; sources: string[]; fetched: number }> = [];
  const searchers: Array<SearcherRef | undefined> = [];
  let timedOut = 0;
  settled.forEach((r, i) => {
    s.stats.queryTotal++;
    s.stats.queryTimeMs += qTime;
    if (r.status === 'fulfilled') {
      ok.push({ t: targets[i], searcher: r.value.head.searcher, result: r.value.head.result, sources: r.value.sources, fetched: r.value.head.fetched ?? 0 });
      searchers[i] = r.value.head.searcher;
    } else if (r.reason instanceof ShardTimeoutError) {
      timedOut++; // ES: a shard past the search timeout contributes what it has (here: nothing), not a failure
    } else {
      s.stats.queryFailure++;
      errors.push(asEsError(r.reason));
      failures.push(failureOf(targets[i], r.reason, s.ctx.node.id));
    }
  });
  if (!ok.length && targets.length && !timedOut) {
    throw allShardsFailed(errors, 'query', failures.map((f) => ({ ...f })));
  }
  const merged = reduceHits(
    ok.map((o) => ({ shardIndex: o.t.shardIndex, result: o.result })),
    { sort: req.sort, from: single ? 0 : req.from, size: req.size, trackTotalHits: req.trackTotalHits },
  );
  // Fetch phase: sources of the winners, grouped by shard, spliced as raw text.
  const fetchStart = Date.now();
  const byShard = new Map<number, { t: ShardTarget; searcher: SearcherRef; docs: number[]; pos: number[]; inline?: { sources: string[]; fetched: number } }>();
  merged.hits.forEach((h, i) => {
    const o = ok.find((x) => x.t.shardIndex === h.shardIndex)!;
    let g = byShard.get(h.shardIndex);
    // The fetch may reach another copy than the query did: it waits until it applied the query's searcher.
    if (!g) byShard.set(h.shardIndex, (g = { t: o.t, searcher: o.searcher, docs: [], pos: [], inline: single ? o : undefined }));
    g.docs.push(h.doc);
    g.pos.push(i);
  });
  const sources: string[] = new Array(merged.hits.length);
  await Promise.all(
    [...byShard.values()].map(async (g) => {
      let got: string[] = [];
      if (g.inline) got = g.inline.sources.slice(0, Math.min(g.inline.fetched, g.docs.length));
      if (got.length < g.docs.length) {
        s.stats.fetchCurrent++;
        got = got.concat(await s.shards.fetch(g.t.ref, g.docs.slice(got.length), g.searcher));
        s.stats.fetchCurrent--;
      }
      g.pos.forEach((p, j) => (sources[p] = got[j]));
    }),
  );
  if (merged.hits.length) {
    s.stats.fetchTotal += byShard.size;
    s.stats.fetchTimeMs += Date.now() - fetchStart;
  }
  let aggregations: Record<string, unknown> | undefined;
  if (req.aggs) {
    const reduced = reduceAggs(ok.map((o) => o.result.aggs), req.aggs);
    aggregations = renderAggs(reduced, req.aggs, req.typedKeys ?? false);
  }
  return {
    searchers,
    hits: merged.hits.map((h, i) => Object.assign(h, { source: sources[i] })),
    total: merged.total,
    maxScore: merged.maxScore,
    aggregations,
    shards: {
      total: targets.length,
      successful: ok.length + timedOut,
      skipped: 0,
      failed: failures.length,
      ...(failures.length ? { failures } : {}),
    },
    tookMs: Date.now() - start,
    ...(timedOut ? { timedOut: true } : {}),
  };
}

/**
 * A search ordered by `_shard_doc` asc first (scroll `_doc` pages, PIT export walks), counting no
 * total and computing no aggregation: its hits come shard after shard, so the shards can be asked
 * one at a time, in rank order, from the search_after's shard on, each for what the page still
 * lacks and with its sources inline. One shard answers most pages in one round trip, instead of
 * every shard ranking a full page for the coordinator to throw most of it away.
 */
function isShardDocWalk(req: SearchRequest): boolean {
  const first = req.sort?.[0];
  return first?.field === '_shard_doc' && first.order === 'asc' && req.trackTotalHits === false && !req.aggs && req.from === 0 && req.size > 0;
}

async function walkShardDocOrder(s: EdgeServices, req: SearchRequest, targets: ShardTarget[]): Promise<SearchOutcome> {
  const start = Date.now();
  const after = req.searchAfter?.[0];
  const fromShard = after === undefined || after === null ? -1 : Number(BigInt(after as number | bigint | string) >> 32n);
  const ordered = [...targets].sort((a, b) => a.shardIndex - b.shardIndex);
  const hits: SearchOutcome['hits'] = [];
  const searchers: Array<SearcherRef | undefined> = new Array(targets.length);
  const failures: ShardFailure[] = [];
  const errors: EsError[] = [];
  let asked = 0;
  for (const t of ordered) {
    if (t.shardIndex < fromShard) continue;
    const want = req.size - hits.length;
    if (want <= 0) break;
    asked++;
    const shardReq: ShardQueryRequest = {
      query: targetQuery(req.query, t),
      postFilter: req.postFilter,
      sort: req.sort,
      from: 0,
      size: want,
      searchAfter: t.shardIndex === fromShard ? req.searchAfter : undefined,
      trackTotalHits: false,
      trackScores: req.trackScores,
      minScore: req.minScore,
      slice: t.slice,
      shardIndex: t.shardIndex,
      checkWindow: req.checkWindow,
    };
    s.stats.queryCurrent++;
    const t0 = Date.now();
    try {
      const r = await s.shards.query(t.ref, { req: shardReq, searcher: t.searcher, fetch: true });
      searchers[targets.indexOf(t)] = r.head.searcher;
      const got = r.head.result.hits;
      let sources = r.sources.slice(0, Math.min(r.head.fetched ?? 0, got.length));
      if (sources.length < got.length) sources = sources.concat(await s.shards.fetch(t.ref, got.slice(sources.length).map((h) => h.doc), r.head.searcher));
      got.forEach((h, i) => hits.push(Object.assign(h, { shardIndex: t.shardIndex, source: sources[i] })));
      if (got.length) s.stats.fetchTotal++;
    } catch (e) {
      s.stats.queryFailure++;
      errors.push(asEsError(e));
      failures.push(failureOf(t, e, s.ctx.node.id));
    } finally {
      s.stats.queryCurrent--;
      s.stats.queryTotal++;
      s.stats.queryTimeMs += Date.now() - t0;
    }
  }
  if (asked && errors.length === asked) throw allShardsFailed(errors, 'query', failures.map((f) => ({ ...f })));
  return {
    searchers,
    hits,
    total: undefined,
    maxScore: null,
    shards: { total: targets.length, successful: targets.length - failures.length, skipped: 0, failed: failures.length, ...(failures.length ? { failures } : {}) },
    tookMs: Date.now() - start,
  };
}

/**
 * Renders an ES search response, splicing each stored `_source` as-is (no parse, no stringify of
 * documents). Key order follows ES: _scroll_id, pit_id, took, timed_out, _shards, hits, aggregations.
 */
export function renderSearch(
  out: SearchOutcome,
  req: SearchRequest,
  indexNameOf: (shardIndex: number) => string,
  extra: RenderExtra = {},
): RawJson {
  const chunks: string[] = ['{'];
  if (extra.scrollId !== undefined) chunks.push(`"_scroll_id":${JSON.stringify(extra.scrollId)},`);
  if (extra.pitId !== undefined) chunks.push(`"pit_id":${JSON.stringify(extra.pitId)},`);
  chunks.push(`"took":${out.tookMs},"timed_out":${out.timedOut === true},"_shards":${JSON.stringify(out.shards)},"hits":{`);
  const total = extra.total ?? out.total;
  if (!extra.noTotal && total) {
    chunks.push(extra.restTotalHitsAsInt ? `"total":${total.value},` : `"total":${JSON.stringify(total)},`);
  } else if (extra.restTotalHitsAsInt) chunks.push('"total":-1,');
  chunks.push(`"max_score":${out.maxScore === null || out.maxScore === undefined || Number.isNaN(out.maxScore) ? 'null' : out.maxScore},"hits":[`);
  const sortLen = extra.sortLength;
  out.hits.forEach((h, i) => {
    if (i) chunks.push(',');
    chunks.push(`{"_index":${JSON.stringify(indexNameOf(h.shardIndex))},"_id":${JSON.stringify(h._id)},"_score":${h.score === null || h.score === undefined ? 'null' : h.score}`);
    const raw = (h as unknown as { source?: string }).source;
    if (raw !== undefined) {
      if (req.source === undefined) chunks.push(',"_source":', raw);
      else {
        const filtered = filterSource(raw, req.source);
        if (filtered !== undefined) chunks.push(',"_source":', filtered);
      }
    }
    if (h.sort && extra.docSortValues) chunks.push(`,"sort":[${h.doc}]`);
    else if (h.sort && (sortLen === undefined || sortLen > 0)) {
      chunks.push(`,"sort":${stringify(sortLen === undefined ? h.sort : h.sort.slice(0, sortLen))}`);
    }
    chunks.push('}');
  });
  chunks.push(']}');
  if (out.aggregations) chunks.push(`,"aggregations":${stringify(out.aggregations)}`);
  chunks.push('}');
  return new RawJson([chunks.join('')]);
}
