/**
 * The contract between the pure shard engine and the actors around it (shard actor, search
 * coordinator in the edge). Everything here is plain data that can travel as JSON over NATS
 * (bigint sort values are written as bare digits by `stringify` in actors/edge/json.ts).
 */

/** A sort value as it appears in `hits[].sort` and `search_after`. Longs beyond 2^53 are bigint. */
export type SortValue = number | bigint | string | boolean | null;

export type FieldType =
  | 'keyword' | 'text' | 'long' | 'integer' | 'short' | 'byte' | 'double' | 'float' | 'half_float' | 'scaled_float'
  | 'unsigned_long' | 'boolean' | 'date' | 'date_nanos' | 'object' | 'ip' | 'geo_point'
  | 'integer_range' | 'long_range' | 'float_range' | 'double_range' | 'date_range' | 'ip_range';

/** One sort key after parsing (`"f"`, `{"f":"desc"}`, `{"f":{order,missing,...}}`, `_score`, `_doc`, `_shard_doc`). */
export interface SortSpec {
  field: string; // '_score' | '_doc' | '_shard_doc' | a field path
  order: 'asc' | 'desc';
  missing?: '_last' | '_first' | SortValue;
  unmappedType?: string;
  mode?: 'min' | 'max' | 'sum' | 'avg' | 'median';
  numericType?: 'double' | 'long' | 'date' | 'date_nanos';
  format?: string;
  /** Set by the coordinator for an `ip` field: sort values (addresses) merge in byte order. */
  valueType?: 'ip';
  /** `_geo_distance` sorts (field `_geo_distance`): the geo_point field, origins and options. */
  geo?: { field: string; points: Array<{ lat: number; lon: number }>; unit: string; distanceType: 'arc' | 'plane'; ignoreUnmapped: boolean };
}

/** What a slice means to ONE shard, after the coordinator's shard step (search-paging.md §10). */
export interface LocalSlice {
  /** Local slice id in [0, max). */
  id: number;
  /** Number of sub-slices on this shard; 1 means the whole shard. */
  max: number;
  field?: string;
  /** scroll: hash of _id (seed: Java String.hashCode floorMod); pit without field: doc-id ranges. */
  mode: 'scroll' | 'pit';
  /** The request's `slice.max`, checked against index.max_slices_per_scroll (defaults to `max`). */
  requestMax?: number;
  /** PIT without field: the shard doc ids [lo, hi) of this slice (the shard store sets it per searcher). */
  docIdRange?: [number, number];
}

/** A pinned, immutable view of a shard: O(1) to take and to hold (no copy of the index). */
export interface SearcherRef {
  /** Docs with docId < maxDoc may be visible. */
  maxDoc: number;
  /** Highest seqNo visible; deletes with a greater seqNo are invisible to this searcher. */
  seqNo: number;
}

