/**
 * Evaluates a compiled query over one searcher: the matching set as a bitset (null = every doc
 * < maxDoc; deletions are filtered later) and, when asked, per-doc scores accumulated from
 * postings into one float64 array (Lucene sums clause scores in double, then casts to float).
 */
import { Bitset } from '../base/bits';
import { bm25, bm25Weight, idf, lengthToNorm, normCache } from '../index/analysis';
import { docFreq, forEachPosting } from '../index/columnViews';
import { statsOf, type QNode, type QueryContext } from './qnode';

const f = Math.fround;

/** The outcome of a query: its matching set and how to score a matching doc. */
export interface Evaluated {
  /** null = all docs < maxDoc (before deletions). */
  bits: Bitset | null;
  /** Score of a matching doc; undefined when scores were not requested. */
  score?: (doc: number) => number;
}

/** Score shared by every match when a query is constant-scoring, else null. */
export function constantScore(n: QNode): number | null {
  switch (n.k) {
    case 'all': case 'wrap': return n.boost;
    case 'none': return 0;
    case 'const': return n.score ? n.score(1) : n.boost;
    case 'bool': return n.must.length === 0 && n.should.length === 0 ? 0 : null;
    default: return null;
  }
}

/** Runs `node`; with `scoring`, also computes scores. */
export function evaluate(node: QNode, ctx: QueryContext, scoring: boolean): Evaluated {
  const n = ctx.s.maxDoc;
  if (!scoring) return { bits: evalNode(node, ctx, null, 1) };
  const c = constantScore(node);
  if (c !== null) {
    const s = f(c);
    return { bits: evalNode(node, ctx, null, 1), score: () => s };
  }
  const acc = new Float64Array(n);
  const bits = evalNode(node, ctx, acc, 1);
  return { bits, score: (d) => f(acc[d]) };
}

function addConst(acc: Float64Array, bits: Bitset | null, s: number, n: number): void {
  if (bits === null) for (let d = 0; d < n; d++) acc[d] += s;
  else bits.forEach((d) => (acc[d] += s));
}

function evalNode(node: QNode, ctx: QueryContext, acc: Float64Array | null, mult: number): Bitset | null {
  const n = ctx.s.maxDoc;
  switch (node.k) {
    case 'all':
      if (acc) addConst(acc, null, f(mult * node.boost), n);
      return null;
    case 'none':
      return new Bitset(n);
    case 'const': {
      const b = node.bits();
      if (acc) addConst(acc, b, node.score ? node.score(mult) : f(mult * node.boost), n);
      return b;
    }
    case 'wrap': {
      const b = evalNode(node.inner, ctx, null, 1);
      if (acc) addConst(acc, b, f(mult * node.boost), n);
      return b;
    }
    case 'text': {
      const bits = new Bitset(n);
      const ref = node.col.postings(node.term);
      if (docFreq(ref, n) === 0) return bits;
      const stats = statsOf(ctx).field(node.path);
      const weight = bm25Weight(f(mult * node.boost), idf(statsOf(ctx).docFreq(node.path, node.term), stats.docCount));
      const cache = normCache(stats);
      const lens = node.col.lens;
      forEachPosting(ref, n, (d, tf) => {
        bits.set(d);
        if (acc) acc[d] += bm25(weight, tf, cache[lengthToNorm(lens[d] - 1)]);
      });
      return bits;
    }
    case 'bool':
      return evalBool(node, ctx, acc, mult);
    case 'scored': {
      const r = node.run(acc !== null, mult);
      if (acc && r.score) {
        const score = r.score;
        if (r.bits === null) for (let d = 0; d < n; d++) acc[d] += score(d);
        else r.bits.forEach((d) => (acc[d] += score(d)));
      }
      return r.bits;
    }
  }
}

/**
 * A child's matches and its own scores (each cast to float, as a Lucene scorer returns them), with
 * the enclosing boosts `mult` applied inside: what compound nodes (dis_max, function_score…)
 * combine.
 */
export function evaluateChild(node: QNode, ctx: QueryContext, scoring: boolean, mult: number): Evaluated {
  if (!scoring) return { bits: evalNode(node, ctx, null, 1) };
  const c = node.k === 'all' || node.k === 'wrap' ? f(mult * node.boost) : node.k === 'const' ? (node.score ? node.score(mult) : f(mult * node.boost)) : null;
  if (c !== null) return { bits: evalNode(node, ctx, null, 1), score: () => c };
  const acc = new Float64Array(ctx.s.maxDoc);
  const bits = evalNode(node, ctx, acc, mult);
  return { bits, score: (d) => f(acc[d]) };
}

type BoolNode = Extract<QNode, { k: 'bool' }>;

// Intersects into an owned copy (children may hand out shared bitsets).
function and(cur: Bitset | null, r: Bitset | null): Bitset | null {
  if (r === null) return cur;
  return cur === null ? r.clone() : cur.and(r);
}

function evalBool(node: BoolNode, ctx: QueryContext, acc: Float64Array | null, mult: number): Bitset | null {
  const n = ctx.s.maxDoc;
  const m = f(mult * node.boost);
  let bits: Bitset | null = null;
  for (const c of node.must) bits = and(bits, evalNode(c, ctx, acc, m));
  for (const c of node.filter) bits = and(bits, evalNode(c, ctx, null, 1));
  if (node.msm > node.should.length) return new Bitset(n); // Lucene: more required than present
  if (node.should.length) {
    const rs = node.should.map((c) => evalShould(c, ctx, acc, m));
    if (node.msm > 0) bits = and(bits, atLeast(rs, node.msm, n));
  }
  for (const c of node.mustNot) {
    const r = evalNode(c, ctx, null, 1);
    if (r === null) return new Bitset(n);
    bits = (bits ?? Bitset.all(n)).andNot(r);
  }
  return bits;
}

/**
 * A should clause whose own matches are a subset of the docs it scores (a nested bool) gets a
 * private accumulator, so a doc that fails that clause does not keep its partial score.
 */
function evalShould(c: QNode, ctx: QueryContext, acc: Float64Array | null, m: number): Bitset | null {
  if (!acc || c.k !== 'bool') return evalNode(c, ctx, acc, m);
  const priv = new Float64Array(ctx.s.maxDoc);
  const r = evalNode(c, ctx, priv, m);
  if (r === null) for (let d = 0; d < priv.length; d++) acc[d] += f(priv[d]);
  else r.forEach((d) => (acc[d] += f(priv[d])));
  return r;
}

function atLeast(rs: Array<Bitset | null>, k: number, n: number): Bitset | null {
  if (rs.some((r) => r === null) && k <= 1) return null;
  if (k === 1) {
    const u = new Bitset(n);
    for (const r of rs) u.or(r!);
    return u;
  }
  const counts = rs.length < 256 ? new Uint8Array(n) : new Uint16Array(n);
  for (const r of rs) {
    if (r === null) for (let d = 0; d < n; d++) counts[d]++;
    else r.forEach((d) => counts[d]++);
  }
  const out = new Bitset(n);
  for (let d = 0; d < n; d++) if (counts[d] >= k) out.set(d);
  return out;
}
