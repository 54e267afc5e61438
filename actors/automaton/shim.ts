/**
 * Patterns compiled once and shared (role descriptors are recompiled often), and a RegExp-typed
 * wrapper for call sites typed `RegExp` that only ever call `test`.
 */
import { compileRegExp, type Matcher } from './luceneRegExp';
import { compileWildcard } from './glob';

const CACHE_MAX = 2048;
const cache = new Map<string, Matcher>();

function cached(key: string, build: () => Matcher): Matcher {
  let m = cache.get(key);
  if (!m) {
    m = build();
    if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
    cache.set(key, m);
  }
  return m;
}

/**
 * ES `Automatons.patterns` for names (index names in roles, application names…): `/…/` is a Lucene
 * regexp, anything else a wildcard (`*`, `?`, `\` escapes). Any pattern matching is a match.
 * @throws EsError 400 for an invalid `/…/` regexp
 */
export function namePatternsMatcher(patterns: readonly string[]): Matcher {
  const ms = patterns.map((p) =>
    p.length > 1 && p.startsWith('/') && p.endsWith('/')
      ? cached(`r${p}`, () => compileRegExp(p.slice(1, -1)))
      : cached(`w${p}`, () => compileWildcard(p)),
  );
  return { test: (s: string) => ms.some((m) => m.test(s)) };
}

/** A RegExp whose `test` is the Matcher's (linear time); nothing else of RegExp is meant to be used. */
class MatcherRegExp extends RegExp {
  constructor(private readonly m: Matcher) {
    super('(?!)');
  }
  override test(s: string): boolean {
    return this.m.test(String(s));
  }
}

/** Wraps a Matcher for code typed with RegExp that only calls `test`. */
export const matcherAsRegExp = (m: Matcher): RegExp => new MatcherRegExp(m);
