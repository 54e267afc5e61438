import { EsError } from '../../wire/esErrors';
import { DEFAULT_DATE_FORMAT, formatDate, histogramRounding, parseDateValue } from './aggDates';
import { compareKeys, orderComparator } from './aggOrder';
import type { AggPartial, BucketPartial, HistogramPartial, MetricPartial, PartialMap, TermKey, TermsPartial, ValueKind } from './aggPartials';
import { aggSpecs, type AggSpec } from './aggSpec';
import { isExtraAgg, mergeExtra, renderExtra, type ExtraPartial } from './aggExtra';

/**
 * Coordinator side of aggregations: merge shard partials (`reduceAggs`, associative, so it can
 * run incrementally) and render ES's response shapes (`renderAggs`: top-N and
 * `sum_other_doc_count` for terms, empty-bucket filling for date_histogram, `value_as_string`).
 */

/** `search.max_buckets` default. */
export const MAX_BUCKETS = 65_536;

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
    if (ps.length > 0) out[s.name] = ps.reduce((a, b) => merge(a, b, s));
  }
  return out;
}

function merge(a: AggPartial, b: AggPartial, s: AggSpec): AggPartial {
  if (isExtraAgg(s.type)) return mergeExtra(a as ExtraPartial, b as ExtraPartial, s, (maps) => reduceMaps(maps, s.subs));
  if (a.t === 'terms' && b.t === 'terms') return mergeTerms(a, b, s);
  if (a.t === 'date_histogram' && b.t === 'date_histogram') return { t: a.t, buckets: mergeBuckets(a.buckets, b.buckets, s) };
  return mergeMetric(a as MetricPartial, b as MetricPartial);
}

function mergeMetric(a: MetricPartial, b: MetricPartial): MetricPartial {
  if (a.t === 'value_count' || b.t === 'value_count') {
    return { t: 'value_count', count: (a as { count: number }).count + (b as { count: number }).count };
  }
  const kind = a.kind === 'unmapped' ? b.kind : a.kind;
  // Partials cross NATS as lossless JSON: a large integral value arrives as a bigint. These metrics
  // are doubles in ES, so merged values are numbers (mixing bigint and number would throw).
  if (a.t === 'avg' && b.t === 'avg') return { t: 'avg', kind, sum: Number(a.sum) + Number(b.sum), count: a.count + b.count };
  if (a.t === 'sum' && b.t === 'sum') return { t: 'sum', kind, value: Number(a.value) + Number(b.value) };
  const x = (a as { value: number | null }).value;
  const y = (b as { value: number | null }).value;
  const pick = a.t === 'min' ? Math.min : Math.max;
  return { t: a.t as 'min' | 'max', kind, value: x === null ? y : y === null ? x : pick(Number(x), Number(y)) };
}

function mergeTerms(a: TermsPartial, b: TermsPartial, s: AggSpec): TermsPartial {
  // LongTerms + DoubleTerms reduce to DoubleTerms; an unmapped shard takes the other's kind.
  const kind = a.kind === 'unmapped' ? b.kind : b.kind === 'unmapped' ? a.kind : a.kind === 'double' || b.kind === 'double' ? 'double' : a.kind;
  const norm = (bs: BucketPartial[]) => (kind === 'double' ? bs.map((x) => ({ ...x, key: Number(x.key) })) : bs);
  return {
    t: 'terms',
    kind,
    buckets: mergeBuckets(norm(a.buckets), norm(b.buckets), s),
    other: a.other + b.other,
    error: a.error + b.error,
    shards: a.shards + b.shards,
  };
}

