/**
 * Scored leaves and the disjunction the compound queries build on: terms scored with adjusted
 * statistics (blended cross-field terms, fuzzy expansions), and `dis_max` (Lucene's
 * DisjunctionMaxScorer: the best clause plus `tie_breaker` times the others).
 */
import { Bitset } from '../base/bits';
import { bm25, bm25Weight, idf, lengthToNorm, normCache } from '../index/analysis';
import { docFreq, forEachPosting, type KeywordView, type PostingRef, type TextView } from '../index/columnViews';
import { evaluateChild, type Evaluated } from './evaluate';
import { statsOf, type QNode, type QueryContext } from './qnode';

const f = Math.fround;

/** A field's postings and BM25 statistics (shard-wide), whatever its column kind. */
export interface TermField {
  path: string;
  postings(term: string): PostingRef | undefined;
  docCount: number;
  sumTotalTermFreq: number;
  cache: Float32Array;
  /** Index into `cache` of a doc's length norm (keywords omit norms: always 1). */
  norm(doc: number): number;
  /** The field's terms in this segment (for expansions). */
  forEachTerm(fn: (term: string) => void): void;
  /** Shard-wide doc freq of a term (what scoring uses). */
  df(term: string): number;
}

/** The TermField of a text or keyword column. */
export function termField(col: TextView | KeywordView, path: string, ctx: QueryContext): TermField {
  const st = statsOf(ctx);
  const stats = st.field(path);
  const cache = normCache(stats);
  const base = { path, docCount: stats.docCount, sumTotalTermFreq: stats.sumTotalTermFreq, cache, df: (t: string) => st.docFreq(path, t) };
  if (col.kind === 'text') {
    const lens = col.lens;
    return {
      ...base,
      postings: (t) => col.postings(t),
      norm: (d) => lengthToNorm(lens[d] - 1),
      forEachTerm: (fn) => col.forEachTerm((t) => fn(t)),
    };
  }
  return {
    ...base,
    postings: (t) => {
      const o = col.ordOf(t);
      return o < 0 ? undefined : col.postingsOf(o);
    },
    norm: () => 1,
    forEachTerm: (fn) => col.forEachTerm((t) => fn(t)),
  };
}

/** The text or keyword view of a mapped field in this segment, if any. */
export function termColumn(ctx: QueryContext, path: string): TextView | KeywordView | undefined {
  const col = ctx.store.column(path);
  return col?.kind === 'text' || col?.kind === 'keyword' ? col : undefined;
}

/** One term of a scored group: its field, boost and (adjusted) doc freq. */
export interface ScoredTerm {
  field: TermField;
  term: string;
  boost: number;
  df: number;
}

/** Doc freq of `term` in `field` in this segment under `maxDoc` (does the term occur here at all). */
export const localDf = (field: TermField, term: string, maxDoc: number) => docFreq(field.postings(term), maxDoc);

/** The terms summed as a bool of SHOULD term queries (fuzzy/prefix expansions with blended freqs). */
export function sumOfTerms(terms: ScoredTerm[], ctx: QueryContext): QNode {
  if (!terms.length) return { k: 'none' };
  return { k: 'scored', run: (scoring, mult) => combine(terms.map((t) => termRun(t, ctx, scoring, mult)), ctx, scoring, null) };
}

/** The terms as one disjunction (BlendedTermQuery.dismaxBlendedQuery): best term plus `tie` times the others. */
export function dismaxOfTerms(terms: ScoredTerm[], tie: number, ctx: QueryContext): QNode {
  if (!terms.length) return { k: 'none' };
  return { k: 'scored', run: (scoring, mult) => combine(terms.map((t) => termRun(t, ctx, scoring, mult)), ctx, scoring, tie) };
}

/** `dis_max` over compiled clauses. */
export function disMax(children: QNode[], tie: number, boost: number, ctx: QueryContext): QNode {
  if (!children.length) return { k: 'none' };
  return {
    k: 'scored',
    run: (scoring, mult) => combine(children.map((c) => evaluateChild(c, ctx, scoring, f(mult * boost))), ctx, scoring, tie),
  };
}

/** Matches and scores of one term with its own statistics. */
function termRun(t: ScoredTerm, ctx: QueryContext, scoring: boolean, mult: number): Evaluated {
  const n = ctx.s.maxDoc;
  const bits = new Bitset(n);
  const ref = t.field.postings(t.term);
  if (!scoring || t.df === 0) {
    forEachPosting(ref, n, (d) => bits.set(d));
    return { bits, score: scoring ? () => 0 : undefined };
  }
  const weight = bm25Weight(f(mult * t.boost), idf(t.df, t.field.docCount));
  const scores = new Map<number, number>();
  const { cache } = t.field;
  forEachPosting(ref, n, (d, tf) => {
    bits.set(d);
    scores.set(d, bm25(weight, tf, cache[t.field.norm(d)]));
  });
  return { bits, score: (d) => scores.get(d) ?? 0 };
}

/**
 * Union of clause results; scores summed in double then cast (`tie` null: a bool of SHOULD
 * clauses) or Lucene's dis_max (the max, plus `tie` times the sum of the others).
 */
function combine(rs: Evaluated[], ctx: QueryContext, scoring: boolean, tie: number | null): Evaluated {
  const n = ctx.s.maxDoc;
  let bits: Bitset | null = new Bitset(n);
  for (const r of rs) {
    if (r.bits === null) {
      bits = null;
      break;
    }
    bits.or(r.bits);
  }
  if (!scoring) return { bits };
  const has = (r: Evaluated, d: number) => r.bits === null || r.bits.has(d);
  const score = (d: number) => {
    if (tie === null) {
      let s = 0;
      for (const r of rs) if (has(r, d)) s += r.score!(d);
      return f(s);
    }
    let max = 0;
    let others = 0;
    for (const r of rs) {
      if (!has(r, d)) continue;
      const x = r.score!(d);
      if (x >= max) {
        others += max;
        max = x;
      } else others += x;
    }
    return f(max + others * tie);
  };
  return { bits, score };
}
