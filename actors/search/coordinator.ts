import { allShardsFailed, asEsError, EsError } from '../wire/esErrors';
import { stringify } from '../wire/json';
import { RawJson } from '../wire/rest';
import type { SearchServices } from './services';
import type { ShardRef } from '../shard/shardActor';
import { reduceAggs, reduceTotal, renderAggs, type SearchRequest } from '../shard/engine';
import type { LocalSlice, SearcherRef, ShardQueryRequest } from '../shard/engine/types';
import type { QueryPageHead, ShardPage } from '../shard/pageCodec';
import type { RenderSpec } from '../shard/hitRender';
import { ByteWriter } from '../wire/byteWriter';
import { collapseGroupOf, HitList, mergePages, type OutcomeHit } from './hitList';
import { ShardTimeoutError } from './shardClient';
import { UNLIMITED_BUDGET, type SearchBudget } from '../wire/circuitBreaker';

/** Request-breaker labels of the coordinator: the shard pages it holds, the aggregation partials it reduces (ES's). */
const PAGES_LABEL = '<query_results>';
const REDUCE_LABEL = '<reduce_aggs>';

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
  /** `indices_boost` of this shard's index. */
  boost?: number;
}

/** The query a target runs: the request's, restricted by the target's alias filter and boosted by its index boost, if any. */
export function targetQuery(query: unknown, t: { filter?: unknown; boost?: number }): unknown {
  let q = query;
  if (t.filter !== undefined) q = { bool: { must: [q ?? { match_all: {} }], filter: [t.filter] } };
  if (t.boost !== undefined && t.boost !== 1) q = { bool: { must: [q ?? { match_all: {} }], boost: t.boost } }; // indices_boost: ES boosts the shard's query
  return q;
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
  /** The hits, as references into the shard replies (what renderSearch copies from). */
  list: HitList;
  /** The hits as objects, built from `list` on first read (reindex, delete-by-query). */
  readonly hits: OutcomeHit[];
  total: { value: number; relation: 'eq' | 'gte' } | undefined;
  maxScore: number | null;
  aggregations?: Record<string, unknown>;
  /** `profile: true`: per shard, its searches and aggregations sections (ES's SearchProfileResults). */
  profile?: { shards: Array<Record<string, unknown>> };
  shards: { total: number; successful: number; skipped: number; failed: number; failures?: ShardFailure[] };
  tookMs: number;
  /** Some shard did not answer within the search's `timeout` (ES's `timed_out: true`). */
  timedOut?: boolean;
  /** How the shards rendered the hits they sent with their sources, if they did. */
  rendering?: HitRendering;
}

/** Per-search options: the search `timeout` bounds the wait for each shard's answer. */
export interface SearchOptions {
  timeoutMs?: number;
  /**
   * How the response will render the hits (the RenderExtra it will pass): the shards then write the
   * hits they return with their sources ready to send (actors/shard/hitRender.ts).
   */
  render?: HitRendering;
  /** Called as each shard's query answer (or failure) arrives: an async search's progress (and its partial reduces). */
  onShard?: (ok: boolean, total: number, head?: QueryPageHead) => void;
}

/** The per-hit part of a response's rendering ({@link RenderExtra}'s `sortLength`, `docSortValues`). */
export interface HitRendering {
  sortLength?: number;
  docSortValues?: boolean;
}

/** Hits can come rendered by the shard: `_source` goes out as stored, and no hit gets `inner_hits`. */
const renderable = (req: SearchRequest): boolean =>
  !req.collapse && (req.source === undefined || (req.source.fetch && !req.source.includes.length && !req.source.excludes.length));

/** The shard's render spec for target `t`, when the search renders at the shards. */
const renderSpec = (t: ShardTarget, render: HitRendering | undefined): RenderSpec | undefined =>
  render && { index: t.ref.index, ...(render.sortLength !== undefined ? { sortLength: render.sortLength } : {}), ...(render.docSortValues ? { docSortValues: true } : {}) };

