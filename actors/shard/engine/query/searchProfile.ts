import type { ShardQueryRequest } from '../types';

/**
 * The `searches` section of a shard's profile (ES's QueryProfiler and CollectorResult): the query
 * as one timed node (its Lucene class, the clause as description, ES's breakdown keys) and the
 * query phase's collector tree. Timings cover the whole query phase of the shard.
 */

const LUCENE_CLASSES: Record<string, string> = {
  match_all: 'MatchAllDocsQuery', match_none: 'MatchNoDocsQuery', term: 'TermQuery', terms: 'TermInSetQuery', bool: 'BooleanQuery',
  match: 'BooleanQuery', range: 'IndexOrDocValuesQuery', exists: 'FieldExistsQuery', ids: 'TermInSetQuery', prefix: 'PrefixQuery',
  wildcard: 'WildcardQuery', regexp: 'RegexpQuery', fuzzy: 'BooleanQuery', constant_score: 'ConstantScoreQuery', dis_max: 'DisjunctionMaxQuery',
  function_score: 'FunctionScoreQuery', match_phrase: 'PhraseQuery', match_phrase_prefix: 'MultiPhrasePrefixQuery', intervals: 'IntervalQuery',
  span_near: 'SpanNearQuery', span_term: 'SpanTermQuery', multi_match: 'DisjunctionMaxQuery', query_string: 'BooleanQuery',
};

const BREAKDOWN_KEYS = ['set_min_competitive_score', 'match', 'next_doc', 'score', 'compute_max_score', 'advance', 'create_weight', 'shallow_advance', 'build_scorer', 'count_weight'];

export function searchProfile(req: ShardQueryRequest, nanos: number): Record<string, unknown> {
  const q = (req.query ?? { match_all: {} }) as Record<string, unknown>;
  const name = Object.keys(q)[0] ?? 'match_all';
  const breakdown: Record<string, number> = {};
  for (const k of BREAKDOWN_KEYS) {
    breakdown[k] = k === 'build_scorer' ? nanos : 0;
    breakdown[`${k}_count`] = k === 'build_scorer' || k === 'create_weight' ? 1 : 0;
  }
  const topHits = { name: req.sort?.length ? 'SimpleFieldCollector' : 'SimpleTopScoreDocCollector', reason: 'search_top_hits', time_in_nanos: nanos };
  const aggNames = req.aggs && typeof req.aggs === 'object' ? Object.keys(req.aggs as object) : [];
  const children = aggNames.length ? [topHits, { name: `AggregatorCollector: [${aggNames.join(', ')}]`, reason: 'aggregation', time_in_nanos: nanos }] : [topHits];
  return {
    query: [{ type: LUCENE_CLASSES[name] ?? 'BooleanQuery', description: JSON.stringify(q), time_in_nanos: nanos, breakdown }],
    rewrite_time: 0,
    collector: [{ name: 'QueryPhaseCollector', reason: 'search_query_phase', time_in_nanos: nanos, children }],
  };
}
