/**
 * `query_string` and `simple_query_string` (and the URL's `q=`): the syntax tree of
 * request/queryStringSyntax.ts compiled against the mapping as ES's QueryStringQueryParser and
 * SimpleQueryStringQueryParser do: a term runs on every default field (`*`: all searchable fields,
 * lenient), combined by dis_max (`type` best_fields) or a sum (most_fields, simple_query_string);
 * wildcards and prefixes are normalized (lowercased) on text fields; `_exists_:f`, `f:>10`,
 * `[a TO b]`, `/regexp/`, `term~2` and `"phrase"~2` as Lucene reads them.
 */
import { EsError } from '../../../wire/esErrors';
import { parseQueryString, parseSimpleQueryString, SQ, type QsNode } from '../request/queryStringSyntax';
import { fuzzyEdits, fuzzyTerms } from './fuzzy';
import { boosted, combineGrouped, isAllPattern, matchField, resolveFields, type MatchKind, type MatchOptions } from './fullText';
import { minimumShouldMatchOf } from './msm';
import { sumOfTerms, termColumn, termField } from './termScorers';
import type { QNode, QueryContext } from './qnode';

const f = Math.fround;
const NONE: QNode = { k: 'none' };
type Obj = Record<string, unknown>;

interface Env {
  ctx: QueryContext;
  defaults: string[];
  lenient: boolean;
  operator: 'or' | 'and';
  tie: number;
  o: MatchOptions;
  fuzziness: unknown;
  fuzzyPrefix: number;
  fuzzyMax: number;
  transpositions: boolean;
  phraseSlop: number;
  allowLeadingWildcard: boolean;
  /** simple_query_string: a term's fields are summed (most_fields), phrases and prefixes too. */
  simple: boolean;
}

const bool = (must: QNode[], should: QNode[], mustNot: QNode[], msm = 0): QNode => ({ k: 'bool', must, filter: [], should, mustNot, msm, boost: 1 });

/** `query_string`. */
export function compileQueryString(b: Obj, ctx: QueryContext): QNode {
  const operator = String(b.default_operator ?? 'or').toLowerCase() === 'and' ? 'and' : 'or';
  const defaults = (b.fields as string[] | undefined) ?? (b.default_field !== undefined ? [String(b.default_field)] : ['*']);
  const isAll = defaults.some((s) => isAllPattern(s.split('^')[0]));
  const lenient = b.lenient === undefined ? isAll : b.lenient === true || b.lenient === 'true';
  const type = (b.type as string | undefined) ?? 'best_fields';
  const tie = b.tie_breaker !== undefined ? f(Number(b.tie_breaker)) : type === 'most_fields' || type === 'bool_prefix' ? 1 : 0;
  const env: Env = {
    ctx, defaults, lenient, operator, tie, simple: false,
    o: { operator, lenient, analyzer: b.analyzer, zeroTerms: 'null', queryName: 'query_string' },
    fuzziness: b.fuzziness ?? 'AUTO', fuzzyPrefix: Number(b.fuzzy_prefix_length ?? 0), fuzzyMax: Number(b.fuzzy_max_expansions ?? 50),
    transpositions: b.fuzzy_transpositions !== false, phraseSlop: Number(b.phrase_slop ?? 0),
    allowLeadingWildcard: b.allow_leading_wildcard !== false && b.allow_leading_wildcard !== 'false',
  };
  const ast = parseQueryString(String(b.query), operator);
  let q = compileNode(ast, env, true) ?? NONE;
  q = applyMsm(q, b.minimum_should_match);
  return boosted(q, b.boost === undefined ? 1 : f(Number(b.boost)));
}