function mergeBuckets(a: BucketPartial[], b: BucketPartial[], s: AggSpec): BucketPartial[] {
  const byKey = new Map<string, BucketPartial>();
  for (const x of [...a, ...b]) {
    const id = `${typeof x.key === 'string' ? 's' : 'n'}${String(x.key)}`;
    const prev = byKey.get(id);
    if (!prev) byKey.set(id, x);
    else {
      byKey.set(id, {
        key: prev.key,
        count: prev.count + x.count,
        subs: reduceMaps([prev.subs, x.subs], s.subs),
        ...(prev.err !== undefined || x.err !== undefined ? { err: (prev.err ?? 0) + (x.err ?? 0) } : {}),
      });
    }
  }
  return [...byKey.values()];
}

// ---- rendering ----

/**
 * The response `aggregations` object, in request order; with `typed_keys` names become
 * `<type>#<name>` (`sterms#tags`, `lterms#years`, `date_histogram#per_day`, `min#low`).
 */
export function renderAggs(reduced: unknown, aggsJson: unknown, typedKeys: boolean): Record<string, unknown> {
  return renderMap((reduced ?? {}) as PartialMap, aggSpecs(aggsJson), typedKeys, { buckets: 0 });
}

function renderMap(m: PartialMap, specs: AggSpec[], typedKeys: boolean, budget: { buckets: number }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of specs) {
    const p = m[s.name];
    const body = renderOne(s, p, typedKeys, budget);
    const withMeta = s.meta !== undefined ? { meta: s.meta, ...body } : body;
    out[typedKeys ? `${typeName(s, p)}#${s.name}` : s.name] = withMeta;
  }
  return out;
}

function typeName(s: AggSpec, p: AggPartial | undefined): string {
  if (s.type === 'percentiles') return 'tdigest_percentiles';
  if (s.type !== 'terms') return s.type;
  const kind = (p as TermsPartial | undefined)?.kind ?? 'unmapped';
  return kind === 'double' ? 'dterms' : kind === 'string' || kind === 'unmapped' ? 'sterms' : 'lterms';
}

function renderOne(s: AggSpec, p: AggPartial | undefined, typedKeys: boolean, budget: { buckets: number }): Record<string, unknown> {
  const format = (s.params.format as string | undefined) ?? DEFAULT_DATE_FORMAT;
  if (isExtraAgg(s.type)) {
    return renderExtra(s, p as ExtraPartial | undefined, (subs) => renderMap(subs, s.subs, typedKeys, budget), (n) => countBuckets(budget, n));
  }
  switch (s.type) {
    case 'terms':
      return renderTerms(s, p as TermsPartial | undefined, typedKeys, budget);
    case 'date_histogram':
      return renderHistogram(s, p as HistogramPartial | undefined, typedKeys, budget);
    case 'value_count':
      return { value: (p as { count: number } | undefined)?.count ?? 0 };
    case 'sum': {
      const q = p as Extract<MetricPartial, { t: 'sum' }> | undefined;
      return valueWithString(q?.value ?? 0, q?.kind ?? 'unmapped', format);
    }
    case 'avg': {
      const q = p as Extract<MetricPartial, { t: 'avg' }> | undefined;
      return valueWithString(q && q.count > 0 ? Number(q.sum) / q.count : null, q?.kind ?? 'unmapped', format);
    }
    default: {
      const q = p as Extract<MetricPartial, { t: 'min' | 'max' }> | undefined;
      return valueWithString(q?.value ?? null, q?.kind ?? 'unmapped', format);
    }
  }
}

/** `{value}` plus `value_as_string` for dates and booleans (ES's non-RAW DocValueFormats). */
function valueWithString(value: number | null, kind: ValueKind, format: string): Record<string, unknown> {
  if (value === null || (kind !== 'date' && kind !== 'boolean')) return { value };
  return { value, value_as_string: kind === 'date' ? formatDate(value, format) : String(value !== 0) };
}

