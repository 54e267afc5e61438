/**
 * Full-text queries over one or more fields, as ES's MatchQueryParser and MultiMatchQueryParser
 * build them: `match` options beyond the basic ones (analyzer, fuzziness), `match_bool_prefix`,
 * the per-field queries of `multi_match` (multiMatch.ts), `fuzzy`. Field patterns expand over the mapping like QueryParserHelper.
 */
import { simpleMatch } from '../../../automaton';
import type { FieldDef } from '../index/mapping';
import { analyzerFor } from '../index/analyzers';
import type { KeywordView, TextView } from '../index/columnViews';
import { minimumShouldMatchOf } from './msm';
import { fuzzyEdits, fuzzyTerms } from './fuzzy';
import { disMax, sumOfTerms, termColumn, termField } from './termScorers';
import type { QNode, QueryContext } from './qnode';
import { buildPhrase } from './phrase';

const f = Math.fround;
const NONE: QNode = { k: 'none' };
type Obj = Record<string, unknown>;

/** How a field's query text becomes a query (MatchQueryParser.Type). */
export type MatchKind = 'boolean' | 'bool_prefix' | 'phrase' | 'phrase_prefix';

/** Options of a field's match query. */
export interface MatchOptions {
  operator?: 'or' | 'and';
  msm?: unknown;
  fuzziness?: unknown;
  prefixLength?: number;
  maxExpansions?: number;
  transpositions?: boolean;
  /** `null`: no terms gives no query at all (query_string's ZeroTermsQueryOption.NULL). */
  zeroTerms?: 'none' | 'all' | 'null';
  analyzer?: unknown;
  lenient?: boolean;
  slop?: number;
  /** The query's name in errors (`match`, `multi_match`, …). */
  queryName?: string;
}

/** `node` with `boost` applied (a term keeps it inline, so the top-k path still sees a term). */
export function boosted(node: QNode, boost: number): QNode {
  if (boost === 1 || node.k === 'none') return node;
  if (node.k === 'text') return { ...node, boost: f(node.boost * boost) };
  return { k: 'bool', must: [node], filter: [], should: [], mustNot: [], msm: 0, boost: f(boost) };
}

/** Clauses joined with the operator and minimum_should_match, as MatchQuery's boolean query. */
export function joined(clauses: QNode[], o: MatchOptions): QNode {
  if (clauses.length === 1) return clauses[0];
  if (o.operator === 'and') return { k: 'bool', must: clauses, filter: [], should: [], mustNot: [], msm: 0, boost: 1 };
  const msm = o.msm === undefined || o.msm === null ? 1 : Math.max(1, minimumShouldMatchOf(clauses.length, String(o.msm)));
  return { k: 'bool', must: [], filter: [], should: clauses, mustNot: [], msm, boost: 1 };
}

function zeroTerms(o: MatchOptions): QNode | null {
  return o.zeroTerms === 'all' ? { k: 'all', boost: 1 } : o.zeroTerms === 'null' ? null : NONE;
}

/** One term of a text or keyword field, fuzzy when asked. */
function termQuery(col: TextView | KeywordView, path: string, field: string, term: string, o: MatchOptions, ctx: QueryContext): QNode {
  if (o.fuzziness !== undefined && o.fuzziness !== null) {
    const edits = fuzzyEdits(o.fuzziness, term);
    if (edits > 0) {
      const terms = fuzzyTerms(termField(col, path, ctx), term, {
        edits, prefixLength: o.prefixLength ?? 0, maxExpansions: o.maxExpansions ?? 50, transpositions: o.transpositions ?? true, boost: 1,
      }, ctx.s.maxDoc);
      return sumOfTerms(terms, ctx);
    }
  }
  if (col.kind === 'text') return { k: 'text', col, path, term, field, boost: 1 };
  return ctx.compile!({ term: { [field]: { value: term } } });
}

/**
 * The query of one field for `text` (MatchQueryParser.parse): analyzed into terms on text fields,
 * one term on keyword fields, a term or range on other types (lenient: none when the value does
 * not parse). Null only with `zeroTerms: 'null'` and no terms.
 */
export function matchField(field: string, def: FieldDef | undefined, text: unknown, kind: MatchKind, o: MatchOptions, ctx: QueryContext): QNode | null {
  if (!def || (def.type !== 'text' && def.type !== 'keyword')) {
    if (kind === 'bool_prefix' && !def) return NONE;
    return ctx.compile!({ match: { [field]: { query: text, ...(o.lenient ? { lenient: true } : {}) } } });
  }
  const col = termColumn(ctx, def.path);
  const str = String(text);
  if (def.type === 'keyword') {
    if (col?.kind !== 'keyword') return NONE;
    if (kind === 'bool_prefix' || kind === 'phrase_prefix') return ctx.compile!({ prefix: { [field]: { value: str } } });
    return termQuery(col, def.path, field, str, o, ctx);
  }
  const tokens = analyzerFor(o.analyzer, o.queryName ?? 'match', ctx.store.index)(str);
  if (!tokens.length) return zeroTerms(o);
  if (col?.kind !== 'text') return NONE;
  if (kind === 'phrase' || kind === 'phrase_prefix') {
    if (tokens.length === 1 && kind === 'phrase') return termQuery(col, def.path, field, tokens[0], {}, ctx);
    return buildPhrase(col, def.path, field, tokens, o.slop ?? 0, kind === 'phrase_prefix', o.maxExpansions ?? 50, ctx);
  }
  if (kind === 'bool_prefix') {
    const last = tokens.length - 1;
    const clauses = tokens.map((t, i) => (i === last ? ctx.compile!({ prefix: { [field]: { value: t } } }) : termQuery(col, def.path, field, t, o, ctx)));
    return joined(clauses, o);
  }
  return joined(tokens.map((t) => termQuery(col, def.path, field, t, o, ctx)), o);
}

