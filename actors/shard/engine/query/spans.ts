/**
 * Span queries over term positions, as Lucene's Spans run them: a span is [start, end) with a
 * width (its inner slack). `span_near` ordered (NearSpansOrdered: each clause placed at its first
 * position after the previous one's end, total gaps within slop; `span_gap` holes) and unordered
 * (NearSpansUnordered: a queue by start, the furthest end tracked), `span_or` (by start, then end),
 * `span_not` (pre/post/dist around the excluded spans), `span_first`, `span_multi` (a span_or of
 * the expansions), `span_containing`, `span_within`, `field_masking_span`. Scored as SpanWeight:
 * BM25 of f = sum of 1 / (1 + width), idf summed over every term of the query.
 */
import { illegalArgument } from '../../../wire/esErrors';
import { compileRegExp, compileWildcard, RegExpFlag } from '../../../automaton';
import { Bitset, compareStrings } from '../base/bits';
import { bm25, bm25Weight, idf, lengthToNorm, normCache } from '../index/analysis';
import { docFreq, type TextView } from '../index/columnViews';
import { fuzzyEdits, fuzzyTerms } from './fuzzy';
import { termField } from './termScorers';
import { PositionReader } from './positions';
import { statsOf, type QNode, type QueryContext } from './qnode';

const f = Math.fround;
const END = 2147483647;
type Obj = Record<string, unknown>;

/** A span [s, e) and its width. */
export interface Span {
  s: number;
  e: number;
  w: number;
}

/** A span source over one field of a segment. */
export interface SpanSource {
  field: string;
  docs(): Bitset;
  at(doc: number): Span[];
  /** Every term the query holds (for the idf). */
  terms: string[];
}

/** NearSpansOrdered over the clauses' span lists (`gap` entries: a hole of that many positions). */
export function nearOrdered(lists: Array<Span[] | { gap: number }>, slop: number): Span[] {
  const idx = lists.map(() => 0);
  const gapAt = lists.map(() => -1);
  const start = (k: number) => { const l = lists[k]; return 'gap' in l ? gapAt[k] : idx[k] < l.length ? l[idx[k]].s : END; };
  const end = (k: number) => { const l = lists[k]; return 'gap' in l ? gapAt[k] + l.gap : idx[k] < l.length ? l[idx[k]].e : END; };
  const advanceTo = (k: number, pos: number): number => {
    const l = lists[k];
    if ('gap' in l) return (gapAt[k] = pos);
    while (idx[k] < l.length && l[idx[k]].s < pos) idx[k]++;
    return start(k);
  };
  const first = lists[0] as Span[];
  const out: Span[] = [];
  for (let i0 = 0; i0 < first.length; i0++) {
    idx[0] = i0;
    let width = 0;
    for (let k = 1; k < lists.length; k++) {
      if (advanceTo(k, end(k - 1)) === END) return out; // one clause is exhausted: no more matches
      width += start(k) - end(k - 1);
    }
    if (width <= slop) out.push({ s: first[i0].s, e: end(lists.length - 1), w: width });
  }
  return out;
}

/** NearSpansUnordered: the clauses' current spans by start; a match when maxEnd - minStart - their lengths <= slop. */
export function nearUnordered(lists: Span[][], slop: number): Span[] {
  const idx = lists.map(() => 0);
  const cur = (k: number) => lists[k][idx[k]];
  const less = (a: number, b: number) => cur(a).s < cur(b).s || (cur(a).s === cur(b).s && cur(a).e < cur(b).e);
  const min = () => lists.reduce((m, _, k) => (less(k, m) ? k : m), 0);
  let maxEnd = Math.max(...lists.map((_, k) => cur(k).e));
  const out: Span[] = [];
  for (;;) {
    const m = min();
    const total = lists.reduce((a, _, k) => a + cur(k).e - cur(k).s, 0);
    const w = maxEnd - cur(m).s - total;
    if (w <= slop) out.push({ s: cur(m).s, e: maxEnd, w });
    if (++idx[m] >= lists[m].length) return out;
    if (cur(m).e > maxEnd) maxEnd = cur(m).e;
  }
}

/** SpanOrQuery: every clause's spans by start, then end. */
const orSpans = (lists: Span[][]): Span[] => lists.flat().sort((a, b) => a.s - b.s || a.e - b.e);

