/**
 * Phrase queries over term positions, as Lucene runs them: PhraseQuery (exact: every position
 * lined up; sloppy: SloppyPhraseMatcher's match lengths within `slop`, each match weighing
 * 1 / (1 + length)) and MultiPhraseQuery (several terms at a position: `match_phrase_prefix`'s
 * expansions of the last term, ES's MultiPhrasePrefixQuery). Scored with BM25 over the phrase
 * frequency, idf summed over every term, as PhraseWeight does.
 */
import { Bitset, compareStrings } from '../base/bits';
import { bm25, bm25Weight, idf, lengthToNorm, normCache } from '../index/analysis';
import { docFreq, type TextView } from '../index/columnViews';
import { PositionReader, type TermCursor } from './positions';
import { statsOf, type QNode, type QueryContext } from './qnode';

const f = Math.fround;
const NONE: QNode = { k: 'none' };

/** One position of a phrase: its terms (one, or a prefix's expansions) and its offset in the phrase. */
export interface PhraseSlot {
  terms: string[];
  offset: number;
}

/**
 * The query `match_phrase` / `match_phrase_prefix` build from analyzed tokens: one term alone is a
 * term query; with `prefix`, the last token is expanded to up to `maxExpansions` terms of the field
 * (none: no match), and a prefix alone is a `bool` of those terms (MultiPhraseQuery's rewrite).
 */
export function buildPhrase(col: TextView, path: string, field: string, tokens: string[], slop: number, prefix: boolean, maxExpansions: number, ctx: QueryContext): QNode {
  const slots: PhraseSlot[] = tokens.map((t, i) => ({ terms: [t], offset: i }));
  if (prefix) {
    const last = slots[slots.length - 1];
    last.terms = prefixTerms(col, last.terms[0], maxExpansions, ctx.s.maxDoc);
    if (!last.terms.length) return NONE;
    if (slots.length === 1) {
      const should: QNode[] = last.terms.map((term) => ({ k: 'text', col, path, term, field, boost: 1 }));
      return should.length === 1 ? should[0] : { k: 'bool', must: [], filter: [], should, mustNot: [], msm: 1, boost: 1 };
    }
  }
  if (slots.length === 1 && slots[0].terms.length === 1) return { k: 'text', col, path, term: slots[0].terms[0], field, boost: 1 };
  return phraseNode(col, path, slots, slop, ctx);
}

/** Terms of the field starting with `prefix`, in term order, at most `max` (MultiPhrasePrefixQuery.getPrefixTerms). */
export function prefixTerms(col: TextView, prefix: string, max: number, maxDoc: number): string[] {
  const out: string[] = [];
  col.forEachTerm((t, ref) => {
    if (t.startsWith(prefix) && docFreq(ref, maxDoc) > 0) out.push(t);
  });
  return out.sort(compareStrings).slice(0, max);
}

/** A phrase node over slots (two or more positions). */
export function phraseNode(col: TextView, path: string, slots: PhraseSlot[], slop: number, ctx: QueryContext): QNode {
  return {
    k: 'scored',
    run: (scoring, mult) => {
      const m = matchPhrase(ctx, col, path, slots, slop);
      if (!scoring || !m.freqs.size) return { bits: m.bits };
      const stats = statsOf(ctx).field(path);
      let idfSum = 0;
      for (const s of slots) for (const t of s.terms) idfSum += idf(statsOf(ctx).docFreq(path, t), stats.docCount);
      const weight = bm25Weight(f(mult), f(idfSum));
      const cache = normCache(stats);
      const lens = col.lens;
      return { bits: m.bits, score: (d) => bm25(weight, m.freqs.get(d) ?? 0, cache[lengthToNorm(lens[d] - 1)]) };
    },
  };
}

