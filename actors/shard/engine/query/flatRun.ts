/**
 * Runs a flat plan (flatPlan.ts) for the top k: see {@link FlatRun}; two clauses run in flatTwo.ts.
 */
import * as planMod from './flatPlan';
import type { Clause, FlatPlan } from './flatPlan';
import * as impacts from '../index/impacts';
import { ScoreHeap } from './scoreHeap';
import type { TopScoreParams, TopScoreResult } from './flatPlan';

const f = Math.fround;
// Module-local copies: imported bindings compile to getter calls, which show in the inner loops.
const { blockMax, countFromPostings, filterLeads, maxAt, rarestRequired, scoreAt, seek } = planMod;
const { BLOCK } = impacts;
const NONE = 0x7fffffff;
/** Most clauses for which a window looks for should clauses every competing doc needs. */
const MAX_NEED = 4;

/** Runs a flat plan (see the module comment); same contract as topScore. */
export function runFlat(plan: FlatPlan, p: TopScoreParams): TopScoreResult {
  return new FlatRun(plan, p).run();
}

/**
 * One run of a flat plan. While the total is being counted (and no min_score can rule docs out),
 * every match is visited: candidates from a filter far rarer than the postings, else the rarest
 * required clause, else the union of the should clauses, the others sought at each; a match whose
 * postings' block maxima cannot compete is counted without being scored. Then window by window
 * (a window ends with the first clause block that ends): a window with no possible match, or
 * whose bound cannot compete, is skipped; inside one, a clause that every competing doc needs (the
 * others' maxima cannot compete without it) leads, else the should clauses less those whose maxima
 * together cannot compete (MaxScore); a candidate is dropped as soon as a needed clause is missing
 * or its bound cannot compete, before the other clauses are sought.
 */
