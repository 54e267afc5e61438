/**
 * Sort keys of a shard search: `_score`, `_doc`, `_shard_doc`, numeric/date fields (mode,
 * numeric_type, missing sentinels, format) and keyword fields; comparison of docs, the strictly-after
 * test for `search_after`, and the values printed in `hits[].sort`.
 */
import { EsError, illegalArgument } from '../../../wire/esErrors';
import type { SortSpec, SortValue } from '../types';
import type { StoreView } from '../index/storeView';
import { compareStrings } from '../base/bits';
import { cmpNum, type KeywordView, type NumVal } from '../index/columnViews';
import { floatValue } from '../index/analysis';
import { dateFormatter, splitNanos, type DateFormatter } from '../base/dates';
import { NUMERIC_TYPES } from '../index/mapping';
import { NumericKeyReader, outputNum, resolutionOf, sentinel, type Resolution, type SortMode } from '../index/numericKeys';
import { decodeGeo, decodeIp, encodeIp } from '../index/fieldCodecs';
import { arcDistance, planeDistance, unitMeters } from './encodedQueries';

/** One resolved sort key. All comparisons are in final order (desc already applied). */
export interface SortKey {
  readonly kind: 'score' | 'doc' | 'shardDoc' | 'num' | 'str';
  readonly spec: SortSpec;
  readonly desc: boolean;
  /** Numeric keys: the reader (also drives the sorted doc order cache). */
  readonly reader?: NumericKeyReader;
  cmp(a: number, b: number): number;
  /** Sign of doc's key minus the search_after value (set by `setAfter`). */
  cmpAfter(doc: number): number;
  value(doc: number): SortValue;
  /** Parses and stores this key's search_after value; throws ES's parse errors. */
  setAfter(v: SortValue): void;
}

/** Everything sorting needs beyond the store. */
export interface SortEnv {
  store: StoreView;
  shardIndex: number;
  scoreOf: (doc: number) => number;
}

const afterError = (field: string | null) => illegalArgument(`Failed to parse search_after value for field [${field}].`);

/**
 * Resolves a request's sort. Returns null for "by relevance" (absent, or only `_score` desc, which
 * ES treats as no sort: hits carry no `sort` values).
 */
export function resolveSort(specs: SortSpec[] | undefined, env: SortEnv): SortKey[] | null {
  if (!specs || specs.length === 0) return null;
  if (specs.length === 1 && specs[0].field === '_score' && specs[0].order === 'desc') return null;
  return specs.map((s) => resolveKey(s, env));
}