/** The docs where the phrase occurs, with its frequency in each. */
export function matchPhrase(ctx: QueryContext, col: TextView, path: string, slots: PhraseSlot[], slop: number): { bits: Bitset; freqs: Map<number, number> } {
  const n = ctx.s.maxDoc;
  const bits = new Bitset(n);
  const freqs = new Map<number, number>();
  const reader = new PositionReader(ctx, col, path);
  const cursors: TermCursor[][] = slots.map((s) => s.terms.map((t) => reader.cursor(t)).filter((c): c is TermCursor => c !== null));
  if (cursors.some((c) => c.length === 0)) return { bits, freqs };
  if (slop === 0 && cursors.every((cs) => cs.length === 1 && cs[0].indexed)) {
    exactIndexed(cursors.map((cs) => cs[0]), slots.map((s) => s.offset), bits, freqs);
    return { bits, freqs };
  }
  const cand = candidates(cursors, n);
  const offsets = slots.map((s) => s.offset);
  const groups = repeatGroups(slots);
  cand.forEach((doc) => {
    const lists = cursors.map((cs) => slotPositions(cs, doc));
    const freq = slop === 0 ? exactFreq(lists, offsets) : sloppyFreq(lists, offsets, slop, groups);
    if (freq > 0) {
      bits.set(doc);
      freqs.set(doc, freq);
    }
  });
  return { bits, freqs };
}

/**
 * The common exact phrase of single terms with indexed positions, without allocations per doc:
 * the rarest term's docs drive, the others gallop to them (postings in doc order), and positions
 * are compared in place.
 */
function exactIndexed(cs: TermCursor[], offsets: number[], bits: Bitset, freqs: Map<number, number>): void {
  const k = cs.length;
  let lead = 0;
  for (let j = 1; j < k; j++) if (cs[j].len < cs[lead].len) lead = j;
  // hoisted per-term arrays (property reads in the loop cost more than the work)
  const docs = cs.map((c) => c.docs), lens = cs.map((c) => c.len);
  const starts = cs.map((c) => c.indexed!.starts), pos = cs.map((c) => c.indexed!.pos);
  const at = new Int32Array(k);
  const ldocs = docs[lead], llen = lens[lead];
  const p0 = pos[0], s0 = starts[0], off0 = offsets[0];
  outer: for (let i = 0; i < llen; i++) {
    const doc = ldocs[i];
    at[lead] = i;
    for (let j = 0; j < k; j++) {
      if (j === lead) continue;
      const dj = docs[j], lj = lens[j];
      let p = at[j];
      while (p < lj && dj[p] < doc) p++;
      at[j] = p;
      if (p >= lj) break outer;
      if (dj[p] !== doc) continue outer;
    }
    // the first slot's positions, each checked against the others at their offsets
    let freq = 0;
    next: for (let a = s0[at[0]], end = s0[at[0] + 1]; a < end; a++) {
      const base = p0[a] - off0;
      for (let j = 1; j < k; j++) {
        const pj = pos[j], sj = starts[j];
        const want = base + offsets[j];
        const stop = sj[at[j] + 1];
        let x = sj[at[j]];
        while (x < stop && pj[x] < want) x++;
        if (x >= stop || pj[x] !== want) continue next;
      }
      freq++;
    }
    if (freq > 0) {
      bits.set(doc);
      freqs.set(doc, freq);
    }
  }
}

/** Docs holding some term of every slot. */
export function candidates(cursors: TermCursor[][], n: number): Bitset {
  let cand: Bitset | null = null;
  for (const cs of cursors) {
    const b = new Bitset(n);
    for (const c of cs) for (let i = 0; i < c.len; i++) b.set(c.docs[i]);
    cand = cand ? cand.and(b) : b;
  }
  return cand ?? new Bitset(n);
}

/** Positions of a slot's terms in `doc`, merged (distinct terms never share a position). */
export function slotPositions(cs: TermCursor[], doc: number): Uint32Array {
  if (cs.length === 1) return cs[0].positionsOf(doc);
  const parts = cs.map((c) => c.positionsOf(doc)).filter((p) => p.length > 0);
  if (parts.length === 1) return parts[0];
  const all = new Uint32Array(parts.reduce((a, p) => a + p.length, 0));
  let k = 0;
  for (const p of parts) all.set(p, (k += p.length) - p.length);
  return all.sort();
}

