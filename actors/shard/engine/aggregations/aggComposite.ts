import { EsError, illegalArgument } from '../../../wire/esErrors';
import { CALENDAR_UNITS, formatDate, histogramRounding, parseDateValue, type Rounding } from './aggDates';
import { compareCodePoints } from '../base/sortValues';
import { parseTimeValue } from '../../../wire/timeValue';
import type { AggregationType, AggSpec } from './aggTypes';
import { BUCKET_BYTES, compositeTooLarge, subsBytes, type AggBudget } from './aggBudget';
import type { CompositeBucket, CompositeKey, CompositePartial, PartialMap } from './aggPartials';

export type { CompositeBucket, CompositeKey, CompositePartial } from './aggPartials';
import type { DocValuesReader, FieldType } from '../types';

/**
 * The `composite` aggregation: buckets keyed by a tuple of source values (`terms`, `histogram`,
 * `date_histogram`), in the order of the sources, paged with `after`. Each shard keeps only the
 * first `size` keys after `after` (a bounded sorted set: a key that falls out can never come
 * back, since the bound only tightens); the coordinator merges the shards' lists by key and takes
 * the first `size` again. That is exact: a key among the global first `size` has fewer than
 * `size` keys before it on any shard, so every shard that holds it returned it with its full count.
 */


type SourceType = 'terms' | 'histogram' | 'date_histogram';

interface Source {
  name: string;
  type: SourceType;
  field?: string;
  order: 1 | -1;
  missingBucket: boolean;
  /** Nulls first (asc default) or last. */
  missingFirst: boolean;
  params: Record<string, unknown>;
}

const SOURCE_PARAMS: Record<SourceType, string[]> = {
  terms: ['field', 'missing_bucket', 'missing_order', 'order', 'value_type', 'format', 'script'],
  histogram: ['field', 'interval', 'missing_bucket', 'missing_order', 'order', 'value_type', 'format', 'script'],
  date_histogram: ['field', 'calendar_interval', 'fixed_interval', 'interval', 'format', 'time_zone', 'offset', 'missing_bucket', 'missing_order', 'order', 'value_type', 'script'],
};

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const bool = (v: unknown) => v === true || v === 'true';

