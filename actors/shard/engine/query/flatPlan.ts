/**
 * The common shape of text queries as a flat plan: a `match` (one term, or terms with `operator`
 * and/or `minimum_should_match`) or a bool whose scoring clauses are text terms, possibly through
 * must clauses that are bools themselves (`bool.must: [match]`), with any filter and must_not
 * clauses (evaluated to bitsets first, as evaluate.ts does).
 *
 * The plan is a list of term clauses in evaluate.ts's addition order, each required or in a should
 * group with its minimum_should_match, and the helpers its runners (flatRun.ts, flatTwo.ts) share:
 * block maxima from impacts (impacts.ts), BM25 of a posting, cursor moves. A doc's score is its
 * clauses' scores added in double in clause order and cast to float: bit-identical to evaluate.ts.
 */
import type { Bitset } from '../base/bits';
import * as analysis from '../index/analysis';
import * as impacts from '../index/impacts';
import { docFreq, postingList, type BlockImpacts, type PostingList, type TextView } from '../index/columnViews';
import { evaluate } from './evaluate';
import { statsOf, type QNode, type QueryContext } from './qnode';

const f = Math.fround;
// Module-local copies: imported bindings compile to getter calls, which show in the inner loops.
const { bm25, bm25Weight, idf, lengthToNorm, normCache } = analysis;
const { BLOCK, blockMaxima, frontier } = impacts;

/** One term clause, with its cursors. */
export interface Clause {
  docs: Int32Array;
  freqs: Uint16Array | null;
  postings: PostingList;
  /** Postings visible to the searcher. */
  n: number;
  nBlocks: number;
  imp: BlockImpacts | null;
  /**
   * Best score of each full block, computed on first use (-1 = not yet), shared with other
   * queries scoring the term the same way (impacts.ts blockMaxima).
   */
  blockMax: Float32Array;
  /** Blocks of `blockMax`; later ones (the searcher's last, partial block) are computed each time. */
  cached: number;
  /** Last doc of each block. */
  last: Int32Array;
  weight: number;
  cache: Float32Array;
  /** Score of tf 1 per norm byte. */
  one: Float32Array;
  /** Scores by (tf << 8 | norm byte) for 1 < tf < TF_TABLE, filled on first use (-1 = not yet). */
  tab: Float32Array;
  /** -1 = required, else its should group. */
  group: number;
  /** Field lengths + 1 of the clause's field. */
  lens: Uint32Array;
  /** Block of the first posting >= the current window start. */
  sb: number;
  /** Next posting to read. */
  pos: number;
}

/** A flattened query: clauses in addition order, should groups, filters, exclusions. */
export interface FlatPlan {
  clauses: Clause[];
  /** minimum_should_match of each should group. */
  msm: number[];
  required: number;
  filter: Bitset | null;
  excl: Bitset | null;
  /** Matches nothing. */
  empty: boolean;
  /** Docs in `filter`, counted on first use. */
  filterCount?: number;
}

interface Draft {
  terms: Array<{ col: TextView; path: string; term: string; boost: number; group: number }>;
  msm: number[];
  filters: QNode[];
  mustNots: QNode[];
  empty: boolean;
}

/** The flat plan of `node`, or null when it has another shape (or boosts that are not finite and >= 0). */
export function flatPlan(node: QNode, ctx: QueryContext): FlatPlan | null {
  const d: Draft = { terms: [], msm: [], filters: [], mustNots: [], empty: false };
  if (node.k === 'text') {
    if (!nonNeg(node.boost)) return null;
    d.terms.push({ col: node.col, path: node.path, term: node.term, boost: f(node.boost), group: -1 });
  } else if (node.k !== 'bool' || !flattenBool(node, 1, d)) return null;
  // every match must hold a posting of some clause: a required one, or one of a group that needs one
  const required = d.terms.some((t) => t.group < 0);
  if (!required && !d.msm.some((m) => m > 0)) return null;
  // without a required clause, candidates come from the union of the should clauses, merged doc by
  // doc: beyond a few, scoring every match term by term (the exhaustive path) costs less
  if (!required && d.terms.length > MAX_UNION) return null;
  return build(d, ctx);
}

const nonNeg = (x: number) => Number.isFinite(x) && x >= 0;

/** Most should clauses merged into candidates when no clause is required. */
const MAX_UNION = 3;

