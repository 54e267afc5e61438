import { isPointArray, parsePoint } from '../index/encodedValues';
import { illegalArgument, type EsError } from '../../../wire/esErrors';
import type { SortSpec, SortValue } from '../types';
import { failedToParseField, isObject, Locator, tokenName, unknownField, type JsonPath } from '../base/xcontent';

/**
 * The `sort` of a search request (ES `SortBuilder.fromXContent`, `FieldSortBuilder`,
 * `ScoreSortBuilder`) and the implied `_shard_doc` tiebreaker of PIT searches.
 */

const FIELD_SORT_FIELDS = ['order', 'missing', 'unmapped_type', 'mode', 'numeric_type', 'format', 'nested'];
const MODES = ['min', 'max', 'sum', 'avg', 'median'] as const;
const NUMERIC_TYPES = ['double', 'long', 'date', 'date_nanos'] as const;

/** `"asc"`/`"desc"` in any case (`SortOrder.fromString`). */
export function parseSortOrder(v: string): 'asc' | 'desc' {
  const o = v.toLowerCase();
  if (o === 'asc' || o === 'desc') return o;
  throw illegalArgument(`Unknown SortOrder [${v}]`);
}

/** A bare name: `_score` sorts desc, everything else (fields, `_doc`, `_shard_doc`) asc. */
export function defaultSort(field: string, order?: 'asc' | 'desc'): SortSpec {
  return { field, order: order ?? (field === '_score' ? 'desc' : 'asc') };
}

/**
 * Parses the body `sort`: `"f"`, `{"f":"desc"}`, `{"f":{order,missing,unmapped_type,mode,numeric_type,format}}`,
 * or an array of those.
 * @throws EsError 400 with ES's texts (`malformed sort format, …`, `Unknown SortOrder [x]`, `[field_sort] unknown field [x]`).
 */
export function parseSort(v: unknown, loc: Locator = new Locator(), path: JsonPath = ['sort']): SortSpec[] {
  if (typeof v === 'string') return [defaultSort(v)];
  if (isObject(v)) return parseCompound(v, loc, path);
  if (Array.isArray(v)) {
    return v.flatMap((x, i) => {
      if (typeof x === 'string') return [defaultSort(x)];
      if (isObject(x)) return parseCompound(x, loc, [...path, i]);
      throw illegalArgument('malformed sort format, within the sort array, an object, or an actual string are allowed');
    });
  }
  throw illegalArgument('malformed sort format, either start with array, object, or an actual string');
}

function parseCompound(o: Record<string, unknown>, loc: Locator, path: JsonPath): SortSpec[] {
  return Object.entries(o).map(([field, v]) => {
    if (typeof v === 'string') return defaultSort(field, parseSortOrder(v));
    if (field === '_script') throw illegalArgument(`[${field}] sort is not supported`);
    if (field === '_geo_distance') return parseGeoSort(v, loc, [...path, field]);
    if (!isObject(v)) {
      // Numbers, booleans and arrays reach FieldSortBuilder's ObjectParser, which wants an object.
      throw loc.xContent([...path, field], `[field_sort] Expected START_OBJECT but was: ${tokenName(v)}`);
    }
    return field === '_score' ? parseScoreSort(v, loc, [...path, field]) : parseFieldSort(field, v, loc, [...path, field]);
  });
}

/** `{_geo_distance: {<field>: point(s), order, unit, mode, distance_type, ignore_unmapped}}` (GeoDistanceSortBuilder). */
function parseGeoSort(v: unknown, loc: Locator, path: JsonPath): SortSpec {
  if (!isObject(v)) throw loc.xContent(path, `[_geo_distance] Expected START_OBJECT but was: ${tokenName(v)}`);
  const spec = defaultSort('_geo_distance');
  const geo: NonNullable<SortSpec['geo']> = { field: '', points: [], unit: 'm', distanceType: 'arc', ignoreUnmapped: false };
  for (const [k, x] of Object.entries(v)) {
    const at = [...path, k];
    if (k === 'order') spec.order = setter(loc, at, '_geo_distance', () => parseSortOrder(text(x)));
    else if (k === 'unit') geo.unit = text(x);
    else if (k === 'mode') spec.mode = setter(loc, at, '_geo_distance', () => oneOf(text(x).toLowerCase(), MODES, `Unknown SortMode [${text(x)}]`));
    else if (k === 'distance_type') geo.distanceType = text(x).toLowerCase() === 'plane' ? 'plane' : 'arc';
    else if (k === 'ignore_unmapped') geo.ignoreUnmapped = x === true || x === 'true';
    else if (k === 'nested') throw illegalArgument('[nested] sort is not supported');
    else if (k === 'validation_method') continue;
    else {
      if (geo.field) throw loc.parsing(at, `[_geo_distance] the sort field was already set to [${geo.field}]`);
      geo.field = k;
      const list = Array.isArray(x) && !isPointArray(x) ? x : [x];
      try {
        geo.points = list.map((p) => parsePoint(p));
      } catch (e) {
        throw illegalArgument((e as Error).message);
      }
    }
  }
  if (!geo.field) throw loc.parsing(path, '[_geo_distance] requires a geo point field');
  for (const q of geo.points) {
    if (q.lat > 90 || q.lat < -90) throw illegalArgument(`illegal latitude value [${q.lat}] for [GeoDistanceSort] for field [${geo.field}].`);
  }
  spec.geo = geo;
  return spec;
}

