import { illegalArgument } from '../../../wire/esErrors';
import { formatDate, DEFAULT_DATE_FORMAT } from './aggDates';
import type { AggPartial, MetricPartial, ValueKind } from './aggPartials';
import type { AggregationType, AggSpec, Collector, Factory } from './aggTypes';
import { DATES, fielddataDisabled, fieldValues, NUMERIC, toNumber, valueKind, type Raw } from './values';
import type { FieldType } from '../types';

/** The single-value metrics: `min`, `max`, `avg`, `sum`, `value_count`. */

const PARAMS = ['field', 'missing', 'format', 'value_type', 'script'] as const;

function numericFactory(spec: AggSpec, type: FieldType | undefined, read: (doc: number) => Raw[]): Factory {
  const field = spec.params.field as string;
  if (type !== undefined && !NUMERIC.includes(type) && !DATES.includes(type) && type !== 'boolean') {
    throw illegalArgument(`Field [${field}] of type [${type}] is not supported for aggregation [${spec.type}]`);
  }
  const kind = type === undefined && spec.params.missing !== undefined ? 'number' : valueKind(type);
  const t = spec.type as 'min' | 'max' | 'sum' | 'avg';
  return () => new NumericMetric(t, kind, type, read);
}

/** A numeric metric's state: a class, since every bucket of a parent aggregation holds one. */
class NumericMetric implements Collector {
  private min = Infinity;
  private max = -Infinity;
  private sum = 0;
  private count = 0;
  constructor(
    private readonly t: 'min' | 'max' | 'sum' | 'avg',
    private readonly kind: ValueKind,
    private readonly type: FieldType | undefined,
    private readonly read: (doc: number) => Raw[],
  ) {}
  collect(doc: number): void {
    for (const v of this.read(doc)) {
      const n = toNumber(v, this.type);
      if (n < this.min) this.min = n;
      if (n > this.max) this.max = n;
      this.sum += n;
      this.count++;
    }
  }
  partial(): MetricPartial {
    const { t, kind, count } = this;
    if (t === 'min') return { t, kind, value: count ? this.min : null };
    if (t === 'max') return { t, kind, value: count ? this.max : null };
    if (t === 'sum') return { t, kind, value: this.sum };
    return { t, kind, sum: this.sum, count };
  }
}

// Metric values are doubles; one above 2^53 comes back from a shard as a bigint (lossless JSON).
const n = (v: number | bigint) => Number(v);

function mergeMetric(a: AggPartial, b: AggPartial): AggPartial {
  const x = a as MetricPartial;
  const y = b as MetricPartial;
  if (x.t === 'value_count' || y.t === 'value_count') {
    return { t: 'value_count', count: (x as { count: number }).count + (y as { count: number }).count };
  }
  const kind = x.kind === 'unmapped' ? y.kind : x.kind;
  if (x.t === 'avg' && y.t === 'avg') return { t: 'avg', kind, sum: n(x.sum) + n(y.sum), count: x.count + y.count };
  if (x.t === 'sum' && y.t === 'sum') return { t: 'sum', kind, value: n(x.value) + n(y.value) };
  const p = (x as { value: number | null }).value;
  const q = (y as { value: number | null }).value;
  const pick = (u: number, v: number) => (x.t === 'min' ? Math.min(n(u), n(v)) : Math.max(n(u), n(v)));
  return { t: x.t as 'min' | 'max', kind, value: p === null ? q : q === null ? p : pick(p, q) };
}

/** `{value}` plus `value_as_string` for dates and booleans (ES's non-RAW DocValueFormats). */
export function valueWithString(value: number | null, kind: ValueKind, format: string): Record<string, unknown> {
  if (value === null || (kind !== 'date' && kind !== 'boolean')) return { value };
  return { value, value_as_string: kind === 'date' ? formatDate(value, format) : String(value !== 0) };
}

const formatOf = (s: AggSpec) => (s.params.format as string | undefined) ?? DEFAULT_DATE_FORMAT;

function metric(render: (spec: AggSpec, p: AggPartial | undefined) => Record<string, unknown>): AggregationType {
  return {
    params: PARAMS,
    metric: true,
    factory(spec, { reader }) {
      const v = fieldValues(spec, reader);
      return numericFactory(spec, v.type, v.read);
    },
    merge: mergeMetric,
    render,
  };
}

type Single = Extract<MetricPartial, { t: 'min' | 'max' }>;

export const minAgg = metric((s, p) => {
  const q = p as Single | undefined;
  return valueWithString(q?.value === null || q?.value === undefined ? null : Number(q.value), q?.kind ?? 'unmapped', formatOf(s));
});
export const maxAgg = minAgg;
export const sumAgg = metric((s, p) => {
  const q = p as Extract<MetricPartial, { t: 'sum' }> | undefined;
  return valueWithString(Number(q?.value ?? 0), q?.kind ?? 'unmapped', formatOf(s)); // doubles (a bigint when over 2^53)
});
export const avgAgg = metric((s, p) => {
  const q = p as Extract<MetricPartial, { t: 'avg' }> | undefined;
  return valueWithString(q && q.count > 0 ? Number(q.sum) / q.count : null, q?.kind ?? 'unmapped', formatOf(s));
});
export const valueCountAgg: AggregationType = {
  params: PARAMS,
  metric: true,
  factory(spec, { reader }) {
    const { read, type, field } = fieldValues(spec, reader);
    if (type === 'text') throw fielddataDisabled(field);
    return () => {
      let count = 0;
      return { collect: (doc) => void (count += read(doc).length), partial: () => ({ t: 'value_count', count }) };
    };
  },
  merge: mergeMetric,
  render: (_s, p) => ({ value: (p as { count: number } | undefined)?.count ?? 0 }),
};
