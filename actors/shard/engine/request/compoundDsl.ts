import { EsError, illegalArgument } from '../../../wire/esErrors';
import { isObject, Locator, tokenName, type JsonPath } from '../base/xcontent';

/**
 * Request-side checks of the compound and full-text queries beyond the basic set of queryDsl.ts:
 * `dis_max`, `boosting`, `function_score`, `multi_match`, `combined_fields`, `query_string`,
 * `simple_query_string`, `match_bool_prefix`, `match_phrase`, `match_phrase_prefix`, `fuzzy`,
 * with ES's parse errors (DisMaxQueryBuilder, FunctionScoreQueryBuilder, … `fromXContent`).
 * Sub-queries are parsed through `sub` (queryDsl.ts's parseQuery), so depth limits and errors
 * are those of any clause.
 */
export type SubParser = (v: unknown, loc: Locator, path: JsonPath) => Record<string, Record<string, unknown>>;
type Parser = (body: Record<string, unknown>, loc: Locator, path: JsonPath) => Record<string, unknown>;

const isValue = (v: unknown) => typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean';

function floatOf(v: unknown, name: string, key: string): number {
  const n = typeof v === 'string' ? Number(v) : typeof v === 'bigint' ? Number(v) : v;
  if (typeof n !== 'number' || Number.isNaN(n)) throw illegalArgument(`[${name}] ${key} must be a number, got [${String(v)}]`);
  return n;
}

function intOf(v: unknown, key: string): number {
  const n = typeof v === 'string' ? Number(v) : typeof v === 'bigint' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw illegalArgument(`For input string: "${String(v)}"`);
  if (!Number.isInteger(n) && typeof v === 'string') throw illegalArgument(`For input string: "${v}"`);
  if (key === 'slop' && n < 0) throw illegalArgument('No negative slop allowed.');
  return Math.trunc(n);
}

/** The ES 400 for a negative boost (AbstractQueryBuilder.checkNegativeBoost). */
export function checkNegativeBoost(boost: number): void {
  if (boost < 0) throw illegalArgument(`negative [boost] are not allowed in [${boost}], use a value between 0 and 1 to deboost`);
}

const ZERO_TERMS = (loc: Locator, path: JsonPath, v: unknown): string => {
  const s = String(v).toLowerCase();
  if (s !== 'none' && s !== 'all') throw loc.parsing(path, `Unsupported zero_terms_query value [${String(v)}]`);
  return s;
};

function operatorOf(v: unknown): 'or' | 'and' {
  const s = String(v).toLowerCase();
  if (s === 'or' || s === 'and') return s;
  throw illegalArgument(`operator needs to be either [OR, AND], but not [${String(v)}]`);
}

/** `fields: ["a^2", "b*"]` or `"a"`: name → boost (ES parseFieldAndBoost; repeats multiply). */
export function fieldsAndBoosts(v: unknown, name: string, loc: Locator, path: JsonPath): string[] {
  const list = Array.isArray(v) ? v : [v];
  return list.map((x, i) => {
    if (!isValue(x)) throw loc.parsing([...path, i], `[${name}] query does not support [fields]`);
    const s = String(x);
    const caret = s.indexOf('^');
    if (caret >= 0) {
      const b = Number(s.slice(caret + 1));
      if (Number.isNaN(b) || s.slice(caret + 1).trim() === '') throw illegalArgument(`For input string: "${s.slice(caret + 1)}"`);
      checkNegativeBoost(b);
    }
    if (s === '' || caret === 0) throw illegalArgument('supplied field is null or empty.');
    return s;
  });
}

const MULTI_MATCH_TYPES: Record<string, string> = {
  best_fields: 'best_fields', boolean: 'best_fields', most_fields: 'most_fields', cross_fields: 'cross_fields',
  phrase: 'phrase', phrase_prefix: 'phrase_prefix', bool_prefix: 'bool_prefix',
};

