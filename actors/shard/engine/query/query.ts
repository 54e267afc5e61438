/**
 * Query DSL -> a small node tree bound to one searcher (fields resolved, values parsed, stats
 * read), evaluated by evaluate.ts. Here: match_all, match_none, match, term, terms, range, exists,
 * ids, bool, constant_score, prefix, wildcard, regexp; the full-text and compound queries are
 * compiled by their own modules (fullText.ts, multiMatch.ts, compound.ts, queryString.ts), which
 * compile their clauses back through `ctx.compile`.
 */
import { compileIntervals } from './intervals';
import { nestedNode } from './nested';
import { encodedRangeNode, encodedTermNode, geoBoundingBoxNode, geoDistanceNode } from './encodedQueries';
import { isEncoded } from '../index/fieldCodecs';
import { compileSpan, spanNode } from './spans';
import { EsError, illegalArgument, parsingException } from '../../../wire/esErrors';
import { compileRegExp, compileWildcard, RegExpFlag, type Matcher } from '../../../automaton';
import type { FieldDef } from '../index/mapping';
import { Bitset } from '../base/bits';
import { analyze, bm25, bm25Weight, idf, normCache } from '../index/analysis';
import { docFreq, forEachPosting, type KeywordView, type NumericView, type NumVal, type PostingRef } from '../index/columnViews';
import { DateParseError, dateFormatter } from '../base/dates';
import { parseDateMath } from '../base/dateMath';
import { halfRound } from '../index/docParser';
import { numericRange, keywordRange, type Bound } from './ranges';
import { statsOf, type QNode, type QueryContext } from './qnode';
import { compileFieldText, compileFuzzy } from './fullText';
import { compileCombinedFields, compileMultiMatch } from './multiMatch';
import { compileBoosting, compileDisMax, compileFunctionScore } from './compound';
import { compileQueryString, compileSimpleQueryString } from './queryString';
import { minimumShouldMatchOf as minimumShouldMatch } from './msm';

export { minimumShouldMatchOf as minimumShouldMatch } from './msm';

export type { QNode, QueryContext } from './qnode';

export { statsOf } from './qnode';

const NONE: QNode = { k: 'none' };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Compiles Query DSL JSON (absent = match_all). Throws parsing_exception / query_shard_exception. */
export function compileQuery(q: unknown, ctx: QueryContext): QNode {
  if (q === undefined || q === null) return { k: 'all', boost: 1 };
  if (!isObj(q)) throw parsingException('[_na] query malformed, must start with start_object');
  const keys = Object.keys(q);
  if (keys.length !== 1) throw parsingException(keys.length ? `[${keys[0]}] malformed query, expected [END_OBJECT] but found [FIELD_NAME]` : 'query malformed, empty clause found');
  const name = keys[0];
  const body = q[name];
  ctx.compile ??= (c) => compileQuery(c, ctx);
  try {
    const node = compileNamed(name, body, ctx);
    const qn = queryName(body);
    if (qn !== undefined) (ctx.named ??= []).push({ name: qn, node });
    return node;
  } catch (e) {
    if (e instanceof EsError) throw e;
    // mirrors SearchExecutionContext.toQuery: anything unexpected becomes a query_shard_exception
    throw new EsError('query_shard_exception', 400, `failed to create query: ${(e as Error).message}`, { meta: { index: ctx.store.index } });
  }
}

