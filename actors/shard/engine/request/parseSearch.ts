import { illegalArgument, validationFailed } from '../../../wire/esErrors';
import { queryFromQ } from './queryDsl';
import { notSupported, parseSearchBody, parseTrackTotalHits, type SearchBody } from './searchBody';
import { parseSortParam } from './searchSort';
import { NO_SOURCE, parseSourceParams, splitComma, type SourceFilter } from './sourceFilter';
import { parseTimeValue } from '../../../wire/timeValue';
import type { ShardQueryRequest } from '../types';
import { closest, Locator } from '../base/xcontent';
import type { CollapseSpec, RescoreSpec } from './searchOptions';

/**
 * A `_search` request after parsing and validation: what the coordinator needs to fan out,
 * merge and render. The shard part is `ShardQueryRequest` minus what the coordinator fills in
 * per shard (`slice` as a LocalSlice, `shardIndex`); `checkWindow` is left for the caller to set.
 */
export interface SearchRequest extends Omit<ShardQueryRequest, 'slice' | 'shardIndex'> {
  /** `trackTotalHits` came from the request (else the default 10,000 bound applies). */
  trackTotalHitsExplicit: boolean;
  pit?: { id: string; keepAliveMs?: number };
  /** The global slice; the coordinator maps it to a LocalSlice per shard (search-paging.md §10). */
  slice?: { id: number; max: number; field?: string };
  /** Set when `scroll` was given: this request opens a scroll. */
  scrollKeepAliveMs?: number;
  /** `_source` filter; undefined = the whole `_source`. */
  source?: SourceFilter;
  restTotalHitsAsInt: boolean;
  typedKeys: boolean;
  version?: boolean;
  seqNoPrimaryTerm?: boolean;
  storedFields?: string[];
  /** `indices_boost` entries (index expressions), resolved by the coordinator. */
  indicesBoost?: Array<[string, number]>;
  collapse?: CollapseSpec;
  rescore?: RescoreSpec[];
  timeoutMs?: number;
  terminateAfter?: number;
  routing?: string;
  preference?: string;
  searchType: 'query_then_fetch' | 'dfs_query_then_fetch';
  requestCache?: boolean;
  allowPartialSearchResults?: boolean;
  /** Indices options from the URL (only the ones given). */
  indicesOptions: { ignoreUnavailable?: boolean; allowNoIndices?: boolean; expandWildcards?: string; ignoreThrottled?: boolean };
}

export interface SearchRequestContext {
  /** The request opens a scroll (also implied by a `scroll` URL param). */
  scroll: boolean;
  /** An index expression was given in the path (`/{index}/_search`). */
  indicesInPath: boolean;
  /** Request path for "unrecognized parameter" messages; default `/_search`. */
  path?: string;
  /** Raw body text, used only to put `[line:col]` into parse errors. */
  text?: string;
}

/** Default of `track_total_hits` (SearchContext.DEFAULT_TRACK_TOTAL_HITS_UP_TO). */
export const DEFAULT_TRACK_TOTAL_HITS = 10_000;

/** Params RestSearchAction reads (its "consumed" set: the did-you-mean candidates) plus response params. */
const KNOWN_PARAMS = [
  'batched_reduce_size', 'pre_filter_shard_size', 'max_concurrent_shard_requests', 'allow_partial_search_results', 'search_type',
  'request_cache', 'scroll', 'routing', 'preference', 'ignore_unavailable', 'allow_no_indices', 'expand_wildcards', 'ignore_throttled',
  'ccs_minimize_roundtrips', 'q', 'df', 'analyzer', 'analyze_wildcard', 'lenient', 'default_operator', 'from', 'size', 'explain',
  'version', 'seq_no_primary_term', 'timeout', 'terminate_after', 'stored_fields', 'docvalue_fields', '_source', '_source_includes',
  '_source_excludes', 'track_scores', 'track_total_hits', 'sort', 'stats', 'suggest_field', 'suggest_text', 'suggest_mode',
  'suggest_size', 'rest_total_hits_as_int', 'typed_keys', 'index', 'include_named_queries_score', 'min_compatible_shard_node',
  'format', 'filter_path', 'pretty', 'human', 'error_trace',
];
const UNSUPPORTED_PARAMS = ['suggest_field', 'suggest_text', 'suggest_mode', 'suggest_size'];

