/**
 * The subset of the query DSL the security query APIs accept (`_security/_query/api_key|user|role`,
 * ES FieldNameTranslators + ApiKeyBoolQueryBuilder / UserBoolQueryBuilder / RoleBoolQueryBuilder):
 * `bool`, `match_all`, `ids`, `term`, `terms`, `match`, `prefix`, `wildcard`, `range`, `exists` and
 * `simple_query_string`, over an allow-list of fields. A query compiles once into a predicate over
 * in-memory records; fields resolve through a {@link FieldTable} (ES's errors for anything else).
 */
import { compileWildcard } from '../automaton';
import { parseDateMath } from '../shard/engine/base/dateMath';
import { dateFormatter, DateParseError } from '../shard/engine/base/dates';
import { EsError, illegalArgument } from '../wire/esErrors';
import { simpleQueryString } from './simpleQueryString';

export type { Field, FieldKind, FieldTable, Predicate, Value } from './queryTypes';
import type { Field, FieldTable, Predicate, Value } from './queryTypes';
type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

const isPattern = (s: string) => s.includes('*') || s.includes('?');
const notInContext = (what: string) => illegalArgument(`${what} is not currently supported in this context`);

/** Builds a table from fixed fields plus flattened objects (`metadata`, `metadata.a.b`). */
export function fieldTable<T>(fixed: Field<T>[], flattened: Array<{ name: string; object: (doc: T) => unknown }>, id: (doc: T) => string): FieldTable<T> {
  const byName = new Map(fixed.map((f) => [f.name, f]));
  const flat = flattened.map((fl) => ({ ...fl, field: flattenedField(fl.name, fl.object) }));
  return {
    id,
    resolve(name) {
      if (isPattern(name)) throw illegalArgument(`Field name pattern [${name}] is not allowed for querying or aggregation`);
      const f = byName.get(name);
      if (f) return f;
      for (const fl of flat) {
        if (name === fl.name) return fl.field;
        if (name.startsWith(`${fl.name}.`)) return flattenedField(name, (d) => objectAt(fl.object(d), name.slice(fl.name.length + 1)));
      }
      throw illegalArgument(`Field [${name}] is not allowed for querying or aggregation`);
    },
    matching(pattern) {
      if (!isPattern(pattern)) {
        const known = byName.has(pattern) || flat.some((x) => pattern === x.name || pattern.startsWith(`${x.name}.`));
        return known ? [this.resolve(pattern)] : []; // unknown names are ignored, as simple_query_string is lenient
      }
      const m = compileWildcard(pattern);
      return [...fixed.filter((f) => m.test(f.name)), ...flat.filter((x) => m.test(x.name)).map((x) => x.field)];
    },
  };
}

/** The leaves of a flattened object as keywords (ES `flattened`: numbers and booleans become strings). */
function flattenedField<T>(name: string, object: (doc: T) => unknown): Field<T> {
  return {
    name,
    kind: 'keyword',
    sortable: true,
    values: (d) => {
      const out: string[] = [];
      leaves(object(d), out);
      return out;
    },
  };
}

function leaves(v: unknown, out: string[]): void {
  if (v === undefined || v === null) return;
  if (Array.isArray(v)) for (const x of v) leaves(x, out);
  else if (isObj(v)) for (const x of Object.values(v)) leaves(x, out);
  else out.push(String(v));
}

/** The value at a dotted path (keys may themselves contain dots, as ES's flattened fields allow). */
function objectAt(o: unknown, path: string): unknown {
  if (!isObj(o)) return undefined;
  if (Object.hasOwn(o, path)) return o[path];
  for (let i = path.indexOf('.'); i > 0; i = path.indexOf('.', i + 1)) {
    const head = path.slice(0, i);
    if (Object.hasOwn(o, head)) {
      const r = objectAt(o[head], path.slice(i + 1));
      if (r !== undefined) return r;
    }
  }
  return undefined;
}