function compileNamed(name: string, body: unknown, ctx: QueryContext): QNode {
  switch (name) {
    case 'match_all': return { k: 'all', boost: boostOf(body) };
    case 'match_none': return NONE;
    case 'bool': return compileBool(asObj(name, body), ctx);
    case 'constant_score': {
      const b = asObj(name, body);
      if (b.filter === undefined) throw parsingException('[constant_score] requires a \'filter\' element');
      return { k: 'wrap', inner: compileQuery(b.filter, ctx), boost: boostOf(b) };
    }
    case 'ids': {
      const b = asObj(name, body);
      const vals = Array.isArray(b.values) ? b.values.map(String) : [];
      return idsNode(vals, boostOf(b), ctx);
    }
    case 'exists': {
      const b = asObj(name, body);
      if (typeof b.field !== 'string') throw parsingException('[exists] must be provided with a [field]');
      return existsNode(b.field, boostOf(b), ctx);
    }
    case 'term': {
      const [field, spec] = singleField(name, body);
      const v = isObj(spec) ? spec.value : spec;
      if (v === undefined || v === null) throw parsingException('[term] query does not support [null] value');
      const ci = isObj(spec) && (spec.case_insensitive === true);
      return termNode(field, [v], isObj(spec) ? boostOf(spec) : 1, ctx, false, ci);
    }
    case 'terms': {
      const b = asObj(name, body);
      const fields = Object.keys(b).filter((k) => k !== 'boost' && k !== '_name');
      if (fields.length !== 1) throw parsingException(`[terms] query does not support multiple fields`);
      const vals = b[fields[0]];
      if (!Array.isArray(vals)) throw illegalArgument('query must be rewritten first'); // the coordinator resolves terms lookups
      return termNode(fields[0], vals, boostOf(b), ctx, true, false);
    }
    case 'match': return compileMatch(body, ctx);
    case 'multi_match': return compileMultiMatch(asObj(name, body), ctx);
    case 'combined_fields': return compileCombinedFields(asObj(name, body), ctx);
    case 'match_bool_prefix':
    case 'match_phrase':
    case 'match_phrase_prefix': return compileFieldText(name, asObj(name, body), ctx);
    case 'fuzzy': return compileFuzzy(asObj(name, body), ctx);
    case 'intervals': return compileIntervals(asObj(name, body), ctx);
    case 'nested': return nestedNode(asObj(name, body), ctx, compileQuery);
    case 'geo_distance': return geoDistanceNode(asObj(name, body), ctx);
    case 'geo_bounding_box': return geoBoundingBoxNode(asObj(name, body), ctx);
    case 'span_term': case 'span_near': case 'span_or': case 'span_not': case 'span_first': case 'span_multi':
    case 'span_containing': case 'span_within': case 'field_masking_span': {
      const b = asObj(name, body);
      const inner = name === 'span_term' ? Object.entries(b).find(([k]) => k !== 'boost' && k !== '_name')?.[1] : undefined;
      const boost = Math.fround(boostOf(b) * (isObj(inner) ? boostOf(inner) : 1));
      return spanNode(compileSpan({ [name]: b }, ctx), boost, ctx);
    }
    case 'dis_max': return compileDisMax(asObj(name, body), ctx);
    case 'boosting': return compileBoosting(asObj(name, body), ctx);
    case 'function_score': return compileFunctionScore(asObj(name, body), ctx);
    case 'query_string': return compileQueryString(asObj(name, body), ctx);
    case 'simple_query_string': return compileSimpleQueryString(asObj(name, body), ctx);
    case 'prefix':
    case 'wildcard':
    case 'regexp': {
      const [field, spec] = singleField(name, body);
      return multiTermNode(name, field, isObj(spec) ? spec : { value: spec }, ctx);
    }
    case 'range': {
      const [field, spec] = singleField(name, body);
      if (!isObj(spec)) throw parsingException('[range] query malformed, no start_object after query name');
      return rangeNode(field, spec, ctx);
    }
  }
  throw parsingException(`unknown query [${name}]`);
}

/** The `_name` of a clause: on its body, or inside its one field's options (`match: {f: {query, _name}}`). */
function queryName(body: unknown): string | undefined {
  if (!isObj(body)) return undefined;
  if (typeof body._name === 'string') return body._name;
  const fields = Object.keys(body).filter((k) => k !== 'boost');
  if (fields.length !== 1) return undefined;
  const inner = body[fields[0]];
  return isObj(inner) && typeof inner._name === 'string' ? inner._name : undefined;
}

function asObj(name: string, body: unknown): Obj {
  if (!isObj(body)) throw parsingException(`[${name}] query malformed, no start_object after query name`);
  return body;
}

function boostOf(b: unknown): number {
  const v = isObj(b) ? b.boost : undefined;
  return v === undefined ? 1 : Math.fround(Number(v));
}

function singleField(name: string, body: unknown): [string, unknown] {
  const b = asObj(name, body);
  const fields = Object.keys(b).filter((k) => k !== '_name' && k !== 'boost');
  if (fields.length !== 1) throw parsingException(fields.length ? `[${name}] query doesn't support multiple fields, found [${fields[0]}] and [${fields[1]}]` : `[${name}] query malformed, no field specified`);
  return [fields[0], b[fields[0]]];
}

// ---- bool ----

function clauses(v: unknown, ctx: QueryContext): QNode[] {
  if (v === undefined || v === null) return [];
  return (Array.isArray(v) ? v : [v]).map((c) => compileQuery(c, ctx));
}

