/**
 * Aggregations of `_security/_query/api_key` (ES ApiKeyAggregationsBuilder): `terms`, `range`,
 * `date_range`, `missing`, `cardinality`, `value_count`, `composite` (terms sources), `filter` and
 * `filters`, nested as sub-aggregations, over the keys the query matched (never wider: no `global`).
 * Responses in ES's shapes; `typed_keys` prefixes names with ES's internal type names.
 */
import { dateFormatter } from '../shard/engine/base/dates';
import { EsError, illegalArgument } from '../wire/esErrors';
import { compileQuery, isObj, toMillis, type Field, type FieldTable, type Predicate, type Value } from './queryDsl';

type Obj = Record<string, unknown>;

/** Aggregation types ES knows but this API refuses; anything else is an unknown type. */
const REFUSED = new Set([
  'global', 'avg', 'min', 'max', 'sum', 'stats', 'extended_stats', 'percentiles', 'percentile_ranks', 'top_hits', 'histogram', 'date_histogram',
  'auto_date_histogram', 'significant_terms', 'significant_text', 'rare_terms', 'multi_terms', 'nested', 'reverse_nested', 'sampler',
  'diversified_sampler', 'adjacency_matrix', 'geotile_grid', 'geohash_grid', 'geo_distance', 'ip_range', 'ip_prefix', 'variable_width_histogram',
  'weighted_avg', 'median_absolute_deviation', 'scripted_metric', 'top_metrics', 'boxplot', 'string_stats', 't_test', 'rate', 'matrix_stats',
  'geo_bounds', 'geo_centroid', 'geo_line', 'children', 'parent', 'random_sampler', 'categorize_text', 'frequent_item_sets', 'time_series',
]);
const PIPELINE = new Set([
  'avg_bucket', 'max_bucket', 'min_bucket', 'sum_bucket', 'stats_bucket', 'extended_stats_bucket', 'percentiles_bucket', 'cumulative_sum',
  'cumulative_cardinality', 'derivative', 'bucket_script', 'bucket_selector', 'bucket_sort', 'serial_diff', 'moving_fn', 'moving_percentiles',
  'normalize', 'inference', 'change_point', 'bucket_count_ks_test', 'bucket_correlation',
]);
const VALUES_SOURCE = new Set(['terms', 'range', 'date_range', 'missing', 'cardinality', 'value_count']);

/** One parsed aggregation: computes its result over a set of records. */
interface Agg<T> {
  name: string;
  /** The typed_keys prefix (ES's InternalAggregation type names). */
  typed: () => string;
  run(docs: T[], typedKeys: boolean): Obj;
}

export interface AggContext<T> {
  fields: FieldTable<T>;
  now: number;
}

/** Parses an `aggs` object (checking every type and field, as ES does before searching). */
export function parseAggs<T>(v: unknown, ctx: AggContext<T>): Agg<T>[] {
  if (!isObj(v)) throw new EsError('parsing_exception', 400, 'Expected [START_OBJECT] under [aggs], but got a [VALUE]');
  return Object.entries(v).map(([name, def]) => parseAgg(name, def, ctx));
}

/** Renders parsed aggregations over `docs` (names prefixed with their type under `typed_keys`). */
export function runAggs<T>(aggs: Agg<T>[], docs: T[], typedKeys: boolean): Obj {
  const out: Obj = {};
  for (const a of aggs) out[typedKeys ? `${a.typed()}#${a.name}` : a.name] = a.run(docs, typedKeys);
  return out;
}

