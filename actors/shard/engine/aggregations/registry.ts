import type { AggregationType } from './aggTypes';
import { avgAgg, maxAgg, minAgg, sumAgg, valueCountAgg } from './metrics';
import { termsAgg } from './terms';
import { dateHistogramAgg } from './dateHistogram';
import { compositeAgg } from './aggComposite';
import { cardinalityAgg, percentilesAgg } from './aggMetrics';
import { extendedStatsAgg, statsAgg } from './stats';
import { filterAgg, filtersAgg, missingAgg } from './filters';
import { dateRangeAgg, rangeAgg } from './ranges';
import { histogramAgg } from './histogram';
import { topHitsAgg } from './topHits';
import { ipRangeAgg } from './ipRange';
import { geotileGridAgg } from './geotile';
import { nestedAgg, reverseNestedAgg } from './nestedAggs';

/**
 * Every aggregation type this engine runs, by its request name (ES's SearchModule registrations).
 * To add one: write its AggregationType (params, checks, collector, merge, render) in its own
 * module and list it here; parsing, collection, reduction and rendering find it by name.
 */
export const AGGREGATIONS: Readonly<Record<string, AggregationType>> = {
  terms: termsAgg,
  min: minAgg,
  max: maxAgg,
  avg: avgAgg,
  sum: sumAgg,
  value_count: valueCountAgg,
  date_histogram: dateHistogramAgg,
  composite: compositeAgg,
  percentiles: percentilesAgg,
  cardinality: cardinalityAgg,
  stats: statsAgg,
  extended_stats: extendedStatsAgg,
  filter: filterAgg,
  filters: filtersAgg,
  missing: missingAgg,
  range: rangeAgg,
  date_range: dateRangeAgg,
  histogram: histogramAgg,
  top_hits: topHitsAgg,
  ip_range: ipRangeAgg,
  geotile_grid: geotileGridAgg,
  nested: nestedAgg,
  reverse_nested: reverseNestedAgg,
};

/** Aggregations ES registers that this engine lacks (a clear 400; also "did you mean" candidates). */
export const OTHER_ES_AGGS: readonly string[] = [
  'date_range', 'diversified_sampler', 'extended_stats', 'filter', 'filters', 'geo_bounds',
  'geo_centroid', 'geo_distance', 'geohash_grid', 'geotile_grid', 'geohex_grid', 'global', 'histogram', 'ip_range',
  'median_absolute_deviation', 'missing', 'nested', 'percentile_ranks', 'range', 'rare_terms', 'reverse_nested',
  'sampler', 'scripted_metric', 'significant_terms', 'significant_text', 'stats', 'top_hits', 'weighted_avg',
  'variable_width_histogram', 'auto_date_histogram', 'adjacency_matrix', 'multi_terms', 'top_metrics', 't_test', 'string_stats',
  'boxplot', 'rate', 'matrix_stats', 'ip_prefix', 'random_sampler', 'time_series', 'categorize_text', 'frequent_item_sets',
  'geo_line', 'avg_bucket', 'bucket_script', 'bucket_selector', 'bucket_sort', 'cumulative_sum', 'derivative',
  'extended_stats_bucket', 'max_bucket', 'min_bucket', 'moving_fn', 'moving_percentiles', 'normalize', 'percentiles_bucket',
  'serial_diff', 'stats_bucket', 'sum_bucket', 'cumulative_cardinality', 'bucket_count_ks_test', 'bucket_correlation',
  'inference', 'change_point',
].filter((t) => !(t in AGGREGATIONS));

/** The registered type of a parsed spec (aggSpec.ts has checked the name). */
export function aggregationType(type: string): AggregationType {
  const t = AGGREGATIONS[type];
  if (!t) throw new Error(`aggregation type [${type}] is not registered`);
  return t;
}
