/**
 * `rescore` (ES's QueryRescorer): the top `window_size` hits of the shard are scored again by the
 * rescore query, the two scores combined by `score_mode` with their weights, and the window
 * re-sorted; hits past the window keep their order after it. Rescorers run one after the other.
 */
import { illegalArgument } from '../../../wire/esErrors';
import type { ShardQueryRequest } from '../types';
import { evaluate } from './evaluate';
import type { QueryContext } from './qnode';

type Rescore = NonNullable<ShardQueryRequest['rescore']>[number];
const f = Math.fround;

/** How many top hits the query phase must collect for the rescorers (at least `k`). */
export function rescoreDepth(req: ShardQueryRequest, k: number, maxWindow: number): number {
  let depth = k;
  for (const r of req.rescore ?? []) {
    if (r.windowSize > maxWindow) {
      throw illegalArgument(
        `Rescore window [${r.windowSize}] is too large. It must be less than [${maxWindow}]. This prevents allocating massive heaps for storing the results to be rescored. This limit can be set by changing the [index.max_rescore_window] index level setting.`,
      );
    }
    depth = Math.max(depth, r.windowSize);
  }
  return depth;
}

const COMBINE: Record<Rescore['scoreMode'], (a: number, b: number) => number> = {
  total: (a, b) => f(a + b),
  multiply: (a, b) => f(a * b),
  avg: (a, b) => f((a + b) / 2),
  max: (a, b) => Math.max(a, b),
  min: (a, b) => Math.min(a, b),
};

/** Rescores `docs` (best first) in place of their scores; returns the new order and scores. */
export function applyRescore(ctx: QueryContext, rescorers: Rescore[], docs: number[], scoreOf: (d: number) => number): { docs: number[]; scores: Map<number, number> } {
  const scores = new Map<number, number>();
  for (const d of docs) scores.set(d, f(scoreOf(d)));
  let order = docs;
  for (const r of rescorers) {
    const window = order.slice(0, r.windowSize);
    const rest = order.slice(r.windowSize);
    const ev = evaluate(ctx.compile!(r.query), ctx, true);
    for (const d of window) {
      const primary = f(scores.get(d)! * r.queryWeight);
      const matches = ev.bits === null || ev.bits.has(d);
      scores.set(d, matches ? COMBINE[r.scoreMode](primary, f(ev.score!(d) * r.rescoreQueryWeight)) : primary);
    }
    window.sort((a, b) => scores.get(b)! - scores.get(a)! || a - b);
    order = [...window, ...rest];
  }
  return { docs: order, scores };
}
