/**
 * Finite automata over Unicode code points, the way Lucene's `automaton` package builds them:
 * Thompson NFAs for the regular operators, subset construction (with a bound on the states it may
 * create) where a deterministic automaton is needed (complement, intersection, matching). A
 * compiled `Dfa` matches a string in one pass over its code points: time linear in the input,
 * whatever the pattern, which is the point (no backtracking, no ReDoS).
 */
import { EsError } from '../wire/esErrors';

/** The largest code point (Java Character.MAX_CODE_POINT). */
export const MAX_CODE_POINT = 0x10ffff;

/** Lucene Operations.DEFAULT_DETERMINIZE_WORK_LIMIT (also ES's `max_determinized_states` default). */
export const DEFAULT_DETERMINIZE_LIMIT = 10_000;

/** Most NFA states one pattern may build (repetitions are expanded): bounds memory and time. */
const MAX_NFA_STATES = 200_000;

/**
 * Work allowed for all determinizations of one pattern: every NFA state of every DFA state created
 * and every target collected counts one (like Lucene's work limit, which counts more than states),
 * at EFFORT_PER_STATE per allowed DFA state. Patterns that stay within the state limit but would
 * need huge state sets (`(a?){5000}`) are refused instead of taking seconds and gigabytes.
 */
const EFFORT_PER_STATE = 50;

/** The determinization work left for one pattern. */
export class Budget {
  private spent = 0;
  constructor(readonly limit: number, readonly what: () => string) {}
  spend(n: number): void {
    this.spent += n;
    if (this.spent > this.limit * EFFORT_PER_STATE) this.fail();
  }
  fail(): never {
    throw new TooComplexError(`Determinizing ${this.what()} would require more than ${this.limit} effort.`);
  }
}

/** Raised when an automaton would need more states than allowed (Lucene TooComplexToDeterminizeException). */
export class TooComplexError extends EsError {
  constructor(reason: string) {
    super('too_complex_to_determinize_exception', 400, reason);
    this.name = 'TooComplexError';
  }
}

/** A sorted, disjoint, non-adjacent list of inclusive code point ranges: [min0, max0, min1, max1, …]. */
export type Ranges = number[];

/** Normalizes any list of [min, max] pairs into Ranges. */
export function normalizeRanges(pairs: Ranges): Ranges {
  const idx: number[] = [];
  for (let i = 0; i < pairs.length; i += 2) if (pairs[i] <= pairs[i + 1]) idx.push(i);
  idx.sort((a, b) => pairs[a] - pairs[b]);
  const out: Ranges = [];
  for (const i of idx) {
    const lo = pairs[i], hi = pairs[i + 1];
    const n = out.length;
    if (n && lo <= out[n - 1] + 1) out[n - 1] = Math.max(out[n - 1], hi);
    else out.push(lo, hi);
  }
  return out;
}

/** Every code point not in `r`. */
export function complementRanges(r: Ranges): Ranges {
  const out: Ranges = [];
  let next = 0;
  for (let i = 0; i < r.length; i += 2) {
    if (r[i] > next) out.push(next, r[i] - 1);
    next = r[i + 1] + 1;
  }
  if (next <= MAX_CODE_POINT) out.push(next, MAX_CODE_POINT);
  return out;
}

/** Code points in both. */
export function intersectRanges(a: Ranges, b: Ranges): Ranges {
  return complementRanges(normalizeRanges([...complementRanges(a), ...complementRanges(b)]));
}

/** A non-deterministic automaton under construction: states with epsilon and range transitions. */
export class Nfa {
  readonly eps: number[][] = [];
  /** Per state: [min, max, to, min, max, to, …]. */
  readonly trans: number[][] = [];

  newState(): number {
    if (this.eps.length >= MAX_NFA_STATES) throw new TooComplexError(`the pattern needs more than ${MAX_NFA_STATES} automaton states`);
    this.eps.push([]);
    this.trans.push([]);
    return this.eps.length - 1;
  }

  addEps(from: number, to: number): void {
    this.eps[from].push(to);
  }

  addRange(from: number, min: number, max: number, to: number): void {
    this.trans[from].push(min, max, to);
  }

  get size(): number {
    return this.eps.length;
  }
}

/** A piece of an Nfa with one entry and one accepting exit. */
export interface Fragment {
  start: number;
  end: number;
}

