/**
 * The `intervals` query over term positions, as Lucene's interval sources run it: for each doc a
 * source yields its intervals [start, end] in the order Lucene's iterators emit them (terms by
 * position; `ordered`, `unordered` and phrase blocks as minimal intervals; disjunctions by end,
 * dropping intervals that contain the one just emitted), and each combination consumes its
 * sub-sources' streams exactly as Lucene's iterators do. A match scores boost * f / (f + 1), f
 * summing 1 / (interval length - minimal extent + 1) (IntervalQuery's saturation).
 */
import { compileRegExp, compileWildcard, RegExpFlag } from '../../../automaton';
import { illegalArgument } from '../../../wire/esErrors';
import { Bitset, compareStrings } from '../base/bits';
import { analyzerFor } from '../index/analyzers';
import { docFreq, type TextView } from '../index/columnViews';
import { fuzzyEdits, fuzzyTerms } from './fuzzy';
import { termField } from './termScorers';
import { POS_INF, blockIvs, filterIvs, orIvs, orderedIvs, unorderedIvs, type Iv } from './intervalIterators';
import { PositionReader, type TermCursor } from './positions';
import type { QNode, QueryContext } from './qnode';

const f = Math.fround;

/** An interval source compiled against one segment. */
export interface Source {
  /** Docs that may have intervals (an approximation). */
  docs(): Bitset;
  /** The doc's intervals, in emission order. */
  at(doc: number): Iv[];
  /** The shortest interval the source can produce (Lucene's minExtent). */
  minExtent: number;
  /** A disjunction whose sub-sources a combination may take apart (Intervals.or). */
  alternatives?: Source[];
}

/** A source matching nothing. */
export const EMPTY_SOURCE = (n: number): Source => ({ docs: () => new Bitset(n), at: () => [], minExtent: 1 });

/** A term's positions as one-position intervals. */
export function termSource(ctx: QueryContext, col: TextView, path: string, term: string, readers: Map<string, PositionReader>): Source {
  let reader = readers.get(path);
  if (!reader) readers.set(path, (reader = new PositionReader(ctx, col, path)));
  const c: TermCursor | null = reader.cursor(term);
  const n = ctx.s.maxDoc;
  if (!c) return EMPTY_SOURCE(n);
  return {
    minExtent: 1,
    docs: () => {
      const b = new Bitset(n);
      for (let i = 0; i < c.len; i++) b.set(c.docs[i]);
      return b;
    },
    at: (doc) => Array.from(c.positionsOf(doc), (p) => ({ s: p, e: p, g: 0 })),
  };
}

/** Intervals.or: the union of the sub-sources (kept apart for the combinations that pull disjunctions up). */
export function orSource(subs: Source[], n: number): Source {
  const live = subs.filter((s) => s !== undefined);
  if (live.length === 0) return EMPTY_SOURCE(n);
  if (live.length === 1) return live[0];
  return {
    minExtent: Math.min(...live.map((s) => s.minExtent)),
    docs: () => live.reduce((b, s) => b.or(s.docs()), new Bitset(n)),
    at: (doc) => orIvs(live.map((s) => s.at(doc))),
    alternatives: live.flatMap((s) => s.alternatives ?? [s]),
  };
}

/** Combinations taking their disjunctions apart (Disjunctions.pullUp), at most 100 variants. */
const MAX_PULL_UP = 100;
function pullUp(subs: Source[], build: (ss: Source[]) => Source, n: number): Source {
  let variants: Source[][] = [[]];
  for (const s of subs) {
    const alts = s.alternatives ?? [s];
    if (variants.length * alts.length > MAX_PULL_UP) return build(subs);
    variants = variants.flatMap((v) => alts.map((a) => [...v, a]));
  }
  return variants.length === 1 ? build(variants[0]) : orSource(variants.map(build), n);
}

const conj = (subs: Source[], n: number, minExtent: number, at: (lists: Iv[][]) => Iv[]): Source => ({
  minExtent,
  docs: () => subs.reduce<Bitset | null>((b, s) => (b ? b.and(s.docs()) : s.docs()), null) ?? new Bitset(n),
  at: (doc) => {
    const lists = subs.map((s) => s.at(doc));
    return lists.some((l) => l.length === 0) ? [] : at(lists);
  },
});

const sumExtent = (subs: Source[]) => subs.reduce((a, s) => a + s.minExtent, 0);