const multiMatch: Parser = (body, loc, path) => {
  const known = [
    'query', 'fields', 'type', 'operator', 'minimum_should_match', 'lenient', 'boost', 'analyzer', 'tie_breaker', 'fuzziness',
    'prefix_length', 'max_expansions', 'slop', 'zero_terms_query', 'fuzzy_rewrite', 'auto_generate_synonyms_phrase_query',
    'fuzzy_transpositions', '_name',
  ];
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    const at = [...path, k];
    if (k === 'fields') {
      if (!Array.isArray(v) && !isValue(v)) throw loc.parsing(at, `[multi_match] query does not support [${k}]`);
      out.fields = fieldsAndBoosts(v, 'multi_match', loc, at);
      continue;
    }
    if (!isValue(v) && v !== null) throw loc.parsing(at, `[multi_match] unknown token [${tokenName(v)}] after [${k}]`);
    if (!known.includes(k)) throw loc.parsing(at, `[multi_match] query does not support [${k}]`);
    if (k === 'type') {
      const t = MULTI_MATCH_TYPES[String(v).toLowerCase()];
      if (!t) throw new EsError('parse_exception', 400, `failed to parse [multi_match] query type [${String(v)}]. unknown type.`);
      out.type = t;
    } else if (k === 'operator') out.operator = operatorOf(v);
    else if (k === 'zero_terms_query') out.zero_terms_query = ZERO_TERMS(loc, at, v);
    else if (k === 'boost' || k === 'tie_breaker') out[k] = floatOf(v, 'multi_match', k);
    else if (k === 'slop' || k === 'prefix_length' || k === 'max_expansions') out[k] = intOf(v, k);
    else out[k] = v;
  }
  if (out.query === undefined || out.query === null) throw loc.parsing(path, 'No text specified for multi_match query');
  const type = (out.type as string | undefined) ?? 'best_fields';
  if (out.fuzziness !== undefined && (type === 'cross_fields' || type === 'phrase' || type === 'phrase_prefix')) {
    throw loc.parsing(path, `Fuzziness not allowed for type [${type}]`);
  }
  if (out.slop !== undefined && out.slop !== 0 && type === 'bool_prefix') throw loc.parsing(path, `[slop] not allowed for type [${type}]`);
  if (out.prefix_length !== undefined && (out.prefix_length as number) < 0) throw illegalArgument('No negative prefix length allowed.');
  if (out.max_expansions !== undefined && (out.max_expansions as number) <= 0) throw illegalArgument('Max expansions must be strictly great than zero.');
  return out;
};

const combinedFields: Parser = (body, loc, path) => {
  const known = ['query', 'fields', 'operator', 'minimum_should_match', 'zero_terms_query', 'auto_generate_synonyms_phrase_query', 'boost', '_name'];
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    const at = [...path, k];
    if (!known.includes(k)) throw loc.parsing(at, `[combined_fields] unknown field [${k}]`);
    if (k === 'fields') out.fields = fieldsAndBoosts(v, 'combined_fields', loc, at);
    else if (k === 'operator') out.operator = operatorOf(v);
    else if (k === 'zero_terms_query') out.zero_terms_query = ZERO_TERMS(loc, at, v);
    else if (k === 'boost') out.boost = floatOf(v, 'combined_fields', k);
    else out[k] = v;
  }
  if (out.query === undefined || out.query === null) throw illegalArgument('[combined_fields] requires query value');
  if (out.fields === undefined) throw illegalArgument('[combined_fields] requires fields at initialization time');
  for (const f of out.fields as string[]) {
    const caret = f.indexOf('^');
    if (caret >= 0 && Number(f.slice(caret + 1)) < 1) {
      throw illegalArgument(`[combined_fields] requires field boosts to be >= 1.0`);
    }
  }
  return out;
};

