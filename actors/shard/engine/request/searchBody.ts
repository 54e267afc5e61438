import { EsError, illegalArgument } from '../../../wire/esErrors';
import { parseAggs } from '../aggregations/aggSpec';
import { parseQuery, type Query } from './queryDsl';
import { parseSort } from './searchSort';
import { parseSourceBody, type SourceFilter } from './sourceFilter';
import { parseCollapse, parseFieldAndFormats, parseIndicesBoost, parseRescore, type CollapseSpec, type FieldAndFormat, type RescoreSpec } from './searchOptions';
import { parseTimeValue } from '../../../wire/timeValue';
import type { SortSpec, SortValue } from '../types';
import { failedToParseField, isObject, Locator, tokenName, unknownField, type JsonPath } from '../base/xcontent';

/**
 * The search body as ES's `SearchSourceBuilder.parseXContent` reads it: each key accepts only
 * some token kinds, anything else is `Unknown key for a <TOKEN> in [<key>].`
 */
export interface SearchBody {
  query?: Query;
  postFilter?: Query;
  from?: number;
  size?: number;
  sort?: SortSpec[];
  searchAfter?: SortValue[];
  pit?: { id: string; keepAliveMs?: number };
  slice?: { id: number; max: number; field?: string };
  trackTotalHits?: boolean | number;
  trackScores?: boolean;
  source?: SourceFilter;
  storedFields?: string[];
  aggs?: Record<string, unknown>;
  minScore?: number;
  profile?: boolean;
  timeoutMs?: number;
  terminateAfter?: number;
  version?: boolean;
  seqNoPrimaryTerm?: boolean;
  explain?: boolean;
  collapse?: CollapseSpec;
  rescore?: RescoreSpec[];
  docvalueFields?: FieldAndFormat[];
  fields?: FieldAndFormat[];
  indicesBoost?: Array<[string, number]>;
}

const V = ['VALUE_STRING', 'VALUE_NUMBER', 'VALUE_BOOLEAN'];
const O = ['START_OBJECT'];
const A = ['START_ARRAY'];

/** Token kinds each key accepts (SearchSourceBuilder's three branches). */
const KEYS: Record<string, string[]> = {
  from: V, size: V, timeout: V, shard_timeout: V, terminate_after: V, min_score: V, version: V, seq_no_primary_term: V,
  explain: V, track_scores: V, track_total_hits: V, profile: V,
  _source: [...V, ...O, ...A], stored_fields: [...V, ...A], sort: [...V, ...O, ...A], rescore: [...O, ...A], knn: [...O, ...A],
  query: O, post_filter: O, rank: O, script_fields: O, aggregations: O, aggs: O, highlight: O, suggest: O, ext: O,
  slice: O, collapse: O, pit: O, runtime_mappings: O, retriever: O,
  docvalue_fields: A, fields: A, indices_boost: A, stats: A, search_after: A, sub_searches: A,
};

/** Known ES features this engine does not implement: a clear 400 rather than a silently different answer. */
const UNSUPPORTED = ['knn', 'rank', 'script_fields', 'highlight', 'suggest', 'runtime_mappings', 'retriever', 'sub_searches'];

/** A 400 for a known ES feature the engine lacks. */
export const notSupported = (what: string) => illegalArgument(`[${what}] is not supported`);

/** Parses and validates the JSON body of `_search`. */
export function parseSearchBody(body: unknown, loc: Locator): SearchBody {
  if (body === undefined || body === null) return {};
  if (!isObject(body)) throw loc.parsing([], `Expected [START_OBJECT] but found [${tokenName(body)}]`);
  const out: SearchBody = {};
  for (const [key, v] of Object.entries(body)) {
    const at = [key];
    const kind = tokenName(v);
    if (!KEYS[key]?.includes(kind)) throw loc.parsing(at, `Unknown key for a ${kind} in [${key}].`);
    if (UNSUPPORTED.includes(key)) throw notSupported(key);
    switch (key) {
      case 'query': out.query = parseQuery(v, loc, at); break;
      case 'post_filter': out.postFilter = parseQuery(v, loc, at); break;
      case 'from': out.from = intValue(v, key); break; // negativity is checked once search_after is known
      case 'size': out.size = nonNegative(intValue(v, key), (n) => `[size] parameter cannot be negative, found [${n}]`); break;
      case 'sort': out.sort = parseSort(v, loc, at); break;
      case 'search_after': out.searchAfter = parseSearchAfter(v as unknown[], loc); break;
      case 'pit': out.pit = parsePit(v as Record<string, unknown>, loc); break;
      case 'slice': out.slice = parseSlice(v as Record<string, unknown>, loc); break;
      case 'track_total_hits': out.trackTotalHits = parseTrackTotalHits(v); break;
      case 'track_scores': out.trackScores = boolValue(v); break;
      case '_source': out.source = parseSourceBody(v, loc, at); break;
      case 'stored_fields': out.storedFields = Array.isArray(v) ? v.map(String) : [String(v)]; break;
      case 'aggs':
      case 'aggregations': out.aggs = parseAggs(v, loc, at, parseQuery); break;
      case 'min_score': out.minScore = numberValue(v); break;
      case 'profile': out.profile = boolValue(v); break;
      case 'timeout':
      case 'shard_timeout': out.timeoutMs = parseTimeValue(String(v), 'timeout'); break;
      case 'terminate_after': out.terminateAfter = nonNegative(intValue(v, key), () => 'terminateAfter must be > 0'); break;
      case 'version': out.version = boolValue(v); break;
      case 'seq_no_primary_term': out.seqNoPrimaryTerm = boolValue(v); break;
      case 'explain': out.explain = boolValue(v); break;
      case 'collapse': out.collapse = parseCollapse(v, loc); break;
      case 'rescore': out.rescore = parseRescore(v, loc, parseQuery); break;
      case 'docvalue_fields': out.docvalueFields = parseFieldAndFormats(v, key, loc, at); break;
      case 'fields': out.fields = parseFieldAndFormats(v, key, loc, at); break;
      case 'indices_boost': out.indicesBoost = parseIndicesBoost(v as unknown[], loc); break;
      default: break; // stats, ext: accepted, no effect on results
    }
  }
  return out;
}

