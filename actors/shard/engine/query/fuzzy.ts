/**
 * Fuzzy term expansion as Lucene's FuzzyQuery with ES's defaults: `fuzziness` (AUTO = AUTO:3,6,
 * or 0, 1, 2 edits), a prefix that must match exactly, at most `max_expansions` terms (the most
 * similar first, then term order), each boosted by its similarity `1 - edits / min(lengths)` and
 * scored with the highest doc freq among them (TopTermsBlendedFreqScoringRewrite).
 */
import { illegalArgument } from '../../../wire/esErrors';
import { localDf, type ScoredTerm, type TermField } from './termScorers';

/** Fuzziness.asDistance: edits allowed for `term`. */
export function fuzzyEdits(fuzziness: unknown, term: string): number {
  const s = String(fuzziness).trim();
  const len = [...term].length;
  const up = s.toUpperCase();
  if (up === 'AUTO' || up.startsWith('AUTO:')) {
    let low = 3;
    let high = 6;
    if (up.startsWith('AUTO:')) {
      const [a, b] = up.slice(5).split(',');
      low = Number(a);
      high = Number(b);
      if (!Number.isInteger(low) || !Number.isInteger(high) || low < 0 || high < low) {
        throw illegalArgument(`failed to find low and high distance values`);
      }
    }
    return len < low ? 0 : len < high ? 1 : 2;
  }
  const n = Number(s);
  if (s === '' || Number.isNaN(n)) throw illegalArgument(`Invalid fuzziness value: [${s}]`);
  if (n < 0) throw illegalArgument(`Invalid fuzziness value: [${s}]`);
  if (!Number.isInteger(n)) return Math.min(2, Math.floor(n)); // float fuzziness: its integer part, as ES reads it
  if (n > 2) throw illegalArgument(`Valid edit distances are [0, 1, 2] but was [${n}]`);
  return n;
}

/** Optimal-string-alignment distance of a and b (code points), or max + 1 once it exceeds `max`. */
export function editDistance(a: number[], b: number[], max: number, transpositions: boolean): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const m = b.length;
  let prev2 = new Array<number>(m + 1).fill(0);
  let prev = Array.from({ length: m + 1 }, (_, j) => j);
  let cur = new Array<number>(m + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let rowMin = cur[0];
    for (let j = 1; j <= m; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (transpositions && i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, prev2[j - 2] + 1);
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return prev[m];
}

export interface FuzzyOptions {
  edits: number;
  prefixLength: number;
  maxExpansions: number;
  transpositions: boolean;
  boost: number;
}

/** The expansions of `term` in `field`, boosted and with blended doc freqs. */
export function fuzzyTerms(field: TermField, term: string, o: FuzzyOptions, maxDoc: number): ScoredTerm[] {
  const q = [...term].map((c) => c.codePointAt(0)!);
  const prefix = q.slice(0, o.prefixLength);
  const rest = q.slice(o.prefixLength);
  const found: Array<{ term: string; sim: number; df: number }> = [];
  field.forEachTerm((t) => {
    if (Math.abs(t.length - term.length) > o.edits * 2 + 2) return; // cheap reject before code points
    const cps = [...t].map((c) => c.codePointAt(0)!);
    if (cps.length < prefix.length || prefix.some((c, i) => cps[i] !== c)) return;
    const ed = editDistance(rest, cps.slice(prefix.length), o.edits, o.transpositions);
    if (ed > o.edits || localDf(field, t, maxDoc) === 0) return;
    const sim = ed === 0 ? 1 : Math.fround(1 - ed / Math.min(cps.length, q.length));
    found.push({ term: t, sim, df: field.df(t) });
  });
  found.sort((a, b) => b.sim - a.sim || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0));
  const top = found.slice(0, o.maxExpansions);
  const maxDf = top.length > 1 ? Math.max(...top.map((x) => x.df)) : top[0]?.df ?? 0;
  return top.map((x) => ({ field, term: x.term, boost: Math.fround(o.boost * x.sim), df: top.length > 1 ? maxDf : x.df }));
}
