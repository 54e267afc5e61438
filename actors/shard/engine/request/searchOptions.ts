import { EsError, illegalArgument } from '../../../wire/esErrors';
import { isObject, Locator, tokenName, unknownField, type JsonPath } from '../base/xcontent';
import type { Query } from './queryDsl';
import { parseSort } from './searchSort';
import type { SortSpec } from '../types';

/**
 * Search body sections beyond paging: `docvalue_fields` and `fields` (FieldAndFormat),
 * `indices_boost`, `collapse` (CollapseBuilder, with `inner_hits`) and `rescore`
 * (QueryRescorerBuilder), with ES's parse errors. Sub-queries go through `sub`.
 */

export interface FieldAndFormat {
  field: string;
  format?: string;
  include_unmapped?: boolean;
}

export interface InnerHitsSpec {
  name?: string;
  from: number;
  size: number;
  sort?: SortSpec[];
  source?: unknown;
  version?: boolean;
  seqNoPrimaryTerm?: boolean;
  docvalueFields?: FieldAndFormat[];
  fields?: FieldAndFormat[];
  collapse?: CollapseSpec;
}

export interface CollapseSpec {
  field: string;
  innerHits?: InnerHitsSpec[];
  maxConcurrentGroupSearches?: number;
}

export interface RescoreSpec {
  windowSize: number;
  query: Query;
  queryWeight: number;
  rescoreQueryWeight: number;
  scoreMode: 'total' | 'multiply' | 'avg' | 'max' | 'min';
}

type Sub = (v: unknown, loc: Locator, path: JsonPath) => Query;

/** `["f", {"field": "g", "format": "…"}]` (FieldAndFormat.fromXContent per entry). */
export function parseFieldAndFormats(v: unknown, key: string, loc: Locator, path: JsonPath): FieldAndFormat[] {
  const list = Array.isArray(v) ? v : [v];
  return list.map((x, i) => {
    const at = [...path, i];
    if (typeof x === 'string') return { field: x };
    if (!isObject(x)) throw loc.parsing(at, `Expected [VALUE_STRING] or [START_OBJECT] in [${key}] but found [${tokenName(x)}]`);
    const out: FieldAndFormat = { field: '' };
    for (const [k, y] of Object.entries(x)) {
      if (k === 'field') out.field = String(y);
      else if (k === 'format') out.format = String(y);
      else if (k === 'include_unmapped') out.include_unmapped = y === true || y === 'true';
      else throw unknownField(loc, [...at, k], 'fetch_field_and_format', k, ['field', 'format', 'include_unmapped']);
    }
    if (!out.field) throw loc.xContent(at, '[fetch_field_and_format] failed to parse, field [field] is missing'); // ConstructingObjectParser
    return out;
  });
}

/** `indices_boost: [{"idx": 2.0}, …]`: entries in order (the first matching one wins). */
export function parseIndicesBoost(v: unknown[], loc: Locator): Array<[string, number]> {
  return v.map((x, i) => {
    const at: JsonPath = ['indices_boost', i];
    if (!isObject(x)) throw loc.parsing(at, `Expected [START_OBJECT] in [indices_boost] but found [${tokenName(x)}]`);
    const keys = Object.keys(x);
    if (keys.length !== 1) throw loc.parsing(at, `Expected [END_OBJECT] in [indices_boost] but found [FIELD_NAME]`);
    const b = Number(x[keys[0]]);
    if (typeof x[keys[0]] === 'boolean' || Number.isNaN(b)) throw loc.parsing(at, `Expected [VALUE_NUMBER] in [indices_boost] but found [${tokenName(x[keys[0]])}]`);
    return [keys[0], b];
  });
}

const INNER_HITS_KEYS = [
  'name', 'from', 'size', 'sort', '_source', 'version', 'seq_no_primary_term', 'docvalue_fields', 'fields', 'collapse',
  'ignore_unmapped', 'explain', 'track_scores', 'stored_fields', 'highlight', 'script_fields',
];

function parseInnerHits(v: unknown, loc: Locator, path: JsonPath): InnerHitsSpec {
  if (!isObject(v)) throw loc.parsing(path, `[inner_hits] expected an object but found [${tokenName(v)}]`);
  const out: InnerHitsSpec = { from: 0, size: 3 };
  for (const [k, x] of Object.entries(v)) {
    const at = [...path, k];
    if (!INNER_HITS_KEYS.includes(k)) throw unknownField(loc, at, 'inner_hits', k, INNER_HITS_KEYS);
    switch (k) {
      case 'name': out.name = String(x); break;
      case 'from': out.from = Number(x); break;
      case 'size': out.size = Number(x); break;
      case 'sort': out.sort = parseSort(x, loc, at); break;
      case '_source': out.source = x; break;
      case 'version': out.version = x === true; break;
      case 'seq_no_primary_term': out.seqNoPrimaryTerm = x === true; break;
      case 'docvalue_fields': out.docvalueFields = parseFieldAndFormats(x, k, loc, at); break;
      case 'fields': out.fields = parseFieldAndFormats(x, k, loc, at); break;
      case 'collapse': out.collapse = parseCollapse(x, loc, at); break;
      case 'highlight':
      case 'script_fields': throw illegalArgument(`[${k}] is not supported`);
      default: break;
    }
  }
  return out;
}