/** `parser.intValue()` with coercion: numbers truncate, numeric strings parse. */
export function intValue(v: unknown, key: string): number {
  const n = typeof v === 'string' ? Number(v.trim()) : typeof v === 'bigint' ? Number(v) : v;
  if (typeof n !== 'number' || Number.isNaN(n)) {
    if (typeof v === 'string') throw illegalArgument(`For input string: "${v}"`);
    throw new EsError('x_content_parse_exception', 400, `[1:1] [${key}] Current token (${tokenName(v)}) not numeric, can not use numeric value accessors`);
  }
  if (n > 2147483647 || n < -2147483648) throw illegalArgument(`Value [${String(v)}] is out of range for an integer`);
  return Math.trunc(n);
}

function numberValue(v: unknown): number {
  const n = Number(v);
  if (typeof v === 'boolean' || Number.isNaN(n)) throw illegalArgument(`For input string: "${String(v)}"`);
  return n;
}

/** `parser.booleanValue()`: true/false, or the strings "true"/"false". */
export function boolValue(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 'false') return v === 'true';
  throw illegalArgument(`Failed to parse value [${String(v)}] as only [true] or [false] are allowed.`);
}

function nonNegative(n: number, message: (n: number) => string): number {
  if (n < 0) throw illegalArgument(message(n));
  return n;
}

/** Booleans (or "true"/"false") or an int ≥ -1; -1 means false, `Integer.MAX_VALUE` means true. */
export function parseTrackTotalHits(v: unknown): boolean | number {
  if (typeof v === 'boolean' || v === 'true' || v === 'false') return v === true || v === 'true';
  const n = intValue(v, 'track_total_hits');
  if (n < -1) throw illegalArgument(`[track_total_hits] parameter must be positive or equals to -1, got ${n}`);
  return n === -1 ? false : n === 2147483647 ? true : n;
}

function parseSearchAfter(v: unknown[], loc: Locator): SortValue[] {
  if (v.length === 0) throw illegalArgument('Values cannot be empty.');
  return v.map((x, i) => {
    if (x === null || typeof x === 'string' || typeof x === 'number' || typeof x === 'bigint' || typeof x === 'boolean') return x;
    throw loc.parsing(['search_after', i],
      `Expected [VALUE_STRING] or [VALUE_NUMBER] or [VALUE_BOOLEAN] or [VALUE_NULL] but found [${tokenName(x)}] inside search_after.`);
  });
}

function parsePit(o: Record<string, unknown>, loc: Locator): { id: string; keepAliveMs?: number } {
  const out: { id?: string; keepAliveMs?: number } = {};
  for (const [k, v] of Object.entries(o)) {
    const at: JsonPath = ['pit', k];
    if (k === 'id') out.id = String(v);
    else if (k === 'keep_alive') out.keepAliveMs = field(loc, at, 'pit', () => parseTimeValue(String(v), 'keep_alive'));
    else throw unknownField(loc, at, 'pit', k, ['id', 'keep_alive']);
  }
  if (out.id === undefined) throw illegalArgument('point in time id is not provided');
  return out as { id: string; keepAliveMs?: number };
}

/** SliceBuilder's setters run in document order, so the second of id/max names the failure. */
function parseSlice(o: Record<string, unknown>, loc: Locator): { id: number; max: number; field?: string } {
  let id = -1;
  let max = -1;
  let fieldName: string | undefined;
  for (const [k, v] of Object.entries(o)) {
    const at: JsonPath = ['slice', k];
    if (k === 'field') fieldName = field(loc, at, 'slice', () => (v ? String(v) : fail('field name is null or empty')));
    else if (k === 'id') {
      id = field(loc, at, 'slice', () => {
        const n = intValue(v, k);
        if (n < 0) fail('id must be greater than or equal to 0');
        if (max !== -1 && n >= max) fail('max must be greater than id');
        return n;
      });
    } else if (k === 'max') {
      max = field(loc, at, 'slice', () => {
        const n = intValue(v, k);
        if (n <= 1) fail('max must be greater than 1');
        if (id !== -1 && id >= n) fail('max must be greater than id');
        return n;
      });
    } else throw unknownField(loc, at, 'slice', k, ['field', 'id', 'max']);
  }
  if (id === -1) throw illegalArgument('id must be greater than or equal to 0');
  if (max === -1) throw illegalArgument('max must be greater than 1');
  return fieldName === undefined ? { id, max } : { id, max, field: fieldName };
}

const fail = (reason: string): never => {
  throw illegalArgument(reason);
};

function field<T>(loc: Locator, path: JsonPath, name: string, run: () => T): T {
  try {
    return run();
  } catch (e) {
    throw failedToParseField(loc, path, name, e as EsError);
  }
}
