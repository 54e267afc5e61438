import type { DocValuesReader } from '../types';
import { aggSpecs } from './aggSpec';
import { aggregationType } from './registry';
import type { AggHooks, AggSpec, Aggregators, Factory, FactoryContext } from './aggTypes';
import { AggBudget } from './aggBudget';
import type { SearchBudget } from '../../../wire/circuitBreaker';

export type { AggPartial, BucketPartial, HistogramPartial, MetricPartial, PartialMap, TermKey, TermsKind, TermsPartial, ValueKind } from './aggPartials';
export type { Aggregators, AggHooks, HitRef } from './aggTypes';

/**
 * Aggregations on a shard: `createAggregators` collects the docs a query matched into a
 * partial state (plain JSON, travels over NATS); `reduceAggs` merges partials and `renderAggs`
 * shapes the response (both in aggsRender.ts, re-exported here). Each type is an entry of the
 * registry (registry.ts).
 */

/**
 * Builds collectors for `aggsJson` over one shard. Field problems (text fields, keyword in a
 * numeric metric, missing `field`) throw here, as ES fails when it builds the aggregators.
 * Buckets count against `budget.maxBuckets` as they are created and when the partial is built;
 * their memory is reserved on the request breaker as they grow (aggBudget.ts).
 * @example const a = createAggregators(req.aggs, reader, budget); for (const d of matched) a.collect(d); reply.aggs = a.partial();
 */
export function createAggregators(aggsJson: unknown, reader: DocValuesReader, searchBudget?: SearchBudget, hooks?: AggHooks): Aggregators {
  const budget = new AggBudget(searchBudget);
  const top = groupOf(aggSpecs(aggsJson), reader, budget, true, hooks)();
  return {
    collect: top.collect,
    partial() {
      const p = top.partial();
      budget.checkPartial(p);
      return p;
    },
  };
}

function groupOf(specs: AggSpec[], reader: DocValuesReader, budget: AggBudget, top: boolean, hooks?: AggHooks): () => Aggregators {
  const ctx: FactoryContext = { reader, subs: (subs) => groupOf(subs, reader, budget, false, hooks), budget, top, ...(hooks ? { hooks } : {}) };
  const factories = specs.map((s) => [s.name, aggregationType(s.type).factory(s, ctx)] as const);
  return group(factories);
}

function group(factories: ReadonlyArray<readonly [string, Factory]>): () => Aggregators {
  return () => {
    const cs = factories.map(([name, f]) => [name, f()] as const);
    return {
      collect: (doc) => {
        for (const [, c] of cs) c.collect(doc);
      },
      partial: () => Object.fromEntries(cs.map(([name, c]) => [name, c.partial()])),
    };
  };
}

export { aggSpecs, parseAggs } from './aggSpec';
export type { AggSpec, AggType } from './aggSpec';
export { reduceAggs, renderAggs } from './aggsRender';
export { tooManyBuckets, countBuckets } from './aggBudget';
