import type { SearchBudget } from '../../../wire/circuitBreaker';
import type { DocValuesReader } from '../types';
import { aggSpecs } from './aggSpec';
import type { AggHooks, AggSpec, Aggregators } from './aggTypes';
import type { PartialMap } from './aggPartials';
import { createAggregators } from './aggs';

/**
 * Aggregation profiling (`profile: true`, ES's AggregationProfiler): each top-level aggregation
 * collects on its own, timed (initialize, collect per doc, build_aggregation), and reports ES's
 * profile tree: aggregator type, the aggregation's name, `time_in_nanos` and the `breakdown`
 * counters; sub-aggregations appear as children (timed with their parent).
 */

export interface AggProfileNode {
  type: string;
  description: string;
  time_in_nanos: number;
  breakdown: Record<string, number>;
  debug?: Record<string, unknown>;
  children?: AggProfileNode[];
}

/** ES's aggregator class of a spec (as profiles name them). */
function aggregatorType(spec: AggSpec, reader: DocValuesReader): string {
  const field = spec.params.field as string | undefined;
  const ft = field === undefined ? undefined : reader.fieldType(field);
  switch (spec.type) {
    case 'terms':
      if (ft === undefined) return 'UnmappedTermsAggregator';
      if (ft !== 'keyword' && ft !== 'ip') return 'NumericTermsAggregator';
      return spec.params.execution_hint === 'map' ? 'MapStringTermsAggregator' : 'GlobalOrdinalsStringTermsAggregator';
    case 'percentiles': return 'TDigestPercentilesAggregator';
    case 'histogram': return 'NumericHistogramAggregator';
    case 'date_range': return 'RangeAggregator';
    case 'ip_range': return 'BinaryRangeAggregator';
    case 'geotile_grid': return 'GeoTileGridAggregator';
    case 'top_hits': return 'TopHitsAggregator';
    default:
      return `${spec.type.split('_').map((w) => w[0].toUpperCase() + w.slice(1)).join('')}Aggregator`;
  }
}

const breakdown = (b: Partial<Record<string, number>>): Record<string, number> => ({
  reduce: 0, reduce_count: 0,
  build_aggregation: b.build_aggregation ?? 0, build_aggregation_count: b.build_aggregation_count ?? 0,
  initialize: b.initialize ?? 0, initialize_count: b.initialize_count ?? 0,
  collect: b.collect ?? 0, collect_count: b.collect_count ?? 0,
  build_leaf_collector: b.build_leaf_collector ?? 0, build_leaf_collector_count: b.build_leaf_collector_count ?? 0,
  post_collection: 0, post_collection_count: b.post_collection_count ?? 0,
});

const now = () => process.hrtime.bigint();

/** The `debug` section ES's terms aggregators report (result strategy, buckets, deferred sub-aggregations). */
function debugOf(spec: AggSpec, type: string, partial: unknown): Record<string, unknown> | undefined {
  if (spec.type !== 'terms') return undefined;
  const p = partial as { kind?: string; buckets?: unknown[] } | undefined;
  const strategy = p?.kind === 'long' || p?.kind === 'boolean' || p?.kind === 'date' ? 'long_terms' : p?.kind === 'double' ? 'double_terms' : 'terms';
  const out: Record<string, unknown> = { result_strategy: strategy, total_buckets: p?.buckets?.length ?? 0 };
  if (spec.params.collect_mode === 'breadth_first' && spec.subs.length) out.deferred_aggregators = spec.subs.map((x) => x.name);
  if (type === 'GlobalOrdinalsStringTermsAggregator') out.has_filter = spec.params.include !== undefined || spec.params.exclude !== undefined;
  return out;
}

/** Aggregators whose top-level aggregations are timed; `profile()` after `partial()`. */
export function profiledAggregators(aggsJson: unknown, reader: DocValuesReader, budget?: SearchBudget, hooks?: AggHooks, leaves = 1): Aggregators & { profile(): AggProfileNode[] } {
  const specs = aggSpecs(aggsJson);
  const json = aggsJson as Record<string, unknown>;
  const parts = specs.map((spec) => {
    const t0 = now();
    const aggs = createAggregators({ [spec.name]: json[spec.name] }, reader, budget, hooks);
    return { spec, aggs, type: aggregatorType(spec, reader), initialize: Number(now() - t0), collect: 0n, collects: 0, build: 0, partial: undefined as PartialMap | undefined };
  });
  const node = (spec: AggSpec, type: string, b: Partial<Record<string, number>>): AggProfileNode => ({
    type, description: spec.name,
    time_in_nanos: Object.entries(b).filter(([k]) => !k.endsWith('_count')).reduce((a, [, v]) => a + (v ?? 0), 0),
    breakdown: breakdown(b),
    ...(spec.subs.length ? { children: spec.subs.map((s) => node(s, aggregatorType(s, reader), {})) } : {}),
  });
  return {
    collect(doc: number) {
      for (const p of parts) {
        const t0 = now();
        p.aggs.collect(doc);
        p.collect += now() - t0;
        p.collects++;
      }
    },
    partial(): PartialMap {
      const out: PartialMap = {};
      for (const p of parts) {
        const t0 = now();
        p.partial = p.aggs.partial();
        Object.assign(out, p.partial);
        p.build = Number(now() - t0);
      }
      return out;
    },
    profile: () => parts.map((p) => {
      const n = node(p.spec, p.type, {
        initialize: p.initialize, initialize_count: 1, collect: Number(p.collect), collect_count: p.collects,
        build_aggregation: p.build, build_aggregation_count: 1, build_leaf_collector: 0, build_leaf_collector_count: leaves, post_collection_count: 1,
      });
      const debug = debugOf(p.spec, p.type, p.partial?.[p.spec.name]);
      return debug ? { ...n, debug } : n;
    }),
  };
}
