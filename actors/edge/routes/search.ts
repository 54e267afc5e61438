import { EsError, allShardsFailed, illegalArgument, searchContextMissing } from '../../wire/esErrors';
import type { EsRequest, EsResponse, Router } from '../router';
import type { EdgeServices } from '../services';
import { executeSearch, renderSearch, sliceTargets, targetQuery, type SearchOutcome, type ShardTarget } from '../coordinator';
import { refuseFilteredAliases, withAliasFilters } from '../aliasFilters';
import { resolveOptions } from './indices';
import { resolveExpression, routingSpec, type IndexState, type ResolveOptions } from '../../cluster';
import type { ContextDirectory, ContextHandle, ContextRecord, ContextRegistry, ContextService } from '../../contexts';
import type { IdCodec } from '../ids';
import { parseSearchRequest, parseTimeValue, searchShards, withImplicitShardDoc, type SearchRequest } from '../../shard/engine';
import type { SortSpec } from '../../shard/engine/types';
import { checkKeepAlive, KeepAliveTooLarge } from '../../../machines/keepAlive';
import { parseBody } from '../../wire/json';

/** What the paging routes share: registry of contexts and the id codec. */
export interface PagingServices extends EdgeServices {
  /** This node's own contexts (their actors). */
  contexts: ContextRegistry;
  /** Every context of the cluster, as the lifecycle log tells them. */
  directory: ContextDirectory;
  /** Uses, clears and adoptions of contexts wherever their owner runs. */
  contextService: ContextService;
  ids: IdCodec;
}

const READ = 'indices:data/read/search';

/** search.max_keep_alive etc., read live so `PUT /_cluster/settings` takes effect at once. */
export function keepAliveLimits(s: EdgeServices) {
  return {
    defaultMs: parseTimeValue(s.ctx.settings.str('search.default_keep_alive', '5m'), 'search.default_keep_alive'),
    maxMs: parseTimeValue(s.ctx.settings.str('search.max_keep_alive', '24h'), 'search.max_keep_alive'),
    maxOpenScroll: s.ctx.settings.num('search.max_open_scroll_context', 500),
  };
}

/** Checks a keep-alive against search.max_keep_alive; too large -> ES's 400 (shard failure wrap). */
export function keepAliveOrThrow(s: EdgeServices, ms: number): number {
  try {
    return checkKeepAlive(ms, keepAliveLimits(s).maxMs);
  } catch (e) {
    if (e instanceof KeepAliveTooLarge) throw allShardsFailed([illegalArgument(e.message)]);
    throw e;
  }
}

/** Shards of the indices in ES's PIT order: (index name, uuid, shard number); rank = shardIndex. */
export function orderedTargets(indices: IndexState[], routing?: string): ShardTarget[] {
  const sorted = [...indices].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.uuid < b.uuid ? -1 : 1));
  // `routing=a,b` searches only the shards those values route to (ES OperationRouting.searchShards)
  const values = routing ? [...new Set(routing.split(',').map((r) => r.trim()).filter(Boolean))] : [];
  const out: ShardTarget[] = [];
  for (const idx of sorted) {
    const only = values.length ? new Set(values.flatMap((r) => searchShards(routingSpec(idx.settings), r))) : undefined;
    for (const sh of idx.shards) if (!only || only.has(sh.ref.n)) out.push({ ref: sh.ref, shardIndex: out.length });
  }
  return out;
}

/** Index name of a hit's shard, by the shard's rank (`shardIndex`), whatever subset `targets` holds. */
export function indexNames(targets: readonly { ref: { index: string }; shardIndex: number }[]): (shardIndex: number) => string {
  const names = new Map(targets.map((t) => [t.shardIndex, t.ref.index]));
  return (i) => names.get(i) ?? '';
}

/**
 * One search as the paging routes run it, whether it came as its own REST request or as an
 * `_msearch` item (or a reindex's scroll): the index expression, URL-style parameters, the parsed
 * body and who is calling. Every search goes through the same parsing, authorization and execution.
 */