/** Whether a pattern names every field (`*`). */
export const isAllPattern = (s: string) => s === '*';

/**
 * Expands `fields` (names, `*` patterns, `^boost`) over the mapping, as QueryParserHelper
 * resolveMappingFields: names must be mapped (any type), patterns take searchable leaves, `*`
 * skips metadata fields; a field named twice multiplies its boosts.
 */
export function resolveFields(specs: string[], ctx: QueryContext): Map<string, number> {
  const out = new Map<string, number>();
  const all = ctx.store.mapping.allLeaves();
  for (const spec of specs) {
    const caret = spec.indexOf('^');
    const name = caret >= 0 ? spec.slice(0, caret) : spec;
    const boost = caret >= 0 ? f(Number(spec.slice(caret + 1))) : 1;
    const matched: string[] = [];
    if (name.includes('*')) {
      for (const d of all) if (d.type !== 'object' && (isAllPattern(name) || simpleMatch(name, d.path))) matched.push(d.path);
    } else if (ctx.store.mapping.field(name) || name === '_id' || name === '_index') matched.push(name);
    for (const m of matched) out.set(m, f((out.get(m) ?? 1) * boost));
  }
  return out;
}

/** One query per field (field boosts applied), as buildFieldQueries. */
export function multiFieldQueries(fields: Map<string, number>, text: unknown, kind: MatchKind, o: MatchOptions, ctx: QueryContext): QNode[] {
  const out: QNode[] = [];
  for (const [field, fb] of fields) {
    const q = matchField(field, ctx.store.mapping.field(field), text, kind, o, ctx);
    if (q) out.push(boosted(q, fb));
  }
  return out;
}

/** No query: zero_terms_query; one: itself; several: dis_max with the tie breaker (1: a sum). */
export function combineGrouped(queries: QNode[], tie: number, o: MatchOptions, ctx: QueryContext): QNode {
  if (!queries.length) return zeroTerms(o) ?? NONE;
  if (queries.length === 1) return queries[0];
  if (tie === 1) return { k: 'bool', must: [], filter: [], should: queries, mustNot: [], msm: 1, boost: 1 };
  return disMax(queries, tie, 1, ctx);
}

/** MatchOptions of a `match`/`match_bool_prefix` spec. */
export function matchOptions(o: Obj, queryName: string): MatchOptions {
  return {
    operator: String(o.operator ?? 'or').toLowerCase() === 'and' ? 'and' : 'or',
    msm: o.minimum_should_match, fuzziness: o.fuzziness, prefixLength: o.prefix_length === undefined ? undefined : Number(o.prefix_length),
    maxExpansions: o.max_expansions === undefined ? undefined : Number(o.max_expansions),
    transpositions: o.fuzzy_transpositions === undefined ? undefined : o.fuzzy_transpositions !== false && o.fuzzy_transpositions !== 'false',
    zeroTerms: String(o.zero_terms_query ?? 'none').toLowerCase() === 'all' ? 'all' : 'none', analyzer: o.analyzer,
    lenient: o.lenient === true || o.lenient === 'true', slop: o.slop === undefined ? undefined : Number(o.slop), queryName,
  };
}

/** `match` with options the basic compiler leaves here (analyzer, fuzziness), `match_bool_prefix`, `match_phrase(_prefix)`. */
export function compileFieldText(name: string, body: Obj, ctx: QueryContext): QNode {
  const field = Object.keys(body).find((k) => k !== '_name' && k !== 'boost')!;
  const spec = body[field];
  const o = (spec !== null && typeof spec === 'object' ? spec : { query: spec }) as Obj;
  const kind: MatchKind = name === 'match_bool_prefix' ? 'bool_prefix' : name === 'match_phrase' ? 'phrase' : name === 'match_phrase_prefix' ? 'phrase_prefix' : 'boolean';
  const q = matchField(field, ctx.store.mapping.field(field), o.query, kind, matchOptions(o, name), ctx) ?? NONE;
  return boosted(q, o.boost === undefined ? 1 : f(Number(o.boost)));
}

/** The `fuzzy` query on a text or keyword field. */
export function compileFuzzy(body: Obj, ctx: QueryContext): QNode {
  const field = Object.keys(body).find((k) => k !== '_name' && k !== 'boost')!;
  const spec = body[field];
  const o = (spec !== null && typeof spec === 'object' ? spec : { value: spec }) as Obj;
  const def = ctx.store.mapping.field(field);
  if (!def) return NONE;
  const col = termColumn(ctx, def.path);
  if (!col) {
    if (def.type === 'text' || def.type === 'keyword') return NONE;
    return ctx.compile!({ term: { [field]: { value: o.value } } });
  }
  const value = String(o.value);
  const edits = fuzzyEdits(o.fuzziness ?? 'AUTO', value);
  const terms = fuzzyTerms(termField(col, def.path, ctx), value, {
    edits, prefixLength: Number(o.prefix_length ?? 0), maxExpansions: Number(o.max_expansions ?? 50),
    transpositions: o.transpositions !== false && o.transpositions !== 'false', boost: 1,
  }, ctx.s.maxDoc);
  return boosted(sumOfTerms(terms, ctx), o.boost === undefined ? 1 : f(Number(o.boost)));
}
