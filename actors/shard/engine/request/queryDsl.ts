import { parseIntervals } from './intervalsDsl';
import { spanParsers } from './spanDsl';
import { EsError, illegalArgument } from '../../../wire/esErrors';
import { compoundParsers } from './compoundDsl';
import { didYouMean, isObject, Locator, tokenName, unknownField, type JsonPath } from '../base/xcontent';

/**
 * Query DSL validation and normalization (search-paging.md §13). The output is ES's own long
 * form, so the executor (query.ts) sees one shape per query:
 *
 * - `{match_all:{boost?}}`, `{match_none:{}}`
 * - `{match:{<f>:{query, operator?, minimum_should_match?, boost?, lenient?, …}}}`
 * - `{multi_match:{query, fields:[…], type?, operator?, minimum_should_match?, lenient?, boost?}}`
 * - `{term:{<f>:{value, boost?, case_insensitive?}}}`, `{terms:{<f>:[…], boost?}}`
 * - `{range:{<f>:{gt?|gte?, lt?|lte?, format?, time_zone?, relation?, boost?}}}` (`from/to/include_*` folded in)
 * - `{exists:{field}}`, `{ids:{values:[string…]}}`
 * - `{bool:{must?, filter?, should?, must_not?: Query[], minimum_should_match?, boost?}}` (clauses always arrays)
 * - `{constant_score:{filter: Query, boost?}}`
 */
export type QueryValue = string | number | bigint | boolean;
export type Query = Record<string, Record<string, unknown>>;

/** Queries the engine executes. */
export const SUPPORTED_QUERIES = [
  'match_all', 'match_none', 'match', 'multi_match', 'term', 'terms', 'range', 'exists', 'ids', 'bool', 'constant_score',
  'prefix', 'wildcard', 'regexp', 'dis_max', 'boosting', 'function_score', 'combined_fields', 'query_string',
  'simple_query_string', 'match_bool_prefix', 'match_phrase', 'match_phrase_prefix', 'fuzzy', 'intervals',
  'span_term', 'span_near', 'span_or', 'span_not', 'span_first', 'span_multi', 'span_containing', 'span_within', 'field_masking_span',
  'geo_distance', 'geo_bounding_box', 'nested',
] as const;

/** Other query names ES registers: valid there, a clear 400 here (also the "did you mean" candidates). */
const OTHER_ES_QUERIES = [
  'terms_set', 'script_score', 'script', 'has_child', 'has_parent', 'parent_id',
  'geo_polygon', 'geo_shape', 'shape', 'more_like_this', 'percolate', 'rank_feature', 'distance_feature', 'wrapper',
  'pinned', 'knn', 'text_expansion', 'sparse_vector', 'semantic', 'rule',
  'weighted_tokens',
];
const ALL_QUERIES = [...SUPPORTED_QUERIES, ...OTHER_ES_QUERIES];

type Parser = (body: Record<string, unknown>, loc: Locator, path: JsonPath) => Record<string, unknown>;

/**
 * Validates one query clause (`{"<name>": {…}}`) and returns it normalized.
 * @throws EsError 400 `parsing_exception` `unknown query [foo]` (with suggestions and a
 *   `named_object_not_found_exception` cause), and ES's per-query texts.
 */
export function parseQuery(v: unknown, loc: Locator = new Locator(), path: JsonPath = ['query']): Query {
  // mirrors AbstractQueryBuilder.parseTopLevelQuery: every named query one level deeper
  if (nestedDepth >= MAX_NESTED_DEPTH) {
    throw illegalArgument('The nested depth of the query exceeds the maximum nested depth for queries set in [indices.query.bool.max_nested_depth]');
  }
  nestedDepth++;
  try {
    return parseClause(v, loc, path);
  } finally {
    nestedDepth--;
  }
}

/** ES's `indices.query.bool.max_nested_depth` default (a static node setting there). */
export const MAX_NESTED_DEPTH = 30;
// Parsing is synchronous, so one counter for the clause being parsed is exact.
let nestedDepth = 0;

