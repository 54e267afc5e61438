import type { AggPartial, PartialMap } from './aggPartials';
import { aggSpecs } from './aggSpec';
import type { AggSpec, RenderContext } from './aggTypes';
import { tooManyBuckets } from './aggBudget';
import { DEFAULT_MAX_BUCKETS } from '../../../wire/circuitBreaker';
import { aggregationType } from './registry';

/**
 * Coordinator side of aggregations: merge shard partials (`reduceAggs`, associative, so it can
 * run incrementally) and render ES's response shapes (`renderAggs`), each type through its
 * registry entry.
 */

/**
 * Merges partial aggregation states (`Aggregators.partial()` results, or earlier reductions).
 * @param partials one PartialMap per shard (undefined entries, e.g. failed shards, are skipped)
 */
export function reduceAggs(partials: unknown[], aggsJson: unknown): PartialMap {
  return reduceMaps(partials.filter((p): p is PartialMap => typeof p === 'object' && p !== null), aggSpecs(aggsJson));
}

function reduceMaps(maps: PartialMap[], specs: AggSpec[]): PartialMap {
  const out: PartialMap = {};
  for (const s of specs) {
    const ps = maps.map((m) => m[s.name]).filter((p): p is AggPartial => p !== undefined);
    if (ps.length === 0) continue;
    const type = aggregationType(s.type);
    const reduceSubs = (ms: PartialMap[]) => reduceMaps(ms, s.subs);
    out[s.name] = ps.reduce((a, b) => type.merge(a, b, s, reduceSubs));
  }
  return out;
}

/**
 * The response `aggregations` object, in request order; with `typed_keys` names become
 * `<type>#<name>` (`sterms#tags`, `lterms#years`, `date_histogram#per_day`, `min#low`).
 */
export function renderAggs(reduced: unknown, aggsJson: unknown, typedKeys: boolean, maxBuckets = DEFAULT_MAX_BUCKETS): Record<string, unknown> {
  let buckets = 0;
  const ctx: RenderContext = {
    renderSubs: (subs, specs) => renderMap(subs, specs, typedKeys, ctx),
    countBuckets(n) {
      buckets += n;
      if (buckets > maxBuckets) throw tooManyBuckets(maxBuckets);
    },
    maxBuckets,
  };
  return renderMap((reduced ?? {}) as PartialMap, aggSpecs(aggsJson), typedKeys, ctx);
}

function renderMap(m: PartialMap, specs: AggSpec[], typedKeys: boolean, ctx: RenderContext): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of specs) {
    const p = m[s.name];
    const type = aggregationType(s.type);
    const body = type.render(s, p, ctx);
    const withMeta = s.meta !== undefined ? { meta: s.meta, ...body } : body;
    out[typedKeys ? `${type.typedName?.(p) ?? s.type}#${s.name}` : s.name] = withMeta;
  }
  return out;
}
