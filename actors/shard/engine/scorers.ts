/**
 * Doc-at-a-time scorers over a compiled query, for top-k scoring (topScore.ts): each one walks its
 * matches in doc order and bounds its score over a window of docs from per-block impacts, so the
 * collector can skip windows that cannot enter the top k.
 *
 * Scores are bit-identical to evaluate.ts: a doc's score is the same float32 contributions added in
 * double in the same order (must clauses, then matching should clauses, depth first; a nested bool
 * in a must clause adds its clauses inline, one in a should clause adds its own sum cast to float),
 * cast to float once at the end. Bounds follow the same additions with each contribution replaced
 * by its maximum; rounding is monotonic, so a bound is never below a score.
 */
import type { Bitset } from './bits';
import * as analysis from './analysis';
import { docFreq, type Postings, type PostingRef, type TextColumn } from './columns';
import { evaluate } from './evaluate';
import * as impacts from './impacts';
import type { BlockImpacts } from './impacts';
import type { QNode, QueryContext } from './query';

const f = Math.fround;
// Module-local copies: imported bindings compile to getter calls, which show in the inner loops.
const { bm25, idf, lengthToNorm, normCache } = analysis;
const { BLOCK, frontier, impactsOf } = impacts;

/** Past the last doc. */
export const NO_MORE = 0x7fffffff;

/** A scoring clause iterated in doc order. */
export interface Scorer {
  /** Current match: -1 before the first advance, NO_MORE once exhausted. */
  doc: number;
  /** Moves to the first match >= target and returns it (stays put when already there). */
  advance(target: number): number;
  /** `acc` plus this clause's score at `doc`, added as evaluate.ts adds it. */
  addTo(acc: number): number;
  /**
   * `acc` plus an upper bound of this clause's score over its matches in [from, to], added the
   * same way; -Infinity when it has no match there.
   */
  addMaxTo(acc: number, from: number, to: number): number;
  /** Last doc of the impact block holding this clause's first candidate >= target, NO_MORE if none. */
  blockEnd(target: number): number;
  /** Estimated matches (picks the lead of a conjunction). */
  readonly cost: number;
}

/** A clause with no match. */
class EmptyScorer implements Scorer {
  doc = NO_MORE;
  readonly cost = 0;
  advance(): number {
    return NO_MORE;
  }
  addTo(acc: number): number {
    return acc;
  }
  addMaxTo(): number {
    return -Infinity;
  }
  blockEnd(): number {
    return NO_MORE;
  }
}

/** A constant score on a set of docs (null = every doc < maxDoc). */
class ConstScorer implements Scorer {
  doc = -1;
  readonly cost: number;
  constructor(private readonly bits: Bitset | null, private readonly maxDoc: number, private readonly c: number) {
    this.cost = bits ? bits.count() : maxDoc;
  }
  advance(target: number): number {
    if (this.doc >= target) return this.doc;
    if (this.bits) {
      const d = target < this.maxDoc ? this.bits.next(target) : -1;
      return (this.doc = d < 0 || d >= this.maxDoc ? NO_MORE : d);
    }
    return (this.doc = target < this.maxDoc ? target : NO_MORE);
  }
  addTo(acc: number): number {
    return acc + this.c;
  }
  addMaxTo(acc: number, from: number): number {
    return from < this.maxDoc ? acc + this.c : -Infinity;
  }
  blockEnd(): number {
    return NO_MORE;
  }
}

/** BM25 of one term of a text field, with block-max bounds from impacts. */
class TermScorer implements Scorer {
  doc = -1;
  readonly cost: number;
  private i = -1;
  private readonly docs: Int32Array;
  private readonly freqs: Uint16Array | null;
  /** Postings visible to the searcher (docs < maxDoc). */
  private readonly n: number;
  private readonly nBlocks: number;
  /** Shallow cursor: the block holding the first candidate >= the last blockEnd target. */
  private sb = 0;
  private readonly imp: BlockImpacts | null;
  private readonly tfs = new Uint16Array(BLOCK);
  private readonly norms = new Uint8Array(BLOCK);
  /** Score of tf 1 per norm byte. */
  private readonly one = new Float32Array(256);

  constructor(
    private readonly postings: Postings,
    n: number,
    private readonly lens: Uint32Array,
    private readonly weight: number,
    private readonly cache: Float32Array,
  ) {
    this.docs = postings.docs;
    this.freqs = postings.freqs;
    this.n = this.cost = n;
    this.nBlocks = Math.ceil(n / BLOCK);
    this.imp = n >= BLOCK ? impactsOf(postings, lens) : null;
    for (let i = 0; i < 256; i++) this.one[i] = bm25(weight, 1, cache[i]);
  }