/** Compiles a span query (`{span_near: {…}}`) against a segment. */
export function compileSpan(q: Obj, ctx: QueryContext, readers: Map<string, PositionReader> = new Map()): SpanSource {
  const [name, body] = Object.entries(q)[0] as [string, Obj];
  const n = ctx.s.maxDoc;
  const empty = (field: string, terms: string[] = []): SpanSource => ({ field, terms, docs: () => new Bitset(n), at: () => [] });
  const same = (subs: SpanSource[]) => {
    if (subs.some((s) => s.field !== subs[0].field)) throw illegalArgument('Clauses must have same field.');
    return subs[0].field;
  };
  const union = (subs: SpanSource[], field: string, at: (doc: number) => Span[]): SpanSource => ({
    field, terms: subs.flatMap((s) => s.terms), docs: () => subs.reduce((b, s) => b.or(s.docs()), new Bitset(n)), at,
  });
  const inter = (subs: SpanSource[], field: string, at: (doc: number) => Span[]): SpanSource => ({
    field, terms: subs.flatMap((s) => s.terms), docs: () => subs.reduce<Bitset | null>((b, s) => (b ? b.and(s.docs()) : s.docs()), null) ?? new Bitset(n), at,
  });
  switch (name) {
    case 'span_term': {
      const field = Object.keys(body).find((k) => k !== 'boost' && k !== '_name')!;
      const v = body[field];
      const value = String(typeof v === 'object' && v !== null ? ((v as Obj).value ?? (v as Obj).term) : v);
      return termSpans(ctx, field, [value], readers);
    }
    case 'span_multi': {
      const [kind, spec] = Object.entries(body.match as Obj)[0] as [string, Obj];
      const field = Object.keys(spec).find((k) => k !== 'boost' && k !== '_name' && k !== 'rewrite')!;
      const terms = expansions(ctx, kind, field, spec[field]);
      return termSpans(ctx, field, terms, readers);
    }
    case 'span_or': {
      const subs = (body.clauses as Obj[]).map((c) => compileSpan(c, ctx, readers));
      return union(subs, same(subs), (doc) => orSpans(subs.map((s) => s.at(doc))));
    }
    case 'span_near': {
      const clauses = body.clauses as Obj[];
      const parts = clauses.map((c) => ('span_gap' in c ? { gap: Number(Object.values(c.span_gap as Obj)[0]) } : compileSpan(c, ctx, readers)));
      const subs = parts.filter((p): p is SpanSource => !('gap' in p));
      const field = same(subs);
      if (subs.length === 1 && parts.length === 1) return subs[0];
      const slop = Number(body.slop ?? 0);
      return inter(subs, field, (doc) => {
        const lists = parts.map((p) => ('gap' in p ? p : p.at(doc)));
        if (lists.some((l) => Array.isArray(l) && l.length === 0)) return [];
        return body.in_order === false ? nearUnordered(lists as Span[][], slop) : nearOrdered(lists, slop);
      });
    }
    case 'span_not': {
      const inc = compileSpan(body.include as Obj, ctx, readers), exc = compileSpan(body.exclude as Obj, ctx, readers);
      same([inc, exc]);
      const pre = Number(body.dist ?? body.pre ?? 0), post = Number(body.dist ?? body.post ?? 0);
      return { ...inc, at: (doc) => { const x = exc.at(doc); return inc.at(doc).filter((a) => !x.some((b) => b.e > a.s - pre && b.s <= a.e - 1 + post)); } };
    }
    case 'span_first': {
      const inner = compileSpan(body.match as Obj, ctx, readers);
      const endAt = Number(body.end);
      return { ...inner, at: (doc) => inner.at(doc).filter((sp) => sp.s >= 0 && sp.e <= endAt) };
    }
    case 'span_containing':
    case 'span_within': {
      const big = compileSpan(body.big as Obj, ctx, readers), little = compileSpan(body.little as Obj, ctx, readers);
      const field = same([big, little]);
      const within = (l: Span, b: Span) => b.s <= l.s && l.e <= b.e;
      return inter(name === 'span_containing' ? [big, little] : [little, big], field, (doc) => {
        const bs = big.at(doc), ls = little.at(doc);
        return name === 'span_containing' ? bs.filter((b) => ls.some((l) => within(l, b))) : ls.filter((l) => bs.some((b) => within(l, b)));
      });
    }
    case 'field_masking_span': {
      const inner = compileSpan(body.query as Obj, ctx, readers);
      return { ...inner, field: String(body.field) };
    }
  }
  return empty('');
}

