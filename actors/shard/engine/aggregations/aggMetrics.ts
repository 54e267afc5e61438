import { illegalArgument } from '../../../wire/esErrors';
import { murmur3Bytes } from '../base/routing';
import { formatDate, parseDateValue } from './aggDates';
import type { FieldType } from '../types';
import type { AggregationType } from './aggTypes';
import { fieldValues } from './values';
import { VALUE_BYTES } from './aggBudget';
import type { CardinalityPartial, PercentilesPartial, ValueKind } from './aggPartials';

export type { CardinalityPartial, PercentilesPartial } from './aggPartials';

/**
 * `percentiles` and `cardinality`: shard collectors, associative merges and ES renderings.
 *
 * Percentiles: a partial keeps every value, sorted, up to EXACT_LIMIT values (ES 8's hybrid
 * TDigest also starts exact); past that it becomes a merging t-digest of centroids at the
 * request's `tdigest.compression` (100). Quantiles interpolate between value (centroid) centers,
 * as ES's digest does, so small sets give ES's figures exactly (1, 51, 101, 151 -> p25 26, p50 76).
 * Larger sets are estimates, like ES's, but not bit-identical to them.
 *
 * Cardinality: a partial keeps the distinct values themselves up to `precision_threshold` (exact
 * below it, as ES), then a HyperLogLog sketch of 2^14 registers over a 64-bit hash.
 */

export const DEFAULT_PERCENTS = [1, 5, 25, 50, 75, 95, 99];
const EXACT_LIMIT = 10_000;
const HLL_P = 14;
const HLL_M = 1 << HLL_P;

export type MetricKind = ValueKind;

const NUMERIC: FieldType[] = ['long', 'integer', 'short', 'byte', 'double', 'float', 'half_float', 'scaled_float', 'unsigned_long'];

// ---- request checks ----

/** Checks of `percentiles` params (PercentilesAggregationBuilder's setters). */
export function checkPercentilesParams(name: string, p: Record<string, unknown>): void {
  if ('percents' in p) {
    const v = p.percents;
    if (v === null) throw illegalArgument(`[percents] must not be null: [${name}]`);
    if (!Array.isArray(v)) throw illegalArgument(`[percents] must be an array of numbers in [${name}]`);
    if (!v.length) throw illegalArgument(`[percents] must not be empty: [${name}]`);
    for (const x of v) {
      const n = typeof x === 'number' ? x : typeof x === 'string' && x.trim() !== '' ? Number(x) : NaN;
      if (!Number.isFinite(n)) throw illegalArgument(`For input string: "${String(x)}"`);
      if (n < 0 || n > 100) throw illegalArgument(`percent must be in [0,100], got [${javaDouble(n)}]: [${name}]`);
    }
  }
  const td = p.tdigest as Record<string, unknown> | undefined;
  if (td !== undefined) {
    if (typeof td !== 'object' || td === null) throw illegalArgument(`[tdigest] must be an object in [${name}]`);
    for (const [k, v] of Object.entries(td)) {
      if (k === 'compression') {
        const c = Number(v);
        if (!Number.isFinite(c)) throw illegalArgument(`For input string: "${String(v)}"`);
        if (c < 0) throw illegalArgument(`[compression] must be greater than or equal to 0. Found [${javaDouble(c)}] in [${name}]`);
      } else if (k !== 'execution_hint') throw illegalArgument(`[tdigest] unknown field [${k}]`);
    }
  }
  const hdr = p.hdr as Record<string, unknown> | undefined;
  if (hdr !== undefined) {
    if (td !== undefined) throw illegalArgument('Cannot set [hdr] when [tdigest] has already been set');
    const d = Number(hdr?.number_of_significant_value_digits ?? 3);
    if (!Number.isInteger(d) || d < 0 || d > 5) throw illegalArgument(`[numberOfSignificantValueDigits] must be between 0 and 5: [${name}]`);
  }
}

/** Checks of `cardinality` params. */
export function checkCardinalityParams(name: string, p: Record<string, unknown>): void {
  if ('precision_threshold' in p) {
    const n = Number(p.precision_threshold);
    if (!Number.isFinite(n)) throw illegalArgument(`For input string: "${String(p.precision_threshold)}"`);
    if (n < 0) throw illegalArgument(`[precisionThreshold] must be greater than or equal to 0. Found [${n}] in [${name}]`);
  }
}

// ---- shard side ----

