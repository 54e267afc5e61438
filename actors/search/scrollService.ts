import { EsError, allShardsFailed } from '../wire/esErrors';
import { requestsInFlight } from '../wire/inFlight';
import type { EsRequest, EsResponse } from '../wire/rest';
import { parseBody } from '../wire/json';
import { parseSearchRequest, type SearchRequest } from '../shard/engine';
import type { SortSpec } from '../shard/engine/types';
import type { ContextHandle, ContextRecord } from '../contexts';
import { executeSearch, renderSearch, sliceTargets, type SearchOutcome, type ShardTarget } from './coordinator';
import { contextMissing, mayUse, requireLog, useContext } from './contextUse';
import { checkContextQuota } from './contextQuota';
import { orderedTargets, refuseFilteredAliases, searchIndices } from './indices';
import { indexNames } from './coordinator';
import { checkMaxTermsCount, withIndexBoosts } from './searchRewrite';
import { keepAliveLimits, keepAliveOrThrow, keepAliveTooLarge, parseKeepAlive } from './keepAlive';
import type { PagingServices, SearchCall } from './services';

/**
 * The scroll service (ES `SearchService` scroll paths): a scroll's first page opens its context,
 * each continuation searches after the position its id carries, and clears free contexts wherever
 * their owner runs.
 */

type Caller = Pick<EsRequest, 'auth' | 'opaqueId'>;

/** Internal sort of a scroll: the user's sort (or _score) plus a unique tiebreaker, so the position is exact. */
function scrollSort(sort: SortSpec[] | undefined): SortSpec[] {
  // `_doc` alone: any doc order will do (ES defines none across shards), so walk shard after shard
  // (`_shard_doc`), which lets the coordinator ask one shard per page (coordinator.ts).
  if (isDocOrder(sort)) return [{ field: '_shard_doc', order: 'asc' }];
  const base = sort && sort.length ? sort : [{ field: '_score', order: 'desc' as const }];
  return base.some((x) => x.field === '_shard_doc') ? base : [...base, { field: '_shard_doc', order: 'asc' }];
}

/** The scroll fast path: `sort: ["_doc"]` (ascending). */
const isDocOrder = (sort: SortSpec[] | undefined): boolean => sort?.length === 1 && sort[0].field === '_doc' && sort[0].order === 'asc';

/** The first page of a scroll: exact total, and a sort whose last value pins the position. */
function scrollFirstPage(sr: SearchRequest): SearchRequest {
  return { ...sr, sort: scrollSort(sr.sort), trackTotalHits: true, checkWindow: 'scroll' };
}

/** Later pages: same search after the position in the scroll id; no aggregations, no counting. */
function scrollContinuation(first: SearchRequest): SearchRequest {
  const { aggs: _a, ...continuation } = first;
  return { ...continuation, trackTotalHits: false };
}

/**
 * A scroll's context data rebuilt from its opened fact (revival after a restart): the request is
 * parsed again exactly as the client sent it.
 */
export function scrollFromFact(request: { body?: string; params: Record<string, string> }, total: { value: number; relation: 'eq' | 'gte' } | undefined): NonNullable<ContextRecord['scroll']> {
  const sr = parseSearchRequest(request.body ? parseBody(request.body) : undefined, request.params, { scroll: true, indicesInPath: true, text: request.body });
  return { request: scrollContinuation(scrollFirstPage(sr)), total, sortLength: sr.sort?.length ?? 0, docOrder: isDocOrder(sr.sort) };
}

/** A scroll just opened: its first page (hits with their sources), id and context. */
export interface ScrollStart {
  out: SearchOutcome;
  targets: ShardTarget[];
  scrollId: string;
  rec: ContextRecord;
  total: { value: number; relation: 'eq' | 'gte' };
}

/**
 * Opens a scroll and runs its first page: the registry spawns its context actor, whose opened fact
 * is in the lifecycle log before this resolves. Also what reindex and delete-by-query page with.
 */