function compileBool(b: Obj, ctx: QueryContext): QNode {
  const must = clauses(b.must, ctx), filter = clauses(b.filter, ctx), should = clauses(b.should, ctx), mustNot = clauses(b.must_not, ctx);
  if (!must.length && !filter.length && !should.length && !mustNot.length) return { k: 'all', boost: boostOf(b) };
  const pureShould = should.length > 0 && !must.length && !filter.length;
  let msm = b.minimum_should_match === undefined || b.minimum_should_match === null
    ? (pureShould ? 1 : 0)
    : minimumShouldMatch(should.length, String(b.minimum_should_match));
  if (pureShould && msm === 0) msm = 1; // a pure disjunction needs one hit
  return { k: 'bool', must, filter, should, mustNot, msm, boost: boostOf(b) };
}

// ---- leaves ----

function idsNode(ids: string[], boost: number, ctx: QueryContext): QNode {
  return {
    k: 'const', boost,
    bits: () => {
      const bits = new Bitset(ctx.s.maxDoc);
      for (const id of ids) {
        const d = ctx.store.lookup(ctx.s, id);
        if (d !== undefined) bits.set(d);
      }
      return bits;
    },
  };
}

function existsNode(field: string, boost: number, ctx: QueryContext): QNode {
  if (field === '_id' || field === '_index' || field === '_source') return { k: 'all', boost };
  const m = ctx.store.mapping;
  const defs = m.isObject(field) ? m.leavesUnder(field) : m.field(field) ? [m.field(field)!] : [];
  if (!defs.length) return NONE;
  return {
    k: 'const', boost,
    bits: () => {
      const n = ctx.s.maxDoc;
      const bits = new Bitset(n);
      for (const def of defs) {
        const col = ctx.store.column(def.path);
        if (col?.kind === 'numeric') for (let d = 0; d < n; d++) { if (col.has(d)) bits.set(d); }
        else if (col?.kind === 'keyword') for (let d = 0; d < n && d < col.ords.length; d++) { if (col.ords[d] >= 0) bits.set(d); }
        else if (col?.kind === 'text') for (let d = 0; d < n; d++) { if (col.has(d)) bits.set(d); }
      }
      return bits;
    },
  };
}

function queryShardError(ctx: QueryContext, msg: string): EsError {
  return new EsError('query_shard_exception', 400, `failed to create query: ${msg}`, { meta: { index: ctx.store.index } });
}

/** term / terms (exact values; on text fields: one indexed token each). */
function termNode(field: string, values: unknown[], boost: number, ctx: QueryContext, isTerms: boolean, caseInsensitive: boolean): QNode {
  if (field === '_id') return idsNode(values.map(String), boost, ctx);
  if (field === '_index') return values.map(String).includes(ctx.store.index) ? { k: 'all', boost } : NONE;
  const def = ctx.store.mapping.field(field);
  if (!def || !values.length) return NONE;
  if (isEncoded(def.type)) return encodedTermNode(def, values, boost, ctx);
  const col = ctx.store.column(def.path);
  if (def.type === 'text') {
    if (col?.kind !== 'text') return NONE;
    if (!isTerms && !caseInsensitive) return { k: 'text', col, path: def.path, term: String(values[0]), field, boost };
    const want = values.map((v) => (caseInsensitive ? String(v).toLowerCase() : String(v)));
    const refs: PostingRef[] = [];
    if (caseInsensitive) col.forEachTerm((t, ref) => void (want.includes(t.toLowerCase()) && refs.push(ref)));
    else for (const t of new Set(want)) { const ref = col.postings(t); if (ref !== undefined) refs.push(ref); }
    return postingsUnion(ctx, boost, refs);
  }
  if (def.type === 'keyword') {
    if (col?.kind !== 'keyword') return NONE;
    const strs = values.map(String);
    if (caseInsensitive) {
      const want = strs.map((s) => s.toLowerCase());
      const refs: PostingRef[] = [];
      col.forEachTerm((t, o) => void (want.includes(t.toLowerCase()) && refs.push(col.postingsOf(o))));
      return postingsUnion(ctx, boost, refs);
    }
    const ords = strs.map((t) => col.ordOf(t)).filter((o) => o >= 0);
    if (!ords.length) return NONE;
    if (isTerms) return postingsUnion(ctx, boost, [...new Set(ords)].map((o) => col.postingsOf(o)));
    return keywordTerm(ctx, col, def.path, ords[0], boost);
  }
  // numeric, boolean, date: each value is an exact point (dates: the span its text denotes)
  const ranges = values.map((v) => pointRange(def, v, ctx)).filter((r): r is [Bound, Bound] => r !== null);
  if (!ranges.length) return NONE;
  const bitsFn = () => {
    let acc: Bitset | null = null;
    for (const [lo, hi] of ranges) {
      const b = numericRange(col?.kind === 'numeric' ? col : undefined, ctx.s.maxDoc, lo, hi);
      acc = acc ? acc.or(b) : b;
    }
    return acc!;
  };
  if (def.type === 'boolean' && !isTerms) return booleanTerm(ctx, col?.kind === 'numeric' ? col : undefined, def.path, ranges[0][0].v.hi !== 0, bitsFn, boost);
  return { k: 'const', boost, bits: bitsFn };
}