const QUERY_STRING_KEYS = [
  'query', 'default_field', 'fields', 'default_operator', 'analyzer', 'quote_analyzer', 'allow_leading_wildcard',
  'analyze_wildcard', 'max_determinized_states', 'enable_position_increments', 'fuzziness', 'fuzzy_prefix_length',
  'fuzzy_max_expansions', 'fuzzy_rewrite', 'fuzzy_transpositions', 'phrase_slop', 'auto_generate_synonyms_phrase_query',
  'lenient', 'minimum_should_match', 'quote_field_suffix', 'rewrite', 'time_zone', 'type', 'tie_breaker', 'escape', 'boost', '_name',
];

const queryString: Parser = (body, loc, path) => {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    const at = [...path, k];
    if (k === 'fields') {
      out.fields = fieldsAndBoosts(v, 'query_string', loc, at);
      continue;
    }
    if (!QUERY_STRING_KEYS.includes(k)) throw loc.parsing(at, `[query_string] query does not support [${k}]`);
    if (!isValue(v)) throw loc.parsing(at, `[query_string] unknown token [${tokenName(v)}] after [${k}]`);
    if (k === 'default_operator') out.default_operator = operatorOf(v);
    else if (k === 'type') {
      const t = MULTI_MATCH_TYPES[String(v).toLowerCase()];
      if (!t) throw new EsError('parse_exception', 400, `failed to parse [multi_match] query type [${String(v)}]. unknown type.`);
      out.type = t;
    } else if (k === 'boost' || k === 'tie_breaker') out[k] = floatOf(v, 'query_string', k);
    else if (k === 'phrase_slop' || k === 'fuzzy_prefix_length' || k === 'fuzzy_max_expansions') out[k] = intOf(v, k);
    else out[k] = v;
  }
  if (out.query === undefined) throw loc.parsing(path, '[query_string] must be provided with a [query]');
  if (out.default_field !== undefined && out.fields !== undefined) {
    throw loc.parsing(path, '[query_string] cannot use [fields] parameter in conjunction with [default_field]');
  }
  return out;
};

const SIMPLE_FLAGS: Record<string, number> = {
  ALL: -1, NONE: 0, AND: 1, NOT: 2, OR: 4, PREFIX: 8, PHRASE: 16, PRECEDENCE: 32, ESCAPE: 64, WHITESPACE: 128, FUZZY: 256, NEAR: 512, SLOP: 512,
};

/** SimpleQueryStringFlag.resolveFlags: `AND|OR|…` names (or the int value). */
export function simpleQueryStringFlags(v: unknown): number {
  if (typeof v === 'number') return v;
  const s = String(v ?? '');
  if (s === '') return -1;
  let bits = 0;
  for (const part of s.split('|')) {
    const f = SIMPLE_FLAGS[part.trim().toUpperCase()];
    if (f === undefined) throw illegalArgument(`Unknown simple_query_string flag [${part}]`);
    if (f === -1) return -1;
    bits |= f;
  }
  return bits;
}

const simpleQueryString: Parser = (body, loc, path) => {
  const known = [
    'query', 'fields', 'default_operator', 'analyzer', 'flags', 'lenient', 'analyze_wildcard', 'auto_generate_synonyms_phrase_query',
    'minimum_should_match', 'quote_field_suffix', 'fuzzy_prefix_length', 'fuzzy_max_expansions', 'fuzzy_transpositions', 'boost', '_name',
  ];
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    const at = [...path, k];
    if (k === 'fields') {
      out.fields = fieldsAndBoosts(v, 'simple_query_string', loc, at);
      continue;
    }
    if (!known.includes(k)) throw loc.parsing(at, `[simple_query_string] unsupported field [${k}]`);
    if (k === 'default_operator') out.default_operator = operatorOf(v);
    else if (k === 'flags') out.flags = simpleQueryStringFlags(v);
    else if (k === 'boost') out.boost = floatOf(v, 'simple_query_string', k);
    else out[k] = v;
  }
  if (out.query === undefined) throw loc.parsing(path, '[simple_query_string] query text missing');
  return out;
};