/** Parses and checks `sources` (CompositeAggregationBuilder / CompositeValuesSourceParserHelper). */
export function compositeSources(name: string, params: Record<string, unknown>): Source[] {
  const raw = params.sources;
  if (raw === undefined) throw new EsError('x_content_parse_exception', 400, 'Required [sources]');
  if (!Array.isArray(raw) || !raw.length) throw illegalArgument(`Composite [sources] cannot be null or empty`);
  const seen = new Set<string>();
  const dups = new Set<string>();
  const out = raw.map((entry): Source => {
    if (!isObj(entry) || Object.keys(entry).length !== 1) throw new EsError('parsing_exception', 400, 'Expected one value source per entry in [sources]');
    const [srcName, def] = Object.entries(entry)[0];
    if (seen.has(srcName)) dups.add(srcName);
    seen.add(srcName);
    if (!isObj(def) || Object.keys(def).length !== 1) throw new EsError('parsing_exception', 400, `Expected one value source type for [${srcName}]`);
    const [type, p] = Object.entries(def)[0] as [string, unknown];
    if (!(type in SOURCE_PARAMS)) throw new EsError('parsing_exception', 400, `Unknown value source type [${type}] for [${srcName}]`);
    if (!isObj(p)) throw new EsError('parsing_exception', 400, `Expected an object for [${srcName}.${type}]`);
    for (const k of Object.keys(p)) {
      if (!SOURCE_PARAMS[type as SourceType].includes(k)) throw new EsError('x_content_parse_exception', 400, `[${type}] unknown field [${k}]`);
    }
    if (p.script !== undefined) throw illegalArgument(`[script] in [composite] source [${srcName}] is not supported`);
    if (p.field === undefined) throw illegalArgument(`Required one of fields [field, script], but none were specified.`);
    const order = String(p.order ?? 'asc').toLowerCase();
    if (order !== 'asc' && order !== 'desc') throw illegalArgument(`Unknown order direction [${String(p.order)}] in [${srcName}]`);
    const mo = String(p.missing_order ?? 'default').toLowerCase();
    if (!['default', 'first', 'last'].includes(mo)) throw illegalArgument(`Unknown MissingOrder [${String(p.missing_order)}]`);
    if (p.missing_order !== undefined && !bool(p.missing_bucket)) throw illegalArgument('missingOrder can only be set if missingBucket is true');
    if (type === 'histogram') {
      const iv = Number(p.interval);
      if (p.interval === undefined) throw illegalArgument(`[interval] must be specified for [${srcName}]`);
      if (!(iv > 0)) throw illegalArgument(`[interval] must be greater than 0 for [histogram] source [${srcName}]`);
    }
    if (type === 'date_histogram') {
      const ci = p.calendar_interval ?? (p.interval !== undefined && String(p.interval) in CALENDAR_UNITS ? p.interval : undefined);
      const fi = p.fixed_interval ?? (p.interval !== undefined && !(String(p.interval) in CALENDAR_UNITS) ? p.interval : undefined);
      if (ci === undefined && fi === undefined) throw illegalArgument('Invalid interval specified, must be non-null and non-empty');
      if (ci !== undefined && !(String(ci) in CALENDAR_UNITS)) throw illegalArgument(`The supplied interval [${String(ci)}] could not be parsed as a calendar interval.`);
      if (fi !== undefined) parseTimeValue(String(fi), 'date_histogram.fixedInterval');
      if (p.time_zone !== undefined && !['utc', 'z', '+00:00', '-00:00', '+00', 'etc/utc', 'gmt', 'utc+00:00'].includes(String(p.time_zone).toLowerCase())) {
        throw illegalArgument(`[time_zone] [${String(p.time_zone)}] is not supported, only UTC`);
      }
    }
    const asc = order === 'asc';
    return {
      name: srcName,
      type: type as SourceType,
      field: p.field as string,
      order: asc ? 1 : -1,
      missingBucket: bool(p.missing_bucket),
      missingFirst: mo === 'default' ? asc : mo === 'first',
      params: p,
    };
  });
  if (dups.size) throw illegalArgument(`Composite source names must be unique, found duplicates: [${[...dups].join(', ')}]`);
  const size = params.size === undefined ? 10 : Number(params.size);
  if (!Number.isInteger(size) || size <= 0) throw illegalArgument(`[size] must be greater than 0. Found [${String(params.size)}] in [${name}]`);
  if (params.after !== undefined) afterKey(out, params.after);
  return out;
}

/** The `after` object as a key tuple, checked against the sources (CompositeAggregationBuilder). */
function afterKey(sources: Source[], after: unknown): CompositeKey {
  if (!isObj(after)) throw illegalArgument('[after] must be an object');
  const keys = Object.keys(after);
  if (keys.length !== sources.length) throw illegalArgument(`[after] has ${keys.length} value(s) but [sources] has ${sources.length}`);
  return sources.map((s) => {
    if (!(s.name in after)) throw illegalArgument(`Missing value for [after.${s.name}]`);
    const v = after[s.name];
    if (v === null) {
      if (!s.missingBucket) throw illegalArgument(`Cannot set missing after key for source [${s.name}] when missing bucket is false`);
      return null;
    }
    if (typeof v === 'object') throw illegalArgument(`Invalid value for [after.${s.name}], expected comparable, got [${JSON.stringify(v)}]`);
    if (s.type === 'date_histogram') {
      if (typeof v === 'number' || typeof v === 'bigint') return Number(v);
      try {
        return parseDateValue(v);
      } catch {
        throw illegalArgument(`failed to parse date field [${String(v)}] with format [${(s.params.format as string | undefined) ?? 'strict_date_optional_time||epoch_millis'}]`);
      }
    }
    if (s.type === 'histogram') {
      const n = Number(v);
      if (!Number.isFinite(n)) throw illegalArgument(`For input string: "${String(v)}"`);
      return n;
    }
    return typeof v === 'bigint' ? Number(v) : (v as string | number | boolean);
  });
}

// ---- key order ----