type Raw = string | number | boolean | bigint;

function valueKind(type: FieldType | undefined): MetricKind {
  if (type === undefined) return 'unmapped';
  if (type === 'date' || type === 'date_nanos') return 'date';
  return type === 'boolean' ? 'boolean' : 'number';
}

function toNumber(v: Raw, type: FieldType | undefined): number {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (type === 'date_nanos' && typeof v === 'bigint') return Number(v / 1_000_000n);
  if (type === 'date' || type === 'date_nanos') return parseDateValue(v);
  const n = Number(v);
  if (Number.isNaN(n)) throw illegalArgument(`For input string: "${String(v)}"`);
  return n;
}

/** A collector of values for `percentiles` (reads through `read`, the doc's values incl. `missing`). */
export function percentilesCollector(field: string, type: FieldType | undefined, read: (doc: number) => Raw[], hasMissing: boolean) {
  if (type !== undefined && !NUMERIC.includes(type) && type !== 'date' && type !== 'date_nanos' && type !== 'boolean') {
    throw illegalArgument(`Field [${field}] of type [${type}] is not supported for aggregation [percentiles]`);
  }
  const kind: MetricKind = type === undefined && hasMissing ? 'number' : valueKind(type);
  return () => {
    const values: number[] = [];
    return {
      collect(doc: number) {
        for (const v of read(doc)) values.push(toNumber(v, type));
      },
      size: () => values.length,
      partial(compression: number): PercentilesPartial {
        values.sort((a, b) => a - b);
        return fromSorted(values, kind, compression);
      },
    };
  };
}

function fromSorted(values: number[], kind: MetricKind, compression: number): PercentilesPartial {
  const n = values.length;
  const base = { t: 'percentiles' as const, kind, n, min: n ? values[0] : Infinity, max: n ? values[n - 1] : -Infinity };
  if (n <= EXACT_LIMIT) return { ...base, values };
  return { ...base, centroids: compress(values.map((v) => [v, 1] as [number, number]), compression) };
}

/** A collector of distinct values for `cardinality`. */
export function cardinalityCollector(field: string, type: FieldType | undefined, read: (doc: number) => Raw[], threshold: number) {
  if (type === 'text') {
    throw illegalArgument(
      'Text fields are not optimised for operations that require per-document field data like aggregations and sorting, ' +
        'so these operations are disabled by default. Please use a keyword field instead. Alternatively, set fielddata=true ' +
        `on [${field}] in order to load field data by uninverting the inverted index. Note that this can use significant memory.`,
    );
  }
  return () => {
    const set = new Set<string>();
    let hll: Uint8Array | undefined;
    return {
      collect(doc: number) {
        for (const v of read(doc)) {
          const key = tag(v);
          if (hll) addHll(hll, key);
          else {
            set.add(key);
            if (set.size > threshold) {
              hll = new Uint8Array(HLL_M);
              for (const k of set) addHll(hll, k);
              set.clear();
            }
          }
        }
      },
      partial(): CardinalityPartial {
        return hll ? { t: 'cardinality', hll: Buffer.from(hll).toString('base64') } : { t: 'cardinality', set: [...set] };
      },
    };
  };
}

/** A value with its type, so 1 (number) and "1" (keyword) stay distinct. */
const tag = (v: Raw) => (typeof v === 'string' ? `s${v}` : typeof v === 'boolean' ? `b${v}` : `n${String(v)}`);

// ---- HyperLogLog ----

const enc = new TextEncoder();
function addHll(regs: Uint8Array, key: string): void {
  const bytes = enc.encode(key);
  const h1 = murmur3Bytes(bytes, 0) >>> 0;
  const h2 = murmur3Bytes(bytes, 0x9747b28c) >>> 0;
  const idx = h1 >>> (32 - HLL_P);
  // rank of the first 1 bit among the remaining 50 bits (18 of h1, then 32 of h2)
  const rest1 = (h1 << HLL_P) >>> 0;
  let rank: number;
  if (rest1 !== 0) rank = Math.clz32(rest1) + 1;
  else rank = 32 - HLL_P + (h2 !== 0 ? Math.clz32(h2) + 1 : 33);
  if (rank > regs[idx]) regs[idx] = rank;
}