/**
 * Parses a `_search` request (body + URL params; URL `from`/`size`/`track_total_hits`/`q`/`_source`
 * overwrite the body, URL `sort` appends to it as in ES) and validates it in ES's order:
 * body parse errors, param errors, `rest_total_hits_as_int`, PIT-vs-URL checks, unrecognized
 * params, then one accumulated `action_request_validation_exception`.
 * @throws EsError 400 with ES's texts.
 */
export function parseSearchRequest(body: unknown, params: Record<string, string>, ctx: SearchRequestContext): SearchRequest {
  const b = parseSearchBody(body, new Locator(ctx.text));
  const p = new Params(params);

  p.int('batched_reduce_size', 2, 'batchedReduceSize must be >= 2');
  p.int('pre_filter_shard_size', 1, 'preFilterShardSize must be >= 1');
  p.int('max_concurrent_shard_requests', 1, 'maxConcurrentShardRequests must be >= 1');
  const allowPartialSearchResults = p.bool('allow_partial_search_results');
  const searchType = parseSearchType(p.str('search_type'));

  // parseSearchSource: q, from, size, fetch options, track_*, sort.
  const q = p.str('q');
  const df = p.str('df');
  const defaultOperator = p.str('default_operator');
  const lenient = p.bool('lenient');
  const analyzer = p.str('analyzer');
  const analyzeWildcard = p.bool('analyze_wildcard');
  if (q !== undefined) b.query = queryFromQ(q, { df, defaultOperator, lenient, analyzer, analyzeWildcard });
  const fromParam = p.int('from');
  if (fromParam !== undefined) b.from = fromParam;
  const sizeParam = p.int('size');
  if (sizeParam !== undefined) {
    if (sizeParam < 0) throw illegalArgument(`[size] parameter cannot be negative, found [${sizeParam}]`);
    b.size = sizeParam;
  }
  b.explain = p.bool('explain') ?? b.explain;
  b.version = p.bool('version') ?? b.version;
  b.seqNoPrimaryTerm = p.bool('seq_no_primary_term') ?? b.seqNoPrimaryTerm;
  const timeout = p.str('timeout');
  if (timeout !== undefined) b.timeoutMs = parseTimeValue(timeout, 'timeout');
  const terminateAfter = p.int('terminate_after');
  if (terminateAfter !== undefined) {
    if (terminateAfter < 0) throw illegalArgument('terminateAfter must be > 0');
    b.terminateAfter = terminateAfter;
  }
  const storedFields = p.str('stored_fields');
  if (storedFields !== undefined) b.storedFields = splitComma(storedFields);
  const docvalueFields = p.str('docvalue_fields');
  if (docvalueFields !== undefined) b.docvalueFields = [...(b.docvalueFields ?? []), ...splitComma(docvalueFields).map((field) => ({ field }))];
  for (const u of UNSUPPORTED_PARAMS) if (p.str(u) !== undefined) throw notSupported(u);
  const sourceParam = parseSourceParams({ _source: p.str('_source'), _source_includes: p.str('_source_includes'), _source_excludes: p.str('_source_excludes') });
  if (sourceParam) b.source = sourceParam;
  b.trackScores = p.bool('track_scores') ?? b.trackScores;
  const tth = p.str('track_total_hits');
  // Booleans.isBoolean accepts only "true"/"false"; anything else must be an int.
  if (tth !== undefined) b.trackTotalHits = tth === 'true' || tth === 'false' ? tth === 'true' : parseTrackTotalHits(p.int('track_total_hits'));
  const sortParam = p.str('sort');
  if (sortParam !== undefined) b.sort = [...(b.sort ?? []), ...parseSortParam(sortParam)];
  p.str('stats');
  const namedQueriesScore = p.bool('include_named_queries_score');

  const requestCache = p.bool('request_cache');
  const scrollParam = p.str('scroll');
  const scrollKeepAliveMs = scrollParam !== undefined ? parseTimeValue(scrollParam, 'scroll') : undefined;
  const scroll = ctx.scroll || scrollParam !== undefined;
  const routing = p.str('routing');
  const preference = p.str('preference');
  const indicesOptions = {
    ignoreUnavailable: p.bool('ignore_unavailable'),
    allowNoIndices: p.bool('allow_no_indices'),
    expandWildcards: p.str('expand_wildcards'),
    ignoreThrottled: p.bool('ignore_throttled'),
  };
  const ccsMinimizeRoundtrips = p.bool('ccs_minimize_roundtrips');
  const typedKeys = p.bool('typed_keys') ?? false;
  p.str('min_compatible_shard_node');
  p.str('index');

  // RestSearchAction.checkRestTotalHits
  const restTotalHitsAsInt = p.bool('rest_total_hits_as_int') ?? false;
  if (restTotalHitsAsInt && typeof b.trackTotalHits === 'number') {
    throw illegalArgument(`[rest_total_hits_as_int] cannot be used if the tracking of total hits is not accurate, got ${b.trackTotalHits}`);
  }

  // RestSearchAction.preparePointInTime: rejected before the request is built.
  if (b.pit) {
    const errs: string[] = [];
    if (ctx.indicesInPath) errs.push('[indices] cannot be used with point in time. Do not specify any index with point in time.');
    if (nonDefaultIndicesOptions(indicesOptions)) errs.push('[indicesOptions] cannot be used with point in time');
    if (routing !== undefined) errs.push('[routing] cannot be used with point in time');
    if (preference !== undefined) errs.push('[preference] cannot be used with point in time');
    if (ccsMinimizeRoundtrips) errs.push('[ccs_minimize_roundtrips] cannot be used with point in time');
    if (errs.length > 0) throw validationFailed(errs);
  }

  p.rejectUnconsumed(ctx.path ?? '/_search');

  // Seed: `from` may be 0 or -1 with search_after (-1 = ES's "unset"); otherwise negative is an error.
  if (b.from !== undefined && b.from < 0 && !(b.from === -1 && b.searchAfter)) {
    throw illegalArgument(`[from] parameter cannot be negative but was [${b.from}]`);
  }
  const errs = validate(b, { scroll, requestCache });
  if (errs.length > 0) throw validationFailed(errs);
  if (b.explain) throw notSupported('explain');

  return build(b, {
    scroll, scrollKeepAliveMs, restTotalHitsAsInt, typedKeys, routing, preference, searchType, requestCache,
    allowPartialSearchResults, indicesOptions, namedQueriesScore,
  });
}