/** The normalized search request one shard executes (output of parseSearchRequest, minus coordinator-only parts). */
export interface ShardQueryRequest {
  /** Query DSL JSON, already validated by parseSearchRequest; absent = match_all. */
  query?: unknown;
  /** `profile: true`: the shard reports its query and aggregation timings. */
  profile?: boolean;
  postFilter?: unknown;
  sort?: SortSpec[];
  /**
   * The shard ranks its best `from + size` hits and returns those ranked [from, from + size): a
   * single-shard search pages on the shard; a multi-shard coordinator sends from 0 and size
   * from + size and pages the merged list. The window check uses from + size either way.
   */
  from: number;
  size: number;
  searchAfter?: SortValue[];
  /** true = exact, false = don't count, number = count exactly up to it. */
  trackTotalHits: boolean | number;
  trackScores?: boolean;
  minScore?: number;
  aggs?: Record<string, unknown>;
  slice?: LocalSlice;
  /** Rank of this shard in the request (PIT: in the PIT's shard list); high 32 bits of `_shard_doc`. */
  shardIndex: number;
  /** Window limit check: index.max_result_window (shard raises "Result window is too large"). */
  checkWindow?: 'search' | 'scroll';
  /** Epoch millis for `now` in date math, fixed by the coordinator so all shards agree (default: the shard's clock). */
  nowMillis?: number;
  /** Hits carry `_version` (search `version: true`). */
  version?: boolean;
  /** Hits carry `_seq_no` and `_primary_term` (search `seq_no_primary_term: true`). */
  seqNoPrimaryTerm?: boolean;
  /** `matched_queries` with each named clause's score (`include_named_queries_score`). */
  namedQueriesScore?: boolean;
  /** `docvalue_fields` entries: `{field, format?}` (wildcards allowed in field). */
  docvalueFields?: Array<{ field: string; format?: string }>;
  /** `fields` entries: `{field, format?, include_unmapped?}`. */
  fields?: Array<{ field: string; format?: string; include_unmapped?: boolean }>;
  /** `stored_fields` (non-metadata ones come back under `fields` when stored). */
  storedFields?: string[];
  /** Field collapsing: the shard returns the best hit of each of the top groups. */
  collapse?: { field: string };
  /** Rescorers, applied in order to the top `windowSize` hits. */
  rescore?: Array<{ windowSize: number; query: unknown; queryWeight: number; rescoreQueryWeight: number; scoreMode: 'total' | 'multiply' | 'avg' | 'max' | 'min' }>;
}

export interface ShardHit {
  /** Doc id inside the shard (Lucene-style, stable for the life of the shard). */
  doc: number;
  _id: string;
  score: number | null;
  sort?: SortValue[];
  /** `fields` of the hit as a JSON object text (docvalue_fields, fields), when asked. */
  fields?: string;
  /** Hit members rendered after `sort`, as JSON text without braces (`"matched_queries":["a"]`). */
  tail?: string;
}

export interface ShardQueryResult {
  totalHits: number | null;
  totalRelation: 'eq' | 'gte';
  maxScore: number | null;
  hits: ShardHit[];
  /** Partial aggregation state, merged with reduceAggs. */
  aggs?: unknown;
  /** With `profile`: the shard's `searches` and `aggregations` profile sections. */
  profile?: { searches: unknown[]; aggregations: unknown[] };
}

/** One document write inside a bulk/index/delete request, as the shard actor receives it. */
export interface DocWrite {
  op: 'index' | 'create' | 'delete';
  id: string;
  /** Raw JSON text of _source exactly as it arrived (kept and spliced into responses). */
  source?: string;
  routing?: string;
  ifSeqNo?: number;
  ifPrimaryTerm?: number;
  /** External versioning: the version the write sets, checked against the current one. */
  version?: number;
  versionType?: 'external' | 'external_gte';
}

/** The normalized, sequenced op appended to the document log. Replaying it reproduces the shard exactly. */
export interface LoggedOp {
  op: 'index' | 'delete';
  id: string;
  seqNo: number;
  version: number;
  source?: string;
  routing?: string;
}

export type WriteOutcome =
  | { ok: true; result: 'created' | 'updated' | 'deleted' | 'not_found'; version: number; seqNo: number; logged?: LoggedOp }
  | { ok: false; status: number; error: { type: string; reason: string; meta?: Record<string, unknown> } };

/**
 * Read access to per-document field values, implemented by the shard store and used by
 * aggregations and sorting. Dates come back as epoch millis (number), date_nanos as epoch nanos
 * (bigint), longs as number (bigint beyond 2^53), keywords as string, booleans as boolean.
 */
export interface DocValuesReader {
  /** Mapped type of a field path (e.g. `title.keyword`), undefined when unmapped. */
  fieldType(field: string): FieldType | undefined;
  /** All values of the field in a document (empty when missing). */
  values(field: string, doc: number): Array<number | bigint | string | boolean>;
}
