/**
 * Partial aggregation states: what a shard computes (aggs.ts) and the coordinator merges and
 * renders (aggsRender.ts). Plain JSON, so they travel over NATS as they are.
 */

/** How values print: dates get `*_as_string`, booleans print true/false. */
export type ValueKind = 'number' | 'date' | 'boolean' | 'unmapped';
export type TermsKind = 'string' | 'long' | 'double' | 'boolean' | 'date' | 'ip' | 'unmapped';
export type TermKey = string | number | bigint;

export type MetricPartial =
  | { t: 'min' | 'max'; kind: ValueKind; value: number | null }
  | { t: 'sum'; kind: ValueKind; value: number }
  | { t: 'avg'; kind: ValueKind; sum: number; count: number }
  | { t: 'value_count'; count: number };

export interface BucketPartial {
  key: TermKey;
  count: number;
  subs: PartialMap;
  /** terms: summed doc-count error of the shards that returned this bucket. */
  err?: number;
}

export interface TermsPartial {
  t: 'terms';
  kind: TermsKind;
  buckets: BucketPartial[];
  /** Docs in buckets a shard did not return. */
  other: number;
  /** Summed per-shard upper bound of missed doc counts. */
  error: number;
  /** Number of shard partials merged into this one. */
  shards: number;
}

export interface HistogramPartial {
  t: 'date_histogram';
  buckets: BucketPartial[];
}

export type CompositeKey = Array<string | number | boolean | null>;

export interface CompositeBucket {
  key: CompositeKey;
  count: number;
  subs: PartialMap;
}

export interface CompositePartial {
  t: 'composite';
  buckets: CompositeBucket[];
}

export interface PercentilesPartial {
  t: 'percentiles';
  kind: ValueKind;
  n: number;
  min: number;
  max: number;
  /** Sorted values (exact mode). */
  values?: number[];
  /** [mean, weight] sorted by mean (digest mode). */
  centroids?: Array<[number, number]>;
}

export interface CardinalityPartial {
  t: 'cardinality';
  /** Distinct values, type-tagged (exact mode). */
  set?: string[];
  /** HyperLogLog registers, base64 (sketch mode). */
  hll?: string;
}

/** stats / extended_stats. */
export interface StatsPartial {
  t: 'stats';
  kind: ValueKind;
  count: number;
  sum: number;
  min: number | null;
  max: number | null;
  sumSq: number;
}

/** filter, missing (one bucket), filters (named or anonymous buckets, in request order). */
export interface SingleBucketPartial {
  t: 'single';
  count: number;
  subs: PartialMap;
}
export interface FiltersPartial {
  t: 'filters';
  buckets: Array<{ key: string; count: number; subs: PartialMap }>;
}

/** range / date_range / ip_range: buckets in the aggregation's range order. */
export interface RangePartial {
  t: 'range';
  buckets: Array<{ count: number; subs: PartialMap }>;
}

/** geotile_grid: buckets keyed `zoom/x/y`. */
export interface GeoTilePartial {
  t: 'geotile_grid';
  buckets: BucketPartial[];
}

/** histogram (numeric). */
export interface NumHistogramPartial {
  t: 'histogram';
  buckets: BucketPartial[];
}

/** top_hits: a shard's best `from + size` hits, ranked, and how many docs it saw. */
export interface TopHitsPartial {
  t: 'top_hits';
  total: number;
  maxScore: number | null;
  hits: Array<{ index: string; id: string; score: number; order: number; sort?: unknown[]; source?: string }>;
}

export type AggPartial =
  | MetricPartial | TermsPartial | HistogramPartial | CompositePartial | PercentilesPartial | CardinalityPartial
  | StatsPartial | SingleBucketPartial | FiltersPartial | RangePartial | NumHistogramPartial | TopHitsPartial | GeoTilePartial;
export type PartialMap = Record<string, AggPartial>;
