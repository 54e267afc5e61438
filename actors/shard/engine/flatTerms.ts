/**
 * The common shape of text queries, run without per-clause objects: a `match` (one term, or terms
 * with `operator` and/or `minimum_should_match`) or a bool whose scoring clauses are text terms,
 * possibly through must clauses that are bools themselves (`bool.must: [match]`), with any filter
 * and must_not clauses (evaluated to bitsets first, as evaluate.ts does).
 *
 * Such a query is a flat list of term clauses in evaluate.ts's addition order, each required or
 * in a should group with its minimum_should_match. It runs in windows that end with the first
 * clause's impact block (impacts.ts); a window whose score bound cannot enter the top k, once the
 * total hit count has passed its threshold, is skipped without reading its postings. Inside a
 * window, the clauses' postings are merged in doc order and each doc's score is added in the
 * clause order, so it is bit-identical to the exhaustive path's.
 */
import type { Bitset } from './bits';
import * as analysis from './analysis';
import * as impacts from './impacts';
import type { BlockImpacts } from './impacts';
import { docFreq, type Postings, type TextColumn } from './columns';
import { evaluate } from './evaluate';
import type { QNode, QueryContext } from './query';
import { ScoreHeap } from './scoreHeap';
import type { TopScoreParams, TopScoreResult } from './topScore';

const f = Math.fround;
// Module-local copies: imported bindings compile to getter calls, which show in the inner loops.
const { bm25, idf, lengthToNorm, normCache } = analysis;
const { BLOCK, frontier, impactsOf } = impacts;
const NONE = 0x7fffffff;

/** One term clause, with its cursors. */
interface Clause {
  docs: Int32Array;
  freqs: Uint16Array | null;
  postings: Postings;
  /** Postings visible to the searcher. */
  n: number;
  nBlocks: number;
  imp: BlockImpacts | null;
  /** Best score per block. */
  blockMax: Float32Array;
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
}

interface Draft {
  terms: Array<{ col: TextColumn; term: string; boost: number; group: number }>;
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
    d.terms.push({ col: node.col, term: node.term, boost: f(node.boost), group: -1 });
  } else if (node.k !== 'bool' || !flattenBool(node, 1, d)) return null;
  // every match must hold a posting of some clause: a required one, or one of a group that needs one
  if (!d.terms.some((t) => t.group < 0) && !d.msm.some((m) => m > 0)) return null;
  return build(d, ctx);
}

const nonNeg = (x: number) => Number.isFinite(x) && x >= 0;