/** IntervalBuilder.combineSources: a phrase when ordered with no gaps, else (un)ordered, bounded by max_gaps. */
export function combine(subs: Source[], maxGaps: number, ordered: boolean, n: number): Source {
  if (subs.length === 0) return EMPTY_SOURCE(n);
  if (subs.length === 1) return subs[0];
  if (maxGaps === 0 && ordered) return pullUp(subs, (ss) => conj(ss, n, sumExtent(ss), blockIvs), n);
  const inner = ordered ? pullUp(subs, (ss) => conj(ss, n, sumExtent(ss), orderedIvs), n) : conj(subs, n, sumExtent(subs), unorderedIvs);
  if (maxGaps < 0) return inner;
  return { minExtent: inner.minExtent, docs: inner.docs, at: (doc) => inner.at(doc).filter((iv) => iv.g <= maxGaps) };
}

/** A filter rule (`containing`, `before`, …): the intervals of `a` related so to some interval of `b`. */
export function filtered(type: string, a: Source, b: Source): Source {
  const negative = type.startsWith('not_');
  return {
    minExtent: a.minExtent,
    docs: () => (negative ? a.docs() : a.docs().and(b.docs())),
    at: (doc) => {
      const ai = a.at(doc);
      return ai.length ? filterIvs(type, ai, b.at(doc)) : ai;
    },
  };
}

/** The query node of a compiled source: matches where it has intervals, scored by saturation. */
export function intervalsNode(src: Source, boost: number, n: number): QNode {
  return {
    k: 'scored',
    run: (scoring, mult) => {
      const bits = new Bitset(n);
      const freqs = new Map<number, number>();
      src.docs().forEach((doc) => {
        const ivs = src.at(doc);
        if (!ivs.length) return;
        bits.set(doc);
        if (!scoring) return;
        let freq = 0;
        for (const iv of ivs) if (iv.s !== POS_INF) freq = f(freq + 1 / Math.max(iv.e - iv.s + 1 - src.minExtent + 1, 1));
        freqs.set(doc, freq);
      });
      if (!scoring) return { bits };
      const b = f(mult * boost);
      return { bits, score: (d) => { const fr = freqs.get(d) ?? 0; return f(f(b * fr) / f(1 + fr)); } };
    },
  };
}

// ---- compiling the rules ----

type Obj = Record<string, unknown>;

/** How many terms a multi-term rule may expand to (IndexSearcher's max clause count). */
export const MAX_INTERVAL_EXPANSIONS = 4096;

/** What compiling a rule needs: the query's field, the segment, the readers of positions per field. */
export interface IntervalEnv {
  ctx: QueryContext;
  field: string;
  readers: Map<string, PositionReader>;
  analyze: (analyzer: unknown, text: string) => string[];
  /** A text column with positions for a field (use_field), or an error naming why not. */
  column: (field: string) => { col: TextView | undefined; path: string };
  /** Terms of a column accepted by a test, in term order (multi-term rules). */
  expand: (col: TextView, test: (t: string) => boolean, label: string) => string[];
  fuzzy: (col: TextView, path: string, spec: Obj, term: string) => string[];
}