const sameRendering = (a: HitRendering, b: RenderExtra) => a.sortLength === b.sortLength && !!a.docSortValues === !!b.docSortValues;

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

/** What one shard answered, or why it did not. */
type Answer = { ok: true; page: ShardPage<QueryPageHead> } | { ok: false; error: unknown };

/** Source pages of docs of one shard (the fetch phase); ShardClient.fetch in a search. */
export type SourceFetcher = (t: ShardTarget, docs: number[], searcher: SearcherRef) => Promise<ShardPage[]>;

/**
 * Query-then-fetch over shard actors: fans out, merges the top hits, fetches only the winners'
 * sources (inline when there is a single shard), and reduces aggregations. Partial failures go in
 * `_shards.failures`; when every shard fails, ES's `all shards failed` error.
 */
export async function executeSearch(s: SearchServices, req: SearchRequest, targets: ShardTarget[], opts: SearchOptions = {}): Promise<SearchOutcome> {
  const start = Date.now();
  const single = targets.length === 1;
  // The pages and partials this search holds until it is rendered count on the request breaker.
  const scope = s.ctx.breakers?.searchScope();
  try {
    const budget = scope ?? UNLIMITED_BUDGET;
    const render = opts.render && renderable(req) ? opts.render : undefined;
    const out = targets.length > 1 && isShardDocWalk(req) ? await walkShardDocOrder(s, req, targets, budget, render) : await querySearch(s, req, targets, { ...opts, render }, single, start, budget);
    if (render) out.rendering = render;
    return out;
  } finally {
    scope?.close();
  }
}

async function querySearch(s: SearchServices, req: SearchRequest, targets: ShardTarget[], opts: SearchOptions, single: boolean, start: number, budget: SearchBudget): Promise<SearchOutcome> {
  s.stats.queryCurrent += targets.length;
  const answers = await Promise.all(
    targets.map((t) =>
      s.shards.query(t.ref, { req: shardRequest(req, t, single), searcher: t.searcher, fetch: single, ...(single && opts.render ? { render: renderSpec(t, opts.render) } : {}) }, { timeoutMs: opts.timeoutMs }).then(
        (page): Answer => (opts.onShard?.(true, targets.length, page.head), { ok: true, page }),
        (error): Answer => (opts.onShard?.(false, targets.length), { ok: false, error }),
      ),
    ),
  );
  s.stats.queryCurrent -= targets.length;
  const qTime = Date.now() - start;
  for (const a of answers) {
    s.stats.queryTotal++;
    s.stats.queryTimeMs += qTime;
    if (!a.ok && !(a.error instanceof ShardTimeoutError)) s.stats.queryFailure++;
  }
  const fetchStart = Date.now();
  const out = await assembleSearch(withSortValueTypes(s, req, targets), targets, answers, s.ctx.node.id, async (t, docs, searcher) => {
    s.stats.fetchCurrent++;
    try {
      return await s.shards.fetch(t.ref, docs, searcher);
    } finally {
      s.stats.fetchCurrent--;
    }
  }, budget);
  if (out.list.length) {
    s.stats.fetchTotal += out.list.sourceShards();
    s.stats.fetchTimeMs += Date.now() - fetchStart;
  }
  out.tookMs = Date.now() - start;
  return out;
}

/** The shard request of a target: a single shard pages itself; several rank `from + size` each. */
function shardRequest(req: SearchRequest, t: ShardTarget, single: boolean): ShardQueryRequest {
  return {
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
    ...(req.profile ? { profile: true } : {}),
    slice: t.slice,
    shardIndex: t.shardIndex,
    checkWindow: req.checkWindow,
    ...hitMetaWanted(req),
  };
}

type HitOptions = 'version' | 'seqNoPrimaryTerm' | 'namedQueriesScore' | 'docvalueFields' | 'fields' | 'storedFields' | 'collapse' | 'rescore';

