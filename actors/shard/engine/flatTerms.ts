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
const { BLOCK, blockMaxima, frontier, impactsOf } = impacts;
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
  const fields = new Map<TextColumn, { docCount: number; cache: Float32Array; key: string }>();
  for (const t of d.terms) {
    const col = t.col;
    let field = fields.get(col);
    if (!field) {
      const stats = col.stats(n);
      fields.set(col, (field = { docCount: stats.docCount, cache: normCache(stats), key: `${stats.docCount}|${stats.sumTotalTermFreq}` }));
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
    const imp = df >= BLOCK ? impactsOf(p, col.lens) : null;
    const cached = imp ? Math.min(imp.blocks, nBlocks) : 0;
    const last = new Int32Array(nBlocks);
    for (let b = 0; b < nBlocks; b++) last[b] = p.docs[Math.min(df, b * BLOCK + BLOCK) - 1];
    plan.clauses.push({
      docs: p.docs, freqs: p.freqs, postings: p, n: df, nBlocks, imp,
      blockMax: cached > 0 ? blockMaxima(p, `${weight}|${field.key}`, cached) : EMPTY, cached, last, weight, cache, one, tab: new Float32Array(TF_TABLE << 8).fill(-1), group: t.group, lens: col.lens, sb: 0, pos: 0,
    });
    if (t.group < 0) plan.required++;
  }
  return plan;
}

const EMPTY = new Float32Array(0);
const scratchTf = new Uint16Array(BLOCK);
const scratchNorm = new Uint8Array(BLOCK);

