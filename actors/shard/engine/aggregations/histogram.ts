import { illegalArgument } from '../../../wire/esErrors';
import { compareKeys, orderComparator } from './aggOrder';
import type { BucketPartial, NumHistogramPartial } from './aggPartials';
import type { AggregationType, AggSpec } from './aggTypes';
import { bucketing, mergeBuckets } from './bucketing';
import { DATES, fieldValues, NUMERIC, toNumber } from './values';
import { javaDouble } from './ranges';

/**
 * The numeric `histogram` (ES's NumericHistogramAggregator): a bucket per `interval` (shifted by
 * `offset`), empty buckets filled between the first and last key (and `extended_bounds`) when
 * `min_doc_count` is 0, `hard_bounds` limiting the keys, keys printed with `format` when given.
 */

const num = (v: unknown, what: string, name: string): number => {
  const n = Number(v);
  if (typeof v === 'boolean' || v === null || Number.isNaN(n)) throw illegalArgument(`[${what}] must be a number in [${name}]`);
  return n;
};

function rounding(s: AggSpec): { interval: number; offset: number; key: (v: number) => number } {
  const interval = s.params.interval === undefined ? 0 : num(s.params.interval, 'interval', s.name);
  if (!(interval > 0)) throw illegalArgument(`[interval] must be >0 for histogram aggregation [${s.name}]`);
  const offset = s.params.offset === undefined ? 0 : num(s.params.offset, 'offset', s.name);
  return { interval, offset, key: (v) => Math.floor((v - offset) / interval) * interval + offset };
}

export const histogramAgg: AggregationType = {
  params: ['field', 'interval', 'offset', 'min_doc_count', 'extended_bounds', 'hard_bounds', 'keyed', 'order', 'missing', 'format', 'value_type', 'script'],
  check(spec) {
    rounding(spec);
    if (spec.params.min_doc_count !== undefined && Number(spec.params.min_doc_count) < 0) {
      throw illegalArgument(`[minDocCount] must be greater than or equal to 0. Found [${Number(spec.params.min_doc_count)}] in [${spec.name}]`);
    }
  },
  factory(spec, ctx) {
    const { type, read, field } = fieldValues(spec, ctx.reader);
    if (type !== undefined && !NUMERIC.includes(type) && !DATES.includes(type) && type !== 'boolean') {
      throw illegalArgument(`Field [${field}] of type [${type}] is not supported for aggregation [histogram]`);
    }
    const r = rounding(spec);
    const hard = spec.params.hard_bounds as { min?: unknown; max?: unknown } | undefined;
    const lo = hard?.min !== undefined && hard.min !== null ? Number(hard.min) : -Infinity;
    const hi = hard?.max !== undefined && hard.max !== null ? Number(hard.max) : Infinity;
    const subs = ctx.subs(spec.subs);
    return () => {
      const b = bucketing((doc) => read(doc).map((v) => toNumber(v, type)).filter((v) => v >= lo && v < hi).map(r.key), subs, { budget: ctx.budget, name: spec.name, count: ctx.top, subs: spec.subs.length });
      return {
        collect: b.collect,
        partial: (): NumHistogramPartial => ({ t: 'histogram', buckets: b.buckets().sort((x, y) => compareKeys(x.key, y.key)) }),
      };
    };
  },
  merge: (a, b, _s, reduceSubs) => ({ t: 'histogram', buckets: mergeBuckets((a as NumHistogramPartial).buckets, (b as NumHistogramPartial).buckets, reduceSubs) }),
  render(s, partial, ctx) {
    const p = partial as NumHistogramPartial | undefined;
    const minDocCount = Number(s.params.min_doc_count ?? 0);
    let buckets: BucketPartial[] = [...(p?.buckets ?? [])].map((b) => ({ ...b, key: Number(b.key) })).sort((a, b) => Number(a.key) - Number(b.key));
    if (minDocCount === 0) buckets = fill(s, buckets, ctx.maxBuckets);
    else buckets = buckets.filter((b) => b.count >= minDocCount);
    if (s.params.order !== undefined) buckets.sort(orderComparator(s).compare);
    ctx.countBuckets(buckets.length);
    const format = s.params.format as string | undefined;
    const rendered = buckets.map((b) => ({
      ...(format !== undefined ? { key_as_string: decimal(Number(b.key), format) } : {}),
      key: b.key,
      doc_count: b.count,
      ...ctx.renderSubs(b.subs, s.subs),
    }));
    if (s.params.keyed === true || s.params.keyed === 'true') {
      return { buckets: Object.fromEntries(rendered.map((b) => [b.key_as_string ?? javaDouble(Number(b.key)), b])) };
    }
    return { buckets: rendered };
  },
};

/** Empty buckets between the first and last key, widened by `extended_bounds` (bounded by `hard_bounds`). */
function fill(s: AggSpec, buckets: BucketPartial[], maxBuckets: number): BucketPartial[] {
  const r = rounding(s);
  const ext = s.params.extended_bounds as { min?: unknown; max?: unknown } | undefined;
  const hard = s.params.hard_bounds as { min?: unknown; max?: unknown } | undefined;
  let first = buckets.length ? Number(buckets[0].key) : undefined;
  let last = buckets.length ? Number(buckets[buckets.length - 1].key) : undefined;
  if (ext?.min !== undefined && ext.min !== null) {
    const m = r.key(Number(ext.min));
    first = first === undefined ? m : Math.min(first, m);
    last ??= m;
  }
  if (ext?.max !== undefined && ext.max !== null) {
    const m = r.key(Number(ext.max));
    last = last === undefined ? m : Math.max(last, m);
    first ??= m;
  }
  if (hard?.min !== undefined && hard.min !== null && first !== undefined) first = Math.max(first, r.key(Number(hard.min)));
  if (hard?.max !== undefined && hard.max !== null && last !== undefined) last = Math.min(last, r.key(Number(hard.max)));
  if (first === undefined || last === undefined) return buckets;
  const byKey = new Map(buckets.map((b) => [Number(b.key), b]));
  const out: BucketPartial[] = [];
  // keys as r.key computes them (index * interval + offset), so float steps do not drift
  const start = Math.round((first - r.offset) / r.interval);
  const end = Math.round((last - r.offset) / r.interval);
  for (let i = start; i <= end && out.length <= maxBuckets; i++) {
    const k = i * r.interval + r.offset;
    out.push(byKey.get(k) ?? { key: k, count: 0, subs: {} });
  }
  return out;
}

/** The DecimalFormat subset used for keys (`#`, `0`, `.`). */
function decimal(x: number, pattern: string): string {
  const frac = pattern.split('.')[1] ?? '';
  const min = (frac.match(/0/g) ?? []).length;
  const max = min + (frac.match(/#/g) ?? []).length;
  let s = x.toFixed(max);
  if (max > min) s = s.replace(new RegExp(`0{1,${max - min}}$`), '').replace(/\.$/, '');
  return s;
}