/** What each hit carries, asked of the shards: metadata (`_routing` comes whenever a doc has one), fields, collapsing, rescoring. */
function hitMetaWanted(req: SearchRequest): Pick<ShardQueryRequest, HitOptions> {
  return {
    ...(req.version ? { version: true } : {}),
    ...(req.seqNoPrimaryTerm ? { seqNoPrimaryTerm: true } : {}),
    ...(req.namedQueriesScore ? { namedQueriesScore: true } : {}),
    ...(req.docvalueFields ? { docvalueFields: req.docvalueFields } : {}),
    ...(req.fields ? { fields: req.fields } : {}),
    ...(req.storedFields ? { storedFields: req.storedFields } : {}),
    ...(req.collapse ? { collapse: { field: req.collapse.field } } : {}),
    ...(req.rescore ? { rescore: req.rescore } : {}),
  };
}

/** Sort keys on `ip` fields merge shard pages by address bytes (their values are shown as text). */
function withSortValueTypes(s: SearchServices, req: SearchRequest, targets: ShardTarget[]): SearchRequest {
  if (!req.sort?.length) return req;
  const isIp = (field: string) => targets.some((t) => s.cluster?.get(t.ref.index)?.mapping.fieldType(field) === 'ip');
  if (!req.sort.some((k) => isIp(k.field))) return req;
  return { ...req, sort: req.sort.map((k) => (isIp(k.field) ? { ...k, valueType: 'ip' as const } : k)) };
}

/**
 * The reduce and fetch phases over the shards' page replies (pure but for `fetch`): merges the
 * hits, fetches the winners' sources the replies did not carry, reduces totals and aggregations.
 */
export async function assembleSearch(
  req: SearchRequest, targets: ShardTarget[], answers: Answer[], node: string, fetch: SourceFetcher, budget: SearchBudget = UNLIMITED_BUDGET,
): Promise<SearchOutcome> {
  const single = targets.length === 1;
  const failures: ShardFailure[] = [];
  const errors: EsError[] = [];
  const list = new HitList();
  const ok: Array<{ t: ShardTarget; page: ShardPage<QueryPageHead>; p: number }> = [];
  const searchers: Array<SearcherRef | undefined> = [];
  let timedOut = 0;
  answers.forEach((a, i) => {
    if (a.ok) {
      ok.push({ t: targets[i], page: a.page, p: list.addPage(a.page, targets[i].shardIndex, targets[i].ref.index) });
      searchers[i] = a.page.head.searcher;
    } else if (a.error instanceof ShardTimeoutError) {
      timedOut++; // ES: a shard past the search timeout contributes what it has (here: nothing), not a failure
    } else {
      errors.push(asEsError(a.error));
      failures.push(failureOf(targets[i], a.error, node));
    }
  });
  if (!ok.length && targets.length && !timedOut) {
    throw allShardsFailed(errors, 'query', failures.map((f) => ({ ...f })));
  }
  budget.reserve(ok.reduce((n, o) => n + o.page.b.length, 0), PAGES_LABEL);
  mergePages(list, ok, { sort: req.sort, from: single ? 0 : req.from, size: req.size }, req.collapse ? collapseGroupOf(req.collapse.field) : undefined);
  // Fetch phase: sources of the winners the query replies did not carry, grouped by shard.
  const byPage = new Map<number, { docs: number[]; pos: number[] }>();
  for (let i = 0; i < list.length; i++) {
    if (list.hasSource(i)) continue;
    const p = list.pageOf(i);
    let g = byPage.get(p);
    if (!g) byPage.set(p, (g = { docs: [], pos: [] }));
    g.docs.push(list.doc(i));
    g.pos.push(i);
  }
  await Promise.all(
    [...byPage].map(async ([p, g]) => {
      const o = ok.find((x) => x.p === p)!;
      // The fetch may reach another copy than the query did: it waits until it applied the query's searcher.
      let at = 0;
      const pages = await fetch(o.t, g.docs, o.page.head.searcher);
      budget.reserve(pages.reduce((n, x) => n + x.b.length, 0), PAGES_LABEL);
      for (const page of pages) {
        const fp = list.addPage(page, o.t.shardIndex);
        for (let r = 0; r < page.fetched; r++) list.setSource(g.pos[at++], fp, r);
      }
    }),
  );
  const shardResults = ok.map((o) => ({ shardIndex: o.t.shardIndex, result: { ...o.page.head, hits: [] } }));
  let aggregations: Record<string, unknown> | undefined;
  if (req.aggs) {
    // ES's QueryPhaseResultConsumer estimate: the partials' serialized size, half again for the reduce
    budget.reserve(1.5 * ok.reduce((n, o) => n + o.page.b.readUInt32LE(12), 0), REDUCE_LABEL);
    const reduced = reduceAggs(ok.map((o) => o.page.head.aggs), req.aggs);
    aggregations = renderAggs(reduced, req.aggs, req.typedKeys ?? false, budget.maxBuckets);
  }
  const profile = req.profile
    ? {
      shards: ok
        .map((o) => ({
          id: `[${node}][${o.t.ref.index}][${o.t.ref.n}]`, node_id: node, shard_id: o.t.ref.n, index: o.t.ref.index, cluster: '(local)',
          searches: o.page.head.profile?.searches ?? [], aggregations: o.page.head.profile?.aggregations ?? [],
        }))
        .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
    }
    : undefined;
  return outcome({
    searchers,
    list,
    total: reduceTotal(shardResults, req.trackTotalHits),
    maxScore: maxScoreOf(ok.map((o) => o.page.head.maxScore)),
    aggregations,
    ...(profile ? { profile } : {}),
    shards: {
      total: targets.length,
      successful: ok.length + timedOut,
      skipped: 0,
      failed: failures.length,
      ...(failures.length ? { failures } : {}),
    },
    tookMs: 0,
    ...(timedOut ? { timedOut: true } : {}),
  });
}