/** The best score of block b of c: from the impacts of a full block, else from its postings. */
function blockMax(c: Clause, b: number): number {
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
 * One run of a flat plan. While the total is being counted (and no min_score can rule docs out),
 * every match is visited: candidates from the rarest required clause, or from the union of the
 * should clauses, the others sought at each. Then window by window: a window with no possible
 * match, or whose bound cannot compete, is skipped; inside one, the should clauses whose maxima
 * together cannot compete lead no candidate (MaxScore), and a candidate whose bound cannot
 * compete is dropped before the other clauses are sought.
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
  /** Per clause: every competing doc of the window holds it. */
  private readonly need: Uint8Array;
  /** Per clause, at the current candidate: see `windows`. */
  private readonly at: Uint8Array;
  private readonly jx: Int32Array;
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
    this.need = new Uint8Array(nc);
    this.at = new Uint8Array(nc);
    this.jx = new Int32Array(nc);
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
    if (!plan.empty && this.nc > 0) {
      const [from, to] = p.range;
      let start = from;
      if (this.counting && this.min === -Infinity) start = this.scanAll(from, to);
      if (start < to && (this.counting || heap.k > 0)) this.windows(start, to);
    }
    const { docs, scores } = heap.sorted();
    const over = p.countUpTo >= 0 && this.count > p.countUpTo;
    return { docs, scores, totalHits: p.countUpTo < 0 ? null : over ? p.countUpTo : this.count, totalRelation: over ? 'gte' : 'eq' };
  }

  /**
   * Visits every match from `start` until the count passes its threshold; returns the doc after
   * the last one visited (`to` when the range ended first).
   */
  private scanAll(start: number, to: number): number {
    const { clauses, nc, lead, heap, hits } = this;
    const { allowed, visible, countUpTo } = this.p;
    const { required, msm, filter, excl } = this.plan;
    const groups = this.groups;
    const req = this.req;
    for (let i = 0; i < nc; i++) {
      lead[i] = req >= 0 ? (i === req ? 1 : 0) : clauses[i].group >= 0 ? 1 : 0;
      if (lead[i]) seek(clauses[i], start);
    }
    let count = this.count;
    let worst = heap.threshold;
    let next = to;
    for (;;) {
      let d = NONE;
      for (let i = 0; i < nc; i++) {
        if (!lead[i]) continue;
        const c = clauses[i];
        const j = c.pos;
        if (j < c.n && c.docs[j] < d) d = c.docs[j];
      }
      if (d >= to) break;
      // the score in clause order, seeking the clauses that do not lead
      let acc = 0;
      let r = 0;
      for (let g = 0; g < groups; g++) hits[g] = 0;
      for (let i = 0; i < nc; i++) {
        const c = clauses[i];
        let j: number;
        if (lead[i]) {
          j = c.pos;
          if (j >= c.n || c.docs[j] !== d) continue;
          c.pos = j + 1;
        } else {
          j = seek(c, d);
          if (j >= c.n || c.docs[j] !== d) continue;
        }
        acc += scoreAt(c, j, d);
        if (c.group < 0) r++;
        else hits[c.group]++;
      }
      if (r < required) continue;
      let ok = true;
      for (let g = 0; g < groups; g++) if (hits[g] < msm[g]) ok = false;
      if (!ok || (filter && !filter.has(d)) || (excl && excl.has(d)) || (allowed && !allowed.has(d)) || (visible && !visible(d))) continue;
      const score = f(acc);
      if (score > worst) {
        heap.offer(score, d);
        worst = heap.threshold;
      }
      if (++count > countUpTo) {
        this.counting = false;
        next = d + 1;
        break;
      }
    }
    this.count = count;
    return next;
  }

  /** Window by window from `start` (see the class comment). */
  private windows(start: number, to: number): void {
    const { clauses, nc, wmax, possible, heap, lead, need, at, jx, ex, hits, order } = this;
    const { allowed, visible, countUpTo } = this.p;
    const { required, msm, filter, excl } = this.plan;
    const min = this.min;
    const groups = this.groups;
    const req = this.req;
    let counting = this.counting;
    let count = this.count;
    let worst = heap.threshold;
    windows: while (start < to) {
      if (!counting && heap.k === 0) break;
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
        } else if (c.group < 0) break windows; // a required clause has no more postings
      }
      if (end === NONE) break;
      if (end >= to) end = to - 1;
      // its bound, added in clause order (one block per clause reaches into it)
      let ub = 0;
      let dead = false;
      for (let g = 0; g < groups; g++) possible[g] = 0;
      for (let i = 0; i < nc; i++) {
        const c = clauses[i];
        const b = c.sb;
        let m = -1;
        if (b < c.nBlocks && c.docs[b * BLOCK] <= end) {
          m = b < c.cached ? c.blockMax[b] : -1;
          if (m < 0) m = blockMax(c, b);
        }
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
      // needed clauses: the required ones and, once docs can be ruled out by their bound, any
      // clause without which the other maxima cannot compete
      const pruning = !counting || min > -Infinity;
      let lead1 = -1;
      for (let i = 0; i < nc; i++) {
        const c = clauses[i];
        let nd = c.group < 0;
        if (!nd && pruning && wmax[i] >= 0) {
          let o = 0;
          for (let k = 0; k < nc; k++) if (k !== i && wmax[k] >= 0) o += wmax[k];
          const fo = f(o);
          nd = fo < min || (!counting && fo <= worst);
        }
        need[i] = nd ? 1 : 0;
        if (nd && (lead1 < 0 || c.n < clauses[lead1].n)) lead1 = i;
      }
      // leads: the rarest needed clause, else the should clauses reaching into the window, less
      // (MaxScore) those of smallest maxima that together cannot compete
      if (lead1 >= 0) for (let i = 0; i < nc; i++) lead[i] = i === lead1 ? 1 : 0;
      else {
        let nLead = 0;
        for (let i = 0; i < nc; i++) {
          const l = clauses[i].group >= 0 && wmax[i] >= 0;
          lead[i] = l ? 1 : 0;
          if (!l) continue;
          let j = nLead++;
          while (j > 0 && wmax[order[j - 1]] > wmax[i]) {
            order[j] = order[j - 1];
            j--;
          }
          order[j] = i;
        }
        if (pruning) {
          let out = 0;
          for (let t = 0; t < nLead - 1; t++) {
            out += wmax[order[t]];
            const fo = f(out);
            if (!(fo < min || (!counting && fo <= worst))) break;
            lead[order[t]] = 0;
          }
        }
      }
      for (let i = 0; i < nc; i++) {
        const c = clauses[i];
        let j = c.pos;
        if (j < c.sb * BLOCK) j = c.sb * BLOCK;
        if (lead[i]) while (j < c.n && c.docs[j] < start) j++;
        c.pos = j;
      }
      // candidates; per clause at[i]: 0 absent, 1 present (posting jx[i]), 2 not sought, 3 scored (ex[i])
      candidates: for (;;) {
        let d = NONE;
        for (let i = 0; i < nc; i++) {
          if (!lead[i]) continue;
          const c = clauses[i];
          const j = c.pos;
          if (j < c.n && c.docs[j] < d) d = c.docs[j];
        }
        if (d > end) break;
        for (let i = 0; i < nc; i++) {
          const c = clauses[i];
          if (lead[i]) {
            const j = c.pos;
            if (j < c.n && c.docs[j] === d) {
              at[i] = 1;
              jx[i] = j;
              c.pos = j + 1;
            } else at[i] = 0;
          } else at[i] = wmax[i] >= 0 ? 2 : 0;
        }
        // the needed clauses must be there (a few postings to step over in the window)
        for (let i = 0; i < nc; i++) {
          if (!need[i] || at[i] === 1) continue;
          if (at[i] === 0) continue candidates;
          const c = clauses[i];
          let j = c.pos;
          while (j < c.n && c.docs[j] < d) j++;
          c.pos = j;
          if (j >= c.n || c.docs[j] !== d) continue candidates;
          at[i] = 1;
          jx[i] = j;
        }
        if (pruning) {
          // the bound: present clauses exactly, the others at their window maxima
          let cb = 0;
          for (let i = 0; i < nc; i++) {
            if (at[i] === 1) {
              ex[i] = scoreAt(clauses[i], jx[i], d);
              at[i] = 3;
              cb += ex[i];
            } else if (at[i] === 2) cb += wmax[i];
          }
          const fb = f(cb);
          if (fb < min || (!counting && fb <= worst)) continue;
        }
        // seek the others; the score in clause order
        let acc = 0;
        let r = 0;
        for (let g = 0; g < groups; g++) hits[g] = 0;
        for (let i = 0; i < nc; i++) {
          const c = clauses[i];
          const a = at[i];
          if (a === 0) continue;
          if (a === 3) acc += ex[i];
          else if (a === 1) acc += scoreAt(c, jx[i], d);
          else {
            let j = c.pos;
            while (j < c.n && c.docs[j] < d) j++;
            c.pos = j;
            if (j >= c.n || c.docs[j] !== d) continue;
            acc += scoreAt(c, j, d);
          }
          if (c.group < 0) r++;
          else hits[c.group]++;
        }
        if (r < required) continue;
        let ok = true;
        for (let g = 0; g < groups; g++) if (hits[g] < msm[g]) ok = false;
        if (!ok || (filter && !filter.has(d)) || (excl && excl.has(d)) || (allowed && !allowed.has(d)) || (visible && !visible(d))) continue;
        const score = f(acc);
        if (score < min) continue;
        if (counting && ++count > countUpTo) counting = false;
        if (score > worst) {
          heap.offer(score, d);
          worst = heap.threshold;
        }
      }
      start = end + 1;
    }
    this.count = count;
    this.counting = counting;
  }
}
