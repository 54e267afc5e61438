import { allShardsFailed, illegalArgument, validationFailed } from '../../wire/esErrors';
import type { EsRequest, EsResponse, Router } from '../router';
import { executeSearch, renderSearch, type SearchOutcome, type ShardTarget } from '../coordinator';
import type { ContextHandle } from '../../contexts';
import { parseTimeValue, type SearchRequest } from '../../shard/engine';
import { checkKeepAlive, KeepAliveTooLarge } from '../../../machines/keepAlive';
import { listContexts } from './contextList';
import { contextMissing, indexNames, keepAliveLimits, mayUse, useContext, type PagingServices } from './search';

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
export async function scrollPage(s: PagingServices, req: { auth?: unknown; opaqueId?: string }, scrollId: string, scroll: string | undefined): Promise<ScrollPage> {
  const { contextId, pos } = s.ids.parseScrollId(scrollId);
  // ES authorizes the scroll action (granted on any index) before it looks the context up.
  if (s.security) await s.security.authorize(req.auth, 'indices:data/read/scroll');
  let keepAliveMs: number | undefined;
  if (scroll !== undefined) {
    keepAliveMs = parseTimeValue(String(scroll), 'scroll');
    try {
      checkKeepAlive(keepAliveMs!, keepAliveLimits(s).maxMs);
    } catch (e) {
      if (!(e instanceof KeepAliveTooLarge)) throw e;
      // ES frees the context when a continuation asks for too long a keep-alive.
      await s.contextService.release(contextId, 'scroll', 'keep_alive_too_large', req.opaqueId, (o) => mayUse(s, req, o));
      throw allShardsFailed([illegalArgument(e.message)]);
    }
  }
  const h = await useContext(s, req, contextId, 'scroll', keepAliveMs ?? keepAliveLimits(s).defaultMs);
  const started = Date.now();
  try {
    if (!h.scroll) throw contextMissing(s, contextId, 'query', req);
    const sr = { ...(h.scroll.request as SearchRequest), searchAfter: pos.after };
    const targets = h.shards.map((p) => ({
      ref: { index: p.index, indexUuid: p.indexUuid, n: p.n },
      shardIndex: p.shardIndex,
      searcher: p.searcher,
      slice: p.slice,
    }));
    const out = await executeSearch(s, sr, targets);
    out.tookMs = Math.max(1, out.tookMs);
    await h.ready; // the extension is in the log before the client sees the page (revival)
    const next = { after: out.list.length ? out.list.lastSort() : pos.after, page: pos.page + 1 };
    // Seed: a continuation without `scroll` releases the context as part of the request.
    return { out, sr, targets, rec: h, ...(scroll === undefined ? {} : { scrollId: s.ids.scrollId(h.id, next) }) };
  } finally {
    h.done();
    if (scroll === undefined) await h.release('no_scroll_param', req.opaqueId);
    s.stats.scrollTimeMs += Date.now() - started;
  }
}

/** Scroll continuation: body wins over URL (`scroll_id`, `scroll`); deprecated path form too. */
async function continueScroll(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const body = req.json<Record<string, unknown>>() ?? {};
  for (const k of Object.keys(body)) {
    if (k !== 'scroll_id' && k !== 'scroll') {
      throw illegalArgument(`Unknown parameter [${k}] in request body or parameter is of the wrong type[${typeof body[k] === 'object' ? 'START_OBJECT' : 'VALUE_STRING'}] `);
    }
  }
  const scrollId = (body.scroll_id as string | undefined) ?? req.params.scroll_id ?? req.query.scroll_id;
  const scroll = (body.scroll as string | undefined) ?? req.query.scroll;
  if (!scrollId) throw validationFailed(['scrollId is missing']);
  const { out, sr, targets, rec, scrollId: next } = await scrollPage(s, req, String(scrollId), scroll === undefined ? undefined : String(scroll));
  return {
    body: renderSearch(out, sr, indexNames(targets), {
      ...(next !== undefined ? { scrollId: next } : {}),
      restTotalHitsAsInt: req.query.rest_total_hits_as_int === 'true',
      sortLength: rec.scroll!.sortLength,
      docSortValues: rec.scroll!.docOrder,
      total: rec.scroll!.total,
    }),
  };
}

function idsFrom(req: EsRequest): string[] {
  const body = req.json<Record<string, unknown>>();
  let ids: unknown = body?.scroll_id ?? req.params.scroll_id ?? req.query.scroll_id;
  if (body) {
    for (const k of Object.keys(body)) {
      if (k !== 'scroll_id') throw illegalArgument(`Unknown parameter [${k}] in request body or parameter is of the wrong type[VALUE_STRING] `);
    }
  }
  if (typeof ids === 'string') ids = ids.split(',').map((x) => x.trim()).filter(Boolean);
  if (!Array.isArray(ids) || !ids.length) throw validationFailed(['no scroll ids specified']);
  return ids.map(String);
}

/** DELETE /_search/scroll: frees the caller's contexts; 404 (same body) when nothing was freed. */
async function clearScroll(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const ids = idsFrom(req);
  if (ids.length === 1 && ids[0] === '_all') return clearAll(s, req);
  const owner = s.security?.ownerOf(req.auth);
  let freed = 0;
  const seen = new Set<string>();
  for (const id of ids) {
    const { contextId } = s.ids.parseScrollId(id); // junk -> 400 Cannot parse scroll id
    if (seen.has(contextId)) continue;
    seen.add(contextId);
    // Only the caller's own contexts are freed, wherever their owner node runs.
    freed += await s.contextService.clear(contextId, 'scroll', owner?.username, req.opaqueId, (o) => mayUse(s, req, o));
  }
  return { status: freed ? 200 : 404, body: { succeeded: true, num_freed: freed } };
}

/**
 * `_all`: every scroll context of the caller on every node. As ES, num_freed counts the nodes that
 * acknowledged (each live node's contexts are freed through their owner), not the contexts.
 */
async function clearAll(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const owner = s.security?.ownerOf(req.auth);
  for (const st of s.directory.open('scroll')) {
    if (!mayUse(s, req, st.owner)) continue;
    await s.contextService.clear(st.id, 'scroll', owner?.username, req.opaqueId, (o) => mayUse(s, req, o));
  }
  return { body: { succeeded: true, num_freed: Math.max(1, s.membership.liveIds().length) } };
}

export function scrollRoutes(r: Router, s: PagingServices): void {
  const authz = { kind: 'handler' as const };
  r.add(['GET', 'POST'], '/_search/scroll', (req) => continueScroll(s, req), authz);
  r.add(['GET', 'POST'], '/_search/scroll/{scroll_id}', (req) => continueScroll(s, req), authz);
  r.add('DELETE', '/_search/scroll', (req) => clearScroll(s, req), authz);
  r.add('DELETE', '/_search/scroll/_all', (req) => clearAll(s, req), authz);
  r.add('DELETE', '/_search/scroll/{scroll_id}', (req) => clearScroll(s, req), authz);
  // Our extension: list open scroll contexts of the whole cluster (ES has no such API).
  r.add('GET', '/_scroll', async (req) => {
    const scrolls = await listContexts(s, req, 'scroll');
    return { body: { count: scrolls.length, scrolls } };
  }, { kind: 'cluster', action: 'cluster:monitor/scroll/list' });
}