/** `simple_query_string`. */
export function compileSimpleQueryString(b: Obj, ctx: QueryContext): QNode {
  const operator = String(b.default_operator ?? 'or').toLowerCase() === 'and' ? 'and' : 'or';
  const defaults = (b.fields as string[] | undefined) ?? ['*'];
  const isAll = defaults.some((s) => isAllPattern(s.split('^')[0]));
  const lenient = b.lenient === undefined ? isAll : b.lenient === true || b.lenient === 'true';
  const env: Env = {
    ctx, defaults, lenient, operator, tie: 1, simple: true,
    o: { operator, lenient, analyzer: b.analyzer, zeroTerms: 'null', queryName: 'simple_query_string' },
    fuzziness: 'AUTO', fuzzyPrefix: Number(b.fuzzy_prefix_length ?? 0), fuzzyMax: Number(b.fuzzy_max_expansions ?? 50),
    transpositions: b.fuzzy_transpositions !== false, phraseSlop: 0, allowLeadingWildcard: true,
  };
  const flags = b.flags === undefined ? -1 : Number(b.flags);
  const ast = parseSimpleQueryString(String(b.query), operator, flags === 0 ? SQ.WHITESPACE : flags);
  let q = ast ? compileNode(ast, env, true) ?? NONE : NONE;
  q = applyMsm(q, b.minimum_should_match);
  return boosted(q, b.boost === undefined ? 1 : f(Number(b.boost)));
}

/** Queries.maybeApplyMinimumShouldMatch on the top-level boolean query. */
function applyMsm(q: QNode, msm: unknown): QNode {
  if (msm === undefined || msm === null || q.k !== 'bool' || !q.should.length) return q;
  return { ...q, msm: Math.max(q.must.length || q.mustNot.length ? 0 : 1, minimumShouldMatchOf(q.should.length, String(msm))) };
}

function compileNode(n: QsNode, env: Env, top = false): QNode | null {
  const q = compileInner(n, env, top);
  return q && n.boost !== undefined ? boosted(q, f(n.boost)) : q;
}

function compileInner(n: QsNode, env: Env, top: boolean): QNode | null {
  switch (n.t) {
    case 'all': return { k: 'all', boost: 1 };
    case 'bool': {
      const must: QNode[] = [], should: QNode[] = [], mustNot: QNode[] = [];
      for (const c of n.clauses) {
        const q = compileNode(c.q, env);
        if (!q) continue;
        (c.occur === 'must' ? must : c.occur === 'should' ? should : mustNot).push(q);
      }
      if (!must.length && !should.length && !mustNot.length) return null;
      // Queries.fixNegativeQueryIfNeeded: a purely negative bool matches everything else
      if (!must.length && !should.length) must.push({ k: 'all', boost: 1 });
      if (!top && !n.negated && must.length + should.length + mustNot.length === 1 && must.length + should.length === 1) return must[0] ?? should[0];
      return bool(must, should, mustNot, should.length && !must.length ? 1 : 0);
    }
    case 'term': return termQuery(n, env);
    case 'phrase': return perField(n.field, env, true, (field) => matchField(field, env.ctx.store.mapping.field(field), n.text, 'phrase', { ...env.o, slop: n.slop ?? env.phraseSlop }, env.ctx));
    case 'prefix': return perField(n.field, env, false, (field) => multiTerm('prefix', field, n.text, env));
    case 'wildcard':
      if (n.text === '*') {
        const field = n.field ?? (env.defaults.length === 1 ? env.defaults[0] : undefined);
        if (field === undefined || isAllPattern(field)) return { k: 'all', boost: 1 };
        return env.ctx.compile!({ exists: { field } });
      }
      if (!env.allowLeadingWildcard && (n.text.startsWith('*') || n.text.startsWith('?'))) {
        throw new EsError('query_shard_exception', 400, "Failed to parse query", { causedBy: new EsError('parse_exception', 400, "'*' or '?' not allowed as first character in WildcardQuery") });
      }
      return perField(n.field, env, false, (field) => multiTerm('wildcard', field, n.text, env));
    case 'regexp': return perField(n.field, env, false, (field) => multiTerm('regexp', field, n.text, env));
    case 'range':
      return perField(n.field, env, false, (field) => lenient(env, () => env.ctx.compile!({
        range: { [field]: { ...(n.lower !== null ? { [n.incLower ? 'gte' : 'gt']: normalize(field, n.lower, env) } : {}), ...(n.upper !== null ? { [n.incUpper ? 'lte' : 'lt']: normalize(field, n.upper, env) } : {}) } },
      })));
  }
}

