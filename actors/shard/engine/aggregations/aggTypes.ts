/**
 * The shapes every aggregation type shares (a leaf module: types only). Each type is one entry of
 * the registry (registry.ts): its parameters, its request checks, its shard collector, its
 * associative merge and its rendering. aggSpec.ts parses through the registry, aggs.ts collects,
 * aggsRender.ts merges and renders; none of them knows a type by name.
 */
import type { DocValuesReader, SortSpec, SortValue } from '../types';
import type { AggPartial, PartialMap } from './aggPartials';
import type { JsonPath, Locator } from '../base/xcontent';
import type { AggBudget } from './aggBudget';

/** The request's query parser (request/queryDsl.ts's parseQuery), handed down by the search body parser. */
export type QueryParser = (v: unknown, loc: Locator, path: JsonPath) => unknown;

/** One parsed aggregation of a request. */
export interface AggSpec {
  name: string;
  type: string;
  params: Record<string, unknown>;
  subs: AggSpec[];
  meta?: unknown;
}

/** The shard side of a group of aggregations (one level of the tree). */
export interface Aggregators {
  collect(doc: number): void;
  partial(): PartialMap;
}

/** The shard side of one aggregation: collects docs, then gives its partial state. */
export interface Collector {
  collect(doc: number): void;
  partial(): AggPartial;
}

/** Makes a fresh collector (one per bucket of a parent, or one per shard at the top). */
export type Factory = () => Collector;

/** A collected doc as top_hits keeps it: ranked now, its source read only if it stays. */
export interface HitRef {
  index: string;
  id: string;
  score: number;
  sort?: SortValue[];
  /** The doc's place in the shard's doc order (ties). */
  order: number;
  /** `_source` (JSON text) read from the doc's segment, filtered by a `_source` option; undefined: none. */
  source(filter?: unknown): string | undefined;
}

/**
 * What aggregations need of the query phase beyond doc values (ES's AggregationContext): queries
 * (`filter`, `filters`) and hits (`top_hits`), on whatever segment is being collected.
 */
export interface AggHooks {
  /** A predicate for a query on the docs being collected. */
  filter(query: unknown): (doc: number) => boolean;
  /** The doc as a hit of the main query, with the sort values of `sort` (none: by score). */
  hit(doc: number, sort: SortSpec[] | undefined): HitRef;
  /** The nested docs of `path` in the segment being collected (undefined: not a nested path). */
  nested?(path: string): NestedDocs | undefined;
}

/** A segment's nested docs of one path, as the nested aggregations walk them. */
export interface NestedDocs {
  /** Doc values of the nested docs. */
  reader: DocValuesReader;
  /** The nested docs of a parent doc: [from, to). */
  childrenOf(parent: number): [number, number];
  parentOf(child: number): number;
}

/** What a type's factory may use besides its spec. */
export interface FactoryContext {
  reader: DocValuesReader;
  /** Builds the factory of sub-aggregations (a bucket's own collectors). */
  subs(specs: AggSpec[]): () => Aggregators;
  /** The same over other docs (nested aggregations: the nested docs, or back to their parents). */
  subsOver?(specs: AggSpec[], reader: DocValuesReader): () => Aggregators;
  /** The request's bucket and memory limits (aggBudget.ts). */
  budget: AggBudget;
  /** A top-level aggregation: it counts its buckets against `search.max_buckets` as they are created. */
  top: boolean;
  /** Query and hit access; absent where only doc values are known (then filter/top_hits fail). */
  hooks?: AggHooks;
}

/** What a type's rendering may use besides its partial. */
export interface RenderContext {
  /** Renders sub-aggregation partials (a bucket's `subs`) with the request's typed_keys. */
  renderSubs(subs: PartialMap, specs: AggSpec[]): Record<string, unknown>;
  /** Counts rendered buckets against `search.max_buckets` (throws ES's too_many_buckets_exception). */
  countBuckets(n: number): void;
  /** `search.max_buckets` of this request. */
  maxBuckets: number;
}

/** One aggregation type (ES: an AggregationBuilder + Aggregator + InternalAggregation). */
export interface AggregationType {
  /** Parameters it accepts; anything else is ES's `unknown field` 400. */
  readonly params: readonly string[];
  /** A metric: it takes no sub-aggregations. */
  readonly metric?: boolean;
  /** Its name under `typed_keys` (`sterms`, `tdigest_percentiles`); default the type's name. */
  typedName?(p: AggPartial | undefined): string;
  /** Parses a body that is not a flat parameter object (filter, filters: queries); default: the `params` list. */
  parse?(body: Record<string, unknown>, ctx: { name: string; loc: Locator; path: JsonPath; sub?: QueryParser }): Record<string, unknown>;
  /** Request checks beyond the parameters' own (composite sources, percents, …). */
  check?(spec: AggSpec): void;
  /** The shard collector; field problems throw here, as ES fails when it builds the aggregator. */
  factory(spec: AggSpec, ctx: FactoryContext): Factory;
  /** Merges two partials (associative, so the coordinator can reduce incrementally). */
  merge(a: AggPartial, b: AggPartial, spec: AggSpec, reduceSubs: (maps: PartialMap[]) => PartialMap): AggPartial;
  /** The response body of the aggregation (without `meta`). */
  render(spec: AggSpec, p: AggPartial | undefined, ctx: RenderContext): Record<string, unknown>;
}
