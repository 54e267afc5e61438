import { allShardsFailed, illegalArgument, validationFailed } from '../../wire/esErrors';
import type { EsRequest, EsResponse, Router } from '../router';
import { executeSearch, renderSearch, type SearchOutcome, type ShardTarget } from '../coordinator';
import type { ContextRecord } from '../../contexts';
import { parseTimeValue, type SearchRequest } from '../../shard/engine';
import { checkKeepAlive, KeepAliveTooLarge } from '../../../machines/keepAlive';
import { indexNames, isSuperuser, keepAliveLimits, liveContext, type PagingServices } from './search';

/** One scroll page: its hits (with sources), the context, and the id of the next page (none once released). */
export interface ScrollPage {
  out: SearchOutcome;
  sr: SearchRequest;
  targets: ShardTarget[];
  rec: ContextRecord;
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
  const rec = liveContext(s, req, contextId, 'scroll');
  let keepAliveMs: number | undefined;
  if (scroll !== undefined) {
    keepAliveMs = parseTimeValue(String(scroll), 'scroll');
    try {
      checkKeepAlive(keepAliveMs!, keepAliveLimits(s).maxMs);
    } catch (e) {
      if (!(e instanceof KeepAliveTooLarge)) throw e;
      // ES frees the context when a continuation asks for too long a keep-alive.
      await s.contexts.release(rec, 'keep_alive_too_large', req.opaqueId);
      throw allShardsFailed([illegalArgument(e.message)]);
    }
  }
  s.contexts.use(rec, keepAliveMs ?? keepAliveLimits(s).defaultMs, req.opaqueId);
  const started = Date.now();
  try {
    const sr = { ...(rec.scroll!.request as SearchRequest), searchAfter: pos.after };
    const targets = rec.shards.map((p) => ({
      ref: { index: p.index, indexUuid: p.indexUuid, n: p.n },
      shardIndex: p.shardIndex,
      searcher: p.searcher,
      slice: p.slice,
    }));
    const out = await executeSearch(s, sr, targets);
    out.tookMs = Math.max(1, out.tookMs);
    await rec.appended; // the extension is in the log before the client sees the page (revival)
    const next = { after: out.list.length ? out.list.lastSort() : pos.after, page: pos.page + 1 };
    // Seed: a continuation without `scroll` releases the context as part of the request.
    return { out, sr, targets, rec, ...(scroll === undefined ? {} : { scrollId: s.ids.scrollId(rec.id, next) }) };
  } finally {
    s.contexts.done(rec);
    if (scroll === undefined) await s.contexts.release(rec, 'no_scroll_param', req.opaqueId);
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
    const rec = s.contexts.get(contextId);
    if (!rec || rec.kind !== 'scroll') continue;
    if (s.security && !s.security.sameOwner(rec.owner, owner)) continue; // only the owner's contexts are freed
    freed += await s.contexts.clear(rec, owner?.username, req.opaqueId);
  }
  return { status: freed ? 200 : 404, body: { succeeded: true, num_freed: freed } };
}

/** `_all`: every scroll context of the caller; num_freed counts nodes that answered (ES). */
async function clearAll(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const owner = s.security?.ownerOf(req.auth);
  for (const rec of s.contexts.list('scroll')) {
    if (s.security && !s.security.sameOwner(rec.owner, owner)) continue;
    await s.contexts.clear(rec, owner?.username, req.opaqueId);
  }
  return { body: { succeeded: true, num_freed: 1 } };
}

export function scrollRoutes(r: Router, s: PagingServices): void {
  const authz = { kind: 'handler' as const };
  r.add(['GET', 'POST'], '/_search/scroll', (req) => continueScroll(s, req), authz);
  r.add(['GET', 'POST'], '/_search/scroll/{scroll_id}', (req) => continueScroll(s, req), authz);
  r.add('DELETE', '/_search/scroll', (req) => clearScroll(s, req), authz);
  r.add('DELETE', '/_search/scroll/_all', (req) => clearAll(s, req), authz);
  r.add('DELETE', '/_search/scroll/{scroll_id}', (req) => clearScroll(s, req), authz);
  // Our extension: list open scroll contexts (ES has no such API).
  r.add('GET', '/_scroll', (req) => {
    const owner = s.security?.ownerOf(req.auth);
    const now = Date.now();
    const scrolls = s.contexts
      .list('scroll')
      .filter((rec) => !s.security || s.security.sameOwner(rec.owner, owner) || isSuperuser(req))
      .map((rec) => ({
        id: rec.id,
        indices: rec.indices,
        owner: rec.owner ?? null,
        shards: rec.shards.length,
        created: new Date(rec.createdAt).toISOString(),
        age_in_millis: now - rec.createdAt,
        keep_alive: `${rec.keepAliveMs}ms`,
        expires_at: s.contexts.expiresAt(rec) === null ? null : new Date(s.contexts.expiresAt(rec)!).toISOString(),
      }));
    return { body: { count: scrolls.length, scrolls } };
  }, { kind: 'cluster', action: 'cluster:monitor/scroll/list' });
}