/** A plain or fuzzy term, with the field shorthands `_exists_:f` and `f:>10`, `f:<=5`. */
function termQuery(n: Extract<QsNode, { t: 'term' }>, env: Env): QNode | null {
  const field = n.field;
  if (field === '_exists_') return env.ctx.compile!({ exists: { field: n.text } });
  if (field !== undefined && !env.simple && n.fuzzy === undefined && /^[<>]/.test(n.text) && n.text.length > 1) {
    const m = /^([<>]=?)(.*)$/.exec(n.text)!;
    const key = { '>': 'gt', '>=': 'gte', '<': 'lt', '<=': 'lte' }[m[1]]!;
    return perField(field, env, false, (fd) => lenient(env, () => env.ctx.compile!({ range: { [fd]: { [key]: m[2] } } })));
  }
  if (n.fuzzy !== undefined) {
    const spec = n.fuzzy.slice(1);
    return perField(field, env, false, (fd) => fuzzyField(fd, n.text, spec === '' ? env.fuzziness : spec, env));
  }
  const kind: MatchKind = 'boolean';
  return perField(field, env, false, (fd) => matchField(fd, env.ctx.store.mapping.field(fd), n.text, kind, env.o, env.ctx));
}

/** Runs `build` on each field the clause targets and combines them (dis_max by type, or a sum). */
function perField(field: string | undefined, env: Env, quoted: boolean, build: (field: string) => QNode | null): QNode | null {
  const specs = field === undefined ? env.defaults : [field];
  const fields = resolveFields(specs, env.ctx);
  if (!fields.size) return NONE; // unmapped: matches nothing
  const queries: QNode[] = [];
  for (const [fd, boost] of fields) {
    const q = lenient(env, () => build(fd));
    if (q) queries.push(boosted(q, boost));
  }
  if (!queries.length) return null;
  void quoted;
  return combineGrouped(queries, env.tie, { zeroTerms: 'none' }, env.ctx);
}

/** With `lenient`, a field whose type cannot take the value contributes nothing. */
function lenient(env: Env, run: () => QNode | null): QNode | null {
  if (!env.lenient) return run();
  try {
    return run();
  } catch (e) {
    if (e instanceof EsError && e.status === 400) return NONE;
    throw e;
  }
}

/** The analyzer's normalization of a multi-term value: lowercase on text fields, as is elsewhere. */
function normalize(field: string, text: string, env: Env): string {
  return env.ctx.store.mapping.field(field)?.type === 'text' ? text.toLowerCase() : text;
}

function multiTerm(kind: 'prefix' | 'wildcard' | 'regexp', field: string, text: string, env: Env): QNode {
  const value = kind === 'regexp' ? text : normalize(field, text, env);
  return env.ctx.compile!({ [kind]: { [field]: { value } } });
}

function fuzzyField(field: string, text: string, fuzziness: unknown, env: Env): QNode {
  const def = env.ctx.store.mapping.field(field);
  const col = def ? termColumn(env.ctx, def.path) : undefined;
  if (!col || !def) {
    return def ? env.ctx.compile!({ term: { [field]: { value: text } } }) : NONE;
  }
  const term = normalize(field, text, env);
  const edits = fuzzyEdits(fuzziness, term);
  const terms = fuzzyTerms(termField(col, def.path, env.ctx), term, {
    edits, prefixLength: env.fuzzyPrefix, maxExpansions: env.fuzzyMax, transpositions: env.transpositions, boost: 1,
  }, env.ctx.s.maxDoc);
  return sumOfTerms(terms, env.ctx);
}