function estimateHll(regs: Uint8Array): number {
  let sum = 0;
  let zeros = 0;
  for (const r of regs) {
    sum += 2 ** -r;
    if (r === 0) zeros++;
  }
  const alpha = 0.7213 / (1 + 1.079 / HLL_M);
  const e = (alpha * HLL_M * HLL_M) / sum;
  if (e <= 2.5 * HLL_M && zeros > 0) return Math.round(HLL_M * Math.log(HLL_M / zeros)); // linear counting
  return Math.round(e);
}

// ---- merging ----

export function mergePercentiles(a: PercentilesPartial, b: PercentilesPartial, compression: number): PercentilesPartial {
  const kind = a.kind === 'unmapped' ? b.kind : a.kind;
  const n = a.n + b.n;
  const min = Math.min(a.min, b.min);
  const max = Math.max(a.max, b.max);
  if (a.values && b.values && n <= EXACT_LIMIT) {
    const values = mergeSorted(a.values, b.values);
    return { t: 'percentiles', kind, n, min, max, values };
  }
  const cs = [...centroidsOf(a), ...centroidsOf(b)].sort((x, y) => x[0] - y[0]);
  return { t: 'percentiles', kind, n, min, max, centroids: compress(cs, compression) };
}

const centroidsOf = (p: PercentilesPartial): Array<[number, number]> => p.centroids ?? (p.values ?? []).map((v) => [v, 1]);

function mergeSorted(a: number[], b: number[]): number[] {
  const out = new Array<number>(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = a[i] <= b[j] ? a[i++] : b[j++];
  while (i < a.length) out[k++] = a[i++];
  while (j < b.length) out[k++] = b[j++];
  return out;
}

/** Merging t-digest compression (k1 scale: centroids are small near the tails, large in the middle). */
function compress(sorted: Array<[number, number]>, compression: number): Array<[number, number]> {
  const total = sorted.reduce((a, c) => a + c[1], 0);
  if (!total) return [];
  const delta = Math.max(10, compression || 100);
  const k = (q: number) => (delta / (2 * Math.PI)) * Math.asin(2 * Math.min(1, Math.max(0, q)) - 1);
  const out: Array<[number, number]> = [];
  let [mean, weight] = sorted[0];
  let before = 0;
  let kLeft = k(0);
  for (let i = 1; i < sorted.length; i++) {
    const [m, w] = sorted[i];
    if (k((before + weight + w) / total) - kLeft <= 1) {
      mean += ((m - mean) * w) / (weight + w);
      weight += w;
    } else {
      out.push([mean, weight]);
      before += weight;
      kLeft = k(before / total);
      mean = m;
      weight = w;
    }
  }
  out.push([mean, weight]);
  return out;
}

export function mergeCardinality(a: CardinalityPartial, b: CardinalityPartial, threshold: number): CardinalityPartial {
  if (a.set && b.set) {
    const s = new Set([...a.set, ...b.set]);
    if (s.size <= threshold) return { t: 'cardinality', set: [...s] };
    const regs = new Uint8Array(HLL_M);
    for (const k of s) addHll(regs, k);
    return { t: 'cardinality', hll: Buffer.from(regs).toString('base64') };
  }
  const regs = new Uint8Array(HLL_M);
  for (const p of [a, b]) {
    if (p.hll) {
      const r = Buffer.from(p.hll, 'base64');
      for (let i = 0; i < HLL_M; i++) if (r[i] > regs[i]) regs[i] = r[i];
    } else for (const k of p.set ?? []) addHll(regs, k);
  }
  return { t: 'cardinality', hll: Buffer.from(regs).toString('base64') };
}

// ---- rendering ----

/** The value at quantile q (0..1), interpolating between value centers (ES TDigest semantics). */
export function quantile(p: PercentilesPartial | undefined, q: number): number | null {
  if (!p || p.n === 0) return null;
  if (p.values) {
    const v = p.values;
    const n = v.length;
    if (n === 1) return v[0];
    const index = q * n;
    if (index <= 0.5) return v[0];
    if (index >= n - 0.5) return v[n - 1];
    const i = Math.floor(index - 0.5);
    const frac = index - 0.5 - i;
    return v[i] + frac * (v[i + 1] - v[i]);
  }
  const cs = p.centroids!;
  const total = p.n;
  const index = q * total;
  let cum = 0;
  const centers = cs.map(([, w]) => {
    const c = cum + w / 2;
    cum += w;
    return c;
  });
  if (index <= centers[0]) {
    const [m] = cs[0];
    return centers[0] > 0 ? p.min + (index / centers[0]) * (m - p.min) : m;
  }
  const last = cs.length - 1;
  if (index >= centers[last]) {
    const [m] = cs[last];
    const span = total - centers[last];
    return span > 0 ? m + ((index - centers[last]) / span) * (p.max - m) : m;
  }
  let i = 0;
  while (centers[i + 1] < index) i++;
  const frac = (index - centers[i]) / (centers[i + 1] - centers[i]);
  return cs[i][0] + frac * (cs[i + 1][0] - cs[i][0]);
}

/** Java's Double.toString for the percent keys ES prints (`1.0`, `99.9`, `1.0E-4`). */
export function javaDouble(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e7) return `${n}.0`;
  const abs = Math.abs(n);
  if (abs >= 1e-3 && abs < 1e7) return String(n);
  const [m, e] = n.toExponential().split('e');
  return `${m.includes('.') ? m : `${m}.0`}E${Number(e)}`;
}