function parseAgg<T>(name: string, def: unknown, ctx: AggContext<T>): Agg<T> {
  if (!isObj(def)) throw new EsError('parsing_exception', 400, `Expected [START_OBJECT] under [${name}], but got a [VALUE]`);
  const types = Object.keys(def).filter((k) => k !== 'aggs' && k !== 'aggregations' && k !== 'meta');
  if (types.length !== 1) {
    throw new EsError('parsing_exception', 400, types.length ? `Found two aggregation type definitions in [${name}]: [${types[0]}] and [${types[1]}]` : `Missing definition for aggregation [${name}]`);
  }
  const type = types[0];
  const body = def[type];
  if (PIPELINE.has(type)) throw illegalArgument(`Unsupported aggregation of type [${type}]`);
  if (REFUSED.has(type)) throw illegalArgument(`Unsupported API Keys agg [${name}] of type [${type}]`);
  if (!isObj(body)) throw new EsError('parsing_exception', 400, `[${type}] aggregation [${name}] must be an object`);
  if (VALUES_SOURCE.has(type) && body.script !== undefined) throw illegalArgument(`Unsupported script value source for [${name}] agg`);
  const subsDef = def.aggs ?? def.aggregations;
  const subs = subsDef === undefined ? [] : parseAggs(subsDef, ctx);
  const field = () => ctx.fields.resolve(String(body.field));
  switch (type) {
    case 'terms':
      return termsAgg(name, body, field(), subs);
    case 'range':
    case 'date_range':
      return rangeAgg(name, type, body, field(), subs, ctx.now);
    case 'missing': {
      const f = field();
      return { name, typed: () => 'missing', run: (docs, tk) => bucket(docs.filter((d) => !f.values(d).length), subs, tk) };
    }
    case 'cardinality': {
      const f = field();
      return { name, typed: () => 'cardinality', run: (docs) => ({ value: new Set(docs.flatMap((d) => f.values(d))).size }) };
    }
    case 'value_count': {
      const f = field();
      return { name, typed: () => 'value_count', run: (docs) => ({ value: docs.reduce((n, d) => n + f.values(d).length, 0) }) };
    }
    case 'composite':
      return compositeAgg(name, body, subs, ctx);
    case 'filter': {
      const p = compileQuery(body, ctx.fields, ctx.now);
      return { name, typed: () => 'filter', run: (docs, tk) => bucket(docs.filter(p), subs, tk) };
    }
    case 'filters':
      return filtersAgg(name, body, subs, ctx);
    default:
      throw new EsError('parsing_exception', 400, `Unknown aggregation type [${type}]`);
  }
}

const bucket = <T>(docs: T[], subs: Agg<T>[], tk: boolean): Obj => ({ doc_count: docs.length, ...runAggs(subs, docs, tk) });

const ISO = dateFormatter('strict_date_optional_time');
const isoOf = (ms: number) => ISO.format({ ms, ns: 0 });

function termsAgg<T>(name: string, b: Obj, f: Field<T>, subs: Agg<T>[]): Agg<T> {
  const size = b.size === undefined ? 10 : Number(b.size);
  if (!Number.isInteger(size) || size < 1) throw illegalArgument(`[size] must be greater than 0. Found [${String(b.size)}] in [${name}]`);
  const minDocCount = b.min_doc_count === undefined ? 1 : Number(b.min_doc_count);
  const missing = b.missing;
  const ord = (isObj(b.order) ? Object.entries(b.order)[0] : Array.isArray(b.order) && isObj(b.order[0]) ? Object.entries(b.order[0])[0] : undefined) ?? ['_count', 'desc'];
  const [by, dir] = [String(ord[0]), String(ord[1]).toLowerCase()];
  if (by !== '_count' && by !== '_key') throw illegalArgument(`Invalid aggregation order path [${by}]. Buckets can only be sorted on a sub-aggregator path that is built out of zero or more single-bucket aggregations within the path and a final single-bucket or a metrics aggregation at the path end.`);
  const numeric = f.kind === 'date' || f.kind === 'boolean';
  return {
    name,
    typed: () => (numeric ? 'lterms' : 'sterms'),
    run(docs, tk) {
      const groups = new Map<Value, T[]>();
      for (const d of docs) {
        let vs = f.values(d);
        if (!vs.length && missing !== undefined) vs = [f.kind === 'date' ? Number(missing) : String(missing)];
        for (const v of new Set(vs)) {
          const list = groups.get(v);
          if (list) list.push(d);
          else groups.set(v, [d]);
        }
      }
      const keyNum = (v: Value) => (typeof v === 'boolean' ? (v ? 1 : 0) : v);
      const entries = [...groups].filter(([, l]) => l.length >= minDocCount);
      const cmpKey = (a: Value, b2: Value) => (keyNum(a) < keyNum(b2) ? -1 : keyNum(a) > keyNum(b2) ? 1 : 0);
      entries.sort(([ka, la], [kb, lb]) => {
        const c = by === '_count' ? la.length - lb.length : cmpKey(ka, kb);
        const s = dir === 'desc' ? -c : c;
        return s || cmpKey(ka, kb);
      });
      const top = entries.slice(0, size);
      const other = entries.slice(size).reduce((n, [, l]) => n + l.length, 0);
      return {
        doc_count_error_upper_bound: 0,
        sum_other_doc_count: other,
        buckets: top.map(([k, l]) => ({
          key: keyNum(k),
          ...(f.kind === 'date' ? { key_as_string: isoOf(k as number) } : typeof k === 'boolean' ? { key_as_string: String(k) } : {}),
          doc_count: l.length,
          ...runAggs(subs, l, tk),
        })),
      };
    },
  };
}

