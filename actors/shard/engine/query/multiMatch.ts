/**
 * Queries over several fields: `multi_match` (every type; the per-field queries come from
 * fullText.ts) with `cross_fields` (fields grouped by
 * analyzer; each term blended across a group's fields with a shared doc freq, as ES's
 * BlendedTermQuery) and `combined_fields` (Lucene's CombinedFieldQuery, BM25F: the fields scored as
 * one, term frequencies and lengths summed with the field weights).
 */
import { EsError } from '../../../wire/esErrors';
import { Bitset } from '../base/bits';
import { analyzerFor } from '../index/analyzers';
import { bm25, bm25Weight, idf, LENGTH_TABLE, lengthToNorm, normCache } from '../index/analysis';
import { forEachPosting, type TextView } from '../index/columnViews';
import { boosted, combineGrouped, isAllPattern, joined, matchField, multiFieldQueries, resolveFields, type MatchKind, type MatchOptions } from './fullText';
import { disMax, dismaxOfTerms, localDf, termColumn, termField, type ScoredTerm } from './termScorers';
import { statsOf, type QNode, type QueryContext } from './qnode';

const f = Math.fround;
const NONE: QNode = { k: 'none' };

type Obj = Record<string, unknown>;

/** `multi_match` (MultiMatchQueryBuilder.doToQuery + MultiMatchQueryParser.parse). */
export function compileMultiMatch(b: Obj, ctx: QueryContext): QNode {
  const specs = (b.fields as string[] | undefined) ?? ['*'];
  const fields = resolveFields(specs, ctx);
  const isAll = specs.some((s) => isAllPattern(s.split('^')[0]));
  const type = (b.type as string | undefined) ?? 'best_fields';
  const o: MatchOptions = {
    operator: String(b.operator ?? 'or').toLowerCase() === 'and' ? 'and' : 'or', msm: b.minimum_should_match, fuzziness: b.fuzziness,
    prefixLength: b.prefix_length as number | undefined, maxExpansions: b.max_expansions as number | undefined,
    transpositions: b.fuzzy_transpositions === undefined ? undefined : b.fuzzy_transpositions !== false && b.fuzzy_transpositions !== 'false',
    zeroTerms: (b.zero_terms_query as 'none' | 'all' | undefined) ?? 'none', analyzer: b.analyzer,
    lenient: b.lenient === undefined ? isAll : b.lenient === true || b.lenient === 'true', slop: b.slop as number | undefined, queryName: 'multi_match',
  };
  const boost = b.boost === undefined ? 1 : f(Number(b.boost));
  if (fields.size === 0) return NONE;
  const defaultTie = type === 'most_fields' || type === 'bool_prefix' ? 1 : 0;
  const tie = b.tie_breaker === undefined ? defaultTie : f(Number(b.tie_breaker));
  if (type === 'cross_fields') return boosted(crossFields(fields, String(b.query), o, tie, ctx), boost);
  const kind: MatchKind = type === 'phrase' ? 'phrase' : type === 'phrase_prefix' ? 'phrase_prefix' : type === 'bool_prefix' ? 'bool_prefix' : 'boolean';
  const queries = multiFieldQueries(fields, b.query, kind, o, ctx);
  return boosted(combineGrouped(queries, tie, o, ctx), boost);
}

/** `cross_fields`: one query per analyzer group, combined by dis_max. */
function crossFields(fields: Map<string, number>, text: string, o: MatchOptions, tie: number, ctx: QueryContext): QNode {
  const groups = new Map<string, Array<[string, number]>>();
  for (const [field, boost] of fields) {
    const def = ctx.store.mapping.field(field);
    // text fields share the standard analyzer; keyword, numeric, date and boolean fields the keyword one
    const group = o.analyzer !== undefined ? 'forced' : def?.type === 'text' ? 'text' : 'keyword';
    if (!groups.has(group)) groups.set(group, []);
    groups.get(group)!.push([field, boost]);
  }
  const queries: QNode[] = [];
  for (const [group, members] of groups) {
    if (members.length === 1) {
      const [field, boost] = members[0];
      const q = matchField(field, ctx.store.mapping.field(field), text, 'boolean', { ...o, queryName: 'multi_match' }, ctx);
      if (q) queries.push(boosted(q, boost));
      continue;
    }
    const tokens = group === 'keyword' ? [text] : analyzerFor(o.analyzer, 'multi_match', ctx.store.index)(text);
    if (!tokens.length) continue;
    queries.push(joined(tokens.map((t) => blendTerm(members, t, tie, o, ctx)), o));
  }
  return combineGrouped(queries, tie, o, ctx);
}

