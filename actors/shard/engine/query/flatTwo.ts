/**
 * A flat plan of exactly two term clauses (a two-word `match`, with or without `operator`,
 * `minimum_should_match`, a filter...), the most common text query, run as flatRun.ts runs any
 * plan but with the two clauses' cursors in locals: a doc matches by a four-entry table of which
 * clauses it holds, and a window needs a clause when the other alone cannot match or compete.
 * Same results as flatRun.ts (and as the exhaustive path), to the bit.
 */
import * as planMod from './flatPlan';
import type { Clause, FlatPlan } from './flatPlan';
import * as impacts from '../index/impacts';
import { ScoreHeap } from './scoreHeap';
import type { TopScoreParams, TopScoreResult } from './flatPlan';

const f = Math.fround;
// Module-local copies: imported bindings compile to getter calls, which show in the inner loops.
const { blockMax, countFromPostings, maxAt, scoreAt, seek } = planMod;
const { BLOCK } = impacts;
const NONE = 0x7fffffff;

/** Whether a doc holding clause a (`ha`) and/or b (`hb`) matches the plan. */
function matchTable(plan: FlatPlan): boolean[] {
  const [a, b] = plan.clauses;
  const t: boolean[] = [];
  for (let k = 0; k < 4; k++) {
    const ha = (k & 2) !== 0, hb = (k & 1) !== 0;
    let req = 0;
    const hits = plan.msm.map(() => 0);
    for (const [c, has] of [[a, ha], [b, hb]] as Array<[Clause, boolean]>) {
      if (!has) continue;
      if (c.group < 0) req++;
      else hits[c.group]++;
    }
    t[k] = req === plan.required && plan.msm.every((m, g) => hits[g] >= m);
  }
  return t;
}

/** Runs a two-clause plan; same contract as flatRun.ts runFlat. */
export function runTwo(plan: FlatPlan, p: TopScoreParams): TopScoreResult {
  return new TwoRun(plan, p).run();
}

class TwoRun {
  private readonly heap: ScoreHeap;
  private counting: boolean;
  private count = 0;
  private scored = 0;
  private readonly min: number;
  private readonly a: Clause;
  private readonly b: Clause;
  /** matches[ha * 2 + hb] */
  private readonly t: boolean[];

  constructor(private readonly plan: FlatPlan, private readonly p: TopScoreParams) {
    this.heap = new ScoreHeap(p.k);
    this.counting = p.countUpTo >= 0;
    this.min = p.minScore ?? -Infinity;
    [this.a, this.b] = plan.clauses;
    this.t = matchTable(plan);
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
    const { heap, p, t } = this;
    if (!this.plan.empty && t[3]) {
      const [from, to] = p.range;
      let start = from;
      if (this.counting) this.countFromPostings();
      if (this.counting && this.min === -Infinity) {
        // every match counts until the threshold: no window can be skipped, visit them all;
        // a clause the other cannot match without leads (the rarer if both), else both do
        const needA = !t[1], needB = !t[2];
        const la = needA ? !needB || this.a.n <= this.b.n : !needB;
        const lb = !la || (!needA && !needB);
        start = this.scan(from, to - 1, la, lb, needA, needB, 0, 0, false, true);
      }
      if (start < to && (this.counting || heap.k > 0)) this.windows(start, to);
    }
    const { docs, scores } = heap.sorted();
    const over = p.countUpTo >= 0 && this.count > p.countUpTo;
    return { docs, scores, totalHits: p.countUpTo < 0 ? null : over ? p.countUpTo : this.count, totalRelation: over ? 'gte' : 'eq', scored: this.scored };
  }