function rangeAgg<T>(name: string, type: 'range' | 'date_range', b: Obj, f: Field<T>, subs: Agg<T>[], now: number): Agg<T> {
  // the queryable numeric fields are dates (creation, expiration, invalidation); keywords have no ranges
  if (f.kind !== 'date') throw illegalArgument(`Field [${f.name}] of type [${f.kind}] is not supported for aggregation [${type}]`);
  if (!Array.isArray(b.ranges) || !b.ranges.length) throw illegalArgument(`No [ranges] specified for the [${name}] aggregation`);
  let fmt = ISO;
  try {
    if (typeof b.format === 'string') fmt = dateFormatter(b.format);
  } catch (e) {
    throw illegalArgument((e as Error).message);
  }
  const bound = (v: unknown) => (v === undefined || v === null ? undefined : toMillis(v, f.name, { now, format: typeof b.format === 'string' ? b.format : undefined }));
  const ranges = (b.ranges as unknown[]).map((r) => {
    const o = (isObj(r) ? r : {}) as Obj;
    return { key: typeof o.key === 'string' ? o.key : undefined, from: bound(o.from), to: bound(o.to) };
  });
  // ES sorts ranges by from, then to (RangeAggregator)
  ranges.sort((a, c) => (a.from ?? -Infinity) - (c.from ?? -Infinity) || (a.to ?? Infinity) - (c.to ?? Infinity));
  const text = (n: number | undefined) => (n === undefined ? '*' : fmt.format({ ms: n, ns: 0 }));
  const keyed = b.keyed === true;
  return {
    name,
    typed: () => type,
    run(docs, tk) {
      const buckets = ranges.map((r) => {
        const inside = docs.filter((d) => f.values(d).some((v) => (r.from === undefined || (v as number) >= r.from) && (r.to === undefined || (v as number) < r.to)));
        return {
          key: r.key ?? `${text(r.from)}-${text(r.to)}`,
          ...(r.from !== undefined ? { from: r.from, from_as_string: text(r.from) } : {}),
          ...(r.to !== undefined ? { to: r.to, to_as_string: text(r.to) } : {}),
          ...bucket(inside, subs, tk),
        };
      });
      return { buckets: keyed ? Object.fromEntries(buckets.map(({ key, ...rest }) => [key, rest])) : buckets };
    },
  };
}