/** One term over a group's fields (MultiMatchQueryParser.blendTerm). */
function blendTerm(members: Array<[string, number]>, term: string, tie: number, o: MatchOptions, ctx: QueryContext): QNode {
  const n = ctx.s.maxDoc;
  const terms: ScoredTerm[] = [];
  const others: QNode[] = [];
  for (const [field, boost] of members) {
    const def = ctx.store.mapping.field(field);
    const col = def ? termColumn(ctx, def.path) : undefined;
    if (def?.type === 'text' || def?.type === 'keyword') {
      if (col) {
        const tf = termField(col, def.path, ctx);
        terms.push({ field: tf, term, boost, df: localDf(tf, term, n) > 0 ? tf.df(term) : 0 });
      }
      continue;
    }
    // a non-term query (numbers, dates): kept aside, scored on its own (lenient: none when it does not parse)
    const q = matchField(field, def, term, 'boolean', { lenient: o.lenient }, ctx);
    if (q && q.k !== 'none') others.push(boosted(q, boost));
  }
  if (terms.length) {
    blend(terms, n);
    others.push(dismaxOfTerms(terms, tie, ctx));
  }
  if (!others.length) return NONE;
  return others.length === 1 ? others[0] : disMax(others, tie, 1, ctx);
}

/** BlendedTermQuery.blend: every field's term gets the max doc freq (bounded), biased toward common fields. */
function blend(terms: ScoredTerm[], maxDoc: number): void {
  if (terms.length <= 1) return;
  let max = 0;
  let minSumTTF = Infinity;
  for (const t of terms) {
    max = Math.max(max, t.df);
    if (t.df > 0) minSumTTF = Math.min(minSumTTF, t.field.sumTotalTermFreq);
  }
  if (maxDoc > minSumTTF) maxDoc = minSumTTF;
  if (max === 0) return;
  const order = terms.map((_, i) => i).sort((a, b) => terms[b].df - terms[a].df); // stable: ties keep field order
  let prev = terms[order[0]].df;
  let actual = Math.min(maxDoc, max);
  for (const i of order) {
    const cur = terms[i].df;
    if (cur === 0) break;
    if (prev > cur) actual++;
    terms[i].df = Math.min(actual, terms[i].field.docCount, maxDoc);
    prev = cur;
  }
}

/** `combined_fields`: per term a CombinedFieldQuery, joined with the operator / minimum_should_match. */
export function compileCombinedFields(b: Record<string, unknown>, ctx: QueryContext): QNode {
  const weights = new Map<string, number>();
  for (const spec of b.fields as string[]) {
    const caret = spec.indexOf('^');
    const name = caret >= 0 ? spec.slice(0, caret) : spec;
    const w = caret >= 0 ? f(Number(spec.slice(caret + 1))) : 1;
    const matched = name.includes('*')
      ? ctx.store.mapping.allLeaves().filter((d) => d.type !== 'object' && new RegExp(`^${name.split('*').map(escapeRe).join('.*')}$`).test(d.path)).map((d) => d.path)
      : ctx.store.mapping.field(name) ? [name] : [];
    for (const m of matched) {
      const def = ctx.store.mapping.field(m)!;
      if (def.type !== 'text') {
        throw new EsError('illegal_argument_exception', 400, `Field [${m}] of type [${def.type}] does not support [combined_fields] queries`);
      }
      weights.set(m, f((weights.get(m) ?? 1) * w));
    }
  }
  const o: MatchOptions = {
    operator: String(b.operator ?? 'or').toLowerCase() === 'and' ? 'and' : 'or', msm: b.minimum_should_match,
    zeroTerms: b.zero_terms_query === 'all' ? 'all' : 'none',
  };
  const boost = b.boost === undefined ? 1 : f(Number(b.boost));
  if (!weights.size) return NONE;
  const tokens = analyzerFor(undefined, 'combined_fields', ctx.store.index)(String(b.query));
  if (!tokens.length) return o.zeroTerms === 'all' ? { k: 'all', boost } : NONE;
  const fields = [...weights].map(([path, w]) => ({ path, col: ctx.store.column(path), w })).filter((x): x is { path: string; col: TextView; w: number } => x.col?.kind === 'text');
  if (!fields.length) return NONE;
  return boosted(joined(tokens.map((t) => bm25f(fields, t, ctx)), o), boost);
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** One term scored over the fields as a single one (CombinedFieldQuery). */
function bm25f(fields: Array<{ path: string; col: TextView; w: number }>, term: string, ctx: QueryContext): QNode {
  const n = ctx.s.maxDoc;
  return {
    k: 'scored',
    run: (scoring, mult) => {
      const bits = new Bitset(n);
      const freq = new Map<number, number>();
      let df = 0;
      let docCount = 0;
      let sumTTF = 0;
      const st = statsOf(ctx);
      for (const { path, col, w } of fields) {
        const stats = st.field(path);
        docCount = Math.max(docCount, stats.docCount);
        sumTTF += w * stats.sumTotalTermFreq;
        const ref = col.postings(term);
        df = Math.max(df, st.docFreq(path, term));
        forEachPosting(ref, n, (d, tf) => {
          bits.set(d);
          freq.set(d, f((freq.get(d) ?? 0) + w * tf));
        });
      }
      if (!scoring) return { bits };
      const cache = normCache({ docCount, sumTotalTermFreq: sumTTF });
      const weight = bm25Weight(mult, idf(df, docCount));
      const norm = (d: number) => {
        let len = 0;
        for (const { col, w } of fields) if (col.has(d)) len += w * LENGTH_TABLE[lengthToNorm(col.lens[d] - 1)];
        return lengthToNorm(Math.round(len));
      };
      return { bits, score: (d) => bm25(weight, freq.get(d) ?? 0, cache[norm(d)]) };
    },
  };
}