export async function startScroll(s: PagingServices, req: SearchCall, sr: SearchRequest): Promise<ScrollStart> {
  requireLog(s);
  const keepAliveMs = keepAliveOrThrow(s, sr.scrollKeepAliveMs!);
  if (!req.internal) checkContextQuota(s, req, 'scroll');
  const indices = await searchIndices(s, req);
  refuseFilteredAliases(s, req.params.index, indices, 'scroll');
  checkMaxTermsCount(sr, indices);
  const all = withIndexBoosts(s, sr, orderedTargets(indices, sr.routing), req.query.ignore_unavailable === 'true');
  const targets = sliceTargets(all, sr.slice, 'scroll');
  const { maxOpenScroll } = keepAliveLimits(s);
  if (s.contexts.shardContexts('scroll') + targets.length > maxOpenScroll) {
    throw allShardsFailed([
      new EsError(
        'too_many_scroll_contexts_exception',
        429,
        `Trying to create too many scroll contexts. Must be less than or equal to: [${maxOpenScroll}]. This limit can be set by changing the [search.max_open_scroll_context] setting.`,
      ),
    ]);
  }
  const internal = scrollFirstPage(sr);
  const out = await executeSearch(s, internal, targets, { render: { sortLength: sr.sort?.length ?? 0, docSortValues: isDocOrder(sr.sort) } });
  const total = out.total ?? { value: 0, relation: 'eq' as const };
  const request = { ...(req.text !== undefined ? { body: req.text } : {}), params: { ...req.query } };
  const rec = s.contexts.open({
    kind: 'scroll',
    indices: indices.map((i) => i.name),
    shards: targets.map((t, i) => ({
      index: t.ref.index,
      indexUuid: t.ref.indexUuid,
      n: t.ref.n,
      shardIndex: t.shardIndex,
      searcher: out.searchers[i] ?? { maxDoc: 0, seqNo: -1 },
      ...(t.slice ? { slice: t.slice } : {}),
    })),
    keepAliveMs,
    owner: s.security?.ownerOf(req.auth),
    scroll: { request: scrollContinuation(internal), total, sortLength: sr.sort?.length ?? 0, docOrder: isDocOrder(sr.sort) },
    correlationId: req.opaqueId,
    // The request and total let the context be revived after a restart (actors/contexts/revive.ts).
    openedData: { ...(sr.slice ? { slice: sr.slice } : {}), request, total },
  });
  const scrollId = s.ids.scrollId(rec.id, { after: out.list.lastSort(), page: 1 });
  await rec.appended; // the opened fact is in the log before the client sees the id
  return { out, targets, scrollId, rec, total };
}

/** A search with `scroll`: the scroll's first page, rendered with its id. */
export async function openScroll(s: PagingServices, req: SearchCall, sr: SearchRequest): Promise<EsResponse> {
  const { out, targets, scrollId, total } = await startScroll(s, req, sr);
  return {
    body: renderSearch(out, sr, indexNames(targets), {
      scrollId,
      restTotalHitsAsInt: sr.restTotalHitsAsInt,
      sortLength: sr.sort?.length ?? 0,
      total,
      docSortValues: isDocOrder(sr.sort),
    }),
  };
}

/**
 * Scroll read-ahead: once a continuation has answered a page, the page after it is searched (off
 * the response path, on the scroll's pinned searchers, so it is the page the next continuation
 * would find) and kept for the continuation that sends the next scroll id. That continuation still
 * does everything else (authorization, context lookup, keep-alive, ownership), and takes the page
 * only if nothing failed. One page per context (a newer one replaces it; clearing the scroll drops
 * it); a page nobody asks for within {@link AHEAD_TTL_MS} is dropped. Bounded per node in pages
 * and bytes (the pages are not on the request breaker while they wait), and done only while the
 * process handles at most {@link AHEAD_MAX_IN_FLIGHT} requests: it fills the time a lone client
 * spends reading a page, and under load it would take CPU from other requests.
 */
const AHEAD_MAX_PAGES = 16;
const AHEAD_MAX_BYTES = 64 * 1024 * 1024;
const AHEAD_TTL_MS = 30_000;
/** Requests in flight in the process (this continuation included) above which nothing is read ahead. */
const AHEAD_MAX_IN_FLIGHT = 2;