/** IndexSettings.MAX_REGEX_LENGTH_SETTING default. */
const MAX_REGEX_LENGTH = 1000;

/**
 * `prefix`, `wildcard`, `regexp` on keyword and text fields: every term of the field's dictionary
 * is tested by a matcher built once (automata for wildcard and regexp, so the test is linear in the
 * term), and the matching terms' postings are united as a constant-score query, as ES rewrites
 * these multi-term queries.
 */
function multiTermNode(name: 'prefix' | 'wildcard' | 'regexp', field: string, spec: Obj, ctx: QueryContext): QNode {
  const value = String(spec.value);
  const boost = boostOf(spec);
  const ci = spec.case_insensitive === true || spec.case_insensitive === 'true';
  if (name === 'regexp' && value.length > MAX_REGEX_LENGTH) {
    throw illegalArgument(
      `The length of regex [${value.length}] used in the Regexp Query request has exceeded the allowed maximum of [${MAX_REGEX_LENGTH}]. ` +
        'This maximum can be set by changing the [index.max_regex_length] index level setting.',
    );
  }
  const matcher = (normalize: boolean): Matcher => {
    if (name === 'regexp') {
      return compileRegExp(value, {
        flags: spec.flags === undefined ? RegExpFlag.ALL : Number(spec.flags) & RegExpFlag.ALL,
        caseInsensitive: ci,
        ...(spec.max_determinized_states !== undefined ? { maxDeterminizedStates: Number(spec.max_determinized_states) } : {}),
      });
    }
    if (name === 'wildcard') return compileWildcard(normalize ? value.toLowerCase() : value, ci);
    const fold = (t: string) => (ci ? t.replace(/[A-Z]/g, (c) => c.toLowerCase()) : t);
    const prefix = fold(value);
    return { test: (t) => fold(t).startsWith(prefix) };
  };
  if (field === '_index') return matcher(false).test(ctx.store.index) ? { k: 'all', boost } : NONE;
  const def = ctx.store.mapping.field(field);
  if (!def) return NONE;
  const col = ctx.store.column(def.path);
  if (def.type === 'keyword') {
    if (col?.kind !== 'keyword') return NONE;
    const m = matcher(false);
    const refs: PostingRef[] = [];
    col.forEachTerm((t, o) => void (m.test(t) && refs.push(col.postingsOf(o))));
    return postingsUnion(ctx, boost, refs);
  }
  if (def.type === 'text') {
    if (col?.kind !== 'text') return NONE;
    // the standard analyzer's normalization (lowercase) applies to a wildcard pattern on text
    const m = matcher(name === 'wildcard');
    const refs: PostingRef[] = [];
    col.forEachTerm((t, ref) => void (m.test(t) && refs.push(ref)));
    return postingsUnion(ctx, boost, refs);
  }
  const kinds = name === 'prefix' ? 'keyword, text and wildcard fields' : 'keyword and text fields';
  throw new EsError('query_shard_exception', 400, `Can only use ${name} queries on ${kinds} - not on [${field}] which is of type [${def.type}]`, {
    meta: { index: ctx.store.index },
  });
}

function postingsUnion(ctx: QueryContext, boost: number, refs: PostingRef[]): QNode {
  if (!refs.length) return NONE;
  return {
    k: 'const', boost,
    bits: () => {
      const bits = new Bitset(ctx.s.maxDoc);
      for (const r of refs) forEachPosting(r, ctx.s.maxDoc, (d) => bits.set(d));
      return bits;
    },
  };
}

