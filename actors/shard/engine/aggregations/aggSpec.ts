import { EsError, illegalArgument } from '../../../wire/esErrors';
import { CALENDAR_UNITS, zoneOf } from './aggDates';
import { parseTimeValue } from '../../../wire/timeValue';
import { didYouMean, failedToParseField, isObject, Locator, tokenName, unknownField, type JsonPath } from '../base/xcontent';
import { AGGREGATIONS, OTHER_ES_AGGS } from './registry';
import type { AggSpec, QueryParser } from './aggTypes';
import { VALUE_TYPES } from './values';
import { checkIncludeExclude, checkIncludeExcludeMerge, includeExcludeTokenError } from './includeExclude';

/**
 * Parsing and validation of `aggs`/`aggregations` (ES `AggregatorFactories.parseAggregators` and
 * each builder's ObjectParser), with ES's error texts.
 */

export type { AggSpec } from './aggTypes';

/** A registered aggregation type's name. */
export type AggType = string;

/** ES factory class names, for the composite-under-a-parent error. */
const FACTORY: Record<string, string> = {
  terms: 'TermsAggregatorFactory',
  date_histogram: 'DateHistogramAggregatorFactory',
  composite: 'CompositeAggregationFactory',
};

const allAggs = () => [...Object.keys(AGGREGATIONS), ...OTHER_ES_AGGS];

/**
 * Validates the `aggs` object of a search body and returns it unchanged (it travels to the
 * shards as JSON; `aggSpecs` reads it there).
 * @throws EsError 400 `parsing_exception` (`Unknown aggregation type [x]`, …) or `x_content_parse_exception`.
 */
export function parseAggs(v: unknown, loc: Locator = new Locator(), path: JsonPath = ['aggs'], sub?: QueryParser): Record<string, unknown> {
  aggSpecs(v, loc, path, sub);
  return v as Record<string, unknown>;
}

/**
 * Reads (and validates) an aggs object into specs. `sub` validates the queries of `filter` and
 * `filters` (the request's query parser; the shard, reading a request already checked, has none).
 */
export function aggSpecs(v: unknown, loc: Locator = new Locator(), path: JsonPath = ['aggs'], sub?: QueryParser): AggSpec[] {
  if (!isObject(v)) throw loc.parsing(path, `Unexpected token ${tokenName(v)} in [aggs]: aggregations definitions must start with the name of the aggregation.`);
  return Object.entries(v).map(([name, def]) => parseOne(name, def, loc, [...path, name], sub));
}

function parseOne(name: string, def: unknown, loc: Locator, path: JsonPath, sub?: QueryParser): AggSpec {
  if (!/^[^[\]>]+$/.test(name)) {
    throw loc.parsing(path, `Invalid aggregation name [${name}]. Aggregation names can contain any character except '[', ']', and '>'`, true);
  }
  // ES's message really lacks the closing bracket after the name.
  if (!isObject(def)) throw loc.parsing(path, `Aggregation definition for [${name} starts with a [${tokenName(def)}], expected a [START_OBJECT].`);
  let spec: Omit<AggSpec, 'subs'> | undefined;
  let subs: AggSpec[] | undefined;
  let meta: unknown;
  for (const [key, body] of Object.entries(def)) {
    const at = [...path, key];
    if (!isObject(body)) throw loc.parsing(at, `Expected [START_OBJECT] under [${key}], but got a [${tokenName(body)}] in [${name}]`);
    if (key === 'meta') meta = body;
    else if (key === 'aggs' || key === 'aggregations') {
      if (subs) throw loc.parsing(at, `Found two sub aggregation definitions under [${name}]`);
      subs = aggSpecs(body, loc, at, sub);
    } else {
      if (spec) throw loc.parsing(at, `Found two aggregation type definitions in [${name}]: [${spec.type}] and [${key}]`);
      const type = aggType(key, loc, at);
      const custom = AGGREGATIONS[type].parse;
      spec = { name, type, params: custom ? custom(body, { name, loc, path: at, sub }) : parseParams(name, key, body, loc, at) };
    }
  }
  if (!spec) throw loc.parsing(path, `Missing definition for aggregation [${name}]`);
  const type = AGGREGATIONS[spec.type];
  if (subs && subs.length > 0 && type.metric) {
    // AggregationInitializationException has no REST status of its own, so ES answers 500.
    throw new EsError('aggregation_initialization_exception', 500, `Aggregator [${name}] of type [${spec.type}] cannot accept sub-aggregations`);
  }
  const parsed = { ...spec, subs: subs ?? [], ...(meta !== undefined ? { meta } : {}) };
  if (parsed.subs.some((x) => x.type === 'composite')) {
    throw illegalArgument(`[composite] aggregation cannot be used with a parent aggregation of type: [${FACTORY[parsed.type] ?? parsed.type}]`);
  }
  type.check?.(parsed);
  return parsed;
}