/** `match_bool_prefix`, `match_phrase`, `match_phrase_prefix`: `{f: "text"}` or `{f: {query, …}}`. */
function fieldTextParser(name: string, options: string[]): Parser {
  const known = ['query', 'analyzer', 'boost', '_name', ...options];
  return (body, loc, path) => {
    let field: string | undefined;
    let spec: Record<string, unknown> = {};
    for (const [f, v] of Object.entries(body)) {
      if (field !== undefined) throw loc.parsing([...path, f], `[${name}] query doesn't support multiple fields, found [${field}] and [${f}]`);
      field = f;
      if (isObject(v)) {
        for (const [k, x] of Object.entries(v)) {
          const at = [...path, f, k];
          if (!known.includes(k)) throw loc.parsing(at, `[${name}] query does not support [${k}]`);
          if (!isValue(x) && x !== null) throw loc.parsing(at, `[${name}] unknown token [${tokenName(x)}] after [${k}]`);
          if (k === 'operator') spec.operator = operatorOf(x);
          else if (k === 'zero_terms_query') spec.zero_terms_query = ZERO_TERMS(loc, at, x);
          else if (k === 'boost') spec.boost = floatOf(x, name, k);
          else if (k === 'slop' || k === 'max_expansions' || k === 'prefix_length') spec[k] = intOf(x, k);
          else spec[k] = x;
        }
      } else if (isValue(v)) spec = { query: v };
      else throw loc.parsing([...path, f], `[${name}] unknown token [${tokenName(v)}] after [${f}]`);
    }
    if (field === undefined) throw illegalArgument(`[${name}] requires fieldName`);
    if (spec.query === undefined || spec.query === null) throw illegalArgument(`[${name}] requires query value`);
    return { [field]: spec };
  };
}

const fuzzy: Parser = (body, loc, path) => {
  const known = ['value', 'fuzziness', 'prefix_length', 'max_expansions', 'transpositions', 'rewrite', 'boost', '_name'];
  let field: string | undefined;
  let spec: Record<string, unknown> = {};
  for (const [f, v] of Object.entries(body)) {
    if (field !== undefined) throw loc.parsing([...path, f], `[fuzzy] query doesn't support multiple fields, found [${field}] and [${f}]`);
    field = f;
    if (isObject(v)) {
      for (const [k, x] of Object.entries(v)) {
        if (!known.includes(k)) throw loc.parsing([...path, f, k], `[fuzzy] query does not support [${k}]`);
        spec[k] = k === 'boost' ? floatOf(x, 'fuzzy', k) : x;
      }
    } else spec = { value: v };
  }
  if (!field) throw illegalArgument('field name cannot be null or empty');
  if (spec.value === undefined || spec.value === null) throw illegalArgument('query value cannot be null');
  return { [field]: spec };
};

/** The parsers, with `sub` for the clauses they contain. */
export function compoundParsers(sub: SubParser): Record<string, Parser> {
  const disMax: Parser = (body, loc, path) => {
    const out: Record<string, unknown> = {};
    const queries: unknown[] = [];
    for (const [k, v] of Object.entries(body)) {
      const at = [...path, k];
      if (k === 'queries') {
        if (isObject(v)) queries.push(sub(v, loc, at));
        else if (Array.isArray(v)) v.forEach((q, i) => queries.push(sub(q, loc, [...at, i])));
        else throw loc.parsing(at, `[dis_max] query does not support [${k}]`);
      } else if (k === 'tie_breaker' || k === 'boost') out[k] = floatOf(v, 'dis_max', k);
      else if (k === '_name') out._name = v;
      else throw loc.parsing(at, `[dis_max] query does not support [${k}]`);
    }
    if (!queries.length) throw loc.parsing(path, "[dis_max] requires 'queries' field with at least one clause");
    return { ...out, queries };
  };

  const boosting: Parser = (body, loc, path) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(body)) {
      const at = [...path, k];
      if (k === 'positive' || k === 'negative') {
        if (!isObject(v)) throw loc.parsing(at, `[boosting] query does not support [${k}]`);
        out[k] = sub(v, loc, at);
      } else if (k === 'negative_boost' || k === 'boost') out[k] = floatOf(v, 'boosting', k);
      else if (k === '_name') out._name = v;
      else throw loc.parsing(at, `[boosting] query does not support [${k}]`);
    }
    if (!out.positive) throw loc.parsing(path, "[boosting] query requires 'positive' query");
    if (!out.negative) throw loc.parsing(path, "[boosting] query requires 'negative' query");
    if (out.negative_boost === undefined || (out.negative_boost as number) < 0) {
      throw loc.parsing(path, "[boosting] query requires 'negative_boost' to be set to be a positive value'");
    }
    return out;
  };

  return {
    dis_max: disMax,
    boosting,
    function_score: (body, loc, path) => parseFunctionScore(body, loc, path, sub),
    multi_match: multiMatch,
    combined_fields: combinedFields,
    query_string: queryString,
    simple_query_string: simpleQueryString,
    match_bool_prefix: fieldTextParser('match_bool_prefix', [
      'operator', 'minimum_should_match', 'fuzziness', 'prefix_length', 'max_expansions', 'fuzzy_transpositions', 'fuzzy_rewrite',
    ]),
    match_phrase: fieldTextParser('match_phrase', ['slop', 'zero_terms_query']),
    match_phrase_prefix: fieldTextParser('match_phrase_prefix', ['slop', 'max_expansions', 'zero_terms_query']),
    fuzzy,
  };
}