/** A keyword term query: BM25 with norms omitted, so one score for every matching doc. */
function keywordTerm(ctx: QueryContext, col: KeywordView, path: string, ord: number, boost: number): QNode {
  const ref = col.postingsOf(ord);
  if (docFreq(ref, ctx.s.maxDoc) === 0) return NONE;
  const stats = statsOf(ctx).field(path);
  const df = statsOf(ctx).docFreq(path, col.termOf(ord));
  const termIdf = idf(df, stats.docCount);
  const normInv = normCache(stats)[1];
  return {
    k: 'const', boost,
    bits: () => {
      const bits = new Bitset(ctx.s.maxDoc);
      forEachPosting(ref, ctx.s.maxDoc, (d) => bits.set(d));
      return bits;
    },
    score: (mult) => bm25(bm25Weight(Math.fround(mult * boost), termIdf), 1, normInv),
  };
}

/** Boolean fields are indexed as terms: BM25 like keywords, stats from doc values. */
function booleanTerm(ctx: QueryContext, col: NumericView | undefined, path: string, value: boolean, bitsFn: () => Bitset, boost: number): QNode {
  if (!col) return NONE;
  const bits = bitsFn();
  if (bits.count() === 0) return NONE;
  const { df, stats } = statsOf(ctx).booleanTerm(path, value);
  const termIdf = idf(df, stats.docCount);
  const normInv = normCache(stats)[1];
  return { k: 'const', boost, bits: () => bits, score: (mult) => bm25(bm25Weight(Math.fround(mult * boost), termIdf), 1, normInv) };
}

/** [lo, hi] of one term value on a numeric/date/boolean field, or null when it can match nothing. */
function pointRange(def: FieldDef, v: unknown, ctx: QueryContext): [Bound, Bound] | null {
  if (def.type === 'date' || def.type === 'date_nanos') {
    return [dateBound(def, v, false, ctx, {}), dateBound(def, v, true, ctx, {})].map((x) => ({ v: x, incl: true })) as [Bound, Bound];
  }
  const val = numericValue(def, v, ctx, true);
  return val ? [{ v: val, incl: true }, { v: val, incl: true }] : null;
}

const INTEGER_TYPES = new Set(['long', 'integer', 'short', 'byte', 'unsigned_long']);

/** Parses a query value for a numeric/boolean field; null when an exact term cannot exist. */
export function numericValue(def: FieldDef, v: unknown, ctx: QueryContext, exact: boolean): NumVal | null {
  if (def.type === 'boolean') {
    if (v === true || v === 'true') return { hi: 1, lo: 0 };
    if (v === false || v === 'false') return { hi: 0, lo: 0 };
    throw queryShardError(ctx, `Can't parse boolean value [${String(v)}], expected [true] or [false]`);
  }
  if (typeof v === 'bigint') return { hi: Number(v), lo: 0, big: v };
  const s = typeof v === 'string' ? v.trim() : v;
  const n = typeof s === 'number' ? s : typeof s === 'string' && s !== '' && /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s) ? Number(s) : NaN;
  if (!Number.isFinite(n)) throw queryShardError(ctx, `For input string: "${String(v)}"`);
  if (INTEGER_TYPES.has(def.type)) {
    if (typeof s === 'string' && /^[+-]?\d+$/.test(s) && !Number.isSafeInteger(n)) return { hi: n, lo: 0, big: BigInt(s) };
    if (exact && !Number.isInteger(n)) return null; // "has a decimal part"
    return { hi: n, lo: 0 };
  }
  if (def.type === 'float') return { hi: Math.fround(n), lo: 0 };
  if (def.type === 'half_float') return { hi: halfRound(n), lo: 0 };
  if (def.type === 'scaled_float' && exact) return { hi: Math.round(n * def.scalingFactor!) / def.scalingFactor!, lo: 0 };
  return { hi: n, lo: 0 };
}

/** A date bound as ES's DateFieldType.rangeQuery parses it (roundUp for gt/lte). */
export function dateBound(def: FieldDef, v: unknown, roundUp: boolean, ctx: QueryContext, o: { format?: string; tz?: string }): NumVal {
  const fmt = o.format ? safeFormatter(o.format, ctx) : ctx.store.mapping.formatterOf(def);
  try {
    const i = parseDateMath(String(v), fmt, { now: ctx.now, roundUp, tz: o.tz });
    return { hi: i.ms, lo: def.type === 'date_nanos' ? i.ns : 0 };
  } catch (e) {
    if (e instanceof DateParseError) throw queryShardError(ctx, `${e.message}: [${e.message}]`);
    throw e;
  }
}

