import { illegalArgument } from '../../../wire/esErrors';
import { DEFAULT_DATE_FORMAT, formatDate, histogramRounding, parseDateValue, zoneOf } from './aggDates';
import { compareKeys, orderComparator } from './aggOrder';
import type { BucketPartial, HistogramPartial } from './aggPartials';
import type { AggregationType, AggSpec, RenderContext } from './aggTypes';
import { bucketing, mergeBuckets } from './bucketing';
import { DATES, fieldValues, NUMERIC, toNumber } from './values';
import type { FieldType } from '../types';
import { decodeLong, rangeBounds } from '../index/fieldCodecs';

/** Buckets one range value may fill (an open range needs hard_bounds). */
const MAX_RANGE_BUCKETS = 65536;

/** The `date_histogram` aggregation (UTC calendar and fixed intervals, offsets, bounds, empty buckets). */

export const dateHistogramAgg: AggregationType = {
  params: [
    'field', 'calendar_interval', 'fixed_interval', 'format', 'min_doc_count', 'time_zone', 'offset', 'extended_bounds',
    'hard_bounds', 'keyed', 'missing', 'order', 'value_type', 'script',
  ],
  factory(spec, ctx) {
    const { type, read, field } = fieldValues(spec, ctx.reader);
    if (type !== undefined && !NUMERIC.includes(type) && !DATES.includes(type) && type !== 'date_range') {
      throw illegalArgument(`Field [${field}] of type [${type}] is not supported for aggregation [date_histogram]`);
    }
    const rounding = histogramRounding(spec.params);
    const dateType: FieldType = type ?? 'date';
    const subs = ctx.subs(spec.subs);
    // a date_range value falls in every bucket it overlaps (within hard_bounds)
    const hard = spec.params.hard_bounds as { min?: unknown; max?: unknown } | undefined;
    const hardLo = hard?.min !== undefined ? parseDateValue(hard.min) : -Infinity;
    const hardHi = hard?.max !== undefined ? parseDateValue(hard.max) : Infinity;
    const keysOf = type === 'date_range'
      ? (doc: number) => read(doc).flatMap((v) => {
        const [a, z] = rangeBounds('date_range', String(v));
        const lo = Math.max(Number(decodeLong(a)), hardLo), hi = Math.min(Number(decodeLong(z)), hardHi);
        const keys: number[] = [];
        for (let k = rounding.round(lo); k <= hi; k = rounding.next(k)) {
          if (keys.length > MAX_RANGE_BUCKETS) throw illegalArgument(`Too many buckets for a range of field [${field}]: add [hard_bounds]`);
          keys.push(k);
        }
        return keys;
      })
      : (doc: number) => read(doc).map((v) => rounding.round(toNumber(v, dateType)));
    return () => {
      const b = bucketing(keysOf, subs, { budget: ctx.budget, name: spec.name, count: ctx.top, subs: spec.subs.length });
      return {
        collect: b.collect,
        partial: (): HistogramPartial => ({ t: 'date_histogram', buckets: b.buckets().sort((x, y) => compareKeys(x.key, y.key)) }),
      };
    };
  },
  merge: (a, b, _s, reduceSubs) => ({ t: 'date_histogram', buckets: mergeBuckets((a as HistogramPartial).buckets, (b as HistogramPartial).buckets, reduceSubs) }),
  render(s, partial, ctx) {
    const p = partial as HistogramPartial | undefined;
    const format = (s.params.format as string | undefined) ?? DEFAULT_DATE_FORMAT;
    const minDocCount = Number(s.params.min_doc_count ?? 0);
    let buckets = [...(p?.buckets ?? [])].sort((a, b) => compareKeys(a.key, b.key));
    const hard = s.params.hard_bounds as { min?: unknown; max?: unknown } | undefined;
    if (hard) {
      const lo = hard.min !== undefined ? parseDateValue(hard.min) : -Infinity;
      const hi = hard.max !== undefined ? parseDateValue(hard.max) : Infinity;
      buckets = buckets.filter((b) => Number(b.key) >= lo && Number(b.key) <= hi);
    }
    if (minDocCount === 0) buckets = fillEmpty(s, buckets, ctx);
    else buckets = buckets.filter((b) => b.count >= minDocCount);
    if (s.params.order !== undefined) buckets.sort(orderComparator(s).compare);
    ctx.countBuckets(buckets.length);
    const rendered = buckets.map((b) => ({
      key_as_string: formatDate(Number(b.key), format, zoneOf(s.params.time_zone)),
      key: b.key,
      doc_count: b.count,
      ...ctx.renderSubs(b.subs, s.subs),
    }));
    if (s.params.keyed === true || s.params.keyed === 'true') {
      return { buckets: Object.fromEntries(rendered.map((b) => [b.key_as_string, b])) };
    }
    return { buckets: rendered };
  },
};

/** min_doc_count 0: every bucket between the first and last key (widened by extended_bounds). */
function fillEmpty(s: AggSpec, buckets: BucketPartial[], ctx: RenderContext): BucketPartial[] {
  const rounding = histogramRounding(s.params);
  const ext = s.params.extended_bounds as { min?: unknown; max?: unknown } | undefined;
  let first = buckets.length > 0 ? Number(buckets[0].key) : undefined;
  let last = buckets.length > 0 ? Number(buckets[buckets.length - 1].key) : undefined;
  if (ext?.min !== undefined) {
    const m = rounding.round(parseDateValue(ext.min));
    first = first === undefined ? m : Math.min(first, m);
    last ??= m;
  }
  if (ext?.max !== undefined) {
    const m = rounding.round(parseDateValue(ext.max));
    last = last === undefined ? m : Math.max(last, m);
    first ??= m;
  }
  if (first === undefined || last === undefined) return buckets;
  const byKey = new Map(buckets.map((b) => [Number(b.key), b]));
  const out: BucketPartial[] = [];
  for (let k = first; k <= last; k = rounding.next(k)) {
    out.push(byKey.get(k) ?? { key: k, count: 0, subs: {} });
    if (out.length > ctx.maxBuckets) ctx.countBuckets(out.length); // throws: stop filling early
  }
  return out;
}