  /** Window by window from `start`, as flatRun.ts. */
  private windows(start: number, to: number): void {
    const { a, b, t, heap } = this;
    const min = this.min;
    const lastA = a.last, lastB = b.last, docsA = a.docs, docsB = b.docs, maxA = a.blockMax, maxB = b.blockMax;
    const nbA = a.nBlocks, nbB = b.nBlocks, cachedA = a.cached, cachedB = b.cached;
    let counting = this.counting;
    let worst = heap.threshold;
    let sa = a.sb, sb = b.sb;
    while (start < to) {
      if (!counting && heap.k === 0) break;
      while (sa < nbA && lastA[sa] < start) sa++;
      while (sb < nbB && lastB[sb] < start) sb++;
      const ea = sa < nbA ? lastA[sa] : NONE, eb = sb < nbB ? lastB[sb] : NONE;
      if ((ea === NONE && !t[1]) || (eb === NONE && !t[2]) || (ea === NONE && eb === NONE)) break;
      let end = ea < eb ? ea : eb;
      if (end >= to) end = to - 1;
      let ma = -1, mb = -1;
      if (sa < nbA && docsA[sa * BLOCK] <= end) {
        ma = sa < cachedA ? maxA[sa] : -1;
        if (ma < 0) ma = blockMax(a, sa);
      }
      if (sb < nbB && docsB[sb * BLOCK] <= end) {
        mb = sb < cachedB ? maxB[sb] : -1;
        if (mb < 0) mb = blockMax(b, sb);
      }
      const va = ma >= 0, vb = mb >= 0;
      let ub = 0;
      if (va) ub += ma;
      if (vb) ub += mb;
      const bound = f(ub);
      if (!t[(va ? 2 : 0) + (vb ? 1 : 0)] || bound < min || (!counting && bound <= worst)) {
        start = end + 1;
        continue;
      }
      // a clause is needed when the other alone cannot match, or (pruning) cannot compete
      const pruning = !counting || min > -Infinity;
      const fa = f(va ? ma : 0), fb = f(vb ? mb : 0);
      const needA = !t[vb ? 1 : 0] || (pruning && (fb < min || (!counting && fb <= worst)));
      const needB = !t[va ? 2 : 0] || (pruning && (fa < min || (!counting && fa <= worst)));
      if ((needA && !va) || (needB && !vb)) {
        start = end + 1;
        continue;
      }
      // leads: one needed clause (the rarer), else both
      const la = needA ? !needB || a.n <= b.n : !needB;
      const lb = !la || (!needA && !needB);
      if (a.pos < sa * BLOCK) a.pos = sa * BLOCK;
      if (b.pos < sb * BLOCK) b.pos = sb * BLOCK;
      this.scan(start, end, la, lb, needA, needB, va ? ma : -1, vb ? mb : -1, pruning, false);
      counting = this.counting;
      worst = heap.threshold;
      start = end + 1;
    }
    a.sb = sa;
    b.sb = sb;
  }