export function renderPercentiles(params: Record<string, unknown>, p: PercentilesPartial | undefined, format?: string): Record<string, unknown> {
  const percents = ((params.percents as unknown[] | undefined) ?? DEFAULT_PERCENTS).map(Number);
  const keyed = params.keyed === undefined ? true : params.keyed === true || params.keyed === 'true';
  const asString = p?.kind === 'date' ? (v: number) => formatDate(v, format) : undefined;
  const rows = percents.map((pc) => ({ key: pc, value: quantile(p, pc / 100) }));
  if (keyed) {
    const values: Record<string, unknown> = {};
    for (const r of rows) {
      values[javaDouble(r.key)] = r.value;
      if (asString && r.value !== null) values[`${javaDouble(r.key)}_as_string`] = asString(r.value);
    }
    return { values };
  }
  return { values: rows.map((r) => ({ key: r.key, value: r.value, ...(asString && r.value !== null ? { value_as_string: asString(r.value) } : {}) })) };
}

export function renderCardinality(p: CardinalityPartial | undefined): Record<string, unknown> {
  if (!p) return { value: 0 };
  if (p.set) return { value: p.set.length };
  return { value: estimateHll(Buffer.from(p.hll!, 'base64')) };
}

/** `precision_threshold` (default 3000, capped at 40000 as ES). */
export const precisionThreshold = (params: Record<string, unknown>) => Math.min(40_000, Math.max(0, Number(params.precision_threshold ?? 3000)));
export const compressionOf = (params: Record<string, unknown>) => Number((params.tdigest as { compression?: unknown } | undefined)?.compression ?? 100);

// ---- registry entries ----

/** Percentiles and cardinality read values as the other field aggregations do (values.ts). */
export const percentilesAgg: AggregationType = {
  params: ['field', 'percents', 'keyed', 'tdigest', 'hdr', 'missing', 'format', 'value_type', 'script'],
  metric: true,
  typedName: () => 'tdigest_percentiles',
  check: (spec) => checkPercentilesParams(spec.name, spec.params),
  factory(spec, { reader, budget }) {
    const v = fieldValues(spec, reader);
    const make = percentilesCollector(v.field, v.type, v.read, v.hasMissing);
    const compression = compressionOf(spec.params);
    return () => {
      const c = make();
      const meter = budget.meter(spec.name); // every value is kept until the partial: 1 double each
      return {
        collect(doc) {
          const before = c.size();
          c.collect(doc);
          meter.add(VALUE_BYTES * (c.size() - before));
        },
        partial: () => c.partial(compression),
      };
    };
  },
  merge: (a, b, spec) => mergePercentiles(a as PercentilesPartial, b as PercentilesPartial, compressionOf(spec.params)),
  render: (spec, p) => renderPercentiles(spec.params, p as PercentilesPartial | undefined, spec.params.format as string | undefined),
};

export const cardinalityAgg: AggregationType = {
  params: ['field', 'precision_threshold', 'missing', 'execution_hint', 'format', 'value_type', 'script', 'rehash'],
  metric: true,
  check: (spec) => checkCardinalityParams(spec.name, spec.params),
  factory(spec, { reader }) {
    const v = fieldValues(spec, reader);
    return cardinalityCollector(v.field, v.type, v.read, precisionThreshold(spec.params));
  },
  merge: (a, b, spec) => mergeCardinality(a as CardinalityPartial, b as CardinalityPartial, precisionThreshold(spec.params)),
  render: (_spec, p) => renderCardinality(p as CardinalityPartial | undefined),
};