/** Adds a bool's clauses (the root, or a must clause: its scores add inline) to the draft. */
function flattenBool(node: Extract<QNode, { k: 'bool' }>, mult: number, d: Draft): boolean {
  if (!nonNeg(node.boost)) return false;
  const m = f(mult * node.boost);
  if (node.msm > node.should.length) d.empty = true; // Lucene: more required than present
  for (const c of node.must) {
    if (c.k === 'text') {
      if (!nonNeg(c.boost)) return false;
      d.terms.push({ col: c.col, term: c.term, boost: f(m * c.boost), group: -1 });
    } else if (c.k === 'bool') {
      if (!flattenBool(c, m, d)) return false;
    } else if (c.k === 'none') d.empty = true;
    else return false; // constant-scoring clauses: the general scorers
  }
  d.filters.push(...node.filter);
  if (node.should.length) {
    const g = d.msm.length;
    d.msm.push(node.msm);
    for (const c of node.should) {
      if (c.k !== 'text' || !nonNeg(c.boost)) return false;
      d.terms.push({ col: c.col, term: c.term, boost: f(m * c.boost), group: g });
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
  const fields = new Map<TextColumn, { docCount: number; cache: Float32Array }>();
  for (const t of d.terms) {
    const col = t.col;
    let field = fields.get(col);
    if (!field) {
      const stats = col.stats(n);
      fields.set(col, (field = { docCount: stats.docCount, cache: normCache(stats) }));
    }
    const { docCount, cache } = field;
    let ref = col.dict.get(t.term);
    const df = docFreq(ref, n);
    if (df === 0) {
      if (t.group < 0) {
        plan.empty = true;
        return plan;
      }
      continue; // an absent should term never matches; the group's count is unchanged
    }
    if (typeof ref === 'number') ref = { docs: Int32Array.of(ref), freqs: null, len: 1 } as Postings;
    const p = ref!;
    const weight = f(t.boost * idf(df, docCount));
    const one = new Float32Array(256);
    for (let i = 0; i < 256; i++) one[i] = bm25(weight, 1, cache[i]);
    const nBlocks = Math.ceil(df / BLOCK);
    const last = new Int32Array(nBlocks);
    for (let b = 0; b < nBlocks; b++) last[b] = p.docs[Math.min(df, b * BLOCK + BLOCK) - 1];
    plan.clauses.push({
      docs: p.docs, freqs: p.freqs, postings: p, n: df, nBlocks, imp: df >= BLOCK ? impactsOf(p, col.lens) : null,
      blockMax: new Float32Array(nBlocks), last, weight, cache, one, tab: new Float32Array(TF_TABLE << 8).fill(-1), group: t.group, lens: col.lens, sb: 0, pos: 0,
    });
    if (t.group < 0) plan.required++;
  }
  for (const c of plan.clauses) fillBlockMax(c);
  return plan;
}

const scratchTf = new Uint16Array(BLOCK);
const scratchNorm = new Uint8Array(BLOCK);

/** The best score of every block of c: from the impacts of full blocks, else from the postings. */
function fillBlockMax(c: Clause): void {
  const imp = c.imp;
  const full = imp ? Math.min(imp.blocks, c.nBlocks) : 0;
  const out = c.blockMax;
  if (imp) {
    const { off, tf, norm } = imp;
    for (let b = 0; b < full; b++) {
      let m = 0;
      for (let j = off[b], hi = off[b + 1]; j < hi; j++) {
        const s = termScore(c, tf[j], norm[j]);
        if (s > m) m = s;
      }
      out[b] = m;
    }
  }
  for (let b = full; b < c.nBlocks; b++) {
    const hi = frontier(c.postings, c.lens, b * BLOCK, Math.min(c.n, b * BLOCK + BLOCK), scratchTf, scratchNorm);
    let m = 0;
    for (let j = 0; j < hi; j++) {
      const s = termScore(c, scratchTf[j], scratchNorm[j]);
      if (s > m) m = s;
    }
    out[b] = m;
  }
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
function scoreAt(c: Clause, j: number, d: number): number {
  const nb = lengthToNorm(c.lens[d] - 1);
  return c.freqs === null || c.freqs[j] === 1 ? c.one[nb] : termScore(c, c.freqs[j], nb);
}

/** Moves c's cursor to its first posting >= d (galloping) and returns it. */
function seek(c: Clause, d: number): number {
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

/** Runs a flat plan (see the module comment); same contract as topScore. */
export function runFlat(plan: FlatPlan, p: TopScoreParams): TopScoreResult {
  return new FlatRun(plan, p).run();
}

/**
 * One run of a flat plan, window by window. A window with no possible match, or whose bound is
 * below min_score, is skipped. While the total is being counted, a window whose bound cannot enter
 * the top k is only counted (no scores); once the count has passed its threshold, it is skipped.
 * In a window that can compete, the should clauses whose maxima together cannot compete are left
 * out of the candidates (MaxScore), and a candidate whose bound cannot compete is dropped before
 * the other clauses are sought.
 */
class FlatRun {
  private readonly heap: ScoreHeap;
  private counting: boolean;
  private count = 0;
  private readonly min: number;
  private readonly clauses: Clause[];
  private readonly nc: number;
  private readonly groups: number;
  /** Per clause: maximum in the current window (-1 = no posting there). */
  private readonly wmax: Float64Array;
  /** Per clause: candidates come from it. */
  private readonly lead: Uint8Array;
  /** Per clause, at the current candidate: 0 absent, 1 present (score in `ex`), 2 not sought yet. */
  private readonly at: Uint8Array;
  private readonly ex: Float64Array;
  private readonly hits: Int32Array;
  private readonly possible: Int32Array;
  private readonly order: Int32Array;
  /** The rarest required clause, or -1. */
  private readonly req: number;

  constructor(private readonly plan: FlatPlan, private readonly p: TopScoreParams) {
    this.heap = new ScoreHeap(p.k);
    this.counting = p.countUpTo >= 0;
    this.min = p.minScore ?? -Infinity;
    this.clauses = plan.clauses;
    const nc = (this.nc = plan.clauses.length);
    this.groups = plan.msm.length;
    this.wmax = new Float64Array(nc);
    this.lead = new Uint8Array(nc);
    this.at = new Uint8Array(nc);
    this.ex = new Float64Array(nc);
    this.hits = new Int32Array(this.groups);
    this.possible = new Int32Array(this.groups);
    this.order = new Int32Array(nc);
    let req = -1;
    plan.clauses.forEach((c, i) => {
      if (c.group < 0 && (req < 0 || c.n < plan.clauses[req].n)) req = i;
    });
    this.req = req;
  }

  run(): TopScoreResult {
    const { plan, heap, p } = this;
    if (!plan.empty && this.nc > 0) this.windows(p.range[0], p.range[1]);
    const { docs, scores } = heap.sorted();
    const over = p.countUpTo >= 0 && this.count > p.countUpTo;
    return { docs, scores, totalHits: p.countUpTo < 0 ? null : over ? p.countUpTo : this.count, totalRelation: over ? 'gte' : 'eq' };
  }

  /** Window by window from `start` (see the class comment). */
  private windows(start: number, to: number): void {
    const { clauses, nc, wmax, possible, heap, lead } = this;
    const msm = this.plan.msm;
    const min = this.min;
    const groups = this.groups;
    const req = this.req;
    let counting = this.counting;
    let worst = heap.threshold;
    while (start < to) {
      if (!counting && heap.k === 0) return;
      // the window ends with the first block that ends
      let end = NONE;
      for (let i = 0; i < nc; i++) {
        const c = clauses[i];
        const last = c.last;
        let b = c.sb;
        while (b < c.nBlocks && last[b] < start) b++;
        c.sb = b;
        if (b < c.nBlocks) {
          if (last[b] < end) end = last[b];
        } else if (c.group < 0) return; // a required clause has no more postings
      }
      if (end === NONE) return;
      if (end >= to) end = to - 1;
      // its bound, added in clause order (one block per clause reaches into it)
      let ub = 0;
      let dead = false;
      for (let g = 0; g < groups; g++) possible[g] = 0;
      for (let i = 0; i < nc; i++) {
        const c = clauses[i];
        const b = c.sb;
        const m = b < c.nBlocks && c.docs[b * BLOCK] <= end ? c.blockMax[b] : -1;
        wmax[i] = m;
        if (m < 0) {
          if (c.group < 0) dead = true;
          continue;
        }
        ub += m;
        if (c.group >= 0) possible[c.group]++;
      }
      for (let g = 0; g < groups; g++) if (possible[g] < msm[g]) dead = true;
      const bound = f(ub);
      if (dead || bound < min || (!counting && bound <= worst)) {
        start = end + 1;
        continue;
      }
      // leads: the rarest required clause, else the should clauses reaching into the window
      for (let i = 0; i < nc; i++) {
        const c = clauses[i];
        lead[i] = req >= 0 ? (i === req ? 1 : 0) : c.group >= 0 && wmax[i] >= 0 ? 1 : 0;
        if (c.pos < c.sb * BLOCK) c.pos = c.sb * BLOCK;
      }
      if (bound <= worst && min === -Infinity) this.countWindow(start, end);
      else {
        if (req < 0 && !counting) this.maxScoreLeads(worst);
        this.scanWindow(start, end);
      }
      counting = this.counting;
      worst = heap.threshold;
      start = end + 1;
    }
  }

  /**
   * MaxScore: the should clauses of smallest window maxima whose sum (in clause order) cannot
   * beat `worst` lead no candidate: a doc holding only them cannot enter.
   */
  private maxScoreLeads(worst: number): void {
    const { nc, wmax, lead, order, at } = this;
    let n = 0;
    for (let i = 0; i < nc; i++) {
      if (!lead[i]) continue;
      let j = n++;
      while (j > 0 && wmax[order[j - 1]] > wmax[i]) {
        order[j] = order[j - 1];
        j--;
      }
      order[j] = i;
    }
    if (n === 2) {
      // the common case: is the smaller maximum alone unable to compete?
      if (f(wmax[order[0]]) <= worst) lead[order[0]] = 0;
      return;
    }
    // grow the left-out set (marked in `at`) while its bound cannot compete
    for (let i = 0; i < nc; i++) at[i] = 0;
    for (let take = 0; take < n - 1; take++) {
      at[order[take]] = 1;
      let b = 0;
      for (let i = 0; i < nc; i++) if (at[i]) b += wmax[i];
      if (f(b) > worst) break;
      lead[order[take]] = 0;
    }
  }

  /** Counts the matches in [start, end] (no scores: none of them can enter the top k). */
  private countWindow(start: number, end: number): void {
    const { clauses, nc, lead, wmax, hits } = this;
    const { allowed, visible, countUpTo } = this.p;
    const { required, msm, filter, excl } = this.plan;
    const groups = this.groups;
    for (let i = 0; i < nc; i++) if (lead[i]) seek(clauses[i], start);
    let count = this.count;
    for (;;) {
      let d = NONE;
      for (let i = 0; i < nc; i++) {
        if (!lead[i]) continue;
        const c = clauses[i];
        const j = c.pos;
        if (j < c.n && c.docs[j] < d) d = c.docs[j];
      }
      if (d > end) break;
      let req = 0;
      for (let g = 0; g < groups; g++) hits[g] = 0;
      for (let i = 0; i < nc; i++) {
        const c = clauses[i];
        let j: number;
        if (lead[i]) {
          j = c.pos;
          if (j >= c.n || c.docs[j] !== d) continue;
          c.pos = j + 1;
        } else {
          if (wmax[i] < 0) continue;
          j = seek(c, d);
          if (j >= c.n || c.docs[j] !== d) continue;
        }
        if (c.group < 0) req++;
        else hits[c.group]++;
      }
      if (req < required) continue;
      let ok = true;
      for (let g = 0; g < groups; g++) if (hits[g] < msm[g]) ok = false;
      if (!ok || (filter && !filter.has(d)) || (excl && excl.has(d)) || (allowed && !allowed.has(d)) || (visible && !visible(d))) continue;
      if (++count > countUpTo) {
        this.counting = false;
        break;
      }
    }
    this.count = count;
  }

  /**
   * Visits candidates in [start, end] from the lead clauses: a candidate whose bound (the leads'
   * scores, the others' window maxima) cannot compete is dropped before the others are sought;
   * the rest are scored, counted while counting, and offered to the heap.
   */
  private scanWindow(start: number, end: number): void {
    const { clauses, nc, lead, at, ex, wmax, hits, heap } = this;
    const { allowed, visible, countUpTo } = this.p;
    const { required, msm, filter, excl } = this.plan;
    const groups = this.groups;
    const min = this.min;
    let counting = this.counting;
    let worst = heap.threshold;
    for (let i = 0; i < nc; i++) if (lead[i]) seek(clauses[i], start);
    for (;;) {
      let d = NONE;
      for (let i = 0; i < nc; i++) {
        if (!lead[i]) continue;
        const c = clauses[i];
        const j = c.pos;
        if (j < c.n && c.docs[j] < d) d = c.docs[j];
      }
      if (d > end) return;
      // the lead clauses at d, exactly; the others at their window maxima
      let bound = 0;
      for (let i = 0; i < nc; i++) {
        const c = clauses[i];
        if (lead[i]) {
          const j = c.pos;
          if (j < c.n && c.docs[j] === d) {
            const e = scoreAt(c, j, d);
            ex[i] = e;
            bound += e;
            at[i] = 1;
            c.pos = j + 1;
          } else at[i] = 0;
        } else if (wmax[i] >= 0) {
          at[i] = 2;
          bound += wmax[i];
        } else at[i] = 0;
      }
      const fb = f(bound);
      if (fb < min || (!counting && fb <= worst)) continue;
      // seek the others; the score in clause order
      let acc = 0;
      let req = 0;
      for (let g = 0; g < groups; g++) hits[g] = 0;
      for (let i = 0; i < nc; i++) {
        const c = clauses[i];
        if (at[i] === 2) {
          const j = seek(c, d);
          if (j >= c.n || c.docs[j] !== d) continue;
          ex[i] = scoreAt(c, j, d);
        } else if (at[i] === 0) continue;
        acc += ex[i];
        if (c.group < 0) req++;
        else hits[c.group]++;
      }
      if (req < required) continue;
      let ok = true;
      for (let g = 0; g < groups; g++) if (hits[g] < msm[g]) ok = false;
      if (!ok || (filter && !filter.has(d)) || (excl && excl.has(d)) || (allowed && !allowed.has(d)) || (visible && !visible(d))) continue;
      const score = f(acc);
      if (score < min) continue;
      if (counting && ++this.count > countUpTo) counting = this.counting = false;
      if (score > worst) {
        heap.offer(score, d);
        worst = heap.threshold;
      }
    }
  }
}