function resolveKey(spec: SortSpec, env: SortEnv): SortKey {
  const desc = spec.order === 'desc';
  const sign = desc ? -1 : 1;
  if (spec.field === '_score') return scoreKey(spec, env, desc);
  if (spec.field === '_doc' || spec.field === '_shard_doc') return docKey(spec, env, desc);
  if (spec.geo) return geoDistanceKey(spec, env.store, desc);
  const { store } = env;
  if (spec.field === '_id') {
    throw illegalArgument('Fielddata access on the _id field is disallowed, you can re-enable it by updating the dynamic cluster setting: indices.id_field_data.enabled');
  }
  const def = store.mapping.field(spec.field);
  const type = def?.type ?? (spec.unmappedType as SortSpec['field'] | undefined);
  if (!type) {
    throw new EsError('query_shard_exception', 400, `No mapping found for [${spec.field}] in order to sort on`, { meta: { index: store.index } });
  }
  if (type === 'text') {
    throw illegalArgument(
      `Fielddata is disabled on [${spec.field}] in [${store.index}]. Text fields are not optimised for operations that require per-document field data like aggregations and sorting, so these operations are disabled by default. Please use a keyword field instead. Alternatively, set fielddata=true on [${spec.field}] in order to load field data by uninverting the inverted index. Note that this can use significant memory.`,
    );
  }
  const col = def ? store.column(def.path) : undefined;
  if (type === 'geo_point') throw illegalArgument(`can't sort on geo_point field without using specific sorting feature, like geo_distance`);
  if (type === 'keyword' || !NUMERIC_TYPES.has(type as never)) {
    const shardError = (reason: string) => new EsError('query_shard_exception', 400, reason, { meta: { index: store.index } });
    if (spec.mode === 'sum' || spec.mode === 'avg' || spec.mode === 'median') throw shardError('we only support AVG, MEDIAN and SUM on number based fields');
    if (spec.numericType) throw shardError(`[numeric_type] option cannot be set on a non-numeric field, got ${type}`);
    return strKey(spec, col?.kind === 'keyword' ? col : undefined, desc, sign, type === 'ip' ? IP_CODEC : undefined);
  }
  const res = resolutionOf(type, spec.numericType);
  const mode: SortMode = spec.mode ?? (desc ? 'max' : 'min');
  let formatter: DateFormatter | undefined;
  if (res === 'millis' || res === 'nanos') {
    try {
      formatter = spec.format ? dateFormatter(spec.format) : undefined;
    } catch (e) {
      throw illegalArgument((e as Error).message);
    }
  }
  const parseFmt = formatter ?? (def && (def.type === 'date' || def.type === 'date_nanos') ? store.mapping.formatterOf(def) : dateFormatter());
  const toKey = (v: SortValue) => parseNumericAfter(v, res, spec.field, parseFmt);
  const missing = spec.missing === undefined || spec.missing === '_last' ? sentinel(res, !desc)
    : spec.missing === '_first' ? sentinel(res, desc)
    : toKey(spec.missing);
  const reader = new NumericKeyReader(col?.kind === 'numeric' ? col : undefined, (def?.type ?? type) as never, res, mode, missing);
  let after: NumVal = missing;
  return {
    kind: 'num', spec, desc, reader,
    cmp: (a, b) => sign * reader.compare(a, b),
    cmpAfter: (d) => sign * cmpNum(reader.key(d), after),
    value: (d) => outputNum(reader.key(d), res, formatter),
    setAfter: (v) => void (after = toKey(v)),
  };
}

function scoreKey(spec: SortSpec, env: SortEnv, desc: boolean): SortKey {
  const sign = desc ? -1 : 1;
  let after = 0;
  return {
    kind: 'score', spec, desc,
    cmp: (a, b) => {
      const x = env.scoreOf(a), y = env.scoreOf(b);
      return x === y ? 0 : x < y ? -sign : sign;
    },
    cmpAfter: (d) => {
      const x = env.scoreOf(d);
      return x === after ? 0 : x < after ? -sign : sign;
    },
    value: (d) => floatValue(env.scoreOf(d)),
    setAfter: (v) => {
      const n = typeof v === 'number' || typeof v === 'bigint' ? Number(v) : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
      if (Number.isNaN(n)) throw afterError(null);
      after = Math.fround(n);
    },
  };
}

function docKey(spec: SortSpec, env: SortEnv, desc: boolean): SortKey {
  const sign = desc ? -1 : 1;
  const shardDoc = spec.field === '_shard_doc';
  let afterShard = env.shardIndex;
  let afterDoc = -1;
  return {
    kind: shardDoc ? 'shardDoc' : 'doc', spec, desc,
    cmp: (a, b) => sign * (a - b),
    cmpAfter: (d) => sign * (env.shardIndex !== afterShard ? env.shardIndex - afterShard : env.store.docId(d) - afterDoc),
    value: (d) => (shardDoc ? shardDocValue(env.shardIndex, env.store.docId(d)) : env.store.docId(d)),
    setAfter: (v) => {
      const big = toBigInt(v);
      if (big === undefined) throw afterError(shardDoc ? '_shard_doc' : null);
      if (shardDoc) {
        afterShard = Number(big >> 32n);
        afterDoc = Number(big & 0xffffffffn);
      } else afterDoc = Number(big);
    },
  };
}

function toBigInt(v: SortValue): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return BigInt(Math.trunc(v));
  if (typeof v === 'string' && /^\s*[+-]?\d+\s*$/.test(v)) return BigInt(v.trim());
  return undefined;
}

/** `(shardIndex << 32) | doc` as a number, or a bigint beyond 2^53. */
export function shardDocValue(shardIndex: number, doc: number): number | bigint {
  const v = shardIndex * 4294967296 + doc;
  return Number.isSafeInteger(v) ? v : (BigInt(shardIndex) << 32n) | BigInt(doc);
}