  advance(target: number): number {
    if (this.doc >= target) return this.doc;
    const docs = this.docs, n = this.n;
    let i = this.i + 1;
    if (i < n && docs[i] < target) {
      // gallop, then binary search in (lo, hi]
      let lo = i, step = 1, hi = i + 1;
      while (hi < n && docs[hi] < target) {
        lo = hi;
        step <<= 1;
        hi = lo + step;
      }
      if (hi > n) hi = n;
      lo++;
      while (lo < hi) {
        const m = (lo + hi) >>> 1;
        if (docs[m] < target) lo = m + 1;
        else hi = m;
      }
      i = lo;
    }
    this.i = i;
    return (this.doc = i < n ? docs[i] : NO_MORE);
  }

  addTo(acc: number): number {
    const tf = this.freqs ? this.freqs[this.i] : 1;
    const nb = lengthToNorm(this.lens[this.doc] - 1);
    return acc + (tf === 1 ? this.one[nb] : bm25(this.weight, tf, this.cache[nb]));
  }

  private lastOf(b: number): number {
    return this.docs[Math.min(this.n, b * BLOCK + BLOCK) - 1];
  }

  blockEnd(target: number): number {
    let b = this.sb;
    while (b < this.nBlocks && this.lastOf(b) < target) b++;
    this.sb = b;
    return b < this.nBlocks ? this.lastOf(b) : NO_MORE;
  }

  addMaxTo(acc: number, from: number, to: number): number {
    this.blockEnd(from);
    let best = -1;
    for (let b = this.sb; b < this.nBlocks && this.docs[b * BLOCK] <= to; b++) {
      const m = this.blockMax(b);
      if (m > best) best = m;
    }
    return best < 0 ? -Infinity : acc + best;
  }

  private blockMax(b: number): number {
    let tf: Uint16Array, norm: Uint8Array, lo: number, hi: number;
    const imp = this.imp;
    if (imp && b < imp.blocks) {
      tf = imp.tf;
      norm = imp.norm;
      lo = imp.off[b];
      hi = imp.off[b + 1];
    } else {
      tf = this.tfs;
      norm = this.norms;
      lo = 0;
      hi = frontier(this.postings, this.lens, b * BLOCK, Math.min(this.n, b * BLOCK + BLOCK), tf, norm);
    }
    let m = 0;
    for (let j = lo; j < hi; j++) {
      const s = tf[j] === 1 ? this.one[norm[j]] : bm25(this.weight, tf[j], this.cache[norm[j]]);
      if (s > m) m = s;
    }
    return m;
  }
}

/**
 * A bool query: must clauses (a conjunction led by the cheapest), filters and must_not as
 * bitsets, should clauses with minimum_should_match. Inline (the root, or a must clause) adds its
 * clauses to the caller's sum; private (a should clause) adds its own sum cast to float.
 */
class BoolScorer implements Scorer {
  doc = -1;
  readonly cost: number;
  private readonly musts: Scorer[];
  constructor(
    private readonly must: Scorer[],
    private readonly should: Scorer[],
    private readonly msm: number,
    private readonly filter: Bitset | null,
    private readonly excl: Bitset | null,
    private readonly maxDoc: number,
    private readonly inline: boolean,
  ) {
    this.musts = [...must].sort((a, b) => a.cost - b.cost);
    this.cost = must.length ? this.musts[0].cost : msm > 0 ? should.reduce((s, c) => s + c.cost, 0) : filter ? filter.count() : maxDoc;
  }

  /** First doc >= target every must clause matches. */
  private conjunction(target: number): number {
    const lead = this.musts[0];
    let d = lead.advance(target);
    outer: while (d !== NO_MORE) {
      for (let i = 1; i < this.musts.length; i++) {
        const o = this.musts[i].advance(d);
        if (o > d) {
          d = lead.advance(o);
          continue outer;
        }
      }
      return d;
    }
    return NO_MORE;
  }

  private union(target: number): number {
    let d = NO_MORE;
    for (const s of this.should) {
      const x = s.advance(target);
      if (x < d) d = x;
    }
    return d;
  }

  advance(target: number): number {
    if (this.doc >= target) return this.doc;
    const { must, should, msm, filter, excl } = this;
    for (;;) {
      let d: number;
      if (must.length) d = this.conjunction(target);
      else if (msm > 0) d = this.union(target);
      else if (filter) {
        const x = target < this.maxDoc ? filter.next(target) : -1;
        d = x < 0 || x >= this.maxDoc ? NO_MORE : x;
      } else d = target < this.maxDoc ? target : NO_MORE;
      if (d === NO_MORE) return (this.doc = NO_MORE);
      target = d + 1;
      if (filter && (must.length || msm > 0) && !filter.has(d)) continue;
      if (excl && excl.has(d)) continue;
      if (msm > 0) {
        let hits = 0;
        for (const s of should) if (s.advance(d) === d) hits++;
        if (hits < msm) continue;
      }
      return (this.doc = d);
    }
  }