export interface SearchCall {
  /** `index`: comma list, wildcards, `_all`; absent = all indices. */
  readonly params: Record<string, string>;
  /** URL parameters (an msearch item: its header's options plus the msearch URL's). */
  readonly query: Record<string, string>;
  /** Parsed body (lossless longs); undefined when there is none. */
  readonly body: unknown;
  /** The body as received (a scroll's opened fact keeps it for revival; parse errors locate in it). */
  readonly text?: string;
  readonly auth?: unknown;
  readonly opaqueId?: string;
}

/** A REST request as a SearchCall. */
export function searchCallOf(req: EsRequest): SearchCall {
  return {
    params: req.params,
    query: req.query,
    body: req.json(),
    text: req.body?.length ? req.body.toString('utf8') : undefined,
    auth: req.auth,
    opaqueId: req.opaqueId,
  };
}

/** Parses and validates one search (ES's texts); throws the 400 before anything runs. */
export function parseSearchCall(call: SearchCall, path?: string): SearchRequest {
  return parseSearchRequest(call.body, call.query, { scroll: call.query.scroll !== undefined, indicesInPath: !!call.params.index, path });
}

/** Runs one parsed search: a PIT search, the first page of a scroll, or a plain search. */
export async function runSearch(s: PagingServices, call: SearchCall, sr: SearchRequest): Promise<EsResponse> {
  if (sr.pit) return pitSearch(s, call, sr);
  if (sr.scrollKeepAliveMs !== undefined) return openScroll(s, call, sr);
  return plainSearch(s, call, sr);
}

/** Resolves the request's indices and filters them to those the caller may read. */
export async function searchIndices(s: EdgeServices, req: Pick<SearchCall, 'params' | 'query' | 'auth'>, action = READ): Promise<IndexState[]> {
  let expr = req.params.index;
  const opts = resolveOptions(req);
  if (s.security) {
    // Authorize before resolving (ES IndicesAndAliasesResolver + RBACEngine): a name the caller may not
    // use is refused with 403 whether or not it exists, so the answer tells nothing about other
    // indices; only a permitted name that is missing gets 404. With ignore_unavailable such names are
    // dropped instead, as ES treats them as unavailable.
    const parts = (expr ?? '').split(',');
    const explicit = parts.filter((p) => p && !p.includes('*') && !p.includes('?') && !p.startsWith('-') && p !== '_all');
    if (explicit.length) {
      if (opts.ignoreUnavailable) {
        const allowed = new Set(s.security.allowedIndices(req.auth, action, explicit));
        const kept = parts.filter((p) => !explicit.includes(p) || allowed.has(p));
        if (!kept.some((p) => p && !p.startsWith('-'))) return [];
        expr = kept.join(',');
      } else {
        const ok = s.security.authorize(req.auth, action, explicit);
        if (ok instanceof Promise) await ok; // (a value from the node's gate: no microtask trip)
      }
    } else {
      const ok = s.security.authorize(req.auth, action, []); // the action on no index at all: 403 before anything
      if (ok instanceof Promise) await ok;
    }
  }
  return s.security ? resolveAuthorized(s, s.security, req.auth, action, expr, opts) : s.cluster.resolve(expr, opts);
}

/**
 * Resolves an index expression over the names the caller may use (ES IndicesAndAliasesResolver
 * with the role's authorized indices and aliases): wildcards expand to authorized indices and to
 * the indices of authorized aliases, and an alias the caller may use stands for all its indices,
 * which are reached through it whatever the role says about their own names (RBACEngine checks the
 * alias). Explicit names were authorized by the caller already.
 */