/** Terms shown and read back in another form (ip addresses). */
interface TermCodec {
  encode(v: string): string;
  decode(t: string): string;
}
const IP_CODEC: TermCodec = {
  encode: (v) => {
    try {
      return encodeIp(v);
    } catch (e) {
      throw illegalArgument((e as Error).message);
    }
  },
  decode: decodeIp,
};

function strKey(spec: SortSpec, col: KeywordView | undefined, desc: boolean, sign: number, codec?: TermCodec): SortKey {
  const useMax = (spec.mode ?? (desc ? 'max' : 'min')) === 'max';
  const raw = spec.missing === undefined || spec.missing === '_last' || spec.missing === '_first' || spec.missing === null ? null : String(spec.missing);
  const literal = raw !== null && codec ? codec.encode(raw) : raw;
  const missingFirst = spec.missing === '_first';
  const strOf = (d: number): string | null => {
    if (!col || d >= col.ords.length || col.ords[d] < 0) return literal;
    const m = useMax && col.multiOrds(d);
    return col.termOf(m ? m[m.length - 1] : col.ords[d]);
  };
  const cmpVals = (x: string | null, y: string | null): number => {
    if (x === null || y === null) return x === y ? 0 : (x === null) === missingFirst ? -1 : 1;
    return sign * compareStrings(x, y);
  };
  let after: string | null = null;
  return {
    kind: 'str', spec, desc,
    cmp: (a, b) => cmpVals(strOf(a), strOf(b)),
    cmpAfter: (d) => cmpVals(strOf(d), after),
    value: (d) => {
      const t = strOf(d);
      return t !== null && codec ? codec.decode(t) : t;
    },
    setAfter: (v) => void (after = v === null ? null : codec ? codec.encode(String(v)) : String(v)),
  };
}

/** Parses a search_after / missing value of a numeric key (ES SearchAfterBuilder rules). */
function parseNumericAfter(v: SortValue, res: Resolution, field: string, fmt: DateFormatter): NumVal {
  if (v === null || v === undefined) throw afterError(field);
  if (typeof v === 'boolean') {
    if (res !== 'boolean') throw afterError(field);
    return { hi: v ? 1 : 0, lo: 0 };
  }
  const integral = res !== 'double' && res !== 'float';
  if (typeof v === 'string' && (res === 'millis' || res === 'nanos')) {
    // strings are dates in the sort format (or the field's); numbers are raw epoch units
    try {
      const i = fmt.parse(v);
      return res === 'nanos' ? { hi: i.ms, lo: i.ns } : { hi: i.ms, lo: 0 };
    } catch {
      const reason = `failed to parse date field [${v}] with format [${fmt.pattern}]`;
      throw new EsError('parse_exception', 400, `${reason}: [${reason}]`);
    }
  }
  if (typeof v === 'string' && res === 'boolean' && (v === 'true' || v === 'false')) return { hi: v === 'true' ? 1 : 0, lo: 0 };
  let big: bigint | undefined;
  let n: number;
  if (typeof v === 'bigint') {
    big = v;
    n = Number(v);
  } else if (typeof v === 'number') n = v;
  else {
    const s = v.trim();
    if (integral && /^[+-]?\d+$/.test(s)) {
      big = BigInt(s);
      n = Number(big);
    } else if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s) || /^[+-]?Infinity$/.test(s)) n = Number(s);
    else throw afterError(field);
  }
  if (Number.isNaN(n)) throw afterError(field);
  if (!integral) return { hi: res === 'float' ? Math.fround(n) : n, lo: 0 };
  if (res === 'nanos') return big !== undefined ? { ...splitPair(big) } : { ...splitPair(BigInt(Math.trunc(n))) };
  if (big !== undefined) return Number.isSafeInteger(n) ? { hi: n, lo: 0 } : { hi: n, lo: 0, big };
  // JSON numbers: Number.longValue() truncates; strings: DocValueFormat.RAW.parseLong floors
  return { hi: typeof v === 'string' ? Math.floor(n) : Math.trunc(n), lo: 0 };
}

function splitPair(nanos: bigint): NumVal {
  const i = splitNanos(nanos);
  return { hi: i.ms, lo: i.ns };
}