/** A deterministic automaton: per state, sorted range starts/ends and targets; state 0 is the start. */
export class Dfa {
  constructor(
    readonly mins: Int32Array[],
    readonly maxs: Int32Array[],
    readonly targets: Int32Array[],
    readonly accept: Uint8Array,
  ) {}

  get size(): number {
    return this.accept.length;
  }

  /** The state reached from `s` on code point `c`, or -1 (dead). */
  step(s: number, c: number): number {
    const mins = this.mins[s], maxs = this.maxs[s];
    let lo = 0, hi = mins.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (c < mins[mid]) hi = mid - 1;
      else if (c > maxs[mid]) lo = mid + 1;
      else return this.targets[s][mid];
    }
    return -1;
  }

  /** Whether the whole of `s` is accepted (Lucene's run: anchored at both ends). One pass over its code points. */
  run(s: string): boolean {
    let state = 0;
    for (let i = 0; i < s.length; ) {
      const c = s.codePointAt(i)!;
      i += c > 0xffff ? 2 : 1;
      state = this.step(state, c);
      if (state < 0) return false;
    }
    return this.accept[state] === 1;
  }
}

/** Epsilon closure of a set of NFA states, as a sorted array. */
function closure(nfa: Nfa, seeds: Iterable<number>, mark: Int32Array, stamp: number): number[] {
  const out: number[] = [];
  const stack: number[] = [];
  for (const s of seeds) {
    if (mark[s] !== stamp) {
      mark[s] = stamp;
      stack.push(s);
    }
  }
  while (stack.length) {
    const s = stack.pop()!;
    out.push(s);
    for (const t of nfa.eps[s]) {
      if (mark[t] !== stamp) {
        mark[t] = stamp;
        stack.push(t);
      }
    }
  }
  return out.sort((a, b) => a - b);
}

/**
 * Subset construction of the fragment (start..accepting end) into a Dfa with at most `limit` states.
 * @throws TooComplexError past the limit
 */
export function determinize(nfa: Nfa, frag: Fragment, budget: Budget): Dfa {
  const mark = new Int32Array(nfa.size).fill(-1);
  let stamp = 0;
  const ids = new Map<string, number>();
  const sets: number[][] = [];
  const intern = (set: number[]): number => {
    budget.spend(set.length);
    const key = set.join(',');
    let id = ids.get(key);
    if (id === undefined) {
      if (sets.length >= budget.limit) budget.fail();
      id = sets.length;
      ids.set(key, id);
      sets.push(set);
    }
    return id;
  };
  intern(closure(nfa, [frag.start], mark, stamp++));
  const mins: Int32Array[] = [], maxs: Int32Array[] = [], targets: Int32Array[] = [];
  const accept: number[] = [];
  for (let d = 0; d < sets.length; d++) {
    const set = sets[d];
    accept.push(set.includes(frag.end) ? 1 : 0);
    // Elementary intervals: every range start and every range end + 1 is a boundary.
    const points: number[] = [];
    const ts: number[] = [];
    for (const s of set) {
      const tr = nfa.trans[s];
      for (let i = 0; i < tr.length; i += 3) {
        points.push(tr[i], tr[i + 1] + 1);
        ts.push(tr[i], tr[i + 1], tr[i + 2]);
      }
    }
    const bounds = [...new Set(points)].sort((a, b) => a - b);
    budget.spend(bounds.length);
    // Sweep the boundaries with the transitions sorted by start: `active` holds those covering the interval.
    const order = Array.from({ length: ts.length / 3 }, (_, i) => i * 3).sort((a, b) => ts[a] - ts[b]);
    const active: number[] = [];
    let nextT = 0;
    const rowMin: number[] = [], rowMax: number[] = [], rowTo: number[] = [];
    for (let b = 0; b + 1 < bounds.length; b++) {
      const lo = bounds[b], hi = bounds[b + 1] - 1;
      while (nextT < order.length && ts[order[nextT]] <= lo) active.push(order[nextT++]);
      let w = 0;
      for (const t of active) if (ts[t + 1] >= lo) active[w++] = t;
      active.length = w;
      if (!w) continue;
      budget.spend(w);
      const dest = active.map((t) => ts[t + 2]);
      const to = intern(closure(nfa, dest, mark, stamp++));
      const n = rowTo.length;
      if (n && rowTo[n - 1] === to && rowMax[n - 1] === lo - 1) rowMax[n - 1] = hi; // merge adjacent
      else {
        rowMin.push(lo);
        rowMax.push(hi);
        rowTo.push(to);
      }
    }
    mins.push(Int32Array.from(rowMin));
    maxs.push(Int32Array.from(rowMax));
    targets.push(Int32Array.from(rowTo));
  }
  return new Dfa(mins, maxs, targets, Uint8Array.from(accept));
}