function resolveAuthorized(s: EdgeServices, security: NonNullable<EdgeServices['security']>, auth: unknown, action: string, expr: string | undefined, opts: ResolveOptions): IndexState[] {
  const names = security.allowedIndices(auth, action, s.cluster.names());
  const all = s.cluster.metadata.aliases.map(); // as ClusterState.resolve sees them
  const aliases = new Map<string, string[]>();
  for (const a of security.allowedIndices(auth, action, [...all.keys()])) {
    aliases.set(a, all.get(a)!.map((u) => s.cluster.getByUuid(u)?.name).filter((n): n is string => n !== undefined));
  }
  return resolveExpression(expr, names, opts, aliases).map((n) => s.cluster.get(n)!);
}

/** The caller holds the built-in `superuser` role (sees every context in the listing extensions). */
export function isSuperuser(req: EsRequest): boolean {
  return !!(req.auth as { user?: { roles?: string[] } } | undefined)?.user?.roles?.includes('superuser');
}

/**
 * ES's 404 for a missing context, with why it is gone when we know. Who cleared it is told only to
 * that user (or to anyone when security is off): another user learns nothing about the owner.
 */
export function contextMissing(s: PagingServices, id: string, phase = 'query', req?: { auth?: unknown }): EsError {
  // This node's own memory, else what the log says (a context another node owned)
  const st = s.directory.get(id);
  const t = s.contexts.tombstone(id) ?? (st && st.status !== 'open' ? { why: st.status, at: st.endedAt ?? st.lastActivityAt, detail: st.reason, by: st.by } : undefined);
  const showBy = t?.by && (!s.security || (req && s.security.ownerOf(req.auth)?.username === t.by));
  const why = t
    ? `${t.why}${t.detail ? ` (${t.detail})` : ''} at ${new Date(t.at).toISOString()}${showBy ? ` by [${t.by}]` : ''}`
    : 'never existed or no longer remembered';
  const e = searchContextMissing(id, why);
  return allShardsFailed([e], phase, [{ shard: -1, index: null, reason: { type: e.type, reason: e.message } }]);
}

/**
 * Starts a use of a live context the caller owns, wherever its owner node runs (ContextService), or
 * throws the 404. `keepAliveMs` extends it (undefined: as it is).
 */
export async function useContext(
  s: PagingServices,
  req: { auth?: unknown; opaqueId?: string },
  id: string,
  kind: 'scroll' | 'pit',
  keepAliveMs: number | undefined,
): Promise<ContextHandle> {
  const h = await s.contextService.acquire(id, kind, { keepAliveMs, correlationId: req.opaqueId, mayUse: (owner) => mayUse(s, req, owner) });
  if (!h) throw contextMissing(s, id, 'query', req);
  return h;
}

/** Whether the caller may use (or free) a context opened by `owner`. */
export function mayUse(s: PagingServices, req: { auth?: unknown }, owner: { username: string; realm: string } | undefined): boolean {
  return !s.security || s.security.sameOwner(owner, s.security.ownerOf(req.auth));
}

/**
 * A scroll or PIT cannot be opened without the lifecycle log (its `opened` fact must be logged
 * before the client gets its id): while the node is cut off from NATS, ES's 503 at once.
 */
export function requireLog(s: PagingServices): void {
  if (!s.shards.connected) {
    throw new EsError('no_shard_available_action_exception', 503, 'the node is not connected to NATS: search contexts cannot be opened');
  }
}

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

