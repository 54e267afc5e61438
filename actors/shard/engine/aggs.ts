import { illegalArgument } from '../../wire/esErrors';
import { histogramRounding, parseDateValue } from './aggDates';
import { aggSpecs, VALUE_TYPES, type AggSpec } from './aggSpec';
import { keyFilter } from './includeExclude';
import { compareKeys, orderComparator } from './aggOrder';
import type { DocValuesReader, FieldType } from './types';
import { extraFactory, isExtraAgg } from './aggExtra';
import type { AggPartial, BucketPartial, HistogramPartial, MetricPartial, PartialMap, TermKey, TermsKind, TermsPartial, ValueKind } from './aggPartials';

export type { AggPartial, BucketPartial, HistogramPartial, MetricPartial, PartialMap, TermKey, TermsKind, TermsPartial, ValueKind } from './aggPartials';

/**
 * Aggregations on a shard: `createAggregators` collects the docs a query matched into a
 * partial state (plain JSON, travels over NATS); `reduceAggs` merges partials and `renderAggs`
 * shapes the response (both in aggsRender.ts, re-exported here).
 */


/** The shard side of an aggs tree. */
export interface Aggregators {
  collect(doc: number): void;
  partial(): PartialMap;
}

interface Collector {
  collect(doc: number): void;
  partial(): AggPartial;
}
type Factory = () => Collector;

/**
 * Builds collectors for `aggsJson` over one shard. Field problems (text fields, keyword in a
 * numeric metric, missing `field`) throw here, as ES fails when it builds the aggregators.
 * @example const a = createAggregators(req.aggs, reader); for (const d of matched) a.collect(d); reply.aggs = a.partial();
 */