function renderTerms(s: AggSpec, p: TermsPartial | undefined, typedKeys: boolean, budget: { buckets: number }): Record<string, unknown> {
  if (!p) return { doc_count_error_upper_bound: 0, sum_other_doc_count: 0, buckets: [] };
  const size = Number(s.params.size ?? 10);
  const minDocCount = Number(s.params.min_doc_count ?? 1);
  const order = orderComparator(s);
  const sorted = [...p.buckets].sort(order.compare);
  const eligible = sorted.filter((b) => b.count >= minDocCount);
  const top = eligible.slice(0, size);
  const other = p.other + sorted.reduce((n, b) => n + b.count, 0) - top.reduce((n, b) => n + b.count, 0);
  // One shard sees every term: no error. Key order cannot miss counts; other orders cannot bound it (-1).
  const error = p.shards <= 1 ? 0 : order.byCountDesc ? p.error : order.byKey ? 0 : -1;
  const showError = s.params.show_term_doc_count_error === true || s.params.show_term_doc_count_error === 'true';
  const format = (s.params.format as string | undefined) ?? DEFAULT_DATE_FORMAT;
  countBuckets(budget, top.length);
  return {
    doc_count_error_upper_bound: error,
    sum_other_doc_count: other,
    buckets: top.map((b) => ({
      ...termKeyFields(b.key, p.kind, format),
      doc_count: b.count,
      ...(showError ? { doc_count_error_upper_bound: error > 0 ? error - (b.err ?? 0) : error } : {}),
      ...renderMap(b.subs, s.subs, typedKeys, budget),
    })),
  };
}

function termKeyFields(key: TermKey, kind: TermsPartial['kind'], format: string): Record<string, unknown> {
  if (kind === 'boolean') return { key, key_as_string: String(Number(key) !== 0) };
  if (kind === 'date') return { key, key_as_string: formatDate(Number(key), format) };
  return { key };
}

function renderHistogram(s: AggSpec, p: HistogramPartial | undefined, typedKeys: boolean, budget: { buckets: number }): Record<string, unknown> {
  const format = (s.params.format as string | undefined) ?? DEFAULT_DATE_FORMAT;
  const minDocCount = Number(s.params.min_doc_count ?? 0);
  let buckets = [...(p?.buckets ?? [])].sort((a, b) => compareKeys(a.key, b.key));
  const hard = s.params.hard_bounds as { min?: unknown; max?: unknown } | undefined;
  if (hard) {
    const lo = hard.min !== undefined ? parseDateValue(hard.min) : -Infinity;
    const hi = hard.max !== undefined ? parseDateValue(hard.max) : Infinity;
    buckets = buckets.filter((b) => Number(b.key) >= lo && Number(b.key) <= hi);
  }
  if (minDocCount === 0) buckets = fillEmpty(s, buckets, budget);
  else buckets = buckets.filter((b) => b.count >= minDocCount);
  if (s.params.order !== undefined) buckets.sort(orderComparator(s).compare);
  countBuckets(budget, buckets.length);
  const rendered = buckets.map((b) => ({
    key_as_string: formatDate(Number(b.key), format),
    key: b.key,
    doc_count: b.count,
    ...renderMap(b.subs, s.subs, typedKeys, budget),
  }));
  if (s.params.keyed === true || s.params.keyed === 'true') {
    return { buckets: Object.fromEntries(rendered.map((b) => [b.key_as_string, b])) };
  }
  return { buckets: rendered };
}

/** min_doc_count 0: every bucket between the first and last key (widened by extended_bounds). */
function fillEmpty(s: AggSpec, buckets: BucketPartial[], budget: { buckets: number }): BucketPartial[] {
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
    if (out.length > MAX_BUCKETS) countBuckets(budget, out.length); // throws: stop filling early
  }
  return out;
}

function countBuckets(budget: { buckets: number }, n: number): void {
  budget.buckets += n;
  if (budget.buckets > MAX_BUCKETS) {
    throw new EsError('too_many_buckets_exception', 400,
      `Trying to create too many buckets. Must be less than or equal to: [${MAX_BUCKETS}] but was [${budget.buckets}]. ` +
        'This limit can be set by changing the [search.max_buckets] cluster level setting.',
      { meta: { max_buckets: MAX_BUCKETS } });
  }
}