  /**
   * Visits the candidates in [start, end] from the leads (`la`, `lb`); a needed clause that does
   * not lead must be at the candidate; with `pruning`, a candidate whose bound (present clauses
   * exactly, an optional one at its window maximum `ma`/`mb`) cannot compete is dropped before
   * the optional clause is sought. With `gallop` (no window), clauses are sought by galloping and
   * the scan returns just after the doc where the count passed its threshold.
   */
  private scan(
    start: number, end: number, la: boolean, lb: boolean, needA: boolean, needB: boolean,
    ma: number, mb: number, pruning: boolean, gallop: boolean,
  ): number {
    const { a, b, t, heap } = this;
    const { allowed, visible, countUpTo } = this.p;
    const { filter, excl } = this.plan;
    const min = this.min;
    const docsA = a.docs, docsB = b.docs, nA = a.n, nB = b.n;
    let counting = this.counting;
    let count = this.count;
    let worst = heap.threshold;
    let pa = a.pos, pb = b.pos;
    if (la) while (pa < nA && docsA[pa] < start) pa++;
    if (lb) while (pb < nB && docsB[pb] < start) pb++;
    // an optional clause that does not lead is sought only for candidates that can compete
    // (in a window: when it has postings there; `gallop` passes 0: at every candidate)
    const optA = !la && !needA && ma >= 0, optB = !lb && !needB && mb >= 0;
    const known = !optA && !optB;
    let next = end + 1;
    for (;;) {
      let d = NONE;
      if (la && pa < nA) d = docsA[pa];
      if (lb && pb < nB && docsB[pb] < d) d = docsB[pb];
      if (d > end) break;
      let ja = -1, jb = -1;
      if (la && pa < nA && docsA[pa] === d) ja = pa++;
      if (lb && pb < nB && docsB[pb] === d) jb = pb++;
      if (!la && needA) {
        if (gallop) {
          a.pos = pa;
          pa = seek(a, d);
        } else while (pa < nA && docsA[pa] < d) pa++;
        if (pa >= nA || docsA[pa] !== d) continue;
        ja = pa;
      }
      if (!lb && needB) {
        if (gallop) {
          b.pos = pb;
          pb = seek(b, d);
        } else while (pb < nB && docsB[pb] < d) pb++;
        if (pb >= nB || docsB[pb] !== d) continue;
        jb = pb;
      }
      let score: number;
      if (known) {
        // every clause's presence is known: match and filters first, then (outside windows, whose
        // bound already is these maxima) a bound from the present postings' block maxima
        if (!t[(ja >= 0 ? 2 : 0) + (jb >= 0 ? 1 : 0)]) continue;
        if ((filter && !filter.has(d)) || (excl && excl.has(d)) || (allowed && !allowed.has(d)) || (visible && !visible(d))) continue;
        if (gallop && (worst > -Infinity || min > -Infinity)) {
          let cb = 0;
          if (ja >= 0) cb += maxAt(a, ja);
          if (jb >= 0) cb += maxAt(b, jb);
          const fc = f(cb);
          if (fc < min) continue;
          if (fc <= worst && min === -Infinity) {
            // it counts, and cannot enter
            if (counting && ++count > countUpTo) {
              counting = false;
              if (gallop) {
                next = d + 1;
                break;
              }
            }
            continue;
          }
        }
        let acc = 0;
        if (ja >= 0) acc += scoreAt(a, ja, d);
        if (jb >= 0) acc += scoreAt(b, jb, d);
        score = f(acc);
      } else {
        let sA = ja >= 0 ? scoreAt(a, ja, d) : 0;
        let sB = jb >= 0 ? scoreAt(b, jb, d) : 0;
        if (pruning) {
          let cb = 0;
          if (ja >= 0) cb += sA;
          else if (optA) cb += ma;
          if (jb >= 0) cb += sB;
          else if (optB) cb += mb;
          const fc = f(cb);
          if (fc < min || (!counting && fc <= worst)) continue;
        }
        if (ja < 0 && optA) {
          if (gallop) {
            a.pos = pa;
            pa = seek(a, d);
          } else while (pa < nA && docsA[pa] < d) pa++;
          if (pa < nA && docsA[pa] === d) sA = scoreAt(a, (ja = pa), d);
        }
        if (jb < 0 && optB) {
          if (gallop) {
            b.pos = pb;
            pb = seek(b, d);
          } else while (pb < nB && docsB[pb] < d) pb++;
          if (pb < nB && docsB[pb] === d) sB = scoreAt(b, (jb = pb), d);
        }
        if (!t[(ja >= 0 ? 2 : 0) + (jb >= 0 ? 1 : 0)]) continue;
        if ((filter && !filter.has(d)) || (excl && excl.has(d)) || (allowed && !allowed.has(d)) || (visible && !visible(d))) continue;
        let acc = 0;
        if (ja >= 0) acc += sA;
        if (jb >= 0) acc += sB;
        score = f(acc);
      }
      this.scored++;
      if (score < min) continue;
      if (score > worst) {
        heap.offer(score, d);
        worst = heap.threshold;
      }
      if (counting && ++count > countUpTo) {
        counting = false;
        if (gallop) {
          next = d + 1;
          break;
        }
      }
    }
    a.pos = pa;
    b.pos = pb;
    this.count = count;
    this.counting = counting;
    return next;
  }
}