async function plainSearch(s: PagingServices, req: SearchCall, sr: SearchRequest): Promise<EsResponse> {
  const indices = await searchIndices(s, req);
  const targets = withAliasFilters(s, req.params.index, orderedTargets(indices, sr.routing));
  const out = await executeSearch(s, { ...sr, checkWindow: 'search' }, targets, { timeoutMs: sr.timeoutMs });
  return {
    body: renderSearch(out, sr, indexNames(targets), { restTotalHitsAsInt: sr.restTotalHitsAsInt, noTotal: sr.trackTotalHits === false }),
  };
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
  const indices = await searchIndices(s, req);
  refuseFilteredAliases(s, req.params.index, indices, 'scroll');
  const all = orderedTargets(indices, sr.routing);
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
  const out = await executeSearch(s, internal, targets);
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

async function openScroll(s: PagingServices, req: SearchCall, sr: SearchRequest): Promise<EsResponse> {
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

async function pitSearch(s: PagingServices, req: SearchCall, sr: SearchRequest): Promise<EsResponse> {
  const pit = sr.pit!;
  const contextId = s.ids.parsePitId(pit.id);
  // The PIT's indices are authorized before it is used (wherever its owner node runs).
  const st = await s.contextService.state(contextId);
  if (!st || st.kind !== 'pit' || st.status !== 'open' || !mayUse(s, req, st.owner)) throw contextMissing(s, contextId, 'query', req);
  if (s.security) await s.security.authorize(req.auth, READ, st.indices);
  const keepAliveMs = pit.keepAliveMs === undefined ? undefined : keepAliveOrThrow(s, pit.keepAliveMs);
  const h = await useContext(s, req, contextId, 'pit', keepAliveMs);
  try {
    const sort = withImplicitShardDoc(sr.sort, sr.searchAfter);
    const targets = sliceTargets(
      h.shards.map((p) => ({ ref: { index: p.index, indexUuid: p.indexUuid, n: p.n }, shardIndex: p.shardIndex, searcher: p.searcher })),
      sr.slice,
      'pit',
    );
    const out = await executeSearch(s, { ...sr, sort, checkWindow: 'search' }, targets, { timeoutMs: sr.timeoutMs });
    await h.ready; // the extension is logged before the answer
    return {
      body: renderSearch(out, sr, indexNames(targets), {
        pitId: s.ids.pitId(h.id),
        restTotalHitsAsInt: sr.restTotalHitsAsInt,
        noTotal: sr.trackTotalHits === false,
      }),
    };
  } finally {
    h.done();
  }
}

async function search(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const call = searchCallOf(req);
  return runSearch(s, call, parseSearchCall(call));
}

async function count(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const body = req.json<Record<string, unknown>>() ?? {};
  for (const k of Object.keys(body)) {
    if (k !== 'query') throw new EsError('parsing_exception', 400, `request does not support [${k}]`, { meta: { line: 1, col: 1 } });
  }
  const sr = parseSearchRequest(body.query ? { query: body.query, size: 0 } : { size: 0 }, pickCountParams(req.query), { scroll: false, indicesInPath: !!req.params.index });
  const indices = await searchIndices(s, req);
  const targets = withAliasFilters(s, req.params.index, orderedTargets(indices, req.query.routing));
  const res = await Promise.allSettled(targets.map((t) => s.shards.call<number>(t.ref, 'count', { query: targetQuery(sr.query, t) })));
  const ok = res.filter((r) => r.status === 'fulfilled') as PromiseFulfilledResult<number>[];
  if (!ok.length && targets.length) throw allShardsFailed(res.map((r) => (r as PromiseRejectedResult).reason));
  return {
    body: { count: ok.reduce((a, r) => a + r.value, 0), _shards: { total: targets.length, successful: ok.length, skipped: 0, failed: targets.length - ok.length } },
  };
}

function pickCountParams(q: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of ['q', 'df', 'default_operator', 'pretty', 'error_trace', 'filter_path', 'human']) if (q[k] !== undefined) out[k] = q[k];
  return out;
}

export function searchRoutes(r: Router, s: PagingServices): void {
  const authz = { kind: 'handler' as const };
  r.add(['GET', 'POST'], '/_search', (req) => search(s, req), authz);
  r.add(['GET', 'POST'], '/{index}/_search', (req) => search(s, req), authz);
  r.add(['GET', 'POST'], '/_count', (req) => count(s, req), authz);
  r.add(['GET', 'POST'], '/{index}/_count', (req) => count(s, req), authz);
}

