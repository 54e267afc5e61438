import { illegalArgument } from '../../wire/esErrors';
import { compositeCollector, compositeSources, mergeComposite, renderComposite, type CompositePartial } from './aggComposite';
import {
  cardinalityCollector, checkCardinalityParams, checkPercentilesParams, compressionOf, mergeCardinality, mergePercentiles,
  percentilesCollector, precisionThreshold, renderCardinality, renderPercentiles, type CardinalityPartial, type PercentilesPartial,
} from './aggMetrics';
import type { AggSpec } from './aggSpec';
import type { PartialMap } from './aggPartials';
import type { DocValuesReader } from './types';

/**
 * The hooks that plug `composite`, `percentiles` and `cardinality` into the aggregation engine
 * (aggSpec.ts parses, aggs.ts collects, aggsRender.ts merges and renders) without touching the
 * code of the other aggregations: every call for these types is routed here.
 */

export type ExtraAggType = 'composite' | 'percentiles' | 'cardinality';
export type ExtraPartial = CompositePartial | PercentilesPartial | CardinalityPartial;

export const EXTRA_METRICS = ['percentiles', 'cardinality'] as const;

export const EXTRA_AGG_PARAMS: Record<ExtraAggType, string[]> = {
  composite: ['sources', 'size', 'after'],
  percentiles: ['field', 'percents', 'keyed', 'tdigest', 'hdr', 'missing', 'format', 'value_type', 'script'],
  cardinality: ['field', 'precision_threshold', 'missing', 'execution_hint', 'format', 'value_type', 'script', 'rehash'],
};

export const isExtraAgg = (t: string): t is ExtraAggType => t === 'composite' || t === 'percentiles' || t === 'cardinality';

/** ES factory class names, for the composite-under-a-parent error. */
const FACTORY: Record<string, string> = {
  terms: 'TermsAggregatorFactory',
  date_histogram: 'DateHistogramAggregatorFactory',
  composite: 'CompositeAggregationFactory',
};

/** Request checks of the three types, plus: a composite aggregation must be top-level. */
export function checkExtraAgg(spec: AggSpec): void {
  if (spec.subs.some((x) => x.type === 'composite')) {
    throw illegalArgument(`[composite] aggregation cannot be used with a parent aggregation of type: [${FACTORY[spec.type] ?? spec.type}]`);
  }
  if (spec.type === 'composite') compositeSources(spec.name, spec.params);
  else if (spec.type === 'percentiles') checkPercentilesParams(spec.name, spec.params);
  else if (spec.type === 'cardinality') checkCardinalityParams(spec.name, spec.params);
}

interface Collector {
  collect(doc: number): void;
  partial(): ExtraPartial;
}

/** The shard collector of one of the three types; `subsOf` builds sub-aggregators (composite buckets). */
export function extraFactory(
  spec: AggSpec,
  reader: DocValuesReader,
  subsOf: (specs: AggSpec[]) => () => { collect(doc: number): void; partial(): PartialMap },
): () => Collector {
  if (spec.type === 'composite') return compositeCollector(spec, reader, subsOf(spec.subs));
  const field = spec.params.field as string | undefined;
  if (field === undefined) throw illegalArgument('Required one of fields [field, script], but none were specified.');
  const type = reader.fieldType(field);
  const missing = spec.params.missing;
  const read = (doc: number) => {
    const vs = type === undefined ? [] : reader.values(field, doc);
    return vs.length === 0 && missing !== undefined && missing !== null ? [missing as string | number | boolean | bigint] : vs;
  };
  if (spec.type === 'percentiles') {
    const make = percentilesCollector(field, type, read, missing !== undefined && missing !== null);
    const compression = compressionOf(spec.params);
    return () => {
      const c = make();
      return { collect: c.collect, partial: () => c.partial(compression) };
    };
  }
  return cardinalityCollector(field, type, read, precisionThreshold(spec.params));
}

export function mergeExtra(a: ExtraPartial, b: ExtraPartial, spec: AggSpec, reduceSubs: (maps: PartialMap[]) => PartialMap): ExtraPartial {
  if (a.t === 'composite' && b.t === 'composite') return mergeComposite(a, b, spec, reduceSubs);
  if (a.t === 'percentiles' && b.t === 'percentiles') return mergePercentiles(a, b, compressionOf(spec.params));
  if (a.t === 'cardinality' && b.t === 'cardinality') return mergeCardinality(a, b, precisionThreshold(spec.params));
  throw illegalArgument(`cannot merge [${a.t}] with [${b.t}] in [${spec.name}]`);
}

export function renderExtra(
  spec: AggSpec,
  p: ExtraPartial | undefined,
  renderSubs: (subs: PartialMap) => Record<string, unknown>,
  countBuckets: (n: number) => void,
): Record<string, unknown> {
  if (spec.type === 'composite') return renderComposite(spec, p as CompositePartial | undefined, renderSubs, countBuckets);
  if (spec.type === 'percentiles') return renderPercentiles(spec.params, p as PercentilesPartial | undefined, spec.params.format as string | undefined);
  return renderCardinality(p as CardinalityPartial | undefined);
}