/** ES's standard analyzer, near enough: lower case, split on anything that is not a letter or digit. */
export function analyze(text: string): string[] {
  return text.toLowerCase().split(/[^\p{L}\p{N}_']+/u).map((t) => t.replace(/^'+|'+$/g, '')).filter(Boolean);
}

const DATE_FORMAT = 'strict_date_optional_time||epoch_millis';

/** A date as epoch millis: a number, digits, a date or date math (`now-1d/d`), as ES's date field parses it. */
export function toMillis(v: unknown, field: string, o: { now: number; roundUp?: boolean; format?: string; tz?: string } = { now: Date.now() }): number {
  if (typeof v === 'number' || typeof v === 'bigint') return Number(v);
  const s = String(v);
  const format = o.format ?? DATE_FORMAT;
  try {
    return parseDateMath(s, dateFormatter(format), { now: o.now, roundUp: o.roundUp, tz: o.tz }).ms;
  } catch (e) {
    if (e instanceof DateParseError || e instanceof Error) {
      throw new EsError('parse_exception', 400, `failed to parse date field [${s}] with format [${format}]`, { meta: { field } });
    }
    throw e;
  }
}

/** A query value as the field's type (ES parses term values with the field's type). */
export function coerce(f: Field<unknown>, v: unknown, now: number): Value {
  if (f.kind === 'date') return toMillis(v, f.name, { now });
  if (f.kind === 'boolean') {
    if (v === true || v === 'true') return true;
    if (v === false || v === 'false') return false;
    throw illegalArgument(`Can't parse boolean value [${String(v)}], expected [true] or [false]`);
  }
  return String(v);
}

/** Values of a field as its queries see them (text fields: their tokens). */
export function terms<T>(f: Field<T>, d: T): Value[] {
  const vs = f.values(d);
  return f.kind === 'text' ? vs.flatMap((v) => analyze(String(v))) : vs;
}

function single(q: unknown, kind: string): [string, unknown] {
  if (!isObj(q)) throw new EsError('parsing_exception', 400, `[${kind}] query malformed, no start_object after query name`);
  const keys = Object.keys(q).filter((k) => k !== 'boost' && k !== '_name');
  if (keys.length !== 1) throw new EsError('parsing_exception', 400, `[${kind}] query doesn't support multiple fields, found [${keys.join('] and [')}]`);
  return [keys[0], q[keys[0]]];
}

function onlyStringish(kind: 'prefix' | 'wildcard', f: Field<unknown>): void {
  if (f.kind === 'keyword' || f.kind === 'text') return;
  throw new EsError('query_shard_exception', 400, `failed to create query: Can only use ${kind} queries on keyword and text fields - not on [${f.name}] which is of type [${f.kind}]`);
}

/** Query names ES knows but these APIs refuse (anything else is an unknown query). */
const KNOWN_QUERIES = new Set([
  'match_none', 'match_phrase', 'match_phrase_prefix', 'match_bool_prefix', 'multi_match', 'combined_fields', 'query_string', 'fuzzy', 'regexp',
  'nested', 'has_child', 'has_parent', 'constant_score', 'dis_max', 'function_score', 'boosting', 'script', 'script_score', 'more_like_this',
  'geo_distance', 'geo_bounding_box', 'geo_shape', 'intervals', 'span_term', 'span_near', 'span_or', 'span_not', 'span_first', 'span_multi',
  'span_containing', 'span_within', 'field_masking_span', 'percolate', 'pinned', 'wrapper', 'distance_feature', 'rank_feature', 'knn', 'terms_set',
  'type', 'parent_id', 'semantic', 'sparse_vector', 'text_expansion',
]);

/** Compiles a query (ES's JSON) into a predicate, checking every field and query type on the way. */
export function compileQuery<T>(q: unknown, fields: FieldTable<T>, now: number): Predicate<T> {
  if (!isObj(q) || Object.keys(q).length !== 1) throw new EsError('parsing_exception', 400, '[_na] query malformed, must start with start_object');
  const [kind, body] = Object.entries(q)[0];
  const b = (body ?? {}) as Obj;
  switch (kind) {
    case 'match_all':
      return () => true;
    case 'ids': {
      const ids = new Set((Array.isArray(b.values) ? b.values : []).map(String));
      return (d) => ids.has(fields.id(d));
    }
    case 'term': {
      const [name, v] = single(b, kind);
      const f = fields.resolve(name);
      const ci = isObj(v) && v.case_insensitive === true;
      const raw = isObj(v) ? v.value : v;
      const want = coerce(f, raw, now);
      if (ci && typeof want === 'string') {
        const w = want.toLowerCase();
        return (d) => terms(f, d).some((x) => String(x).toLowerCase() === w);
      }
      return (d) => terms(f, d).some((x) => x === want);
    }
    case 'terms': {
      const entries = Object.entries(b).filter(([k]) => k !== 'boost' && k !== '_name');
      if (entries.length !== 1) throw new EsError('parsing_exception', 400, '[terms] query requires a field with a list of values');
      const [name, vs] = entries[0];
      if (isObj(vs)) throw notInContext('terms query with terms lookup');
      const f = fields.resolve(name);
      if (!Array.isArray(vs)) throw new EsError('parsing_exception', 400, `[terms] query does not support [${name}]`);
      const want = new Set(vs.map((v) => coerce(f, v, now)));
      return (d) => terms(f, d).some((x) => want.has(x));
    }
    case 'match': {
      const [name, v] = single(b, kind);
      const f = fields.resolve(name);
      const text = isObj(v) ? v.query : v;
      if (f.kind !== 'text') {
        const want = coerce(f, text, now);
        return (d) => f.values(d).some((x) => x === want);
      }
      const tokens = analyze(String(text));
      const and = isObj(v) && String(v.operator ?? 'or').toLowerCase() === 'and';
      return (d) => {
        const have = new Set(terms(f, d));
        return tokens.length > 0 && (and ? tokens.every((t) => have.has(t)) : tokens.some((t) => have.has(t)));
      };
    }
    case 'prefix': {
      const [name, v] = single(b, kind);
      const f = fields.resolve(name);
      onlyStringish('prefix', f);
      const ci = isObj(v) && v.case_insensitive === true;
      const p = String(isObj(v) ? v.value : v);
      const pp = ci ? p.toLowerCase() : p;
      return (d) => terms(f, d).some((x) => (ci ? String(x).toLowerCase() : String(x)).startsWith(pp));
    }
    case 'wildcard': {
      const [name, v] = single(b, kind);
      const f = fields.resolve(name);
      onlyStringish('wildcard', f);
      const ci = isObj(v) && v.case_insensitive === true;
      const pattern = String(isObj(v) ? (v.value ?? v.wildcard) : v);
      const m = compileWildcard(f.kind === 'text' ? pattern.toLowerCase() : pattern, ci);
      return (d) => terms(f, d).some((x) => m.test(String(x)));
    }
    case 'exists': {
      const f = fields.resolve(String(b.field));
      return (d) => f.values(d).length > 0;
    }
    case 'range':
      return rangePredicate(b, fields, now);
    case 'bool':
      return boolPredicate(b, fields, now);
    case 'simple_query_string':
      return simpleQueryString(b, fields, now, { analyze, coerce, terms });
    default:
      if (KNOWN_QUERIES.has(kind)) throw notInContext(`Query type [${kind}]`);
      throw new EsError('parsing_exception', 400, `unknown query [${kind}]`);
  }
}

function rangePredicate<T>(b: Obj, fields: FieldTable<T>, now: number): Predicate<T> {
  const [name, c] = single(b, 'range');
  const cond = (isObj(c) ? c : {}) as Obj;
  if (cond.relation !== undefined) throw notInContext('range query with relation');
  const f = fields.resolve(name);
  const bound = (x: unknown, roundUp: boolean): Value | undefined => {
    if (x === undefined || x === null) return undefined;
    if (f.kind === 'date') return toMillis(x, f.name, { now, roundUp, format: typeof cond.format === 'string' ? cond.format : undefined, tz: typeof cond.time_zone === 'string' ? cond.time_zone : undefined });
    return coerce(f, x, now);
  };
  // ES rounds `gt`/`lte` date math up and `gte`/`lt` down (RangeQueryBuilder).
  let gt = bound(cond.gt, true);
  let gte = bound(cond.gte, false);
  let lt = bound(cond.lt, false);
  let lte = bound(cond.lte, true);
  if (cond.from !== undefined && cond.from !== null) (cond.include_lower === false ? (gt = bound(cond.from, true)) : (gte = bound(cond.from, false)));
  if (cond.to !== undefined && cond.to !== null) (cond.include_upper === false ? (lt = bound(cond.to, false)) : (lte = bound(cond.to, true)));
  return (d) =>
    terms(f, d).some((x) => (gt === undefined || x > gt) && (gte === undefined || x >= gte) && (lt === undefined || x < lt) && (lte === undefined || x <= lte));
}

/** ES minimum_should_match: an integer, a negative integer or a percentage of the optional clauses. */
function minimumShouldMatch(v: unknown, optional: number): number {
  const s = String(v).trim();
  const pct = /^(-?\d+)%$/.exec(s);
  let n: number;
  if (pct) {
    const p = Number(pct[1]);
    n = p < 0 ? optional - Math.floor((-p * optional) / 100) : Math.floor((p * optional) / 100);
  } else if (/^-?\d+$/.test(s)) {
    const k = Number(s);
    n = k < 0 ? optional + k : k;
  } else throw illegalArgument(`Unable to parse minimum_should_match [${s}]`);
  return Math.max(0, n);
}

function boolPredicate<T>(b: Obj, fields: FieldTable<T>, now: number): Predicate<T> {
  const list = (k: string) => (b[k] === undefined || b[k] === null ? [] : Array.isArray(b[k]) ? (b[k] as unknown[]) : [b[k]]).map((x) => compileQuery(x, fields, now));
  for (const k of Object.keys(b)) {
    if (!['must', 'filter', 'should', 'must_not', 'minimum_should_match', 'boost', '_name', 'adjust_pure_negative'].includes(k)) {
      throw new EsError('parsing_exception', 400, `[bool] query does not support [${k}]`);
    }
  }
  const must = [...list('must'), ...list('filter')];
  const should = list('should');
  const mustNot = list('must_not');
  const min = b.minimum_should_match !== undefined && b.minimum_should_match !== null ? minimumShouldMatch(b.minimum_should_match, should.length) : must.length || mustNot.length ? 0 : should.length ? 1 : 0;
  return (d) => {
    if (!must.every((p) => p(d)) || mustNot.some((p) => p(d))) return false;
    if (!min) return true;
    let n = 0;
    for (const p of should) if (p(d) && ++n >= min) return true;
    return false;
  };
}