/** Full comparator of a sort (ties broken by doc id ascending, like Lucene). */
export function fullComparator(all: SortKey[]): (a: number, b: number) => number {
  // A trailing ascending `_doc` / `_shard_doc` (the PIT's implicit tiebreaker) orders as the doc id
  // tiebreak below does: it adds nothing to compare (its values are still written per hit).
  let n = all.length;
  while (n > 0 && (all[n - 1].kind === 'doc' || all[n - 1].kind === 'shardDoc') && !all[n - 1].desc) n--;
  const keys = n === all.length ? all : all.slice(0, n);
  if (keys.length === 0) return (a, b) => a - b;
  if (keys.length === 1) {
    const k = keys[0];
    return (a, b) => k.cmp(a, b) || a - b;
  }
  return (a, b) => {
    for (const k of keys) {
      const c = k.cmp(a, b);
      if (c !== 0) return c;
    }
    return a - b;
  };
}

/** Whether doc's full key is strictly after the search_after key. */
export function afterTest(keys: SortKey[]): (doc: number) => boolean {
  return (d) => {
    for (const k of keys) {
      const c = k.cmpAfter(d);
      if (c !== 0) return c > 0;
    }
    return false; // equal full key: skipped (ES uses Integer.MAX_VALUE as the cursor doc)
  };
}

/**
 * The `_geo_distance` sort key (GeoDistanceSortBuilder): each doc's distance from the origin(s) in
 * `unit`, its points folded by `mode` (min ascending, max descending by default); docs without a
 * point sort as +Infinity.
 */
function geoDistanceKey(spec: SortSpec, store: StoreView, desc: boolean): SortKey {
  const g = spec.geo!;
  const sign = desc ? -1 : 1;
  const def = store.mapping.field(g.field);
  if (!def) {
    if (!g.ignoreUnmapped) throw new EsError('query_shard_exception', 400, `failed to find mapper for [${g.field}] for geo distance based sort`, { meta: { index: store.index } });
  } else if (def.type !== 'geo_point') throw illegalArgument(`field [${g.field}] is not a geo_point field`);
  const col = def ? store.column(def.path) : undefined;
  const kw = col?.kind === 'keyword' ? col : undefined;
  const per = unitMeters(g.unit);
  const dist = g.distanceType === 'plane' ? planeDistance : arcDistance;
  const mode = spec.mode ?? (desc ? 'max' : 'min');
  if (mode === 'sum') throw illegalArgument('sort_mode [sum] isn\'t supported for sorting by geo distance');
  const cache = new Map<number, number>();
  const valueOf = (d: number): number => {
    const hit = cache.get(d);
    if (hit !== undefined) return hit;
    let v = Infinity;
    if (kw && d < kw.ords.length && kw.ords[d] >= 0) {
      const ords = kw.multiOrds(d) ?? [kw.ords[d]];
      const ds: number[] = [];
      for (const o of ords) {
        const p = decodeGeo(kw.termOf(o));
        for (const q of g.points) ds.push(dist(q.lat, q.lon, p.lat, p.lon) / per);
      }
      ds.sort((a, b) => a - b);
      v = mode === 'max' ? ds[ds.length - 1] : mode === 'avg' ? ds.reduce((a, x) => a + x, 0) / ds.length
        : mode === 'median' ? (ds.length % 2 ? ds[(ds.length - 1) / 2] : (ds[ds.length / 2 - 1] + ds[ds.length / 2]) / 2) : ds[0];
    }
    cache.set(d, v);
    return v;
  };
  const cmp = (x: number, y: number) => (x === y ? 0 : x < y ? -sign : sign);
  let after = 0;
  return {
    kind: 'str', spec, desc,
    cmp: (a, b) => cmp(valueOf(a), valueOf(b)),
    cmpAfter: (d) => cmp(valueOf(d), after),
    value: (d): SortValue => {
      const v = valueOf(d);
      return Number.isFinite(v) ? v : 'Infinity';
    },
    setAfter: (v) => {
      const n = v === 'Infinity' ? Infinity : Number(v);
      if (v === null || Number.isNaN(n)) throw illegalArgument('Failed to parse search_after value for field [_geo_distance].');
      after = n;
    },
  };
}