function maxScoreOf(scores: Array<number | null>): number | null {
  let max: number | null = null;
  for (const s of scores) if (s !== null && !Number.isNaN(s) && (max === null || s > max)) max = s;
  return max;
}

/** A SearchOutcome whose `hits` objects are built only when someone reads them. */
function outcome(o: Omit<SearchOutcome, 'hits'>): SearchOutcome {
  return Object.defineProperty(o, 'hits', { get: () => o.list.toObjects(), enumerable: false }) as SearchOutcome;
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

async function walkShardDocOrder(s: SearchServices, req: SearchRequest, targets: ShardTarget[], budget: SearchBudget, render?: HitRendering): Promise<SearchOutcome> {
  const start = Date.now();
  const after = req.searchAfter?.[0];
  const fromShard = after === undefined || after === null ? -1 : Number(BigInt(after as number | bigint | string) >> 32n);
  const ordered = [...targets].sort((a, b) => a.shardIndex - b.shardIndex);
  const list = new HitList();
  const searchers: Array<SearcherRef | undefined> = new Array(targets.length);
  const failures: ShardFailure[] = [];
  const errors: EsError[] = [];
  let asked = 0;
  for (const t of ordered) {
    if (t.shardIndex < fromShard) continue;
    const want = req.size - list.length;
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
      ...hitMetaWanted(req),
    };
    s.stats.queryCurrent++;
    const t0 = Date.now();
    try {
      const page = await s.shards.query(t.ref, { req: shardReq, searcher: t.searcher, fetch: true, ...(render ? { render: renderSpec(t, render) } : {}) });
      budget.reserve(page.b.length, PAGES_LABEL);
      searchers[targets.indexOf(t)] = page.head.searcher;
      const p = list.addPage(page, t.shardIndex, t.ref.index);
      const first = list.length;
      list.pushRows(p, 0, page.n);
      if (page.fetched < page.n) {
        const docs: number[] = [];
        for (let r = page.fetched; r < page.n; r++) docs.push(page.doc(r));
        let at = first + page.fetched;
        const fetched = await s.shards.fetch(t.ref, docs, page.head.searcher);
        budget.reserve(fetched.reduce((n, x) => n + x.b.length, 0), PAGES_LABEL);
        for (const fp of fetched) {
          const q = list.addPage(fp, t.shardIndex);
          for (let r = 0; r < fp.fetched; r++) list.setSource(at++, q, r);
        }
      }
      if (page.n) s.stats.fetchTotal++;
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
  return outcome({
    searchers,
    list,
    total: undefined,
    maxScore: null,
    shards: { total: targets.length, successful: targets.length - failures.length, skipped: 0, failed: failures.length, ...(failures.length ? { failures } : {}) },
    tookMs: Date.now() - start,
  });
}

/** Index name of a hit's shard, by the shard's rank (`shardIndex`), whatever subset `targets` holds. */
export function indexNames(targets: readonly { ref: { index: string }; shardIndex: number }[]): (shardIndex: number) => string {
  const names = new Map(targets.map((t) => [t.shardIndex, t.ref.index]));
  return (i) => names.get(i) ?? '';
}

/**
 * Renders an ES search response, copying each hit's `_id`, `_source` and sort values from the
 * shard replies' bytes (no parse, no stringify of documents, no object per hit). Key order follows
 * ES: _scroll_id, pit_id, took, timed_out, _shards, hits, aggregations.
 */
export function renderSearch(
  out: SearchOutcome,
  req: SearchRequest,
  indexNameOf: (shardIndex: number) => string,
  extra: RenderExtra = {},
): RawJson {
  const list = out.list;
  const runs = out.rendering && sameRendering(out.rendering, extra) && renderable(req) ? list.renderedRuns(indexNameOf) : undefined;
  const w = new ByteWriter(runs ? 1024 : Math.max(4096, list.byteEstimate() + 1024));
  w.u8(0x7b);
  if (extra.scrollId !== undefined) w.utf8(`"_scroll_id":${JSON.stringify(extra.scrollId)},`);
  if (extra.pitId !== undefined) w.utf8(`"pit_id":${JSON.stringify(extra.pitId)},`);
  w.utf8(`"took":${out.tookMs},"timed_out":${out.timedOut === true},"_shards":${JSON.stringify(out.shards)},"hits":{`);
  const total = extra.total ?? out.total;
  if (!extra.noTotal && total) {
    w.utf8(extra.restTotalHitsAsInt ? `"total":${total.value},` : `"total":${JSON.stringify(total)},`);
  } else if (extra.restTotalHitsAsInt) w.ascii('"total":-1,');
  w.ascii(`"max_score":${out.maxScore === null || out.maxScore === undefined || Number.isNaN(out.maxScore) ? 'null' : out.maxScore},"hits":[`);
  if (runs) {
    // The hits as the shards wrote them: byte ranges of their pages, sent as they are (one writev).
    const chunks: Buffer[] = [w.take()];
    runs.forEach(([p, from, to], k) => {
      const page = list.pages[p];
      chunks.push(page.b.subarray(page.renderedStart(from), page.renderedEnd(to) + (k < runs.length - 1 ? 1 : 0))); // + its comma
    });
    const tail = new ByteWriter(64);
    tail.ascii(']}');
    if (out.aggregations) tail.utf8(`,"aggregations":${stringify(out.aggregations)}`);
    tail.u8(0x7d);
    chunks.push(tail.take());
    return new RawJson(chunks);
  }
  const prefixes = new Map<number, Buffer>();
  for (let i = 0; i < list.length; i++) {
    if (i) w.u8(0x2c);
    const shard = list.shardIndex(i);
    let prefix = prefixes.get(shard);
    if (!prefix) prefixes.set(shard, (prefix = Buffer.from(`{"_index":${JSON.stringify(indexNameOf(shard))},"_id":`)));
    list.writeHit(w, i, prefix, req.source, extra.sortLength, extra.docSortValues);
  }
  w.ascii(']}');
  if (out.aggregations) w.utf8(`,"aggregations":${stringify(out.aggregations)}`);
  if (out.profile) w.utf8(`,"profile":${stringify(out.profile)}`);
  w.u8(0x7d);
  return new RawJson([w.take()]);
}
