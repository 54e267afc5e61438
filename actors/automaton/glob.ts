/**
 * Wildcard patterns without regular expressions:
 * - `simpleMatch` is ES's `Regex.simpleMatch` (only `*`; index names, privileges, settings keys);
 * - `compileWildcard` is Lucene's `WildcardQuery` syntax (`*`, `?`, `\` escapes) as an automaton.
 * Both take time bounded by pattern length x input length, never exponential.
 */
import { Budget, DEFAULT_DETERMINIZE_LIMIT, determinize, MAX_CODE_POINT, Nfa, type Fragment } from './automaton';
import type { Matcher } from './luceneRegExp';

/**
 * Does `s` match the `*` pattern `pattern` (ES Regex.simpleMatch: `*` is any string, everything else
 * literal, whole string)? With `anyChar`, `?` is any one character too (privilege and action
 * patterns). Greedy with one backtrack point, so O(pattern x input) at worst, never exponential,
 * whatever a user's pattern looks like.
 */
export function simpleMatch(pattern: string, s: string, anyChar = false): boolean {
  let p = 0, i = 0, starP = -1, starI = 0;
  while (i < s.length) {
    if (p < pattern.length && pattern[p] === '*') {
      starP = p++;
      starI = i;
    } else if (p < pattern.length && (pattern[p] === s[i] || (anyChar && pattern[p] === '?'))) {
      p++;
      i++;
    } else if (starP >= 0) {
      p = starP + 1;
      i = ++starI;
    } else return false;
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

/** `*` any string, `?` any one character, whole string: {@link simpleMatch} with `anyChar`. */
export const wildcardMatch = (pattern: string, s: string): boolean => simpleMatch(pattern, s, true);

/** A Matcher for a list of `*` patterns (`?` too with `anyChar`); matches when any does, none never matches. */
export function simpleMatcher(patterns: readonly string[], anyChar = false): Matcher {
  const isGlob = (p: string) => p.includes('*') || (anyChar && p.includes('?'));
  const exact = new Set(patterns.filter((p) => !isGlob(p)));
  const globs = patterns.filter(isGlob);
  if (globs.includes('*')) return { test: () => true };
  return { test: (s: string) => exact.has(s) || globs.some((g) => simpleMatch(g, s, anyChar)) };
}

/** Lucene ASCII case folding of one code point. */
function folded(c: number, ci: boolean): number[] {
  if (!ci || c > 128) return [c];
  const s = String.fromCodePoint(c);
  const alt = (s === s.toLowerCase() ? s.toUpperCase() : s.toLowerCase()).codePointAt(0)!;
  return alt === c ? [c] : [c, alt];
}

/**
 * Lucene WildcardQuery.toAutomaton: `*` any string, `?` any code point, `\` escapes the next one (a
 * trailing `\` is itself). `caseInsensitive` folds ASCII letters (ES `case_insensitive`).
 */
export function compileWildcard(pattern: string, caseInsensitive = false): Matcher {
  const nfa = new Nfa();
  const start = nfa.newState();
  let cur = start;
  const chars = [...pattern];
  for (let i = 0; i < chars.length; i++) {
    let c = chars[i];
    if (c === '*') {
      nfa.addRange(cur, 0, MAX_CODE_POINT, cur);
      continue;
    }
    const next = nfa.newState();
    if (c === '?') nfa.addRange(cur, 0, MAX_CODE_POINT, next);
    else {
      if (c === '\\' && i + 1 < chars.length) c = chars[++i];
      for (const cp of folded(c.codePointAt(0)!, caseInsensitive)) nfa.addRange(cur, cp, cp, next);
    }
    cur = next;
  }
  const frag: Fragment = { start, end: cur };
  const dfa = determinize(nfa, frag, new Budget(DEFAULT_DETERMINIZE_LIMIT * 10, () => pattern));
  return { test: (s: string) => dfa.run(s) };
}
