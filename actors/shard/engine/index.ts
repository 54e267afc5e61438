// Public names of the shard engine (STYLE.md: other folders import only this file).
export { ShardStore } from './shardStore';
export type { ShardStoreOptions, ShardSettings, GetResult } from './shardStore';
export type { QueryOptions } from './search';
export { IndexMapping, DEFAULT_DYNAMIC_DATE_FORMATS } from './mapping';
export type { FieldDef, Dynamic } from './mapping';
export { shardFor, calculateNumRoutingShards, murmur3Routing, murmur3Bytes, javaStringHashCode, bitMix, floorMod } from './routing';
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