class FlatRun {
  private readonly heap: ScoreHeap;
  private counting: boolean;
  private count = 0;
  private scored = 0;
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
  /** The window's needed clause that leads (-1: should clauses lead), and the other needed ones. */
  private lead1 = -1;
  private readonly needList: Int32Array;
  private nNeed = 0;

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
    this.needList = new Int32Array(nc);
    this.req = rarestRequired(plan);
  }

  /** Settles the count from the postings when they tell it (see flatPlan.ts countFromPostings). */
  private countFromPostings(): void {
    const { p } = this;
    if (!p.whole || p.allowed || p.visible || this.min > -Infinity) return;
    const known = countFromPostings(this.plan);
    if (!known) return;
    if (known.atLeast > p.countUpTo) this.count = p.countUpTo + 1;
    else if (known.exact) this.count = known.atLeast;
    else return;
    this.counting = false;
  }

  run(): TopScoreResult {
    const { plan, heap, p } = this;
    if (!plan.empty && this.nc > 0) {
      const [from, to] = p.range;
      let start = from;
      if (this.counting) this.countFromPostings();
      if (this.counting && this.min === -Infinity) start = this.scanAll(from, to);
      if (start < to && (this.counting || heap.k > 0)) this.windows(start, to);
    }
    const { docs, scores } = heap.sorted();
    const over = p.countUpTo >= 0 && this.count > p.countUpTo;
    return { docs, scores, totalHits: p.countUpTo < 0 ? null : over ? p.countUpTo : this.count, totalRelation: over ? 'gte' : 'eq', scored: this.scored };
  }

  /**
   * Visits every match from `start` until the count passes its threshold; returns the doc after
   * the last one visited (`to` when the range ended first).
   */
  private scanAll(start: number, to: number): number {
    const { clauses, nc, lead, heap, hits, jx } = this;
    const { allowed, visible, countUpTo } = this.p;
    const { required, msm, filter, excl } = this.plan;
    const groups = this.groups;
    const req = this.req;
    const min = this.min;
    // candidates: a filter much rarer than the postings, else the rarest required clause, else the should clauses
    const byFilter = filter !== null && filterLeads(this.plan, req);
    for (let i = 0; i < nc; i++) {
      lead[i] = byFilter ? 0 : req >= 0 ? (i === req ? 1 : 0) : clauses[i].group >= 0 ? 1 : 0;
      if (lead[i]) seek(clauses[i], start);
    }
    let count = this.count;
    let worst = heap.threshold;
    let next = to;
    let from = start;
    for (;;) {
      let d = NONE;
      if (byFilter) {
        const x = from < to ? filter.next(from) : -1;
        if (x >= 0) d = x;
        from = d + 1;
      } else {
        for (let i = 0; i < nc; i++) {
          if (!lead[i]) continue;
          const c = clauses[i];
          const j = c.pos;
          if (j < c.n && c.docs[j] < d) d = c.docs[j];
        }
      }
      if (d >= to) break;
      // which clauses hold d (seeking those that do not lead)
      let r = 0;
      for (let g = 0; g < groups; g++) hits[g] = 0;
      for (let i = 0; i < nc; i++) {
        const c = clauses[i];
        let j: number;
        if (lead[i]) {
          j = c.pos;
          if (j < c.n && c.docs[j] === d) c.pos = j + 1;
        } else j = seek(c, d);
        if (j >= c.n || c.docs[j] !== d) {
          jx[i] = -1;
          continue;
        }
        jx[i] = j;
        if (c.group < 0) r++;
        else hits[c.group]++;
      }
      if (r < required) continue;
      let ok = true;
      for (let g = 0; g < groups; g++) if (hits[g] < msm[g]) ok = false;
      if (!ok || (filter && !byFilter && !filter.has(d)) || (excl && excl.has(d)) || (allowed && !allowed.has(d)) || (visible && !visible(d))) continue;
      // a bound from the postings' block maxima before the score (this phase runs without min_score)
      if (worst > -Infinity) {
        let cb = 0;
        for (let i = 0; i < nc; i++) if (jx[i] >= 0) cb += maxAt(clauses[i], jx[i]);
        if (f(cb) <= worst) {
          if (++count > countUpTo) {
            this.counting = false;
            next = d + 1;
            break;
          }
          continue;
        }
      }
      let acc = 0;
      for (let i = 0; i < nc; i++) if (jx[i] >= 0) acc += scoreAt(clauses[i], jx[i], d);
      const score = f(acc);
      this.scored++;
      if (score >= min && score > worst) {
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
    const heap = this.heap;
    const min = this.min;
    while (start < to) {
      if (!this.counting && heap.k === 0) return;
      const end = this.windowEnd(start, to);
      if (end < 0) return;
      const bound = this.windowBound(end);
      if (bound >= 0 && bound >= min && (this.counting || bound > heap.threshold)) {
        this.chooseLeads(start);
        this.scanWindow(start, end);
      }
      start = end + 1;
    }
  }

  /**
   * Moves every clause to its block holding `start`. The window ends with the block of the
   * densest clause left (the shortest blocks in docs), so that many clauses do not cut it into
   * slivers; -1 when no match is left.
   */
  private windowEnd(start: number, to: number): number {
    const { clauses, nc } = this;
    let end = NONE, most = -1;
    for (let i = 0; i < nc; i++) {
      const c = clauses[i];
      const last = c.last;
      let b = c.sb;
      while (b < c.nBlocks && last[b] < start) b++;
      c.sb = b;
      if (b < c.nBlocks) {
        if (c.n > most) {
          most = c.n;
          end = last[b];
        }
      } else if (c.group < 0) return -1; // a required clause has no more postings
    }
    if (end === NONE) return -1;
    return end >= to ? to - 1 : end;
  }

  /**
   * The window's bound: each clause's best block maximum over the blocks reaching into the window
   * (in `wmax`, -1 without a posting there), added in clause order; -1 when no doc there can match.
   */
  private windowBound(end: number): number {
    const { clauses, nc, wmax, possible } = this;
    const msm = this.plan.msm;
    let ub = 0;
    let dead = false;
    for (let g = 0; g < this.groups; g++) possible[g] = 0;
    for (let i = 0; i < nc; i++) {
      const c = clauses[i];
      const b = c.sb;
      let m = -1;
      for (let k = b; k < c.nBlocks && c.docs[k * BLOCK] <= end; k++) {
        let x = k < c.cached ? c.blockMax[k] : -1;
        if (x < 0) x = blockMax(c, k);
        if (x > m) m = x;
      }
      wmax[i] = m;
      if (m < 0) {
        if (c.group < 0) dead = true;
        continue;
      }
      ub += m;
      if (c.group >= 0) possible[c.group]++;
    }
    for (let g = 0; g < this.groups; g++) if (possible[g] < msm[g]) dead = true;
    return dead ? -1 : f(ub);
  }

  /**
   * Needed clauses (the required ones and, once docs can be ruled out by their bound, any clause
   * without which the other maxima cannot compete) and leads: the rarest needed clause, else the
   * should clauses reaching into the window less (MaxScore) those of smallest maxima that together
   * cannot compete. Puts the clauses' cursors in the window.
   */
  private chooseLeads(start: number): void {
    const { clauses, nc, wmax, lead, need, order, min } = this;
    const counting = this.counting;
    const worst = this.heap.threshold;
    const pruning = !counting || min > -Infinity;
    let lead1 = -1;
    for (let i = 0; i < nc; i++) {
      const c = clauses[i];
      let nd = c.group < 0;
      // (quadratic in the clauses: only for a few)
      if (!nd && pruning && wmax[i] >= 0 && nc <= MAX_NEED) {
        let o = 0;
        for (let k = 0; k < nc; k++) if (k !== i && wmax[k] >= 0) o += wmax[k];
        const fo = f(o);
        nd = fo < min || (!counting && fo <= worst);
      }
      need[i] = nd ? 1 : 0;
      if (nd && (lead1 < 0 || c.n < clauses[lead1].n)) lead1 = i;
    }
    this.lead1 = lead1;
    this.nNeed = 0;
    if (lead1 >= 0) {
      for (let i = 0; i < nc; i++) {
        lead[i] = i === lead1 ? 1 : 0;
        if (need[i] && i !== lead1) this.needList[this.nNeed++] = i;
      }
    } else {
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
  }

  /**
   * The candidates of the window [start, end] from the leads: dropped as soon as a needed clause
   * is missing or (when docs can be ruled out) their bound, present clauses exactly and the others
   * at their window maxima, cannot compete; then the others are sought and the score added in
   * clause order. Per clause at[i]: 0 absent, 1 present (posting jx[i]), 2 not sought, 3 scored.
   */
  private scanWindow(start: number, end: number): void {
    const { clauses, nc, wmax, heap, lead, need, at, jx, ex, hits, min, lead1, needList, nNeed } = this;
    const { allowed, visible, countUpTo } = this.p;
    const { required, msm, filter, excl } = this.plan;
    const groups = this.groups;
    let counting = this.counting;
    let count = this.count;
    let worst = heap.threshold;
    const pruning = !counting || min > -Infinity;
    candidates: for (;;) {
      let d = NONE;
      if (lead1 >= 0) {
        // one needed clause leads: the other needed ones must be there before anything else
        const c = clauses[lead1];
        const j = c.pos;
        if (j >= c.n || (d = c.docs[j]) > end) break;
        c.pos = j + 1;
        for (let t = 0; t < nNeed; t++) {
          const i = needList[t];
          const o = clauses[i];
          let k = o.pos;
          while (k < o.n && o.docs[k] < d) k++;
          o.pos = k;
          if (k >= o.n || o.docs[k] !== d) continue candidates;
          jx[i] = k;
        }
        jx[lead1] = j;
        for (let i = 0; i < nc; i++) at[i] = need[i] ? 1 : wmax[i] >= 0 ? 2 : 0;
      } else {
        // should clauses lead (none is needed)
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
      }
      if (pruning) {
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
      this.scored++;
      if (score < min) continue;
      if (counting && ++count > countUpTo) counting = false;
      if (score > worst) {
        heap.offer(score, d);
        worst = heap.threshold;
      }
    }
    this.count = count;
    this.counting = counting;
  }
}