/** A Dfa with a transition for every code point from every state (a dead state added if needed). */
function totalize(d: Dfa): { mins: number[][]; maxs: number[][]; targets: number[][]; accept: number[] } {
  const n = d.size;
  const dead = n;
  let needDead = false;
  const mins: number[][] = [], maxs: number[][] = [], targets: number[][] = [];
  for (let s = 0; s < n; s++) {
    const rm: number[] = [], rx: number[] = [], rt: number[] = [];
    let next = 0;
    for (let i = 0; i < d.mins[s].length; i++) {
      if (d.mins[s][i] > next) {
        rm.push(next); rx.push(d.mins[s][i] - 1); rt.push(dead);
        needDead = true;
      }
      rm.push(d.mins[s][i]); rx.push(d.maxs[s][i]); rt.push(d.targets[s][i]);
      next = d.maxs[s][i] + 1;
    }
    if (next <= MAX_CODE_POINT) {
      rm.push(next); rx.push(MAX_CODE_POINT); rt.push(dead);
      needDead = true;
    }
    mins.push(rm); maxs.push(rx); targets.push(rt);
  }
  const accept = [...d.accept];
  if (needDead) {
    mins.push([0]); maxs.push([MAX_CODE_POINT]); targets.push([dead]);
    accept.push(0);
  }
  return { mins, maxs, targets, accept };
}

/** Copies a Dfa into `nfa` as a fragment (its accepting states lead to the fragment's end by epsilon). */
function embed(nfa: Nfa, d: { mins: ArrayLike<number>[]; maxs: ArrayLike<number>[]; targets: ArrayLike<number>[]; accept: ArrayLike<number> }): Fragment {
  const base: number[] = [];
  for (let s = 0; s < d.accept.length; s++) base.push(nfa.newState());
  const end = nfa.newState();
  for (let s = 0; s < d.accept.length; s++) {
    for (let i = 0; i < d.mins[s].length; i++) nfa.addRange(base[s], d.mins[s][i], d.maxs[s][i], base[d.targets[s][i]]);
    if (d.accept[s]) nfa.addEps(base[s], end);
  }
  return { start: base[0], end };
}

/** Fragment accepting every string the given one rejects (Lucene Operations.complement). */
export function complementFragment(nfa: Nfa, frag: Fragment, budget: Budget): Fragment {
  const t = totalize(determinize(nfa, frag, budget));
  return embed(nfa, { ...t, accept: t.accept.map((a) => (a ? 0 : 1)) });
}

/** Fragment accepting the strings both accept (Lucene Operations.intersection: a product of Dfas). */
export function intersectFragments(nfa: Nfa, a: Fragment, b: Fragment, budget: Budget): Fragment {
  const da = determinize(nfa, a, budget);
  const db = determinize(nfa, b, budget);
  const ids = new Map<number, number>();
  const pairs: Array<[number, number]> = [];
  const intern = (x: number, y: number): number => {
    const key = x * db.size + y;
    let id = ids.get(key);
    if (id === undefined) {
      if (pairs.length >= budget.limit) budget.fail();
      budget.spend(2);
      id = pairs.length;
      ids.set(key, id);
      pairs.push([x, y]);
    }
    return id;
  };
  intern(0, 0);
  const mins: number[][] = [], maxs: number[][] = [], targets: number[][] = [], accept: number[] = [];
  for (let p = 0; p < pairs.length; p++) {
    const [x, y] = pairs[p];
    accept.push(da.accept[x] && db.accept[y] ? 1 : 0);
    const rm: number[] = [], rx: number[] = [], rt: number[] = [];
    // Both rows are sorted and disjoint: walk them together.
    let i = 0, j = 0;
    const ax = da.mins[x], bx = da.maxs[x], ay = db.mins[y], by = db.maxs[y];
    while (i < ax.length && j < ay.length) {
      const lo = Math.max(ax[i], ay[j]), hi = Math.min(bx[i], by[j]);
      if (lo <= hi) {
        rm.push(lo); rx.push(hi); rt.push(intern(da.targets[x][i], db.targets[y][j]));
      }
      if (bx[i] < by[j]) i++;
      else j++;
    }
    mins.push(rm); maxs.push(rx); targets.push(rt);
  }
  return embed(nfa, { mins, maxs, targets, accept });
}