function parseClause(v: unknown, loc: Locator, path: JsonPath): Query {
  if (!isObject(v)) throw loc.parsing(path, '[_na] query malformed, must start with start_object');
  const names = Object.keys(v);
  if (names.length === 0) {
    const [l, c] = loc.at(path);
    throw loc.parsing(path, `query malformed, empty clause found at [${l}:${c}]`);
  }
  const name = names[0];
  const body = v[name];
  const at = [...path, name];
  if (!isObject(body) && !Array.isArray(body)) throw loc.parsing(at, `[${name}] query malformed, no start_object after query name`);
  const parser = PARSERS[name];
  if (!parser) {
    if (OTHER_ES_QUERIES.includes(name)) throw illegalArgument(`[${name}] query is not supported`);
    // Both carry the location of the query's body, where ES's named-object lookup stands.
    const [l, c] = loc.at(at);
    const cause = new EsError('named_object_not_found_exception', 400, `[${l}:${c}] unknown field [${name}]`);
    const e = loc.parsing(at, `unknown query [${name}]${didYouMean(name, ALL_QUERIES)}`);
    throw new EsError(e.type, e.status, e.message, { ...e.extra, causedBy: cause });
  }
  if (names.length > 1) throw loc.parsing(path, `[${name}] malformed query, expected [END_OBJECT] but found [FIELD_NAME]`);
  if (Array.isArray(body)) throw loc.parsing(at, `[${name}] query malformed, no start_object after query name`);
  return { [name]: parser(body, loc, at) };
}

// ---- shared bits ----

const COMMON = ['boost', '_name'];

function boostOf(v: unknown, name: string): number {
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || Number.isNaN(n)) throw illegalArgument(`[${name}] boost must be a number, got [${String(v)}]`);
  return n;
}

function isValue(v: unknown): v is QueryValue {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean';
}

/** `throwParsingExceptionOnMultipleFields`. */
function oneField(name: string, loc: Locator, path: JsonPath, prev: string | undefined, next: string): void {
  if (prev !== undefined) throw loc.parsing([...path, next], `[${name}] query doesn't support multiple fields, found [${prev}] and [${next}]`);
}

/** ObjectParser-style queries: only the listed keys, values as given. */
function objectParser(name: string, known: string[], required?: string): Parser {
  return (body, loc, path) => {
    for (const k of Object.keys(body)) if (!known.includes(k)) throw unknownField(loc, [...path, k], name, k, known);
    if (required && body[required] === undefined) throw loc.parsing(path, `[${name}] must be provided with a [${required}]`);
    return { ...body };
  };
}

// ---- per query ----

const MATCH_OPTIONS = [
  'query', 'analyzer', 'boost', 'fuzziness', 'prefix_length', 'max_expansions', 'operator', 'minimum_should_match',
  'fuzzy_rewrite', 'fuzzy_transpositions', 'lenient', 'zero_terms_query', 'auto_generate_synonyms_phrase_query', '_name',
];

function parseOperator(v: unknown): 'or' | 'and' {
  const s = String(v).toLowerCase();
  if (s === 'or' || s === 'and') return s;
  throw illegalArgument(`operator needs to be either [OR, AND], but not [${String(v)}]`);
}

const match: Parser = (body, loc, path) => {
  let field: string | undefined;
  let spec: Record<string, unknown> = {};
  for (const [f, v] of Object.entries(body)) {
    oneField('match', loc, path, field, f);
    field = f;
    if (isObject(v)) {
      spec = {};
      for (const [k, x] of Object.entries(v)) {
        if (!MATCH_OPTIONS.includes(k)) throw loc.parsing([...path, f, k], `[match] query does not support [${k}]`);
        if (!isValue(x)) throw loc.parsing([...path, f, k], `[match] unknown token [${tokenName(x)}] after [${k}]`);
        spec[k] = k === 'operator' ? parseOperator(x) : k === 'boost' ? boostOf(x, 'match') : x;
      }
    } else if (isValue(v)) spec = { query: v };
    else throw loc.parsing([...path, f], `[match] unknown token [${tokenName(v)}] after [${f}]`);
  }
  if (field === undefined || spec.query === undefined) throw loc.parsing(path, 'No text specified for text query');
  return { [field]: spec };
};

