import { illegalArgument } from '../../../wire/esErrors';
import { isObject, tokenName } from '../base/xcontent';
import type { AggPartial, FiltersPartial, PartialMap, SingleBucketPartial } from './aggPartials';
import type { AggregationType, AggSpec, Aggregators, FactoryContext } from './aggTypes';
import { fieldValues } from './values';

/**
 * Single- and multi-bucket aggregations defined by queries or by absence: `filter` (one query),
 * `filters` (named or anonymous queries, an optional `other` bucket), `missing` (docs without the
 * field). Queries run through the query phase's hooks on the segment being collected.
 */

function hooksOf(ctx: FactoryContext, type: string) {
  if (!ctx.hooks) throw illegalArgument(`[${type}] aggregation needs the query phase`);
  return ctx.hooks;
}

/** A bucket that counts the docs `accept` lets in and feeds them to its sub-aggregations. */
function singleBucket(ctx: FactoryContext, spec: AggSpec, accept: () => (doc: number) => boolean) {
  const subs = ctx.subs(spec.subs);
  return () => {
    const pred = accept();
    let count = 0;
    let sub: Aggregators | undefined;
    return {
      collect(doc: number) {
        if (!pred(doc)) return;
        count++;
        (sub ??= subs()).collect(doc);
      },
      partial: (): SingleBucketPartial => ({ t: 'single', count, subs: (sub ?? subs()).partial() }),
    };
  };
}

export function mergeSingle(a: AggPartial, b: AggPartial, _s: AggSpec, reduceSubs: (maps: PartialMap[]) => PartialMap): SingleBucketPartial {
  const x = a as SingleBucketPartial;
  const y = b as SingleBucketPartial;
  return { t: 'single', count: x.count + y.count, subs: reduceSubs([x.subs, y.subs]) };
}

export function renderSingle(s: AggSpec, p: AggPartial | undefined, ctx: Parameters<AggregationType['render']>[2]): Record<string, unknown> {
  const q = p as SingleBucketPartial | undefined;
  return { doc_count: q?.count ?? 0, ...ctx.renderSubs(q?.subs ?? {}, s.subs) };
}

export const filterAgg: AggregationType = {
  params: [],
  parse(body, { loc, path, sub }) {
    return { filter: sub ? sub(body, loc, path) : body };
  },
  factory(spec, ctx) {
    const hooks = hooksOf(ctx, 'filter');
    return singleBucket(ctx, spec, () => hooks.filter(spec.params.filter));
  },
  merge: mergeSingle,
  render: renderSingle,
};

export const missingAgg: AggregationType = {
  params: ['field', 'missing', 'value_type', 'format', 'script'],
  factory(spec, ctx) {
    const { read } = fieldValues({ ...spec, params: { ...spec.params, missing: undefined } }, ctx.reader);
    return singleBucket(ctx, spec, () => (doc) => read(doc).length === 0);
  },
  merge: mergeSingle,
  render: renderSingle,
};

const FILTERS_KEYS = ['filters', 'other_bucket', 'other_bucket_key', 'keyed'];

export const filtersAgg: AggregationType = {
  params: FILTERS_KEYS,
  parse(body, { loc, path, sub }) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(body)) {
      if (!FILTERS_KEYS.includes(k)) throw loc.parsing([...path, k], `Unknown key for a ${tokenName(v)} in [${k}].`);
      if (k === 'filters') {
        if (isObject(v)) {
          // keyed filters come back sorted by key (FiltersAggregationBuilder)
          const named = Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
          out.filters = named.map(([name, q]) => [name, sub ? sub(q, loc, [...path, k, name]) : q]);
          out.keyedInput = true;
        } else if (Array.isArray(v)) {
          out.filters = v.map((q, i) => [String(i), sub ? sub(q, loc, [...path, k, i]) : q]);
          out.keyedInput = false;
        } else throw loc.parsing([...path, k], `Unknown key for a ${tokenName(v)} in [filters].`);
      } else out[k] = v;
    }
    if (!Array.isArray(out.filters) || out.filters.length === 0) throw illegalArgument('[filters] cannot be empty.');
    return out;
  },
  factory(spec, ctx) {
    const hooks = hooksOf(ctx, 'filters');
    const filters = spec.params.filters as Array<[string, unknown]>;
    const other = otherKey(spec);
    const subs = ctx.subs(spec.subs);
    return () => {
      const preds = filters.map(([, q]) => hooks.filter(q));
      const counts = filters.map(() => 0);
      const bucketSubs: Array<Aggregators | undefined> = filters.map(() => undefined);
      let otherCount = 0;
      let otherSubs: Aggregators | undefined;
      return {
        collect(doc) {
          let any = false;
          preds.forEach((p, i) => {
            if (!p(doc)) return;
            any = true;
            counts[i]++;
            (bucketSubs[i] ??= subs()).collect(doc);
          });
          if (!any && other !== undefined) {
            otherCount++;
            (otherSubs ??= subs()).collect(doc);
          }
        },
        partial: (): FiltersPartial => ({
          t: 'filters',
          buckets: [
            ...filters.map(([key], i) => ({ key, count: counts[i], subs: (bucketSubs[i] ?? subs()).partial() })),
            ...(other !== undefined ? [{ key: other, count: otherCount, subs: (otherSubs ?? subs()).partial() }] : []),
          ],
        }),
      };
    };
  },
  merge(a, b, _s, reduceSubs): FiltersPartial {
    const x = a as FiltersPartial;
    const y = b as FiltersPartial;
    return { t: 'filters', buckets: x.buckets.map((bx, i) => ({ key: bx.key, count: bx.count + y.buckets[i].count, subs: reduceSubs([bx.subs, y.buckets[i].subs]) })) };
  },
  render(s, partial, ctx) {
    const filters = s.params.filters as Array<[string, unknown]>;
    const other = otherKey(s);
    const keys = [...filters.map(([k]) => k), ...(other !== undefined ? [other] : [])];
    const p = partial as FiltersPartial | undefined;
    const buckets = keys.map((key, i) => ({ key, count: p?.buckets[i]?.count ?? 0, subs: p?.buckets[i]?.subs ?? {} }));
    ctx.countBuckets(buckets.length);
    const keyed = s.params.keyed === undefined ? s.params.keyedInput !== false : s.params.keyed === true;
    const body = (b: (typeof buckets)[number]) => ({ doc_count: b.count, ...ctx.renderSubs(b.subs, s.subs) });
    if (keyed) return { buckets: Object.fromEntries(buckets.map((b) => [b.key, body(b)])) };
    return { buckets: buckets.map((b) => (s.params.keyedInput === false ? body(b) : { key: b.key, ...body(b) })) };
  },
};

/** The `other` bucket's key, when there is one (`other_bucket_key` implies `other_bucket`). */
function otherKey(s: AggSpec): string | undefined {
  if (s.params.other_bucket_key !== undefined) return String(s.params.other_bucket_key);
  return s.params.other_bucket === true || s.params.other_bucket === 'true' ? '_other_' : undefined;
}