interface Ahead {
  scrollId: string;
  out: Promise<SearchOutcome | undefined>;
  bytes: number;
  timer: NodeJS.Timeout;
}

interface NodeAhead {
  /** By context id. */
  pages: Map<string, Ahead>;
  bytes: number;
  taken: number;
}

class ReadAhead {
  private readonly byNode = new WeakMap<object, NodeAhead>();

  /** Pages waiting and pages taken by a continuation on this node (tests, diagnostics). */
  stats(s: PagingServices): { waiting: number; bytes: number; taken: number } {
    const n = this.byNode.get(s.ctx);
    return { waiting: n?.pages.size ?? 0, bytes: n?.bytes ?? 0, taken: n?.taken ?? 0 };
  }

  /** The page computed ahead for this scroll id (consumed), or undefined. */
  async take(s: PagingServices, contextId: string, scrollId: string): Promise<SearchOutcome | undefined> {
    const n = this.byNode.get(s.ctx);
    const a = n?.pages.get(contextId);
    if (!n || !a || a.scrollId !== scrollId) return undefined;
    this.drop(n, contextId, a);
    const out = await a.out;
    if (out) n.taken++;
    return out;
  }

  /** Drops what waits for a context (cleared, released). */
  forget(s: PagingServices, contextId: string): void {
    const n = this.byNode.get(s.ctx);
    const a = n?.pages.get(contextId);
    if (n && a) this.drop(n, contextId, a);
  }

  start(s: PagingServices, contextId: string, scrollId: string, search: () => Promise<SearchOutcome>): void {
    let n = this.byNode.get(s.ctx);
    if (!n) this.byNode.set(s.ctx, (n = { pages: new Map(), bytes: 0, taken: 0 }));
    const node = n;
    const old = node.pages.get(contextId);
    if (old) this.drop(node, contextId, old);
    // speculative work only while the process has room: under load it would take CPU from real requests
    if (requestsInFlight.n > AHEAD_MAX_IN_FLIGHT) return;
    if (node.pages.size >= AHEAD_MAX_PAGES || node.bytes >= AHEAD_MAX_BYTES) return;
    const a: Ahead = { scrollId, out: Promise.resolve(undefined), bytes: 0, timer: setTimeout(() => this.drop(node, contextId, a), AHEAD_TTL_MS) };
    a.timer.unref();
    a.out = new Promise<SearchOutcome | undefined>((resolve) => {
      // after this page's response is written (the route renders it in this tick's microtasks)
      setImmediate(() => {
        if (node.pages.get(contextId) !== a) return resolve(undefined);
        search().then(
          (out) => {
            if (out.shards.failed || out.timedOut) return resolve(undefined);
            if (node.pages.get(contextId) === a) {
              a.bytes = out.list.pages.reduce((k, p) => k + p.b.length, 0);
              node.bytes += a.bytes;
            }
            resolve(out);
          },
          () => resolve(undefined), // the continuation searches again and reports what it finds
        );
      });
    });
    node.pages.set(contextId, a);
  }

  private drop(n: NodeAhead, contextId: string, a: Ahead): void {
    if (n.pages.get(contextId) !== a) return;
    n.pages.delete(contextId);
    n.bytes -= a.bytes;
    clearTimeout(a.timer);
  }
}

const readAhead = new ReadAhead();

/** The scroll read-ahead's figures on a node. */
export const scrollReadAhead = (s: PagingServices) => readAhead.stats(s);

/** One scroll page: its hits (with sources), the context, and the id of the next page (none once released). */
export interface ScrollPage {
  out: SearchOutcome;
  sr: SearchRequest;
  targets: ShardTarget[];
  /** The context (its scroll data), wherever its owner node runs. */
  rec: Pick<ContextHandle, 'id' | 'scroll'>;
  scrollId?: string;
}

/**
 * The next page of a scroll (the continuation route, and reindex / delete-by-query): authorizes,
 * extends or (seed: without `scroll`) releases the context, and runs the search after the position
 * the scroll id carries.
 */