/** `collapse: {field, inner_hits?, max_concurrent_group_searches?}`. */
export function parseCollapse(v: unknown, loc: Locator, path: JsonPath = ['collapse']): CollapseSpec {
  if (!isObject(v)) throw loc.parsing(path, `Unknown key for a ${tokenName(v)} in [collapse].`);
  const out: CollapseSpec = { field: '' };
  for (const [k, x] of Object.entries(v)) {
    const at = [...path, k];
    if (k === 'field') out.field = String(x);
    else if (k === 'inner_hits') {
      const list = Array.isArray(x) ? x : [x];
      out.innerHits = list.map((h, i) => parseInnerHits(h, loc, Array.isArray(x) ? [...at, i] : at));
    } else if (k === 'max_concurrent_group_searches') {
      const n = Number(x);
      if (!Number.isInteger(n) || n < 1) throw illegalArgument(`maxConcurrentGroupSearches must be positive, was: ${String(x)}`);
      out.maxConcurrentGroupSearches = n;
    } else throw unknownField(loc, at, 'collapse', k, ['field', 'inner_hits', 'max_concurrent_group_searches']);
  }
  if (!out.field) throw illegalArgument('field name is null or empty');
  const names = new Set<string>();
  for (const h of out.innerHits ?? []) {
    const name = h.name ?? out.field;
    if (names.has(name)) throw illegalArgument(`[inner_hits] already contains an entry for key [${name}]`);
    names.add(name);
  }
  return out;
}

const SCORE_MODES = ['total', 'multiply', 'avg', 'max', 'min'];

/** `rescore`: one rescorer or an array of them (QueryRescorerBuilder). */
export function parseRescore(v: unknown, loc: Locator, sub: Sub): RescoreSpec[] {
  const list = Array.isArray(v) ? v : [v];
  return list.map((r, i) => {
    const at: JsonPath = Array.isArray(v) ? ['rescore', i] : ['rescore'];
    if (!isObject(r)) throw loc.parsing(at, `Unknown key for a ${tokenName(r)} in [rescore].`);
    let windowSize = 10;
    let spec: Omit<RescoreSpec, 'windowSize'> | undefined;
    for (const [k, x] of Object.entries(r)) {
      if (k === 'window_size') {
        windowSize = Number(x);
        if (!Number.isInteger(windowSize)) throw illegalArgument(`For input string: "${String(x)}"`);
        if (windowSize < 0) throw illegalArgument('[window_size] must be greater than or equal to 0');
      } else if (k === 'query') spec = parseQueryRescorer(x, loc, [...at, k], sub);
      else if (isObject(x)) throw loc.parsing([...at, k], `rescore doesn't support rescorer with name [${k}]`);
      else throw loc.parsing([...at, k], `rescore doesn't support [${k}]`);
    }
    if (!spec) throw loc.parsing(at, 'missing rescore type');
    return { windowSize, ...spec };
  });
}

function parseQueryRescorer(v: unknown, loc: Locator, path: JsonPath, sub: Sub): Omit<RescoreSpec, 'windowSize'> {
  if (!isObject(v)) throw loc.parsing(path, `[query] expected an object`);
  let query: Query | undefined;
  let queryWeight = 1;
  let rescoreQueryWeight = 1;
  let scoreMode: RescoreSpec['scoreMode'] = 'total';
  const known = ['rescore_query', 'query_weight', 'rescore_query_weight', 'score_mode'];
  for (const [k, x] of Object.entries(v)) {
    const at = [...path, k];
    if (k === 'rescore_query') query = sub(x, loc, at);
    else if (k === 'query_weight') queryWeight = Math.fround(Number(x));
    else if (k === 'rescore_query_weight') rescoreQueryWeight = Math.fround(Number(x));
    else if (k === 'score_mode') {
      const m = String(x).toLowerCase();
      if (!SCORE_MODES.includes(m)) throw illegalArgument(`illegal score_mode [${String(x)}]`);
      scoreMode = m as RescoreSpec['scoreMode'];
    } else throw unknownField(loc, at, 'query', k, known);
  }
  if (!query) throw new EsError('illegal_argument_exception', 400, 'rescore_query cannot be null');
  return { query, queryWeight, rescoreQueryWeight, scoreMode };
}
