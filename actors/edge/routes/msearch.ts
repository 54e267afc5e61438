import { EsError, asEsError, illegalArgument, parseException, parsingException, toErrorBody, validationFailed } from '../../wire/esErrors';
import { availableParallelism } from 'node:os';
import { parseBody, stringify } from '../../wire/json';
import { type Router } from '../router';
import { RawJson, type EsRequest, type EsResponse } from '../../wire/rest';
import type { SearchRequest } from '../../shard/engine';
import { parseSearchCall, runSearch, type PagingServices, type SearchCall } from '../../search';

/** One `_msearch` item: the search it runs (header options merged over the URL's). */
export interface MsearchItem {
  call: Omit<SearchCall, 'auth' | 'opaqueId'>;
}

/** URL parameters `_msearch` takes (RestMultiSearchAction plus what every search item reads). */
const MSEARCH_PARAMS = new Set([
  'max_concurrent_searches', 'max_concurrent_shard_requests', 'pre_filter_shard_size', 'rest_total_hits_as_int', 'typed_keys',
  'search_type', 'ccs_minimize_roundtrips', 'routing', 'ignore_unavailable', 'ignore_throttled', 'allow_no_indices',
  'expand_wildcards', 'include_named_queries_score', 'index', 'pretty', 'human', 'error_trace', 'filter_path',
]);

/** Header keys (MultiSearchRequest.readMultiLineFormat), with their camelCase aliases, as URL-style params. */
const HEADER_KEYS: Record<string, string> = {
  search_type: 'search_type', searchType: 'search_type',
  ccs_minimize_roundtrips: 'ccs_minimize_roundtrips', ccsMinimizeRoundtrips: 'ccs_minimize_roundtrips',
  request_cache: 'request_cache', requestCache: 'request_cache',
  preference: 'preference',
  routing: 'routing',
  allow_partial_search_results: 'allow_partial_search_results',
  expand_wildcards: 'expand_wildcards', expandWildcards: 'expand_wildcards',
  ignore_unavailable: 'ignore_unavailable', ignoreUnavailable: 'ignore_unavailable',
  allow_no_indices: 'allow_no_indices', allowNoIndices: 'allow_no_indices',
  ignore_throttled: 'ignore_throttled', ignoreThrottled: 'ignore_throttled',
};

const paramText = (v: unknown): string => (Array.isArray(v) ? v.map(String).join(',') : v === null ? '' : String(v));

/**
 * Splits an `_msearch` body into its searches (MultiSearchRequest.readMultiLineFormat): header and
 * body lines in pairs; an empty first line is skipped; an empty header means defaults; a header
 * without a body line ends the list; a last line without `\n` is refused.
 * @throws EsError 400 (framing, header or body JSON) before any search runs.
 */
export function parseMsearch(text: string, pathIndex: string | undefined, urlParams: Record<string, string>): MsearchItem[] {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(urlParams)) if (k !== 'max_concurrent_searches' && k !== 'index') base[k] = v;
  const items: MsearchItem[] = [];
  let from = 0;
  const next = (): number => {
    const i = text.indexOf('\n', from);
    if (i >= 0) return i;
    if (from !== text.length) throw illegalArgument('The msearch request must be terminated by a newline [\n]');
    return -1;
  };
  for (;;) {
    let marker = next();
    if (marker === -1) break;
    if (marker === 0) {
      from = 1; // an empty first line before any header (deprecated in ES, still accepted)
      continue;
    }
    const query = { ...base };
    let index = pathIndex;
    const headerText = text.slice(from, marker);
    if (headerText.length > 0) {
      const header = parseBody<unknown>(headerText);
      if (header === null || typeof header !== 'object' || Array.isArray(header)) {
        throw parsingException(`Expected [START_OBJECT] but found [${Array.isArray(header) ? 'START_ARRAY' : 'VALUE'}]`, 1, 1);
      }
      for (const [k, v] of Object.entries(header as Record<string, unknown>)) {
        if (k === 'index' || k === 'indices') index = paramText(v) || undefined;
        else if (HEADER_KEYS[k]) query[HEADER_KEYS[k]] = paramText(v);
        else throw illegalArgument(`key [${k}] is not supported in the metadata section`);
      }
    }
    from = marker + 1;
    marker = next();
    if (marker === -1) break;
    const bodyText = text.slice(from, marker);
    from = marker + 1;
    if (!bodyText.trim()) throw parsingException('Expected [START_OBJECT] but found [null]');
    const body = parseBody<unknown>(bodyText);
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw parsingException(`Expected [START_OBJECT] but found [${Array.isArray(body) ? 'START_ARRAY' : 'VALUE'}]`, 1, 1);
    }
    // RestMultiSearchAction applies ccs_minimize_roundtrips only to searches without a PIT.
    if ((body as { pit?: unknown }).pit !== undefined && urlParams.ccs_minimize_roundtrips !== undefined && query.ccs_minimize_roundtrips === urlParams.ccs_minimize_roundtrips) {
      delete query.ccs_minimize_roundtrips;
    }
    items.push({ call: { params: index === undefined ? {} : { index }, query, body, text: bodyText } });
  }
  return items;
}

