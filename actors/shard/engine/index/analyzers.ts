/**
 * The built-in analyzers a query may name (`analyzer` of match, multi_match, query_string…):
 * `standard` (analysis.ts), `simple` (runs of letters, lowercased), `whitespace` (split on
 * whitespace, case kept), `keyword` (the whole text), `stop` (simple without English stop words).
 * Index-time analysis is `standard` for every text field.
 */
import { EsError } from '../../../wire/esErrors';
import { analyze } from './analysis';

export type Analyzer = (text: string) => string[];

/** Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET (the `stop` analyzer's default). */
const ENGLISH_STOP = new Set([
  'a', 'an', 'and', 'are', 'as', 'at', 'be', 'but', 'by', 'for', 'if', 'in', 'into', 'is', 'it', 'no', 'not', 'of', 'on', 'or',
  'such', 'that', 'the', 'their', 'then', 'there', 'these', 'they', 'this', 'to', 'was', 'will', 'with',
]);

const simple: Analyzer = (text) => (text.match(/\p{L}+/gu) ?? []).map((t) => t.toLowerCase());

export const ANALYZERS: Readonly<Record<string, Analyzer>> = {
  standard: analyze,
  default: analyze,
  simple,
  whitespace: (text) => text.split(/\s+/).filter((t) => t.length > 0),
  keyword: (text) => [text],
  stop: (text) => simple(text).filter((t) => !ENGLISH_STOP.has(t)),
};

/**
 * The analyzer named `name` (undefined: the field's own, `standard`).
 * @throws EsError 400 `query_shard_exception` `[<query>] analyzer [x] not found`, as ES.
 */
export function analyzerFor(name: unknown, query: string, index: string): Analyzer {
  if (name === undefined || name === null) return analyze;
  const a = ANALYZERS[String(name)];
  if (!a) throw new EsError('query_shard_exception', 400, `[${query}] analyzer [${String(name)}] not found`, { meta: { index } });
  return a;
}