export function createAggregators(aggsJson: unknown, reader: DocValuesReader): Aggregators {
  return group(aggSpecs(aggsJson).map((s) => [s.name, factory(s, reader)] as const))();
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

/** What aggregations read of a shard besides doc values (ShardStore has both). */
type ShardReader = DocValuesReader & { index?: string; mapping?: { field(path: string): { format?: string } | undefined } };

function factory(spec: AggSpec, reader: DocValuesReader): Factory {
  if (isExtraAgg(spec.type)) return extraFactory(spec, reader, (specs) => group(specs.map((s) => [s.name, factory(s, reader)] as const)));
  const field = spec.params.field as string | undefined;
  if (field === undefined) throw illegalArgument('Required one of fields [field, script], but none were specified.');
  const shard = reader as ShardReader;
  const missing = spec.params.missing;
  const hasMissing = missing !== undefined && missing !== null;
  // `_index` reads as a keyword whose one value is the shard's index (ES IndexFieldMapper).
  const indexField = field === '_index' && shard.index !== undefined;
  const mapped = indexField ? 'keyword' : reader.fieldType(field);
  // An unmapped field with `missing` takes its values source from `value_type` (ValuesSourceConfig.resolve).
  const type: FieldType | undefined = mapped ?? (hasMissing ? hintedType(spec.params.value_type, missing) : undefined);
  if (type === 'text' && (spec.type === 'terms' || spec.type === 'value_count')) throw fielddataDisabled(field);
  const read = (doc: number) => {
    const vs = indexField ? [shard.index!] : mapped === undefined ? [] : reader.values(field, doc);
    return vs.length === 0 && hasMissing ? [missing as string | number | boolean | bigint] : vs;
  };
  const dateFormat = (spec.params.format as string | undefined) ?? shard.mapping?.field(field)?.format;
  switch (spec.type) {
    case 'terms':
      return termsFactory(spec, type, read, reader, dateFormat);
    case 'date_histogram':
      return histogramFactory(spec, type, read, reader);
    case 'value_count':
      return () => {
        let count = 0;
        return { collect: (doc) => void (count += read(doc).length), partial: () => ({ t: 'value_count', count }) };
      };
    default:
      return metricFactory(spec, type, read);
  }
}

const fielddataDisabled = (f: string) =>
  illegalArgument(
    'Text fields are not optimised for operations that require per-document field data like aggregations and sorting, ' +
      'so these operations are disabled by default. Please use a keyword field instead. Alternatively, set fielddata=true ' +
      `on [${f}] in order to load field data by uninverting the inverted index. Note that this can use significant memory.`,
  );

const NUMERIC: FieldType[] = ['long', 'integer', 'short', 'byte', 'double', 'float', 'half_float', 'scaled_float', 'unsigned_long'];
const DATES: FieldType[] = ['date', 'date_nanos'];

type Raw = string | number | boolean | bigint;

/** A value as a number (epoch millis for dates, 1/0 for booleans). */
function toNumber(v: Raw, type: FieldType | undefined): number {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (type === 'date_nanos' && typeof v === 'bigint') return Number(v / 1_000_000n);
  if (type === 'date' || type === 'date_nanos') return parseDateValue(v);
  if (type === 'boolean' && typeof v === 'string') return v === 'true' ? 1 : 0;
  const n = Number(v);
  if (Number.isNaN(n)) throw illegalArgument(`For input string: "${String(v)}"`);
  return n;
}

function valueKind(type: FieldType | undefined): ValueKind {
  if (type === undefined) return 'unmapped';
  if (DATES.includes(type)) return 'date';
  return type === 'boolean' ? 'boolean' : 'number';
}

function metricFactory(spec: AggSpec, type: FieldType | undefined, read: (doc: number) => Raw[]): Factory {
  const field = spec.params.field as string;
  if (type !== undefined && !NUMERIC.includes(type) && !DATES.includes(type) && type !== 'boolean') {
    throw illegalArgument(`Field [${field}] of type [${type}] is not supported for aggregation [${spec.type}]`);
  }
  const kind = type === undefined && spec.params.missing !== undefined ? 'number' : valueKind(type);
  const t = spec.type as 'min' | 'max' | 'sum' | 'avg';
  return () => {
    let min = Infinity;
    let max = -Infinity;
    let sum = 0;
    let count = 0;
    return {
      collect(doc) {
        for (const v of read(doc)) {
          const n = toNumber(v, type);
          if (n < min) min = n;
          if (n > max) max = n;
          sum += n;
          count++;
        }
      },
      partial(): MetricPartial {
        if (t === 'min') return { t, kind, value: count ? min : null };
        if (t === 'max') return { t, kind, value: count ? max : null };
        if (t === 'sum') return { t, kind, value: sum };
        return { t, kind, sum, count };
      },
    };
  };
}

/** The field type `value_type` gives an unmapped field with a `missing` value (numbers: long unless it has a fraction). */
function hintedType(valueType: unknown, missing: unknown): FieldType | undefined {
  const hint = typeof valueType === 'string' ? VALUE_TYPES[valueType] : undefined;
  if (hint === undefined) return undefined;
  if (hint === 'number') return Number(missing) % 1 !== 0 ? 'double' : 'long';
  return hint;
}

function termsKind(type: FieldType | undefined, missing: unknown): TermsKind {
  if (type === undefined) return missing === undefined ? 'unmapped' : 'string';
  if (type === 'boolean') return 'boolean';
  if (DATES.includes(type)) return 'date';
  if (['double', 'float', 'half_float', 'scaled_float'].includes(type)) return 'double';
  if (NUMERIC.includes(type)) return 'long';
  return 'string';
}

function termKey(v: Raw, kind: TermsKind, type: FieldType | undefined): TermKey {
  if (kind === 'string' || kind === 'unmapped') return String(v);
  if (kind === 'long' && typeof v === 'bigint') return v;
  if (kind === 'long' && typeof v === 'string' && /^-?\d+$/.test(v)) return Number.isSafeInteger(Number(v)) ? Number(v) : BigInt(v);
  return toNumber(v, type);
}

const keyId = (k: TermKey) => `${typeof k === 'string' ? 's' : 'n'}${String(k)}`;

interface LiveBucket {
  key: TermKey;
  count: number;
  subs: Aggregators;
}

/** Collects docs into keyed buckets, each with its own sub-aggregators. */
function bucketing(keysOf: (doc: number) => TermKey[], subs: () => Aggregators): { collect(doc: number): void; buckets(): BucketPartial[] } {
  const map = new Map<string, LiveBucket>();
  return {
    collect(doc) {
      const seen = new Set<string>();
      for (const k of keysOf(doc)) {
        const id = keyId(k);
        if (seen.has(id)) continue; // a doc counts once per bucket, however many values it has
        seen.add(id);
        let b = map.get(id);
        if (!b) map.set(id, (b = { key: k, count: 0, subs: subs() }));
        b.count++;
        b.subs.collect(doc);
      }
    },
    buckets: () => [...map.values()].map((b) => ({ key: b.key, count: b.count, subs: b.subs.partial() })),
  };
}

function termsFactory(spec: AggSpec, type: FieldType | undefined, read: (doc: number) => Raw[], reader: DocValuesReader, dateFormat: string | undefined): Factory {
  const kind = termsKind(type, spec.params.missing);
  const size = Number(spec.params.size ?? 10);
  // BucketUtils.suggestShardSideQueueSize: shards return more than `size` to bound the error.
  const shardSize = Math.max(size, Number(spec.params.shard_size ?? Math.trunc(size * 1.5 + 10)));
  const accept = keyFilter(spec.name, spec.params, kind, { dateFormat });
  const subs = group(spec.subs.map((s) => [s.name, factory(s, reader)] as const));
  const order = orderComparator(spec);
  const countDesc = order.byCountDesc;
  return () => {
    const b = bucketing((doc) => read(doc).map((v) => termKey(v, kind, type)).filter(accept), subs);
    return {
      collect: b.collect,
      partial(): TermsPartial {
        const all = b.buckets().sort(order.compare);
        const kept = all.slice(0, shardSize);
        const other = all.slice(shardSize).reduce((n, x) => n + x.count, 0);
        const error = all.length > shardSize && countDesc ? kept[kept.length - 1].count : 0;
        return { t: 'terms', kind, buckets: kept.map((x) => ({ ...x, err: error })), other, error, shards: 1 };
      },
    };
  };
}

function histogramFactory(spec: AggSpec, type: FieldType | undefined, read: (doc: number) => Raw[], reader: DocValuesReader): Factory {
  const field = spec.params.field as string;
  if (type !== undefined && !NUMERIC.includes(type) && !DATES.includes(type)) {
    throw illegalArgument(`Field [${field}] of type [${type}] is not supported for aggregation [date_histogram]`);
  }
  const rounding = histogramRounding(spec.params);
  const dateType: FieldType = type ?? 'date';
  const subs = group(spec.subs.map((s) => [s.name, factory(s, reader)] as const));
  return () => {
    const b = bucketing((doc) => read(doc).map((v) => rounding.round(toNumber(v, dateType))), subs);
    return {
      collect: b.collect,
      partial: (): HistogramPartial => ({ t: 'date_histogram', buckets: b.buckets().sort((x, y) => compareKeys(x.key, y.key)) }),
    };
  };
}

export { aggSpecs, parseAggs } from './aggSpec';
export type { AggSpec, AggType } from './aggSpec';
export { reduceAggs, renderAggs } from './aggsRender';