const term: Parser = (body, loc, path) => {
  let field: string | undefined;
  let spec: Record<string, unknown> = {};
  for (const [f, v] of Object.entries(body)) {
    if (f === 'boost' || f === '_name') {
      spec[f] = f === 'boost' ? boostOf(v, 'term') : v;
      continue;
    }
    if (Array.isArray(v)) throw loc.parsing([...path, f], '[term] query does not support array of values');
    oneField('term', loc, path, field, f);
    field = f;
    if (isObject(v)) {
      for (const [k, x] of Object.entries(v)) {
        if (!['value', 'boost', '_name', 'case_insensitive'].includes(k)) throw loc.parsing([...path, f, k], `[term] query does not support [${k}]`);
        if (!isValue(x) && x !== null) throw loc.parsing([...path, f, k], `[term] unknown token [${tokenName(x)}] after [${k}]`);
        spec[k] = k === 'boost' ? boostOf(x, 'term') : x;
      }
    } else spec.value = v;
  }
  if (!field) throw illegalArgument('field name is null or empty');
  if (spec.value === undefined || spec.value === null) throw illegalArgument('value cannot be null');
  return { [field]: spec };
};

const terms: Parser = (body, loc, path) => {
  const out: Record<string, unknown> = {};
  let field: string | undefined;
  for (const [f, v] of Object.entries(body)) {
    if (Array.isArray(v)) {
      if (field !== undefined) throw loc.parsing([...path, f], '[terms] query does not support multiple fields');
      field = f;
      out[f] = v.map((x, i) => {
        if (x === null || x === undefined) throw loc.parsing([...path, f, i], 'No value specified for terms query');
        if (!isValue(x)) throw illegalArgument(`[terms] query does not support values of type [${tokenName(x)}]`);
        return x;
      });
    } else if (isObject(v)) {
      if (field !== undefined) throw loc.parsing([...path, f], '[terms] query does not support more than one field. Already got: [' + field + '] but also found [' + f + ']');
      field = f;
      out[f] = termsLookup(v, loc, [...path, f]);
    }
    else if (f === 'boost') out.boost = boostOf(v, 'terms');
    else if (f === '_name') out._name = v;
    else if (isValue(v)) throw loc.parsing([...path, f], `[terms] query does not support [${f}]`);
    else throw loc.parsing([...path, f], `[terms] unknown token [${tokenName(v)}] after [${f}]`);
  }
  if (field === undefined) {
    throw loc.parsing(path, '[terms] query requires a field name, followed by array of terms or a document lookup specification');
  }
  return out;
};

/** TermsLookup.parseTermsLookup: `{index, id, path, routing}`, all but routing required. */
function termsLookup(v: Record<string, unknown>, loc: Locator, path: JsonPath): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (!['index', 'id', 'path', 'routing'].includes(k)) throw unknownField(loc, [...path, k], 'terms_lookup', k, ['index', 'id', 'path', 'routing']);
    if (!isValue(x)) throw loc.parsing([...path, k], `[terms] unknown token [${tokenName(x)}] after [${k}]`);
    out[k] = String(x);
  }
  if (out.id === undefined) throw illegalArgument('[terms] query lookup element requires specifying the id.');
  if (out.path === undefined) throw illegalArgument('[terms] query lookup element requires specifying the path.');
  if (out.index === undefined) throw illegalArgument('[terms] query lookup element requires specifying the index.');
  return out;
}

const RANGE_KEYS = ['from', 'to', 'include_lower', 'include_upper', 'gt', 'gte', 'lt', 'lte', 'boost', 'format', 'time_zone', 'relation', '_name'];

const range: Parser = (body, loc, path) => {
  let field: string | undefined;
  let out: Record<string, unknown> = {};
  for (const [f, v] of Object.entries(body)) {
    if (!isObject(v)) throw loc.parsing([...path, f], `[range] query does not support [${f}]`);
    oneField('range', loc, path, field, f);
    field = f;
    // ES folds from/to/gt/gte/lt/lte/include_* into (from, includeLower, to, includeUpper); the last key wins.
    let lower: unknown = null;
    let upper: unknown = null;
    let incLower = true;
    let incUpper = true;
    out = {};
    for (const [k, x] of Object.entries(v)) {
      if (!RANGE_KEYS.includes(k)) throw loc.parsing([...path, f, k], `[range] query does not support [${k}]`);
      if (k === 'from') lower = x;
      else if (k === 'gt' || k === 'gte') [lower, incLower] = [x, k === 'gte'];
      else if (k === 'to') upper = x;
      else if (k === 'lt' || k === 'lte') [upper, incUpper] = [x, k === 'lte'];
      else if (k === 'include_lower') incLower = x === true || x === 'true';
      else if (k === 'include_upper') incUpper = x === true || x === 'true';
      else if (k === 'boost') out.boost = boostOf(x, 'range');
      else out[k] = x;
    }
    if (lower !== null && lower !== undefined) out[incLower ? 'gte' : 'gt'] = lower;
    if (upper !== null && upper !== undefined) out[incUpper ? 'lte' : 'lt'] = upper;
  }
  if (field === undefined) throw illegalArgument('field name is null or empty');
  return { [field]: out };
};