const SCORE_FUNCTIONS = ['weight', 'field_value_factor', 'random_score', 'gauss', 'linear', 'exp', 'script_score'];
const SCORE_MODES = ['multiply', 'sum', 'avg', 'first', 'max', 'min'];
const BOOST_MODES = ['multiply', 'replace', 'sum', 'avg', 'max', 'min'];
const MISPLACED = 'you can either define [functions] array or a single function, not both. ';

/** FunctionScoreQueryBuilder.fromXContent: `{query, functions:[{filter, <fn>, weight}], score_mode, boost_mode, max_boost, min_score}` or one function inline. */
function parseFunctionScore(body: Record<string, unknown>, loc: Locator, path: JsonPath, sub: SubParser): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const functions: Array<Record<string, unknown>> = [];
  let single: string | undefined;
  let array = false;
  for (const [k, v] of Object.entries(body)) {
    const at = [...path, k];
    if (isObject(v)) {
      if (k === 'query') out.query = sub(v, loc, at);
      else {
        if (single) throw loc.parsing(at, `failed to parse [function_score] query. already found function [${single}], now encountering [${k}]. use [functions] array if you want to define several functions.`);
        if (array) throw loc.parsing(at, `failed to parse [function_score] query. [${MISPLACED}already found [functions] array, now encountering [${k}].]`);
        single = k;
        functions.push({ [k]: scoreFunction(k, v, loc, at) });
      }
    } else if (Array.isArray(v)) {
      if (k !== 'functions') throw loc.parsing(at, `failed to parse [function_score] query. array [${k}] is not supported`);
      if (single) throw loc.parsing(at, `failed to parse [function_score] query. [${MISPLACED}already found [${single}], now encountering [functions].]`);
      array = true;
      v.forEach((f, i) => functions.push(functionEntry(f, loc, [...at, i], sub)));
    } else if (k === 'score_mode') {
      if (!SCORE_MODES.includes(String(v))) throw illegalArgument(`illegal score_mode [${String(v)}]`);
      out.score_mode = v;
    } else if (k === 'boost_mode') {
      if (!BOOST_MODES.includes(String(v))) throw illegalArgument(`Illegal boost_mode [${String(v)}]`);
      out.boost_mode = v;
    } else if (k === 'max_boost' || k === 'boost' || k === 'min_score') out[k] = floatOf(v, 'function_score', k);
    else if (k === '_name') out._name = v;
    else {
      if (single) throw loc.parsing(at, `failed to parse [function_score] query. already found function [${single}], now encountering [${k}]. use [functions] array if you want to define several functions.`);
      if (array) throw loc.parsing(at, `failed to parse [function_score] query. [${MISPLACED}already found [functions] array, now encountering [${k}].]`);
      if (k !== 'weight') throw loc.parsing(at, `failed to parse [function_score] query. field [${k}] is not supported`);
      single = k;
      functions.push({ weight: floatOf(v, 'function_score', 'weight') });
    }
  }
  return { ...out, functions };
}