export async function scrollPage(s: PagingServices, req: Caller, scrollId: string, scroll: string | undefined): Promise<ScrollPage> {
  const { contextId, pos } = s.ids.parseScrollId(scrollId);
  // ES authorizes the scroll action (granted on any index) before it looks the context up.
  if (s.security) await s.security.authorize(req.auth, 'indices:data/read/scroll');
  const limits = keepAliveLimits(s);
  let keepAliveMs = limits.defaultMs;
  if (scroll !== undefined) {
    keepAliveMs = parseKeepAlive(String(scroll), 'scroll');
    if (keepAliveMs > limits.maxMs) {
      // ES frees the context when a continuation asks for too long a keep-alive.
      await s.contextService.release(contextId, 'scroll', 'keep_alive_too_large', req.opaqueId, (o) => mayUse(s, req, o));
      throw allShardsFailed([keepAliveTooLarge(keepAliveMs, limits.maxMs)]);
    }
  }
  const h = await useContext(s, req, contextId, 'scroll', keepAliveMs);
  const started = Date.now();
  try {
    if (!h.scroll) throw contextMissing(s, contextId, 'query', req);
    const sr = { ...(h.scroll.request as SearchRequest), searchAfter: pos.after };
    // indices_boost applies to every page (the boosts of the indices the scroll pinned)
    const pinned = h.shards.map((p) => ({
      ref: { index: p.index, indexUuid: p.indexUuid, n: p.n },
      shardIndex: p.shardIndex,
      searcher: p.searcher,
      slice: p.slice,
    }));
    const targets = sr.indicesBoost?.length ? withIndexBoosts(s, sr, pinned, true) : pinned;
    const render = { sortLength: h.scroll.sortLength, docSortValues: h.scroll.docOrder };
    const out = (await readAhead.take(s, contextId, scrollId)) ?? (await executeSearch(s, sr, targets, { render }));
    out.tookMs = Math.max(1, out.tookMs);
    await h.ready; // the extension is in the log before the client sees the page (revival)
    const next = { after: out.list.length ? out.list.lastSort() : pos.after, page: pos.page + 1 };
    if (scroll === undefined) return { out, sr, targets, rec: h }; // seed: a continuation without `scroll` releases the context
    const nextId = s.ids.scrollId(h.id, next);
    // the client most likely asks for the next page: it is searched while the client reads this one
    if (out.list.length > 0 && !out.shards.failed && !out.timedOut) {
      readAhead.start(s, contextId, nextId, () => executeSearch(s, { ...sr, searchAfter: next.after }, targets, { render }));
    }
    return { out, sr, targets, rec: h, scrollId: nextId };
  } finally {
    h.done();
    if (scroll === undefined) {
      readAhead.forget(s, contextId);
      await h.release('no_scroll_param', req.opaqueId);
    }
    s.stats.scrollTimeMs += Date.now() - started;
  }
}

/** DELETE /_search/scroll: frees the caller's contexts among `ids`; how many were freed. */
export async function clearScrolls(s: PagingServices, req: Caller, ids: string[]): Promise<number> {
  const owner = s.security?.ownerOf(req.auth);
  let freed = 0;
  const seen = new Set<string>();
  for (const id of ids) {
    const { contextId } = s.ids.parseScrollId(id); // junk -> 400 Cannot parse scroll id
    if (seen.has(contextId)) continue;
    seen.add(contextId);
    readAhead.forget(s, contextId);
    // Only the caller's own contexts are freed, wherever their owner node runs.
    freed += await s.contextService.clear(contextId, 'scroll', owner?.username, req.opaqueId, (o) => mayUse(s, req, o));
  }
  return freed;
}

/**
 * `_all`: every scroll context of the caller on every node. As ES, num_freed counts the nodes that
 * acknowledged (each live node's contexts are freed through their owner), not the contexts.
 */
export async function clearAllScrolls(s: PagingServices, req: Caller): Promise<number> {
  const owner = s.security?.ownerOf(req.auth);
  for (const st of s.directory.open('scroll')) {
    if (!mayUse(s, req, st.owner)) continue;
    await s.contextService.clear(st.id, 'scroll', owner?.username, req.opaqueId, (o) => mayUse(s, req, o));
  }
  return Math.max(1, s.membership.liveIds().length);
}