const exists: Parser = (body, loc, path) => {
  for (const [k, v] of Object.entries(body)) {
    if (!['field', ...COMMON].includes(k)) throw loc.parsing([...path, k], `[exists] query does not support [${k}]`);
    if (!isValue(v)) throw loc.parsing([...path, k], `[exists] unknown token [${tokenName(v)}] after [${k}]`);
  }
  if (typeof body.field !== 'string') throw loc.parsing(path, '[exists] must be provided with a [field]');
  return { ...body };
};

const ids: Parser = (body, loc, path) => {
  const out = objectParser('ids', ['values', ...COMMON])(body, loc, path);
  const values = out.values ?? [];
  if (!Array.isArray(values)) throw loc.xContent([...path, 'values'], `[ids] values doesn't support values of type: ${tokenName(values)}`);
  return { ...out, values: values.map((x) => String(x)) };
};

const CLAUSES = ['must', 'filter', 'should', 'must_not'];

const bool: Parser = (body, loc, path) => {
  const out: Record<string, unknown> = {};
  const known = [...CLAUSES, 'minimum_should_match', 'adjust_pure_negative', ...COMMON];
  for (const [k, v] of Object.entries(body)) {
    const at = [...path, k];
    if (!known.includes(k)) throw unknownField(loc, at, 'bool', k, known);
    if (!CLAUSES.includes(k)) {
      out[k] = k === 'boost' ? boostOf(v, 'bool') : v;
      continue;
    }
    if (v === null) continue;
    if (isObject(v)) out[k] = [...((out[k] as Query[]) ?? []), parseQuery(v, loc, at)];
    else if (Array.isArray(v)) out[k] = [...((out[k] as Query[]) ?? []), ...v.map((q, i) => parseQuery(q, loc, [...at, i]))];
    else throw loc.xContent(at, `[bool] ${k} doesn't support values of type: ${tokenName(v)}`);
  }
  return out;
};

const constantScore: Parser = (body, loc, path) => {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    if (k === 'filter') out.filter = parseQuery(v, loc, [...path, k]);
    else if (k === 'boost') out.boost = boostOf(v, 'constant_score');
    else if (k === '_name') out._name = v;
    else throw loc.parsing([...path, k], `[constant_score] query does not support [${k}]`);
  }
  if (out.filter === undefined) throw loc.parsing(path, "[constant_score] requires a 'filter' element");
  return out;
};

/**
 * `prefix`, `wildcard` and `regexp` (PrefixQueryBuilder & co): `{f: "v"}` or `{f: {value, …}}`;
 * `wildcard` also takes its pattern as `wildcard`. Output: `{<f>: {value, …options}}`.
 */
function multiTermParser(name: 'prefix' | 'wildcard' | 'regexp', options: string[]): Parser {
  const known = ['value', 'boost', 'rewrite', 'case_insensitive', '_name', ...options];
  return (body, loc, path) => {
    let field: string | undefined;
    let spec: Record<string, unknown> = {};
    for (const [f, v] of Object.entries(body)) {
      oneField(name, loc, path, field, f);
      field = f;
      if (isObject(v)) {
        spec = {};
        for (const [k, x] of Object.entries(v)) {
          if (!known.includes(k)) throw loc.parsing([...path, f, k], `[${name}] query does not support [${k}]`);
          if (!isValue(x) && x !== null) throw loc.parsing([...path, f, k], `[${name}] unknown token [${tokenName(x)}] after [${k}]`);
          const key = k === 'wildcard' ? 'value' : k;
          spec[key] = k === 'boost' ? boostOf(x, name) : k === 'flags' ? regexpFlags(x) : x === null ? undefined : x;
        }
      } else if (isValue(v)) spec = { value: v };
      else throw loc.parsing([...path, f], `[${name}] unknown token [${tokenName(v)}] after [${f}]`);
    }
    if (!field) throw illegalArgument('field name is null or empty');
    if (spec.value === undefined) throw illegalArgument('value cannot be null');
    if (spec.flags_value !== undefined) spec.flags = Number(spec.flags_value);
    delete spec.flags_value;
    return { [field]: { ...spec, value: String(spec.value) } };
  };
}

