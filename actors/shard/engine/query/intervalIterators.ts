/**
 * Lucene's interval iterators over one doc, as pure functions of their sub-iterators' streams
 * (each sub-stream a list of intervals in emission order): ordered (OrderedIntervalsSource's
 * minimization), unordered (a queue by start, the right extreme tracked), block (consecutive
 * intervals: phrases), disjunction (a queue by end; intervals containing the last emitted one are
 * skipped), and the relations of interval filters. Each function yields what the Lucene iterator
 * would emit, in its order.
 */

/** An interval of positions [s, e] and its inner gaps (Lucene's `gaps()`). */
export interface Iv {
  s: number;
  e: number;
  g: number;
}

/** IntervalIterator.NO_MORE_INTERVALS (also the initial `lastStart`). */
export const POS_INF = 2147483647;

/** A sub-iterator over a list: start()/end() are -1 before the first interval, POS_INF after the last. */
class It {
  i = -1;
  constructor(readonly list: Iv[]) {}
  start(): number {
    return this.i < 0 ? -1 : this.i >= this.list.length ? POS_INF : this.list[this.i].s;
  }
  end(): number {
    return this.i < 0 ? -1 : this.i >= this.list.length ? POS_INF : this.list[this.i].e;
  }
  width(): number {
    return this.end() - this.start() + 1;
  }
  gaps(): number {
    return this.i >= 0 && this.i < this.list.length ? this.list[this.i].g : 0;
  }
  next(): number {
    if (this.i < this.list.length) this.i++;
    return this.start();
  }
}

const widths = (its: It[]) => its.reduce((a, it) => a + it.width(), 0);

/** OrderedIntervalsSource: minimal intervals with each sub-interval starting after the previous one ends. */
export function orderedIvs(lists: Iv[][]): Iv[] {
  const its = lists.map((l) => new It(l));
  const last = its.length - 1;
  const out: Iv[] = [];
  its[0].next();
  for (;;) {
    let start = POS_INF, end = POS_INF, slop = POS_INF;
    let lastStart = POS_INF;
    let minimizing = false;
    let i = 1;
    call: for (;;) {
      for (;;) {
        if (its[i - 1].end() >= lastStart) break call;
        if (i === its.length || (minimizing && its[i].start() > its[i - 1].end())) break;
        do {
          if (its[i].end() >= lastStart || its[i].next() === POS_INF) break call;
        } while (its[i].start() <= its[i - 1].end());
        i++;
      }
      start = its[0].start();
      if (start === POS_INF) {
        end = POS_INF;
        break call;
      }
      end = its[last].end();
      slop = end - start + 1 - widths(its);
      lastStart = its[last].start();
      i = 1;
      if (its[0].next() === POS_INF) break call;
      minimizing = true;
    }
    if (start === POS_INF) return out;
    out.push({ s: start, e: end, g: slop });
  }
}

/** UnorderedIntervalsSource: minimal intervals holding an interval of every sub-source (they may overlap). */
export function unorderedIvs(lists: Iv[][]): Iv[] {
  const its = lists.map((l) => new It(l));
  const n = its.length;
  const less = (a: It, b: It) => a.start() < b.start() || (a.start() === b.start() && a.end() >= b.end());
  const queue: It[] = [];
  const top = () => queue.reduce((m, x) => (less(x, m) ? x : m));
  const pop = () => queue.splice(queue.indexOf(top()), 1)[0];
  let queueEnd = -1;
  const add = (it: It) => {
    queue.push(it);
    if (it.end() > queueEnd) queueEnd = it.end();
  };
  for (const it of its) if (it.next() !== POS_INF) add(it);
  const out: Iv[] = [];
  let start = -1, end = -1;
  for (;;) {
    while (queue.length === n && top().start() === start) {
      const it = pop();
      if (it.next() !== POS_INF) add(it);
    }
    if (queue.length < n) return out;
    let slop = 0;
    do {
      start = top().start();
      end = queueEnd;
      slop = end - start + 1 - widths(its);
      if (top().end() === end) break;
      const it = pop();
      if (it.next() !== POS_INF) add(it);
    } while (queue.length === n && end === queueEnd);
    out.push({ s: start, e: end, g: slop });
  }
}

/** BlockIntervalsSource: sub-intervals one right after the other (a phrase); no gaps. */
export function blockIvs(lists: Iv[][]): Iv[] {
  const its = lists.map((l) => new It(l));
  const n = its.length;
  const out: Iv[] = [];
  for (;;) {
    if (its[0].next() === POS_INF) return out;
    let i = 1;
    while (i < n) {
      while (its[i].start() <= its[i - 1].end()) if (its[i].next() === POS_INF) return out;
      if (its[i].start() === its[i - 1].end() + 1) i++;
      else {
        if (its[0].next() === POS_INF) return out;
        i = 1;
      }
    }
    out.push({ s: its[0].start(), e: its[n - 1].end(), g: 0 });
  }
}

/** DisjunctionIntervalsSource: by end (then the later start first); intervals containing the one just emitted are passed over. */
export function orIvs(lists: Iv[][]): Iv[] {
  const its = lists.map((l) => new It(l));
  const less = (a: It, b: It) => a.end() < b.end() || (a.end() === b.end() && a.start() >= b.start());
  const queue: It[] = [];
  for (const it of its) if (it.next() !== POS_INF) queue.push(it);
  const top = () => queue.reduce((m, x) => (less(x, m) ? x : m));
  const out: Iv[] = [];
  if (!queue.length) return out;
  let cur = top();
  for (;;) {
    out.push({ s: cur.start(), e: cur.end(), g: cur.gaps() });
    const s = cur.start(), e = cur.end();
    while (queue.length) {
      const t = top();
      if (!(s >= t.start() && s <= t.end() && e >= t.start() && e <= t.end())) break;
      queue.splice(queue.indexOf(t), 1);
      if (t.next() !== POS_INF) queue.push(t);
    }
    if (!queue.length) return out;
    cur = top();
  }
}

/** The intervals of `a` in relation `type` to the intervals `b` (Intervals.containing, before, …). */
export function filterIvs(type: string, a: Iv[], b: Iv[]): Iv[] {
  const some = (test: (x: Iv, y: Iv) => boolean) => (x: Iv) => b.some((y) => test(x, y));
  const contains = some((x, y) => x.s <= y.s && y.e <= x.e);
  const within = some((x, y) => y.s <= x.s && x.e <= y.e);
  const overlaps = some((x, y) => x.s <= y.e && y.s <= x.e);
  switch (type) {
    case 'containing': return a.filter(contains);
    case 'not_containing': return a.filter((x) => !contains(x));
    case 'contained_by': return a.filter(within);
    case 'not_contained_by': return a.filter((x) => !within(x));
    case 'overlapping': return a.filter(overlaps);
    case 'not_overlapping': return a.filter((x) => !overlaps(x));
    case 'before': return a.filter(some((x, y) => x.e < y.s)); // containedBy([0, b.start - 1])
    case 'after': return a.filter(some((x, y) => x.s > y.e)); // containedBy([b.end + 1, ∞))
  }
  return a;
}