/** A term's (or several terms') positions as width-0 spans of one position. */
function termSpans(ctx: QueryContext, field: string, terms: string[], readers: Map<string, PositionReader>): SpanSource {
  const n = ctx.s.maxDoc;
  const def = ctx.store.mapping.field(field);
  const col = def ? ctx.store.column(def.path) : undefined;
  if (def && def.type !== 'text') throw illegalArgument(`field "${field}" was indexed without position data; cannot run SpanTermQuery (term=${terms[0] ?? ''})`);
  if (!def || col?.kind !== 'text') return { field, terms, docs: () => new Bitset(n), at: () => [] };
  let reader = readers.get(def.path);
  if (!reader) readers.set(def.path, (reader = new PositionReader(ctx, col as TextView, def.path)));
  const cursors = terms.map((t) => reader!.cursor(t)).filter((c) => c !== null);
  return {
    field, terms,
    docs: () => {
      const b = new Bitset(n);
      for (const c of cursors) for (let i = 0; i < c.len; i++) b.set(c.docs[i]);
      return b;
    },
    at: (doc) => cursors.flatMap((c) => Array.from(c.positionsOf(doc), (p) => ({ s: p, e: p + 1, w: 0 }))).sort((a, b) => a.s - b.s),
  };
}

/** The terms of a text field a span_multi's multi-term query expands to (ES rewrites it to a span_or of them). */
function expansions(ctx: QueryContext, kind: string, field: string, spec: unknown): string[] {
  const def = ctx.store.mapping.field(field);
  const col = def ? ctx.store.column(def.path) : undefined;
  if (!def || col?.kind !== 'text') return [];
  const v = typeof spec === 'object' && spec !== null ? (spec as Obj) : { value: spec };
  const ci = v.case_insensitive === true;
  let test: (t: string) => boolean;
  switch (kind) {
    case 'prefix': {
      const p = String(v.value);
      test = ci ? (t) => t.toLowerCase().startsWith(p.toLowerCase()) : (t) => t.startsWith(p);
      break;
    }
    case 'wildcard': {
      const m = compileWildcard(String(v.value ?? v.wildcard).toLowerCase(), ci);
      test = (t) => m.test(t);
      break;
    }
    case 'regexp': {
      const m = compileRegExp(String(v.value), { flags: v.flags === undefined ? RegExpFlag.ALL : Number(v.flags) & RegExpFlag.ALL, caseInsensitive: ci });
      test = (t) => m.test(t);
      break;
    }
    case 'fuzzy': {
      const term = String(v.value);
      const o = { edits: fuzzyEdits(v.fuzziness ?? 'AUTO', term), prefixLength: Number(v.prefix_length ?? 0), maxExpansions: Number(v.max_expansions ?? 50), transpositions: v.transpositions !== false, boost: 1 };
      return fuzzyTerms(termField(col, def.path, ctx), term, o, ctx.s.maxDoc).map((x) => x.term);
    }
    case 'range': {
      const lo = v.gte ?? v.gt ?? v.from, hi = v.lte ?? v.lt ?? v.to;
      test = (t) => (lo === undefined || (v.gt !== undefined ? t > String(lo) : t >= String(lo))) && (hi === undefined || (v.lt !== undefined ? t < String(hi) : t <= String(hi)));
      break;
    }
    default:
      return [];
  }
  const out: string[] = [];
  col.forEachTerm((t, ref) => {
    if (test(t) && docFreq(ref, ctx.s.maxDoc) > 0) out.push(t);
  });
  return out.sort(compareStrings);
}

/** The query node of a span source: BM25 over the sloppy frequency. */
export function spanNode(src: SpanSource, boost: number, ctx: QueryContext): QNode {
  const n = ctx.s.maxDoc;
  return {
    k: 'scored',
    run: (scoring, mult) => {
      const bits = new Bitset(n);
      const freqs = new Map<number, number>();
      src.docs().forEach((doc) => {
        const spans = src.at(doc);
        if (!spans.length) return;
        bits.set(doc);
        let fr = 0;
        for (const sp of spans) fr = f(fr + f(1 / (1 + sp.w)));
        freqs.set(doc, fr);
      });
      const def = ctx.store.mapping.field(src.field);
      const col = def ? ctx.store.column(def.path) : undefined;
      if (!scoring || !def || col?.kind !== 'text') return { bits };
      const stats = statsOf(ctx).field(def.path);
      let idfSum = 0;
      for (const t of new Set(src.terms)) idfSum += idf(statsOf(ctx).docFreq(def.path, t), stats.docCount);
      const weight = bm25Weight(f(mult * boost), f(idfSum));
      const cache = normCache(stats);
      return { bits, score: (d) => bm25(weight, freqs.get(d) ?? 0, cache[lengthToNorm(col.lens[d] - 1)]) };
    },
  };
}