/** ES RegexpFlag.resolveValue: `ALL`, `NONE` or `|`-separated names; the bits of Lucene's syntax flags. */
function regexpFlags(v: unknown): number {
  const FLAGS: Record<string, number> = { INTERSECTION: 0x1, COMPLEMENT: 0x2, EMPTY: 0x4, ANYSTRING: 0x8, INTERVAL: 0x20, NONE: 0, ALL: 0xff };
  const s = String(v ?? '');
  if (!s) return FLAGS.ALL;
  let bits = 0;
  for (const part of s.split('|')) {
    const f = FLAGS[part.trim().toUpperCase()];
    if (f === undefined) throw illegalArgument(`Unknown regexp flag [${part}]`);
    bits |= f;
  }
  return bits;
}

const PARSERS: Record<string, Parser> = {
  prefix: multiTermParser('prefix', []),
  wildcard: multiTermParser('wildcard', ['wildcard']),
  regexp: multiTermParser('regexp', ['flags', 'flags_value', 'max_determinized_states']),
  constant_score: constantScore,
  match_all: objectParser('match_all', COMMON),
  match_none: objectParser('match_none', COMMON),
  match,
  term,
  terms,
  range,
  exists,
  ids,
  bool,
  ...compoundParsers((v, loc, path) => parseQuery(v, loc, path)),
  intervals: parseIntervals,
  geo_distance: (body, loc, path) => {
    if (body.distance === undefined) throw loc.parsing(path, 'geo_distance requires \'distance\' to be specified');
    return { ...body };
  },
  geo_bounding_box: (body) => ({ ...body }),
  nested: (body, loc, path) => {
    const known = ['path', 'query', 'score_mode', 'ignore_unmapped', 'inner_hits', 'boost', '_name'];
    for (const k of Object.keys(body)) if (!known.includes(k)) throw unknownField(loc, [...path, k], 'nested', k, known);
    if (body.query === undefined) throw loc.parsing(path, '[nested] requires \'query\' field');
    if (body.path === undefined) throw loc.parsing(path, '[nested] requires \'path\' field');
    const mode = String(body.score_mode ?? 'avg').toLowerCase();
    if (!['avg', 'max', 'min', 'sum', 'none'].includes(mode)) throw illegalArgument(`No enum constant org.apache.lucene.search.join.ScoreMode.${String(body.score_mode)}`);
    return { ...body, query: parseQuery(body.query, loc, [...path, 'query']) };
  },
  ...spanParsers((v, loc, path) => parseQuery(v, loc, path)),
};

/**
 * The URL `q` parameter as ES reads it (RestActions.urlParamsToQueryBuilder): a `query_string`
 * query with `df` as its default field (else every field, leniently), `default_operator`,
 * `lenient`, `analyzer` and `analyze_wildcard` from the URL.
 */
export function queryFromQ(q: string, opts: { df?: string; defaultOperator?: string; lenient?: boolean; analyzer?: string; analyzeWildcard?: boolean } = {}): Query {
  return {
    query_string: {
      query: q,
      ...(opts.df !== undefined ? { default_field: opts.df } : {}),
      ...(opts.defaultOperator !== undefined ? { default_operator: parseOperator(opts.defaultOperator) } : {}),
      ...(opts.lenient !== undefined ? { lenient: opts.lenient } : {}),
      ...(opts.analyzer !== undefined ? { analyzer: opts.analyzer } : {}),
      ...(opts.analyzeWildcard !== undefined ? { analyze_wildcard: opts.analyzeWildcard } : {}),
    },
  };
}