function aggType(key: string, loc: Locator, at: JsonPath): AggType {
  if (Object.hasOwn(AGGREGATIONS, key)) return key;
  if (OTHER_ES_AGGS.includes(key)) throw illegalArgument(`[${key}] aggregation is not supported`);
  const [l, c] = loc.at(at);
  const e = loc.parsing(at, `Unknown aggregation type [${key}]${didYouMean(key, allAggs())}`);
  return thrown(new EsError(e.type, e.status, e.message, {
    ...e.extra,
    causedBy: new EsError('named_object_not_found_exception', 400, `[${l}:${c}] unknown field [${key}]`),
  }));
}

const thrown = (e: EsError): never => {
  throw e;
};

function parseParams(name: string, type: AggType, body: Record<string, unknown>, loc: Locator, path: JsonPath): Record<string, unknown> {
  const known = AGGREGATIONS[type].params;
  for (const [k, v] of Object.entries(body)) {
    const at = [...path, k];
    if (!known.includes(k)) throw unknownField(loc, at, type, k, known);
    if (k === 'script') throw illegalArgument(`[script] in [${type}] aggregation is not supported`);
    if (type === 'terms' && (k === 'include' || k === 'exclude')) {
      const bad = includeExcludeTokenError(k, v);
      if (bad) throw loc.xContent(at, bad);
    }
    try {
      checkParam(name, type, k, v, body);
    } catch (e) {
      throw failedToParseField(loc, at, type, e as EsError);
    }
  }
  return body;
}

/** The builders' setter checks (ObjectParser wraps their IllegalArgumentExceptions). */
function checkParam(name: string, type: AggType, k: string, v: unknown, body: Record<string, unknown>): void {
  const int = () => {
    const n = Number(v);
    if (typeof v === 'boolean' || !Number.isFinite(n)) throw illegalArgument(`For input string: "${String(v)}"`);
    return Math.trunc(n);
  };
  switch (k) {
    case 'include':
    case 'exclude': {
      checkIncludeExclude(k, v);
      // IncludeExclude.merge runs when the second of the two is parsed
      const keys = Object.keys(body);
      const other = k === 'include' ? 'exclude' : 'include';
      if (keys.includes(other) && keys.indexOf(other) < keys.indexOf(k)) checkIncludeExcludeMerge(body);
      break;
    }
    case 'value_type':
      if (typeof v !== 'string' || !(v in VALUE_TYPES)) throw illegalArgument(`Unknown value type [${String(v)}]`);
      break;
    case 'size':
      if (int() <= 0) throw illegalArgument(`[size] must be greater than 0. Found [${int()}] in [${name}]`);
      break;
    case 'shard_size':
      if (int() <= 0) throw illegalArgument(`[shardSize] must be greater than 0. Found [${int()}] in [${name}]`);
      break;
    case 'min_doc_count':
      if (int() < 0) throw illegalArgument(`[minDocCount] must be greater than or equal to 0. Found [${int()}] in [${name}]`);
      break;
    case 'field':
      if (typeof v !== 'string') throw illegalArgument(`[field] must be a string in [${name}]`);
      break;
    case 'calendar_interval':
      if (body.fixed_interval !== undefined && Object.keys(body).indexOf('fixed_interval') < Object.keys(body).indexOf(k)) {
        throw illegalArgument('Cannot use [calendar_interval] with [fixed_interval] configuration option.');
      }
      if (!(String(v) in CALENDAR_UNITS)) throw illegalArgument(`The supplied interval [${String(v)}] could not be parsed as a calendar interval.`);
      break;
    case 'fixed_interval':
      if (body.calendar_interval !== undefined && Object.keys(body).indexOf('calendar_interval') < Object.keys(body).indexOf(k)) {
        throw illegalArgument('Cannot use [fixed_interval] with [calendar_interval] configuration option.');
      }
      parseTimeValue(String(v), 'date_histogram.fixedInterval');
      break;
    case 'time_zone':
      zoneOf(v);
      break;
    case 'order':
      for (const o of Array.isArray(v) ? v : [v]) {
        if (!isObject(o)) throw illegalArgument(`Unexpected token ${tokenName(o)} for [order] in [${name}].`);
        for (const dir of Object.values(o)) {
          const d = String(dir).toLowerCase();
          if (d !== 'asc' && d !== 'desc') throw illegalArgument(`Unknown order direction [${String(dir)}] in terms aggregation [${name}]`);
        }
      }
      break;
    default:
      break;
  }
}