/** SearchSourceBuilder.validate + SearchRequest.validate, in ES's order. */
function validate(b: SearchBody, r: { scroll: boolean; requestCache?: boolean }): string[] {
  const errs: string[] = [];
  const from = b.from ?? -1;
  if (r.scroll) {
    if (b.trackTotalHits !== undefined && b.trackTotalHits !== true) errs.push('disabling [track_total_hits] is not allowed in a scroll context');
    if (from > 0) errs.push('using [from] is not allowed in a scroll context');
    if (b.size === 0) errs.push('[size] cannot be [0] in a scroll context');
    if (b.rescore && b.rescore.length > 0) errs.push('using [rescore] is not allowed in a scroll context');
    if (b.searchAfter && b.searchAfter.length > 0) errs.push('[search_after] cannot be used in a scroll context');
    if (b.collapse !== undefined) errs.push('cannot use `collapse` in a scroll context');
  }
  if (b.slice && !b.pit && !r.scroll) errs.push('[slice] can only be used with [scroll] or [point-in-time] requests');
  if (from > 0 && b.searchAfter && b.searchAfter.length > 0) errs.push('[from] parameter must be set to 0 when [search_after] is used');
  if (b.storedFields?.length === 1 && b.storedFields[0] === '_none_' && b.source?.fetch === true) {
    errs.push('[stored_fields] cannot be disabled if [_source] is requested');
  }
  if (!b.pit) {
    for (const s of b.sort ?? []) if (s.field === '_shard_doc') errs.push('[_shard_doc] sort field cannot be used without [point in time]');
  }
  if (r.scroll && r.requestCache === true) errs.push('[request_cache] cannot be used in a scroll context');
  if (b.pit && r.scroll) errs.push('using [point in time] is not allowed in a scroll context');
  return errs;
}

type Extra = Pick<SearchRequest, 'restTotalHitsAsInt' | 'typedKeys' | 'searchType' | 'indicesOptions'> &
  Partial<Pick<SearchRequest, 'scrollKeepAliveMs' | 'routing' | 'preference' | 'requestCache' | 'allowPartialSearchResults' | 'namedQueriesScore'>> & { scroll: boolean };