function compareValue(a: CompositeKey[number], b: CompositeKey[number], s: Source): number {
  if (a === b) return 0;
  if (a === null) return s.missingFirst ? -1 : 1;
  if (b === null) return s.missingFirst ? 1 : -1;
  let c: number;
  if (typeof a === 'number' && typeof b === 'number') c = a - b;
  else if (typeof a === 'boolean' && typeof b === 'boolean') c = a === b ? 0 : a ? 1 : -1;
  else if (typeof a === 'string' && typeof b === 'string') c = compareCodePoints(a, b);
  else c = typeof a === 'string' ? 1 : -1; // mixed kinds across shards: numbers first
  return s.order * c;
}

export function keyComparator(sources: Source[]): (a: CompositeKey, b: CompositeKey) => number {
  return (a, b) => {
    for (let i = 0; i < sources.length; i++) {
      const c = compareValue(a[i], b[i], sources[i]);
      if (c !== 0) return c;
    }
    return 0;
  };
}

const keyId = (k: CompositeKey) => JSON.stringify(k);

// ---- shard side ----

const NUMERIC: FieldType[] = ['long', 'integer', 'short', 'byte', 'double', 'float', 'half_float', 'scaled_float', 'unsigned_long'];

type Raw = string | number | boolean | bigint;

function valuesOf(s: Source, reader: DocValuesReader): (doc: number) => CompositeKey {
  const field = s.field!;
  const type = reader.fieldType(field);
  if (type === 'text') {
    throw illegalArgument(
      'Text fields are not optimised for operations that require per-document field data like aggregations and sorting, ' +
        'so these operations are disabled by default. Please use a keyword field instead. Alternatively, set fielddata=true ' +
        `on [${field}] in order to load field data by uninverting the inverted index. Note that this can use significant memory.`,
    );
  }
  const read = (doc: number): Raw[] => (type === undefined ? [] : reader.values(field, doc));
  const asMillis = (v: Raw) => (type === 'date_nanos' && typeof v === 'bigint' ? Number(v / 1_000_000n) : typeof v === 'bigint' ? Number(v) : parseDateValue(v));
  if (s.type === 'terms') {
    return (doc) =>
      read(doc).map((v) => {
        if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : String(v);
        if ((type === 'date' || type === 'date_nanos') && typeof v !== 'number') return asMillis(v);
        return v;
      });
  }
  if (type !== undefined && !NUMERIC.includes(type) && type !== 'date' && type !== 'date_nanos') {
    throw illegalArgument(`Field [${field}] of type [${type}] is not supported for aggregation [${s.type}]`);
  }
  if (s.type === 'histogram') {
    const interval = Number(s.params.interval);
    return (doc) => read(doc).map((v) => Math.floor(Number(v) / interval) * interval);
  }
  const rounding: Rounding = histogramRounding({
    ...s.params,
    ...(s.params.interval !== undefined && s.params.calendar_interval === undefined && s.params.fixed_interval === undefined
      ? String(s.params.interval) in CALENDAR_UNITS ? { calendar_interval: s.params.interval } : { fixed_interval: s.params.interval }
      : {}),
  });
  return (doc) => read(doc).map((v) => rounding.round(asMillis(v)));
}

interface Live {
  key: CompositeKey;
  count: number;
  subs: { collect(doc: number): void; partial(): PartialMap };
}