function parseScoreSort(o: Record<string, unknown>, loc: Locator, path: JsonPath): SortSpec {
  const spec = defaultSort('_score');
  for (const [k, v] of Object.entries(o)) {
    if (k !== 'order') throw unknownField(loc, [...path, k], '_score', k, ['order']);
    spec.order = setter(loc, [...path, k], 'score_sort', () => parseSortOrder(text(v)));
  }
  return spec;
}

function parseFieldSort(field: string, o: Record<string, unknown>, loc: Locator, path: JsonPath): SortSpec {
  const spec = defaultSort(field);
  for (const [k, v] of Object.entries(o)) {
    const at = [...path, k];
    switch (k) {
      case 'order':
        spec.order = setter(loc, at, 'field_sort', () => parseSortOrder(text(v)));
        break;
      case 'missing':
        // ObjectParser ValueType.VALUE: a string, number, boolean or null (null = the default, _last)
        if (v !== null && typeof v === 'object') throw loc.xContent(at, `[field_sort] missing doesn't support values of type: ${tokenName(v)}`);
        if (v !== null) spec.missing = v as SortValue;
        break;
      case 'unmapped_type':
        spec.unmappedType = text(v);
        break;
      case 'mode':
        spec.mode = setter(loc, at, 'field_sort', () => oneOf(text(v).toLowerCase(), MODES, `Unknown SortMode [${text(v)}]`));
        break;
      case 'numeric_type':
        spec.numericType = setter(loc, at, 'field_sort', () => {
          const t = text(v).toLowerCase();
          return oneOf(t, NUMERIC_TYPES, `invalid value for [numeric_type], must be [long, double, date, date_nanos], got ${t}`);
        });
        break;
      case 'format':
        spec.format = text(v);
        break;
      case 'nested':
        throw illegalArgument('[nested] sort is not supported');
      default:
        throw unknownField(loc, at, 'field_sort', k, FIELD_SORT_FIELDS);
    }
  }
  return spec;
}

function text(v: unknown): string {
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  throw illegalArgument(`expected a value but found [${tokenName(v)}]`);
}

function oneOf<T extends string>(v: string, allowed: readonly T[], message: string): T {
  if ((allowed as readonly string[]).includes(v)) return v as T;
  throw illegalArgument(message);
}

/** ObjectParser reports a setter's failure as `[l:c] [name] failed to parse field [k]` with the cause. */
function setter<T>(loc: Locator, path: JsonPath, name: string, run: () => T): T {
  try {
    return run();
  } catch (e) {
    throw failedToParseField(loc, path, name, e as EsError);
  }
}

/**
 * The URL `sort` param: `f:asc,g,_score:desc` (RestSearchAction). A suffix other than `asc`/`desc`
 * after the last colon drops that key silently, as ES does.
 */
export function parseSortParam(s: string): SortSpec[] {
  const out: SortSpec[] = [];
  for (const part of s.split(',').map((x) => x.trim()).filter(Boolean)) {
    const colon = part.lastIndexOf(':');
    if (colon < 0) {
      out.push(defaultSort(part));
      continue;
    }
    const order = part.slice(colon + 1);
    if (order === 'asc' || order === 'desc') out.push(defaultSort(part.slice(0, colon), order));
  }
  return out;
}

/**
 * PIT searches get an implied `{"_shard_doc":"asc"}` tiebreaker (search-paging.md §8): when `sort`
 * is non-empty, its last key is not `_shard_doc`, and `search_after` is absent or has exactly
 * `sort.length + 1` values (it was taken from a hit that carried the tiebreaker). Returns `sort`
 * unchanged otherwise.
 * @example withImplicitShardDoc([{field:'n',order:'asc'}], undefined) // [n asc, _shard_doc asc]
 */
export function withImplicitShardDoc(sort: SortSpec[] | undefined, searchAfter: readonly unknown[] | undefined): SortSpec[] | undefined {
  if (!sort || sort.length === 0) return sort;
  if (sort[sort.length - 1].field === '_shard_doc') return sort;
  if (searchAfter !== undefined && searchAfter.length !== sort.length + 1) return sort;
  return [...sort, { field: '_shard_doc', order: 'asc' }];
}
