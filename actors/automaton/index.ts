// Public names of the automaton package (STYLE.md: other folders import only this file): regular
// expressions and wildcards matched in linear time (no backtracking RegExp on user input).
export { compileRegExp, parseLuceneRegExp, RegExpFlag } from './luceneRegExp';
export type { Matcher, RegExpOptions } from './luceneRegExp';
export { simpleMatch, simpleMatcher, wildcardMatch, compileWildcard } from './glob';
export { TooComplexError, DEFAULT_DETERMINIZE_LIMIT, MAX_CODE_POINT } from './automaton';
export { linearRegExp } from './re2';
export type { LinearRegExp } from './re2';
export { namePatternsMatcher, matcherAsRegExp } from './shim';
