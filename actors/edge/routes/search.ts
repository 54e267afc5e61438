import { EsError } from '../../wire/esErrors';
import type { EsRequest, EsResponse } from '../../wire/rest';
import type { Router } from '../router';
import { parseSearchRequest } from '../../shard/engine';
import { parseSearchCall, runCount, runSearch, searchCallOf } from '../../search/searchService';
import type { PagingServices } from '../../search/services';

/** `_search` and `_count`: parse the request, the search service runs it. */

async function search(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const call = searchCallOf(req);
  return runSearch(s, call, parseSearchCall(call));
}

async function count(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const body = req.json<Record<string, unknown>>() ?? {};
  for (const k of Object.keys(body)) {
    if (k !== 'query') throw new EsError('parsing_exception', 400, `request does not support [${k}]`, { meta: { line: 1, col: 1 } });
  }
  const sbody: Record<string, unknown> = body.query ? { query: body.query, size: 0 } : { size: 0 };
  // RestCountAction: min_score from the URL (a float), applied as the search's min_score
  if (req.query.min_score !== undefined) {
    const m = Number(req.query.min_score);
    if (req.query.min_score.trim() === '' || Number.isNaN(m)) throw new EsError('number_format_exception', 400, `For input string: "${req.query.min_score}"`);
    sbody.min_score = m;
  }
  const sr = parseSearchRequest(sbody, pickCountParams(req.query), { scroll: false, indicesInPath: !!req.params.index });
  return runCount(s, req, sr);
}

function pickCountParams(q: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of ['q', 'df', 'default_operator', 'analyzer', 'analyze_wildcard', 'lenient', 'terminate_after', 'routing', 'preference', 'pretty', 'error_trace', 'filter_path', 'human']) if (q[k] !== undefined) out[k] = q[k];
  return out;
}

export function searchRoutes(r: Router, s: PagingServices): void {
  const authz = { kind: 'handler' as const };
  r.add(['GET', 'POST'], '/_search', (req) => search(s, req), authz);
  r.add(['GET', 'POST'], '/{index}/_search', (req) => search(s, req), authz);
  r.add(['GET', 'POST'], '/_count', (req) => count(s, req), authz);
  r.add(['GET', 'POST'], '/{index}/_count', (req) => count(s, req), authz);
}
