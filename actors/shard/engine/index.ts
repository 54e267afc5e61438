// Public names of the shard engine: other folders import only this file.
export { ShardStore } from './store/shardStore';
export type { ShardStoreOptions, ShardSettings, GetResult } from './store/shardStore';
export type { QueryOptions } from './query/search';
export { IndexMapping, DEFAULT_DYNAMIC_DATE_FORMATS } from './index/mapping';
export type { FieldDef, Dynamic } from './index/mapping';
export { shardFor, indexShard, searchShards, calculateNumRoutingShards, murmur3Routing, murmur3Bytes, javaStringHashCode, bitMix, floorMod } from './base/routing';
export type { RoutingSpec } from './base/routing';
export { analyze } from './index/analysis';
export { dateFormatter, DateParseError, DEFAULT_DATE_FORMAT } from './base/dates';
export { parseDateMath } from './base/dateMath';
export type { DateMathOptions } from './base/dateMath';
export type { DateFormatter, Instant } from './base/dates';
export { docRange } from './query/slice';
export { shardDocValue } from './query/sort';
export type {
  SortValue, FieldType, SortSpec, LocalSlice, SearcherRef, ShardQueryRequest, ShardHit, ShardQueryResult,
  DocWrite, LoggedOp, WriteOutcome, DocValuesReader,
} from './types';
// Request parsing, aggregations, reduce, _source filtering, time values (parseSearch & co).
export { parseSearchRequest, DEFAULT_TRACK_TOTAL_HITS } from './request/parseSearch';
export type { SearchRequest, SearchRequestContext } from './request/parseSearch';
export { parseSort, parseSortParam, parseSortOrder, withImplicitShardDoc } from './request/searchSort';
export { parseQuery, queryFromQ, SUPPORTED_QUERIES } from './request/queryDsl';
export type { Query, QueryValue } from './request/queryDsl';
export { filterSource, parseSourceBody, parseSourceParams } from './request/sourceFilter';
export type { SourceFilter } from './request/sourceFilter';
export { compareSortValues, compareSortArrays, compareRaw, compareCodePoints } from './base/sortValues';
export { reduceHits, reduceTotal, hitComparator } from './query/reduce';
export type { ShardResultRef, ReduceHitsRequest, ReducedHits, MergedHit } from './query/reduce';
export { createAggregators, reduceAggs, renderAggs, parseAggs, aggSpecs } from './aggregations/aggs';
export { AGGREGATIONS as AGGREGATION_TYPES } from './aggregations/registry';
export type { Aggregators, AggPartial, PartialMap, AggSpec, AggType } from './aggregations/aggs';