function build(b: SearchBody, x: Extra): SearchRequest {
  const explicit = b.trackTotalHits !== undefined;
  // Scroll always counts exactly; rest_total_hits_as_int without a value forces exact too (checkRestTotalHits).
  const trackTotalHits = x.scroll ? true : explicit ? b.trackTotalHits! : x.restTotalHitsAsInt ? true : DEFAULT_TRACK_TOTAL_HITS;
  // stored_fields without an explicit _source returns no _source (ES fetch phase).
  const source = b.source ?? (b.storedFields !== undefined && !b.storedFields.includes('_source') ? NO_SOURCE : undefined);
  return compact({
    query: b.query, postFilter: b.postFilter, sort: b.sort,
    from: Math.max(0, b.from ?? 0), size: b.size ?? 10, searchAfter: b.searchAfter,
    trackTotalHits, trackTotalHitsExplicit: explicit, trackScores: b.trackScores, minScore: b.minScore, aggs: b.aggs, profile: b.profile || undefined,
    pit: b.pit, slice: b.slice, scrollKeepAliveMs: x.scrollKeepAliveMs, source,
    restTotalHitsAsInt: x.restTotalHitsAsInt, typedKeys: x.typedKeys,
    version: b.version, seqNoPrimaryTerm: b.seqNoPrimaryTerm, storedFields: b.storedFields,
    docvalueFields: b.docvalueFields, fields: b.fields, indicesBoost: b.indicesBoost, collapse: b.collapse, rescore: b.rescore,
    namedQueriesScore: x.namedQueriesScore,
    timeoutMs: b.timeoutMs, terminateAfter: b.terminateAfter,
    routing: x.routing, preference: x.preference, searchType: x.searchType, requestCache: x.requestCache,
    allowPartialSearchResults: x.allowPartialSearchResults, indicesOptions: compact(x.indicesOptions),
  });
}

/** Drops undefined members, so the request travels (and compares in tests) without noise. */
function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

function parseSearchType(v: string | undefined): SearchRequest['searchType'] {
  if (v === undefined) return 'query_then_fetch';
  if (v === 'query_then_fetch' || v === 'dfs_query_then_fetch') return v;
  if (v === 'queryThenFetch' || v === 'dfsQueryThenFetch') return v === 'queryThenFetch' ? 'query_then_fetch' : 'dfs_query_then_fetch';
  throw illegalArgument(`No search type for [${v}]`);
}

function nonDefaultIndicesOptions(o: SearchRequest['indicesOptions']): boolean {
  return o.ignoreUnavailable === true || o.allowNoIndices === false || (o.expandWildcards !== undefined && o.expandWildcards !== 'open') ||
    o.ignoreThrottled === true;
}

/** URL params with RestRequest's typed readers; remembers what was read (ES's "consumed" set). */
class Params {
  private readonly consumed = new Set<string>();
  constructor(private readonly raw: Record<string, string>) {}

  str(key: string): string | undefined {
    this.consumed.add(key);
    return Object.prototype.hasOwnProperty.call(this.raw, key) ? this.raw[key] : undefined;
  }

  /** `paramAsBoolean`: empty string means true. */
  bool(key: string): boolean | undefined {
    const v = this.str(key);
    if (v === undefined) return undefined;
    if (v === '' || v === 'true') return true;
    if (v === 'false') return false;
    throw illegalArgument(`Failed to parse value [${v}] as only [true] or [false] are allowed.`);
  }

  /** `paramAsInt`, optionally with a lower bound and its message. */
  int(key: string, min?: number, message?: string): number | undefined {
    const v = this.str(key);
    if (v === undefined) return undefined;
    if (!/^[+-]?\d+$/.test(v) || Math.abs(Number(v)) > 2147483648) throw illegalArgument(`Failed to parse int parameter [${key}] with value [${v}]`);
    const n = Number(v);
    if (min !== undefined && n < min) throw illegalArgument(message!);
    return n;
  }

  /** BaseRestHandler: `request [/_search] contains unrecognized parameter(s): [x] -> did you mean [y]?, [z]`. */
  rejectUnconsumed(path: string): void {
    const bad = Object.keys(this.raw).filter((k) => !this.consumed.has(k) && !KNOWN_PARAMS.includes(k)).sort();
    if (bad.length === 0) return;
    const parts = bad.map((k) => {
      const c = closest(k, KNOWN_PARAMS);
      return c.length === 0 ? `[${k}]` : `[${k}] -> did you mean ${c.length > 1 ? 'any of ' : ''}[${c.join(', ')}]?`;
    });
    throw illegalArgument(`request [${path}] contains unrecognized parameter${bad.length > 1 ? 's' : ''}: ${parts.join(', ')}`);
  }
}