/** Adds a bool's clauses (the root, or a must clause: its scores add inline) to the draft. */
function flattenBool(node: Extract<QNode, { k: 'bool' }>, mult: number, d: Draft): boolean {
  if (!nonNeg(node.boost)) return false;
  const m = f(mult * node.boost);
  if (node.msm > node.should.length) d.empty = true; // Lucene: more required than present
  for (const c of node.must) {
    if (c.k === 'text') {
      if (!nonNeg(c.boost)) return false;
      d.terms.push({ col: c.col, path: c.path, term: c.term, boost: f(m * c.boost), group: -1 });
    } else if (c.k === 'bool') {
      if (!flattenBool(c, m, d)) return false;
    } else if (c.k === 'none') d.empty = true;
    else return false; // constant-scoring clauses: the exhaustive path
  }
  d.filters.push(...node.filter);
  if (node.should.length) {
    const g = d.msm.length;
    d.msm.push(node.msm);
    for (const c of node.should) {
      if (c.k !== 'text' || !nonNeg(c.boost)) return false;
      d.terms.push({ col: c.col, path: c.path, term: c.term, boost: f(m * c.boost), group: g });
    }
  }
  d.mustNots.push(...node.mustNot);
  return true;
}

function build(d: Draft, ctx: QueryContext): FlatPlan {
  const n = ctx.s.maxDoc;
  const plan: FlatPlan = { clauses: [], msm: d.msm, required: 0, filter: null, excl: null, empty: d.empty };
  if (plan.empty) return plan;
  // filters and must_not evaluate as evaluate.ts would, in the tree's order
  for (const q of d.filters) {
    const b = evaluate(q, ctx, false).bits;
    if (b) plan.filter = plan.filter ? plan.filter.and(b) : b.clone();
  }
  for (const q of d.mustNots) {
    const b = evaluate(q, ctx, false).bits;
    if (b === null) {
      plan.empty = true;
      return plan;
    }
    plan.excl = plan.excl ? plan.excl.or(b) : b.clone();
  }
  const fields = new Map<TextView, { docCount: number; cache: Float32Array; key: string }>();
  for (const t of d.terms) {
    const col = t.col;
    let field = fields.get(col);
    if (!field) {
      const stats = statsOf(ctx).field(t.path);
      fields.set(col, (field = { docCount: stats.docCount, cache: normCache(stats), key: `${stats.docCount}|${stats.sumTotalTermFreq}` }));
    }
    const { docCount, cache } = field;
    const ref = col.postings(t.term);
    const df = docFreq(ref, n);
    if (df === 0) {
      if (t.group < 0) {
        plan.empty = true;
        return plan;
      }
      continue; // an absent should term never matches; the group's count is unchanged
    }
    const p = postingList(ref!);
    const weight = bm25Weight(t.boost, idf(statsOf(ctx).docFreq(t.path, t.term), docCount));
    const one = new Float32Array(256);
    for (let i = 0; i < 256; i++) one[i] = bm25(weight, 1, cache[i]);
    const nBlocks = Math.ceil(df / BLOCK);
    const imp = df >= BLOCK ? col.impacts(p) : null;
    const cached = imp ? Math.min(imp.blocks, nBlocks) : 0;
    // last doc of each block: full ones from the impacts, the searcher's partial one from its postings
    const whole = Math.min(cached, Math.floor(df / BLOCK));
    const last = new Int32Array(nBlocks);
    if (imp) last.set(imp.last.subarray(0, whole));
    for (let b = whole; b < nBlocks; b++) last[b] = p.docs[Math.min(df, b * BLOCK + BLOCK) - 1];
    plan.clauses.push({
      docs: p.docs, freqs: p.freqs, postings: p, n: df, nBlocks, imp,
      blockMax: cached > 0 ? blockMaxima(p, `${weight}|${field.key}`, cached) : EMPTY, cached, last,
      weight, cache, one, tab: new Float32Array(TF_TABLE << 8).fill(-1),
      group: t.group, lens: col.lens, sb: 0, pos: 0,
    });
    if (t.group < 0) plan.required++;
  }
  return plan;
}

const EMPTY = new Float32Array(0);
const scratchTf = new Uint16Array(BLOCK);
const scratchNorm = new Uint8Array(BLOCK);

/** The best score of block b of c: from the impacts of a full block, else from its postings. */
export function blockMax(c: Clause, b: number): number {
  let tf: Uint16Array, norm: Uint8Array, lo: number, hi: number;
  const imp = c.imp;
  if (imp && b < imp.blocks) {
    tf = imp.tf;
    norm = imp.norm;
    lo = imp.off[b];
    hi = imp.off[b + 1];
  } else {
    tf = scratchTf;
    norm = scratchNorm;
    lo = 0;
    hi = frontier(c.postings, c.lens, b * BLOCK, Math.min(c.n, b * BLOCK + BLOCK), tf, norm);
  }
  let m = 0;
  for (let j = lo; j < hi; j++) {
    const s = termScore(c, tf[j], norm[j]);
    if (s > m) m = s;
  }
  if (b < c.cached) c.blockMax[b] = m;
  return m;
}

