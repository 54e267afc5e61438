/**
 * Compound queries that combine their children's scores other than by adding them: `dis_max`,
 * `boosting` and `function_score` (ES's FunctionScoreQuery: functions combined by `score_mode`,
 * then with the query score by `boost_mode`, capped by `max_boost`, filtered by `min_score`).
 */
import { illegalArgument } from '../../../wire/esErrors';
import { Bitset } from '../base/bits';
import { evaluateChild } from './evaluate';
import { disMax } from './termScorers';
import { bindFunction } from './scoreFunctions';
import type { QNode, QueryContext } from './qnode';

const f = Math.fround;
type Obj = Record<string, unknown>;

const boostOf = (b: Obj) => (b.boost === undefined ? 1 : f(Number(b.boost)));

/** `dis_max`: the best clause's score plus `tie_breaker` times the others'. */
export function compileDisMax(b: Obj, ctx: QueryContext): QNode {
  const queries = (b.queries as unknown[]).map((q) => ctx.compile!(q));
  const tie = b.tie_breaker === undefined ? 0 : f(Number(b.tie_breaker));
  if (queries.length === 1) {
    const boost = boostOf(b);
    return boost === 1 ? queries[0] : { k: 'bool', must: queries, filter: [], should: [], mustNot: [], msm: 0, boost };
  }
  return disMax(queries, tie, boostOf(b), ctx);
}

/** `boosting`: the positive query's score, times `negative_boost` where the negative query matches. */
export function compileBoosting(b: Obj, ctx: QueryContext): QNode {
  const positive = ctx.compile!(b.positive);
  const negative = ctx.compile!(b.negative);
  const nb = f(Number(b.negative_boost));
  const boost = boostOf(b);
  return {
    k: 'scored',
    run: (scoring, mult) => {
      const pos = evaluateChild(positive, ctx, scoring, f(mult * boost));
      if (!scoring) return { bits: pos.bits };
      const neg = evaluateChild(negative, ctx, false, 1).bits;
      const hit = (d: number) => neg === null || neg.has(d);
      return { bits: pos.bits, score: (d) => (hit(d) ? f(pos.score!(d) * nb) : pos.score!(d)) };
    },
  };
}

const FS_KEYS = ['query', 'functions', 'score_mode', 'boost_mode', 'max_boost', 'min_score', 'boost', '_name'];

/** A body not normalized by the request parser: its one inline function (or `weight`). */
function inlineFunctions(b: Obj): Obj[] {
  const fn = Object.keys(b).find((k) => !FS_KEYS.includes(k));
  return fn === undefined ? [] : [{ [fn]: b[fn] }];
}

type Combine = (q: number, fn: number, maxBoost: number) => number;

/** CombineFunction (boost_mode). */
const COMBINE: Record<string, Combine> = {
  multiply: (q, fn, m) => f(q * Math.min(fn, m)),
  replace: (_q, fn, m) => f(Math.min(fn, m)),
  sum: (q, fn, m) => f(q + Math.min(fn, m)),
  avg: (q, fn, m) => f((q + Math.min(fn, m)) / 2),
  max: (q, fn, m) => f(Math.max(q, Math.min(fn, m))),
  min: (q, fn, m) => f(Math.min(q, Math.min(fn, m))),
};

/** `function_score`. */
export function compileFunctionScore(b: Obj, ctx: QueryContext): QNode {
  const inner = ctx.compile!(b.query ?? { match_all: {} });
  const entries = (b.functions as Obj[] | undefined) ?? inlineFunctions(b);
  const boost = boostOf(b);
  const maxBoost = b.max_boost === undefined ? 3.4028234663852886e38 : f(Number(b.max_boost));
  const minScore = b.min_score === undefined ? undefined : f(Number(b.min_score));
  const combine = COMBINE[String(b.boost_mode ?? 'multiply')];
  // one function without a filter runs alone (score mode "first"), as FunctionScoreQueryBuilder builds it
  const single = entries.length === 1 && entries[0].filter === undefined;
  const scoreMode = single ? 'first' : String(b.score_mode ?? 'multiply');
  return {
    k: 'scored',
    run: (scoring, mult) => {
      const needScores = scoring || minScore !== undefined;
      const q = evaluateChild(inner, ctx, needScores, f(mult * boost));
      if (!needScores) return { bits: q.bits };
      const fns = entries.map((e) => ({ ...bindFunction(e, ctx), filter: e.filter === undefined ? null : evaluateChild(ctx.compile!(e.filter), ctx, false, 1).bits }));
      const on = (i: number, d: number) => fns[i].filter === null || fns[i].filter!.has(d);
      const factorOf = (d: number, s: number): number => {
        let factor = 1;
        switch (scoreMode) {
          case 'first':
            for (let i = 0; i < fns.length; i++) {
              if (on(i, d)) return fns[i].score(d, s);
            }
            return 1;
          case 'max': {
            let m = -Infinity;
            for (let i = 0; i < fns.length; i++) if (on(i, d)) m = Math.max(m, fns[i].score(d, s));
            return m === -Infinity ? 1 : m;
          }
          case 'min': {
            let m = Infinity;
            for (let i = 0; i < fns.length; i++) if (on(i, d)) m = Math.min(m, fns[i].score(d, s));
            return m === Infinity ? 1 : m;
          }
          case 'multiply':
            for (let i = 0; i < fns.length; i++) if (on(i, d)) factor *= fns[i].score(d, s);
            return factor;
          default: {
            let total = 0;
            let weights = 0;
            for (let i = 0; i < fns.length; i++) {
              if (!on(i, d)) continue;
              total += fns[i].score(d, s);
              weights += fns[i].weight;
            }
            if (weights === 0) return 1;
            return scoreMode === 'avg' ? total / weights : total;
          }
        }
      };
      const score = (d: number): number => {
        const s = q.score!(d);
        if (!fns.length) return s;
        const out = combine(s, factorOf(d, s), maxBoost);
        if (out < 0 || Number.isNaN(out)) throw illegalArgument(`function score query returned an invalid score: ${out} for doc: ${d}`);
        return out;
      };
      if (minScore === undefined) return { bits: q.bits, score };
      // min_score filters the matches by the final score
      const n = ctx.s.maxDoc;
      const bits = new Bitset(n);
      const cache = new Map<number, number>();
      const keep = (d: number) => {
        const s = score(d);
        if (s >= minScore) {
          bits.set(d);
          cache.set(d, s);
        }
      };
      if (q.bits === null) for (let d = 0; d < n; d++) keep(d);
      else q.bits.forEach(keep);
      return { bits, score: scoring ? (d) => cache.get(d)! : undefined };
    },
  };
}