function safeFormatter(format: string, ctx: QueryContext) {
  try {
    return dateFormatter(format);
  } catch (e) {
    throw queryShardError(ctx, (e as Error).message);
  }
}

function rangeNode(field: string, spec: Obj, ctx: QueryContext): QNode {
  const boost = boostOf(spec);
  const def = ctx.store.mapping.field(field);
  if (!def) return NONE;
  let gt = spec.gt, gte = spec.gte, lt = spec.lt, lte = spec.lte;
  if (spec.from !== undefined) (spec.include_lower === false ? (gt = spec.from) : (gte = spec.from));
  if (spec.to !== undefined) (spec.include_upper === false ? (lt = spec.to) : (lte = spec.to));
  const lowV = gte ?? gt, highV = lte ?? lt;
  if (isEncoded(def.type)) return encodedRangeNode(def, spec, lowV, highV, gte !== undefined, lte !== undefined, boost, ctx);
  const col = ctx.store.column(def.path);
  if (def.type === 'keyword' || def.type === 'text') {
    const lo = lowV === undefined || lowV === null ? undefined : { v: String(lowV), incl: gte !== undefined };
    const hi = highV === undefined || highV === null ? undefined : { v: String(highV), incl: lte !== undefined };
    return { k: 'const', boost, bits: () => keywordRange(col?.kind === 'keyword' || col?.kind === 'text' ? col : undefined, ctx.s.maxDoc, lo, hi) };
  }
  const isDate = def.type === 'date' || def.type === 'date_nanos';
  const o = { format: spec.format as string | undefined, tz: spec.time_zone as string | undefined };
  const bound = (v: unknown, incl: boolean, upper: boolean): Bound | undefined => {
    if (v === undefined || v === null) return undefined;
    // gt and lte round up (DateFieldType.rangeQuery); gte and lt round down
    const nv = isDate ? dateBound(def, v, upper === incl, ctx, o) : numericValue(def, v, ctx, false)!;
    return { v: nv, incl };
  };
  const lo = bound(lowV, gte !== undefined, false), hi = bound(highV, lte !== undefined, true);
  return { k: 'const', boost, bits: () => numericRange(col?.kind === 'numeric' ? col : undefined, ctx.s.maxDoc, lo, hi) };
}

// ---- match ----

function compileMatch(body: unknown, ctx: QueryContext): QNode {
  const [field, spec] = singleField('match', body);
  const o: Obj = isObj(spec) ? spec : { query: spec };
  if (o.query === undefined || o.query === null) throw parsingException('No text specified for text query');
  const boost = boostOf(o);
  const def = field === '_id' || field === '_index' ? undefined : ctx.store.mapping.field(field);
  if (def && (def.type === 'text' || def.type === 'keyword') && (o.fuzziness !== undefined || o.analyzer !== undefined)) {
    return compileFieldText('match', { [field]: o }, ctx);
  }
  if (def && def.type !== 'text') {
    try {
      return termNode(field, [o.query], boost, ctx, false, false);
    } catch (e) {
      if (o.lenient === true) return NONE;
      throw e;
    }
  }
  if (!def) return field === '_id' || field === '_index' ? termNode(field, [o.query], boost, ctx, false, false) : NONE;
  const col = ctx.store.column(def.path);
  const tokens = analyze(String(o.query));
  if (!tokens.length) return o.zero_terms_query === 'all' ? { k: 'all', boost } : NONE;
  if (col?.kind !== 'text') return NONE;
  const leaves: QNode[] = tokens.map((t) => ({ k: 'text', col, path: def.path, term: t, field, boost: 1 }));
  if (leaves.length === 1) return { ...(leaves[0] as Extract<QNode, { k: 'text' }>), boost };
  const and = String(o.operator ?? 'or').toLowerCase() === 'and';
  if (and) return { k: 'bool', must: leaves, filter: [], should: [], mustNot: [], msm: 0, boost };
  const msm = o.minimum_should_match === undefined ? 1 : Math.max(1, minimumShouldMatch(leaves.length, String(o.minimum_should_match)));
  return { k: 'bool', must: [], filter: [], should: leaves, mustNot: [], msm, boost };
}
