import type { DocValuesReader } from '../types';
import { aggSpecs } from './aggSpec';
import { aggregationType } from './registry';
import type { AggHooks, AggSpec, Aggregators, Collector, Factory, FactoryContext } from './aggTypes';
import type { PartialMap } from './aggPartials';
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
    collect: (doc) => top.collect(doc),
    partial() {
      const p = top.partial();
      budget.checkPartial(p);
      return p;
    },
  };
}

function groupOf(specs: AggSpec[], reader: DocValuesReader, budget: AggBudget, top: boolean, hooks?: AggHooks): () => Aggregators {
  const ctx: FactoryContext = {
    reader, subs: (subs) => groupOf(subs, reader, budget, false, hooks), subsOver: (subs, r) => groupOf(subs, r, budget, false, hooks),
    budget, top, ...(hooks ? { hooks } : {}),
  };
  const factories = specs.map((s) => [s.name, aggregationType(s.type).factory(s, ctx)] as const);
  return group(factories);
}

/** A bucket without sub-aggregations shares this one (nothing to collect, an empty partial). */
const NO_SUBS: Aggregators = { collect: () => undefined, partial: () => ({}) };

/** One level's collectors: a class, not closures, since every bucket of a parent holds one (heap per bucket). */
class Group implements Aggregators {
  constructor(private readonly names: readonly string[], private readonly cs: Collector[]) {}
  collect(doc: number): void {
    for (let i = 0; i < this.cs.length; i++) this.cs[i].collect(doc);
  }
  partial(): PartialMap {
    const out: PartialMap = {};
    for (let i = 0; i < this.cs.length; i++) out[this.names[i]] = this.cs[i].partial();
    return out;
  }
}

function group(factories: ReadonlyArray<readonly [string, Factory]>): () => Aggregators {
  if (!factories.length) return () => NO_SUBS; // no object per bucket
  const names = factories.map(([name]) => name);
  const makers = factories.map(([, f]) => f);
  return () => new Group(names, makers.map((f) => f()));
}

export { aggSpecs, parseAggs } from './aggSpec';
export type { AggSpec, AggType } from './aggSpec';
export { reduceAggs, renderAggs } from './aggsRender';
export { tooManyBuckets, countBuckets } from './aggBudget';