/** ExactPhraseMatcher: the number of start positions where every slot has its term at start + offset. */
export function exactFreq(lists: Uint32Array[], offsets: number[]): number {
  const lead = lists[0];
  const idx = new Int32Array(lists.length);
  let freq = 0;
  outer: for (const p0 of lead) {
    const base = p0 - offsets[0];
    for (let k = 1; k < lists.length; k++) {
      const want = base + offsets[k];
      const l = lists[k];
      let i = idx[k];
      while (i < l.length && l[i] < want) i++;
      idx[k] = i;
      if (i >= l.length) break outer;
      if (l[i] !== want) continue outer;
    }
    freq++;
  }
  return freq;
}

/** For each slot, the slot's repeat group (slots of the same single term), -1 when its term is not repeated. */
function repeatGroups(slots: PhraseSlot[]): Int32Array | undefined {
  const first = new Map<string, number>();
  const g = new Int32Array(slots.length).fill(-1);
  let any = false;
  slots.forEach((s, k) => {
    if (s.terms.length !== 1) return;
    const at = first.get(s.terms[0]);
    if (at === undefined) first.set(s.terms[0], k);
    else {
      g[k] = g[at] = at;
      any = true;
    }
  });
  return any ? g : undefined;
}

interface PP {
  list: Uint32Array;
  i: number;
  /** Position minus the slot's offset. */
  pos: number;
  offset: number;
  ord: number;
}

/** PhraseQueue order: by position, then offset, then slot. */
const before = (a: PP, b: PP) => (a.pos !== b.pos ? a.pos < b.pos : a.offset !== b.offset ? a.offset < b.offset : a.ord < b.ord);

/**
 * SloppyPhraseMatcher (terms without repeats): the matches whose length (spread of the slots'
 * offset-adjusted positions) is within `slop`, summing 1 / (1 + length) per match.
 */
export function sloppyFreq(lists: Uint32Array[], offsets: number[], slop: number, groups?: Int32Array): number {
  const all: PP[] = lists.map((list, ord) => ({ list, i: 0, pos: list[0] - offsets[ord], offset: offsets[ord], ord }));
  const q = [...all];
  let end = -Infinity;
  // slots of a repeated term never stand on the same position (SloppyPhraseMatcher's repeats):
  // the later slot moves on; false when it runs out
  const resolve = (pp: PP): boolean => {
    if (!groups || groups[pp.ord] < 0) return true;
    for (;;) {
      const other = all.find((o) => o !== pp && groups[o.ord] === groups[pp.ord] && o.pos + o.offset === pp.pos + pp.offset);
      if (!other) return true;
      const mover = other.offset > pp.offset ? other : pp;
      if (++mover.i >= mover.list.length) return false;
      mover.pos = mover.list[mover.i] - mover.offset;
      if (mover.pos > end) end = mover.pos;
    }
  };
  for (const pp of all) if (pp.pos > end) end = pp.pos;
  for (const pp of all) if (!resolve(pp)) return 0;
  const popMin = (): PP => {
    let m = 0;
    for (let k = 1; k < q.length; k++) if (before(q[k], q[m])) m = k;
    return q.splice(m, 1)[0];
  };
  const topPos = (): number => {
    let m = q[0];
    for (let k = 1; k < q.length; k++) if (before(q[k], m)) m = q[k];
    return m.pos;
  };
  const advance = (pp: PP): boolean => {
    if (++pp.i >= pp.list.length) return false;
    pp.pos = pp.list[pp.i] - pp.offset;
    if (pp.pos > end) end = pp.pos;
    return resolve(pp);
  };
  let freq = 0;
  for (;;) {
    let pp = popMin();
    let matchLength = end - pp.pos;
    let next = topPos();
    let matched = false;
    while (advance(pp)) {
      if (pp.pos > next) {
        q.push(pp);
        if (matchLength <= slop) {
          matched = true;
          break;
        }
        pp = popMin();
        next = topPos();
        matchLength = end - pp.pos;
      } else if (end - pp.pos < matchLength) matchLength = end - pp.pos;
    }
    if (matched) {
      freq = f(freq + f(1 / (1 + matchLength)));
      continue;
    }
    if (matchLength <= slop) freq = f(freq + f(1 / (1 + matchLength)));
    return freq;
  }
}