function functionEntry(f: unknown, loc: Locator, at: JsonPath, sub: SubParser): Record<string, unknown> {
  if (!isObject(f)) {
    throw loc.parsing(at, `failed to parse [START_OBJECT]. malformed query, expected a [${tokenName(f)}] while parsing functions but got a [function_score] instead`);
  }
  const entry: Record<string, unknown> = {};
  let fn: string | undefined;
  for (const [k, v] of Object.entries(f)) {
    const kat = [...at, k];
    if (isObject(v)) {
      if (k === 'filter') entry.filter = sub(v, loc, kat);
      else {
        if (fn) throw loc.parsing(kat, `failed to parse function_score functions. already found [${fn}], now encountering [${k}].`);
        fn = k;
        entry[k] = scoreFunction(k, v, loc, kat);
      }
    } else if (k === 'weight') entry.weight = floatOf(v, 'function_score', 'weight');
    else throw loc.parsing(kat, `failed to parse [function_score] query. field [${k}] is not supported`);
  }
  if (!fn && entry.weight === undefined) {
    throw new EsError('parse_exception', 400, 'failed to parse [function_score] query. an entry in functions list is missing a function.');
  }
  return entry;
}

function scoreFunction(name: string, v: Record<string, unknown>, loc: Locator, at: JsonPath): Record<string, unknown> {
  if (!SCORE_FUNCTIONS.includes(name)) {
    const [l, c] = loc.at(at);
    throw new EsError('parsing_exception', 400, `unknown field [${name}]`, {
      meta: { line: l, col: c },
      causedBy: new EsError('named_object_not_found_exception', 400, `[${l}:${c}] unknown field [${name}]`),
    });
  }
  if (name === 'script_score') throw illegalArgument('[script_score] function is not supported');
  if (name === 'field_value_factor') {
    for (const k of Object.keys(v)) {
      if (!['field', 'factor', 'modifier', 'missing'].includes(k)) throw loc.parsing([...at, k], `[field_value_factor] field_value_factor doesn't support [${k}]`);
    }
    if (v.field === undefined) throw loc.parsing(at, '[field_value_factor] required field \'field\' missing');
    const mods = ['none', 'log', 'log1p', 'log2p', 'ln', 'ln1p', 'ln2p', 'square', 'sqrt', 'reciprocal'];
    if (v.modifier !== undefined && !mods.includes(String(v.modifier).toLowerCase())) throw illegalArgument(`Illegal modifier: ${String(v.modifier)}`);
  }
  if (name === 'random_score') {
    for (const k of Object.keys(v)) if (!['seed', 'field'].includes(k)) throw loc.parsing([...at, k], `random_score query does not support [${k}]`);
  }
  if (name === 'gauss' || name === 'linear' || name === 'exp') {
    const fields = Object.keys(v).filter((k) => k !== 'multi_value_mode');
    if (fields.length !== 1) throw loc.parsing(at, `[${name}] query does not support multiple fields`);
    const spec = v[fields[0]];
    if (!isObject(spec)) throw new EsError('parse_exception', 400, `failed to parse [${name}] score function. field [${fields[0]}] is malformed`);
    if (spec.scale === undefined) throw new EsError('parse_exception', 400, `[${name}] must provide scale`);
    const d = spec.decay === undefined ? 0.5 : Number(spec.decay);
    if (!(d > 0 && d < 1)) throw illegalArgument(`[${name}] decay must be in the range [0..1].`);
    const m = v.multi_value_mode;
    if (m !== undefined && !['min', 'max', 'avg', 'sum'].includes(String(m).toLowerCase())) throw illegalArgument(`Unknown MultiValueMode [${String(m)}]`);
  }
  return v;
}