  private sum(acc: number): number {
    const d = this.doc;
    for (const m of this.must) acc = m.addTo(acc);
    for (const s of this.should) if (s.advance(d) === d) acc = s.addTo(acc);
    return acc;
  }

  addTo(acc: number): number {
    return this.inline ? this.sum(acc) : acc + f(this.sum(0));
  }

  private maxSum(acc: number, from: number, to: number): number {
    for (const m of this.must) {
      acc = m.addMaxTo(acc, from, to);
      if (acc === -Infinity) return acc;
    }
    let possible = 0;
    for (const s of this.should) {
      const a = s.addMaxTo(acc, from, to);
      if (a !== -Infinity) {
        acc = a;
        possible++;
      }
    }
    return possible < this.msm ? -Infinity : acc;
  }

  addMaxTo(acc: number, from: number, to: number): number {
    if (this.inline) return this.maxSum(acc, from, to);
    const own = this.maxSum(0, from, to);
    return own === -Infinity ? own : acc + f(own);
  }

  blockEnd(target: number): number {
    let e = NO_MORE;
    for (const m of this.must) e = Math.min(e, m.blockEnd(target));
    for (const s of this.should) e = Math.min(e, s.blockEnd(target));
    return e;
  }
}

/** Most should clauses a bool may have for the top-k path (the union scans them per doc). */
const MAX_SHOULD = 64;

/**
 * Whether `node` can be scored by these scorers with bounds that hold: text, bool and constant
 * clauses, non-negative finite boosts, few should clauses, at least one text clause that scores.
 */
export function topScorable(node: QNode): boolean {
  let text = false;
  const ok = (n: QNode, scoring: boolean): boolean => {
    switch (n.k) {
      case 'text':
        text ||= scoring;
        return nonNeg(n.boost);
      case 'all': case 'const': case 'wrap':
        return nonNeg(n.boost);
      case 'none':
        return true;
      case 'bool':
        return nonNeg(n.boost) && n.should.length <= MAX_SHOULD && n.must.every((c) => ok(c, scoring)) && n.should.every((c) => ok(c, scoring));
    }
  };
  return (node.k === 'text' || node.k === 'bool') && ok(node, true) && text;
}

const nonNeg = (x: number) => Number.isFinite(x) && x >= 0;

/** Builds the scorer of a node accepted by {@link topScorable}; `mult` as in evaluate.ts. */
export function buildScorer(node: QNode, ctx: QueryContext, mult: number, inline: boolean): Scorer {
  const n = ctx.s.maxDoc;
  switch (node.k) {
    case 'none':
      return new EmptyScorer();
    case 'all':
      return new ConstScorer(null, n, f(mult * node.boost));
    case 'const':
      return new ConstScorer(node.bits(), n, node.score ? node.score(mult) : f(mult * node.boost));
    case 'wrap':
      return new ConstScorer(evaluate(node.inner, ctx, false).bits, n, f(mult * node.boost));
    case 'text':
      return termScorer(node.col, node.col.dict.get(node.term), n, f(mult * node.boost));
    case 'bool': {
      const m = f(mult * node.boost);
      if (node.msm > node.should.length) return new EmptyScorer(); // Lucene: more required than present
      const must = node.must.map((c) => buildScorer(c, ctx, m, true));
      let filter: Bitset | null = null;
      for (const c of node.filter) {
        const b = evaluate(c, ctx, false).bits;
        if (b) filter = filter ? filter.and(b) : b.clone();
      }
      const should = node.should.map((c) => buildScorer(c, ctx, m, false));
      let excl: Bitset | null = null;
      for (const c of node.mustNot) {
        const b = evaluate(c, ctx, false).bits;
        if (b === null) return new EmptyScorer();
        excl = excl ? excl.or(b) : b.clone();
      }
      return new BoolScorer(must, should, node.msm, filter, excl, n, inline);
    }
  }
}

function termScorer(col: TextColumn, ref: PostingRef | undefined, n: number, boost: number): Scorer {
  const df = docFreq(ref, n);
  if (df === 0) return new EmptyScorer();
  const stats = col.stats(n);
  const weight = f(boost * idf(df, stats.docCount));
  const cache = normCache(stats);
  if (typeof ref === 'number') {
    const one: Postings = { docs: Int32Array.of(ref), freqs: null, len: 1 } as Postings;
    return new TermScorer(one, 1, col.lens, weight, cache);
  }
  return new TermScorer(ref!, df, col.lens, weight, cache);
}