/** Compiles one rule (`{match: {…}}`, `{all_of: {…}}`, …) to a source. */
export function compileRule(rule: Obj, env: IntervalEnv): Source {
  const [name, body] = Object.entries(rule)[0] as [string, Obj];
  const n = env.ctx.s.maxDoc;
  const own = () => env.column(typeof body.use_field === 'string' ? body.use_field : env.field);
  const terms = (col: TextView | undefined, path: string, ts: string[]) =>
    col ? orSource(ts.map((t) => termSource(env.ctx, col, path, t, env.readers)), n) : EMPTY_SOURCE(n);
  let src: Source;
  switch (name) {
    case 'match': {
      const { col, path } = own();
      const tokens = env.analyze(body.analyzer, String(body.query));
      const subs = col ? tokens.map((t) => termSource(env.ctx, col, path, t, env.readers)) : [];
      src = col ? combine(subs, Number(body.max_gaps ?? -1), body.ordered === true, n) : EMPTY_SOURCE(n);
      break;
    }
    case 'all_of':
      src = combine((body.intervals as Obj[]).map((r) => compileRule(r, env)), Number(body.max_gaps ?? -1), body.ordered === true, n);
      break;
    case 'any_of':
      src = orSource((body.intervals as Obj[]).map((r) => compileRule(r, env)), n);
      break;
    case 'prefix': {
      const { col, path } = own();
      const p = normalize(env, body, String(body.prefix));
      src = terms(col, path, col ? env.expand(col, (t) => t.startsWith(p), `${p}*`) : []);
      break;
    }
    case 'wildcard':
    case 'regexp': {
      const { col, path } = own();
      const pattern = normalize(env, body, String(body.pattern));
      const m = name === 'wildcard' ? compileWildcard(pattern, false) : compileRegExp(pattern, { flags: RegExpFlag.ALL });
      src = terms(col, path, col ? env.expand(col, (t) => m.test(t), pattern) : []);
      break;
    }
    case 'range': {
      const { col, path } = own();
      const lo = normalize(env, body, String(body.gte ?? body.gt)), hi = normalize(env, body, String(body.lte ?? body.lt));
      const inLo = body.gte !== undefined, inHi = body.lte !== undefined;
      const test = (t: string) => (inLo ? t >= lo : t > lo) && (inHi ? t <= hi : t < hi);
      src = terms(col, path, col ? env.expand(col, test, `{${lo}-${hi}}`) : []);
      break;
    }
    case 'fuzzy': {
      const { col, path } = own();
      src = terms(col, path, col ? env.fuzzy(col, path, body, normalize(env, body, String(body.term))) : []);
      break;
    }
    default:
      return EMPTY_SOURCE(n);
  }
  const filter = body.filter as Obj | undefined;
  if (filter) {
    const [type, inner] = Object.entries(filter)[0] as [string, Obj];
    src = filtered(type, src, compileRule(inner, env));
  }
  return src;
}

/** The search analyzer's normalization of a multi-term rule's text (lowercase for the standard analyzer). */
function normalize(env: IntervalEnv, body: Obj, text: string): string {
  return body.analyzer === 'whitespace' || body.analyzer === 'keyword' ? text : text.toLowerCase();
}

/**
 * The `intervals` query (IntervalQueryBuilder.doToQuery): unmapped fields match nothing; fields
 * without positions and non-text fields are refused with ES's texts.
 */
export function compileIntervals(body: Obj, ctx: QueryContext): QNode {
  const [field, spec] = Object.entries(body)[0] as [string, Obj];
  const boost = spec.boost === undefined ? 1 : f(Number(spec.boost));
  const rule = Object.fromEntries(Object.entries(spec).filter(([k]) => k !== 'boost' && k !== '_name'));
  const n = ctx.s.maxDoc;
  const column = (name: string) => {
    const def = ctx.store.mapping.field(name);
    if (!def) return { col: undefined, path: name };
    if (def.type === 'keyword') throw illegalArgument(`Cannot create intervals over field [${name}] with no positions indexed`);
    if (def.type !== 'text') throw illegalArgument(`Can only use interval queries on text fields - not on [${name}] which is of type [${def.type}]`);
    const col = ctx.store.column(def.path);
    return { col: col?.kind === 'text' ? col : undefined, path: def.path };
  };
  if (!ctx.store.mapping.field(field)) return { k: 'none' };
  column(field);
  const env: IntervalEnv = {
    ctx, field, readers: new Map(), column,
    analyze: (analyzer, text) => analyzerFor(analyzer, 'intervals', ctx.store.index)(text),
    expand: (col, test, label) => {
      const out: string[] = [];
      col.forEachTerm((t, ref) => {
        if (test(t) && docFreq(ref, n) > 0) out.push(t);
      });
      if (out.length > MAX_INTERVAL_EXPANSIONS) throw illegalArgument(`Automaton [${label}] expanded to too many terms (limit ${MAX_INTERVAL_EXPANSIONS})`);
      return out.sort(compareStrings);
    },
    fuzzy: (col, path, spec, term) => {
      const edits = fuzzyEdits(spec.fuzziness ?? 'AUTO', term);
      const o = { edits, prefixLength: Number(spec.prefix_length ?? 0), maxExpansions: MAX_INTERVAL_EXPANSIONS, transpositions: spec.transpositions !== false, boost: 1 };
      return fuzzyTerms(termField(col, path, ctx), term, o, n).map((t) => t.term);
    },
  };
  return intervalsNode(compileRule(rule, env), boost, n);
}