/** The shard collector of a composite spec; `subs` builds the sub-aggregators of one bucket. */
export function compositeCollector(spec: AggSpec, reader: DocValuesReader, subs: () => { collect(doc: number): void; partial(): PartialMap }, budget: AggBudget, top = true) {
  const sources = compositeSources(spec.name, spec.params);
  const size = spec.params.size === undefined ? 10 : Number(spec.params.size);
  const after = spec.params.after !== undefined ? afterKey(sources, spec.params.after) : undefined;
  if (size > budget.maxBuckets) {
    // ES sizes its queue up front and trips search.max_buckets at once.
    throw compositeTooLarge(budget.maxBuckets, size);
  }
  const meter = budget.meter(spec.name);
  const cmp = keyComparator(sources);
  const readers = sources.map((s) => valuesOf(s, reader));
  return () => {
    const byId = new Map<string, Live>();
    const order: CompositeKey[] = []; // sorted keys held, at most `size`
    const add = (key: CompositeKey, doc: number) => {
      if (after && cmp(key, after) <= 0) return;
      const id = keyId(key);
      let b = byId.get(id);
      if (!b) {
        if (order.length >= size && cmp(key, order[order.length - 1]) >= 0) return; // beyond the page
        let lo = 0;
        let hi = order.length;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (cmp(order[mid], key) < 0) lo = mid + 1;
          else hi = mid;
        }
        order.splice(lo, 0, key);
        byId.set(id, (b = { key, count: 0, subs: subs() }));
        if (order.length > size) byId.delete(keyId(order.pop()!));
        else {
          // the queue grew: one more bucket that will be returned (ES counts its queue's size)
          if (top) budget.consume(1);
          meter.add(BUCKET_BYTES + subsBytes(spec.subs.length) + id.length);
        }
      }
      b.count++;
      b.subs.collect(doc);
    };
    return {
      collect(doc: number) {
        const per = readers.map((r, i) => {
          const vs = [...new Set(r(doc).map((v) => JSON.stringify(v)))].map((x) => JSON.parse(x) as CompositeKey[number]);
          return vs.length ? vs : sources[i].missingBucket ? [null] : [];
        });
        if (per.some((vs) => !vs.length)) return;
        // Every combination of the doc's values is one key (a multi-valued doc lands in several buckets).
        let keys: CompositeKey[] = [[]];
        for (const vs of per) keys = keys.flatMap((k) => vs.map((v) => [...k, v]));
        for (const k of keys) add(k, doc);
      },
      partial(): CompositePartial {
        return { t: 'composite', buckets: order.map((k) => byId.get(keyId(k))!).map((b) => ({ key: b.key, count: b.count, subs: b.subs.partial() })) };
      },
    };
  };
}

// ---- coordinator side ----

export function mergeComposite(a: CompositePartial, b: CompositePartial, spec: AggSpec, reduceSubs: (maps: PartialMap[]) => PartialMap): CompositePartial {
  const sources = compositeSources(spec.name, spec.params);
  const size = spec.params.size === undefined ? 10 : Number(spec.params.size);
  const cmp = keyComparator(sources);
  const byId = new Map<string, CompositeBucket>();
  for (const x of [...a.buckets, ...b.buckets]) {
    const id = keyId(x.key);
    const prev = byId.get(id);
    byId.set(id, prev ? { key: prev.key, count: prev.count + x.count, subs: reduceSubs([prev.subs, x.subs]) } : x);
  }
  return { t: 'composite', buckets: [...byId.values()].sort((x, y) => cmp(x.key, y.key)).slice(0, size) };
}

/** Renders a key value: date sources print epoch millis, or a string with `format`. */
function renderValue(v: CompositeKey[number], s: Source): unknown {
  if (v === null) return null;
  if (s.type === 'date_histogram' && s.params.format !== undefined && typeof v === 'number') return formatDate(v, String(s.params.format));
  return v;
}

export function renderComposite(spec: AggSpec, p: CompositePartial | undefined, renderSubs: (subs: PartialMap) => Record<string, unknown>, countBuckets: (n: number) => void): Record<string, unknown> {
  const sources = compositeSources(spec.name, spec.params);
  const buckets = p?.buckets ?? [];
  countBuckets(buckets.length);
  const keyObj = (k: CompositeKey) => Object.fromEntries(sources.map((s, i) => [s.name, renderValue(k[i], s)]));
  return {
    ...(buckets.length ? { after_key: keyObj(buckets[buckets.length - 1].key) } : {}),
    buckets: buckets.map((b) => ({ key: keyObj(b.key), doc_count: b.count, ...renderSubs(b.subs) })),
  };
}

/** The registry entry of `composite` (must be top-level: aggSpec.ts checks that for every parent). */
export const compositeAgg: AggregationType = {
  params: ['sources', 'size', 'after'],
  check: (spec) => void compositeSources(spec.name, spec.params),
  factory: (spec, ctx) => compositeCollector(spec, ctx.reader, ctx.subs(spec.subs), ctx.budget, ctx.top),
  merge: (a, b, spec, reduceSubs) => mergeComposite(a as CompositePartial, b as CompositePartial, spec, reduceSubs),
  render: (spec, p, ctx) => renderComposite(spec, p as CompositePartial | undefined, (subs) => ctx.renderSubs(subs, spec.subs), ctx.countBuckets),
};