/**
 * What the postings alone tell of the plan's match count, as ES's shortcut of a term query's total
 * hits to its doc freq (no deletions; the caller checks that and that nothing else narrows the
 * matches): a clause whose docs all match (it alone meets every required and should constraint)
 * gives a lower bound, exact when it is the only clause. Null when filters or exclusions narrow.
 */
export function countFromPostings(plan: FlatPlan): { atLeast: number; exact: boolean } | null {
  if (plan.filter || plan.excl || plan.empty) return null;
  const alone = (c: Clause) =>
    (plan.required === 0 || (plan.required === 1 && c.group < 0)) && plan.msm.every((m, g) => m <= (c.group === g ? 1 : 0));
  let atLeast = 0;
  for (const c of plan.clauses) if (alone(c) && c.n > atLeast) atLeast = c.n;
  return { atLeast, exact: plan.clauses.length === 1 && alone(plan.clauses[0]) };
}

/** Index of the required clause with the fewest postings, -1 when none is required. */
export function rarestRequired(plan: FlatPlan): number {
  let req = -1;
  plan.clauses.forEach((c, i) => {
    if (c.group < 0 && (req < 0 || c.n < plan.clauses[req].n)) req = i;
  });
  return req;
}

/**
 * Whether candidates should come from the plan's filter (docs allowed by every filter clause)
 * rather than from postings: when it holds far fewer docs than the postings that would lead (the
 * rarest required clause `req`, else every should clause).
 */
export function filterLeads(plan: FlatPlan, req: number): boolean {
  if (!plan.filter) return false;
  const postings = req >= 0 ? plan.clauses[req].n : plan.clauses.reduce((s, c) => s + (c.group >= 0 ? c.n : 0), 0);
  plan.filterCount ??= plan.filter.count();
  return plan.filterCount * 4 < postings;
}

/** The best score of the block holding c's posting j. */
export function maxAt(c: Clause, j: number): number {
  const b = (j / BLOCK) | 0;
  const m = b < c.cached ? c.blockMax[b] : -1;
  return m >= 0 ? m : blockMax(c, b);
}

/** Term frequencies below this have their scores tabled per query. */
const TF_TABLE = 8;

/** BM25 of clause c for a term frequency and a norm byte. */
function termScore(c: Clause, tf: number, nb: number): number {
  if (tf === 1) return c.one[nb];
  if (tf >= TF_TABLE) return bm25(c.weight, tf, c.cache[nb]);
  const i = (tf << 8) | nb;
  let s = c.tab[i];
  if (s < 0) s = c.tab[i] = bm25(c.weight, tf, c.cache[nb]);
  return s;
}

/** Score of clause c's posting j (doc d). */
export function scoreAt(c: Clause, j: number, d: number): number {
  const nb = lengthToNorm(c.lens[d] - 1);
  return c.freqs === null || c.freqs[j] === 1 ? c.one[nb] : termScore(c, c.freqs[j], nb);
}

/** Moves c's cursor to its first posting >= d (galloping) and returns it. */
export function seek(c: Clause, d: number): number {
  const docs = c.docs, n = c.n;
  let i = c.pos;
  if (i < n && docs[i] < d) {
    let lo = i, step = 1, hi = i + 1;
    while (hi < n && docs[hi] < d) {
      lo = hi;
      step <<= 1;
      hi = lo + step;
    }
    if (hi > n) hi = n;
    lo++;
    while (lo < hi) {
      const m = (lo + hi) >>> 1;
      if (docs[m] < d) lo = m + 1;
      else hi = m;
    }
    i = lo;
  }
  return (c.pos = i);
}

/** What the top-k path needs besides the query. */
export interface TopScoreParams {
  /** Best `k` hits wanted (from + size). */
  k: number;
  /** Count matches exactly up to this bound; -1 = no count. */
  countUpTo: number;
  /** Doc-id range searched (a PIT slice), [from, to). */
  range: [number, number];
  /** `range` is the whole searcher. */
  whole: boolean;
  /** Docs allowed besides the query (slice, post_filter); null = all. */
  allowed: Bitset | null;
  /** Visibility under deletions; null = no deletes. */
  visible: ((d: number) => boolean) | null;
  minScore?: number;
}

/** The k best docs (score desc, doc asc) with their scores, and the total. */
export interface TopScoreResult {
  docs: number[];
  scores: number[];
  totalHits: number | null;
  totalRelation: 'eq' | 'gte';
  /** Docs whose whole score was computed (tests: what the skipping saved). */
  scored: number;
}
