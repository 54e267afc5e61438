// Public names of the shard engine: other folders import only this file.
export { ShardStore } from './shardStore';
export type { ShardStoreOptions, ShardSettings, GetResult } from './shardStore';
export type { QueryOptions } from './search';
export { IndexMapping, DEFAULT_DYNAMIC_DATE_FORMATS } from './mapping';
export type { FieldDef, Dynamic } from './mapping';
export { shardFor, indexShard, searchShards, calculateNumRoutingShards, murmur3Routing, murmur3Bytes, javaStringHashCode, bitMix, floorMod } from './routing';
export type { RoutingSpec } from './routing';
export { analyze } from './analysis';
export { dateFormatter, DateParseError, DEFAULT_DATE_FORMAT } from './dates';
export { parseDateMath } from './dateMath';
export type { DateMathOptions } from './dateMath';
export type { DateFormatter, Instant } from './dates';
export { docRange } from './slice';
export { shardDocValue } from './sort';
export type {
  SortValue, FieldType, SortSpec, LocalSlice, SearcherRef, ShardQueryRequest, ShardHit, ShardQueryResult,
  DocWrite, LoggedOp, WriteOutcome, DocValuesReader,
} from './types';
// Request parsing, aggregations, reduce, _source filtering, time values (parseSearch & co).
export { parseSearchRequest, DEFAULT_TRACK_TOTAL_HITS } from './parseSearch';
export type { SearchRequest, SearchRequestContext } from './parseSearch';
export { parseSort, parseSortParam, parseSortOrder, withImplicitShardDoc } from './searchSort';
export { parseQuery, queryFromQ, SUPPORTED_QUERIES } from './queryDsl';
export type { Query, QueryValue } from './queryDsl';
export { filterSource, parseSourceBody, parseSourceParams } from './sourceFilter';
export type { SourceFilter } from './sourceFilter';
export { compareSortValues, compareSortArrays, compareRaw, compareCodePoints } from './sortValues';
export { reduceHits, reduceTotal, hitComparator } from './reduce';
export type { ShardResultRef, ReduceHitsRequest, ReducedHits, MergedHit } from './reduce';
export { createAggregators, reduceAggs, renderAggs, parseAggs, aggSpecs } from './aggs';
export type { Aggregators, AggPartial, PartialMap, AggSpec, AggType } from './aggs';
