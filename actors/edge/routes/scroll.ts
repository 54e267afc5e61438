import { illegalArgument, validationFailed } from '../../wire/esErrors';
import type { EsRequest, EsResponse } from '../../wire/rest';
import type { Router } from '../router';
import { indexNames, renderSearch } from '../../search/coordinator';
import { clearAllScrolls, clearScrolls, scrollPage } from '../../search/scrollService';
import type { PagingServices } from '../../search/services';
import { listContexts } from './contextList';

/** `_search/scroll`: continuation and clear requests parsed here, run by the scroll service. */

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
  const freed = await clearScrolls(s, req, ids);
  return { status: freed ? 200 : 404, body: { succeeded: true, num_freed: freed } };
}

async function clearAll(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  return { body: { succeeded: true, num_freed: await clearAllScrolls(s, req) } };
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