/** Reasons of a `Validation Failed: 1: a;2: b;` error, to merge several items' into one. */
function validationMessages(e: EsError): string[] {
  const m = /^Validation Failed: (.*)$/s.exec(e.message);
  if (!m) return [e.message];
  return [...m[1].matchAll(/\d+: (.*?);(?=\d+: |$)/gs)].map((x) => x[1]);
}

/** Search thread pool size of a node with this many processors, capped at 10 (TransportMultiSearchAction). */
function defaultMaxConcurrentSearches(): number {
  const cores = Math.max(1, availableParallelism());
  return Math.max(1, Math.min(Math.floor((cores * 3) / 2) + 1, 10));
}

/** An item's response object with `"status":N` as its last field (MultiSearchResponse.Item). */
function itemChunks(body: unknown, status: number): Array<Buffer | string> {
  if (body instanceof RawJson) {
    const chunks = body.chunks.map((c) => (typeof c === 'string' ? c : c.toString('utf8')));
    const last = chunks.length - 1;
    const trimmed = chunks[last].replace(/\}\s*$/, '');
    return [...chunks.slice(0, last), trimmed, `,"status":${status}}`];
  }
  return [stringify({ ...(body as Record<string, unknown>), status })];
}

/**
 * `GET|POST /_msearch`, `/<index>/_msearch`: every item runs through the same search code as
 * `_search` (parsing, authorization, PIT/scroll rules), at most `max_concurrent_searches` at a
 * time. Parse and validation errors fail the whole request (ES validates the multi request first,
 * merging every item's validation errors); anything an item meets while running is its own
 * `{error, status}` in `responses`, in request order.
 */
async function msearch(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const start = Date.now();
  const bad = Object.keys(req.query).filter((k) => !MSEARCH_PARAMS.has(k)).sort();
  if (bad.length) {
    throw illegalArgument(`request [${req.path}] contains unrecognized parameter${bad.length > 1 ? 's' : ''}: ${bad.map((k) => `[${k}]`).join(', ')}`);
  }
  let max = defaultMaxConcurrentSearches();
  if (req.query.max_concurrent_searches !== undefined) {
    const v = req.query.max_concurrent_searches;
    const n = /^[+-]?\d+$/.test(v) ? Number(v) : NaN;
    if (Number.isNaN(n)) throw illegalArgument(`Failed to parse int parameter [max_concurrent_searches] with value [${v}]`);
    if (n < 1) throw illegalArgument('maxConcurrentSearchRequests must be positive');
    max = n;
  }
  const text = req.body?.toString('utf8') ?? '';
  if (!text.length) throw parseException('request body or source parameter is required');
  const items = parseMsearch(text, req.params.index, req.query);
  // Parse every item first (ES parses the whole request, then validates it as one).
  const parsed: SearchRequest[] = [];
  const invalid: string[] = [];
  for (const it of items) {
    try {
      parsed.push(parseSearchCall({ ...it.call, auth: req.auth }, req.path));
    } catch (e) {
      if (e instanceof EsError && e.type === 'action_request_validation_exception') invalid.push(...validationMessages(e));
      else throw e;
    }
  }
  if (!items.length) invalid.push('no requests added');
  if (invalid.length) throw validationFailed(invalid);

  const results: Array<{ body: unknown; status: number }> = new Array(items.length);
  let nextItem = 0;
  const worker = async () => {
    for (let i = nextItem++; i < items.length; i = nextItem++) {
      try {
        const r = await runSearch(s, { ...items[i].call, auth: req.auth, opaqueId: req.opaqueId }, parsed[i]);
        results[i] = { body: r.body, status: r.status ?? 200 };
      } catch (e) {
        const err = asEsError(e);
        if (!(e instanceof EsError)) s.ctx.log.error({ err: e }, 'msearch item failed');
        results[i] = { body: toErrorBody(err), status: err.status };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(max, items.length) }, worker));
  const chunks: Array<Buffer | string> = [`{"took":${Date.now() - start},"responses":[`];
  results.forEach((r, i) => {
    if (i) chunks.push(',');
    // An error body already carries its status (`{"error":…,"status":N}`).
    if (r.body && typeof r.body === 'object' && !(r.body instanceof RawJson) && 'error' in (r.body as object)) chunks.push(stringify(r.body));
    else chunks.push(...itemChunks(r.body, r.status));
  });
  chunks.push(']}');
  return { body: new RawJson(chunks) };
}

export function msearchRoutes(r: Router, s: PagingServices): void {
  // Each item authorizes itself as its own search would (indices it names, PIT it uses).
  const authz = { kind: 'handler' as const };
  r.add(['GET', 'POST'], '/_msearch', (req) => msearch(s, req), authz);
  r.add(['GET', 'POST'], '/{index}/_msearch', (req) => msearch(s, req), authz);
}