function compositeAgg<T>(name: string, b: Obj, subs: Agg<T>[], ctx: AggContext<T>): Agg<T> {
  if (!Array.isArray(b.sources) || !b.sources.length) throw illegalArgument(`Composite [sources] cannot be null or empty`);
  const sources = (b.sources as unknown[]).map((s) => {
    if (!isObj(s) || Object.keys(s).length !== 1) throw new EsError('parsing_exception', 400, `[composite] sources must be objects with one name each`);
    const [src, def] = Object.entries(s)[0];
    if (!isObj(def) || Object.keys(def).length !== 1) throw new EsError('parsing_exception', 400, `[${src}] must name one value source type`);
    const [kind, o] = Object.entries(def)[0] as [string, Obj];
    if (isObj(o) && o.script !== undefined) throw illegalArgument(`Unsupported script value source for [${src}] of composite agg [${name}]`);
    const field = ctx.fields.resolve(String(isObj(o) ? o.field : undefined));
    if (kind !== 'terms') throw illegalArgument(`Unsupported value source type for [${src}] of composite agg [${name}].Only [terms] value sources are allowed.`);
    return { src, field, desc: isObj(o) && String(o.order ?? 'asc').toLowerCase() === 'desc', missingBucket: isObj(o) && o.missing_bucket === true };
  });
  const size = b.size === undefined ? 10 : Number(b.size);
  const after = isObj(b.after) ? b.after : undefined;
  type Key = Array<Value | null>;
  const cmp = (a: Key, c: Key) => {
    for (let i = 0; i < sources.length; i++) {
      const [x, y] = [a[i], c[i]];
      if (x === y) continue;
      const r = x === null ? -1 : y === null ? 1 : x < y ? -1 : 1; // missing buckets sort first
      return sources[i].desc ? -r : r;
    }
    return 0;
  };
  return {
    name,
    typed: () => 'composite',
    run(docs, tk) {
      const groups = new Map<string, { key: Key; docs: T[] }>();
      for (const d of docs) {
        let keys: Key[] = [[]];
        for (const s of sources) {
          const vs: Array<Value | null> = [...new Set(s.field.values(d))];
          if (!vs.length) {
            if (!s.missingBucket) {
              keys = [];
              break;
            }
            vs.push(null);
          }
          keys = keys.flatMap((k) => vs.map((v) => [...k, v]));
        }
        for (const k of keys) {
          const id = JSON.stringify(k);
          const g = groups.get(id);
          if (g) g.docs.push(d);
          else groups.set(id, { key: k, docs: [d] });
        }
      }
      let list = [...groups.values()].sort((a, c) => cmp(a.key, c.key));
      if (after) {
        const ak: Key = sources.map((s) => (after[s.src] === null || after[s.src] === undefined ? null : s.field.kind === 'date' ? Number(after[s.src]) : s.field.kind === 'boolean' ? after[s.src] === true || after[s.src] === 'true' : String(after[s.src])));
        list = list.filter((g) => cmp(g.key, ak) > 0);
      }
      const page = list.slice(0, size);
      const keyObj = (k: Key) => Object.fromEntries(sources.map((s, i) => [s.src, k[i]]));
      return {
        ...(page.length ? { after_key: keyObj(page[page.length - 1].key) } : {}),
        buckets: page.map((g) => ({ key: keyObj(g.key), ...bucket(g.docs, subs, tk) })),
      };
    },
  };
}

function filtersAgg<T>(name: string, b: Obj, subs: Agg<T>[], ctx: AggContext<T>): Agg<T> {
  const defs = b.filters;
  const named = isObj(defs);
  if (!named && !Array.isArray(defs)) throw new EsError('parsing_exception', 400, `[filters] must be an object or an array of queries`);
  const filters: Array<{ key: string; p: Predicate<T> }> = named
    ? Object.entries(defs).map(([key, q]) => ({ key, p: compileQuery(q, ctx.fields, ctx.now) }))
    : (defs as unknown[]).map((q, i) => ({ key: String(i), p: compileQuery(q, ctx.fields, ctx.now) }));
  const otherKey = typeof b.other_bucket_key === 'string' ? b.other_bucket_key : '_other_';
  const other = b.other_bucket === true || typeof b.other_bucket_key === 'string';
  const keyed = named && b.keyed !== false;
  return {
    name,
    typed: () => 'filters',
    run(docs, tk) {
      const buckets = filters.map((f) => ({ key: f.key, ...bucket(docs.filter(f.p), subs, tk) }));
      if (other) buckets.push({ key: otherKey, ...bucket(docs.filter((d) => !filters.some((f) => f.p(d))), subs, tk) });
      if (keyed) return { buckets: Object.fromEntries(buckets.map(({ key, ...rest }) => [key, rest])) };
      return { buckets: named ? buckets : buckets.map(({ key: _k, ...rest }) => rest) };
    },
  };
}
