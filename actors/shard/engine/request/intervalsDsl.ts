import { illegalArgument } from '../../../wire/esErrors';
import { isObject, Locator, tokenName, unknownField, type JsonPath } from '../base/xcontent';

/**
 * Request-side checks of the `intervals` query (IntervalQueryBuilder and IntervalsSourceProvider
 * `fromXContent`): one field, one rule (`match`, `any_of`, `all_of`, `prefix`, `wildcard`, `fuzzy`,
 * `regexp`, `range`), their options and `filter`s, with ES's parse errors. The body comes back as
 * given, with defaults made explicit (`max_gaps: -1`, `ordered: false`).
 */
type Obj = Record<string, unknown>;

const RULES = ['match', 'any_of', 'all_of', 'prefix', 'wildcard', 'fuzzy', 'regexp', 'range'];
const FILTERS = ['containing', 'contained_by', 'not_containing', 'not_contained_by', 'overlapping', 'not_overlapping', 'before', 'after'];

const KNOWN: Record<string, string[]> = {
  match: ['query', 'max_gaps', 'ordered', 'analyzer', 'filter', 'use_field'],
  any_of: ['intervals', 'filter'],
  all_of: ['intervals', 'ordered', 'max_gaps', 'filter'],
  prefix: ['prefix', 'analyzer', 'use_field'],
  wildcard: ['pattern', 'analyzer', 'use_field'],
  regexp: ['pattern', 'analyzer', 'use_field'],
  fuzzy: ['term', 'prefix_length', 'transpositions', 'fuzziness', 'analyzer', 'use_field'],
  range: ['gte', 'gt', 'lte', 'lt', 'analyzer', 'use_field'],
};
const REQUIRED: Record<string, string> = { match: 'query', any_of: 'intervals', all_of: 'intervals', prefix: 'prefix', wildcard: 'pattern', regexp: 'pattern', fuzzy: 'term' };
const STRINGS = new Set(['query', 'analyzer', 'use_field', 'prefix', 'pattern', 'term', 'gte', 'gt', 'lte', 'lt']);

/** `{intervals: {<field>: {<rule>: {…}, boost?, _name?}}}`. */
export function parseIntervals(body: Obj, loc: Locator, path: JsonPath): Obj {
  const fields = Object.keys(body);
  if (fields.length === 0) throw loc.parsing(path, 'Expected [FIELD_NAME] but got [END_OBJECT]');
  if (fields.length > 1) throw loc.parsing([...path, fields[1]], `Expected [END_OBJECT] but got [FIELD_NAME]`);
  const field = fields[0];
  const spec = body[field];
  const at = [...path, field];
  if (!isObject(spec)) throw loc.parsing(at, `Expected [START_OBJECT] but got [${tokenName(spec)}]`);
  const out: Obj = {};
  let rule: string | undefined;
  for (const [k, v] of Object.entries(spec)) {
    if (k === 'boost' || k === '_name') {
      out[k] = k === 'boost' ? Number(v) : v;
      continue;
    }
    if (rule !== undefined) throw loc.parsing([...at, k], `Only one interval rule can be specified, found [${rule}] and [${k}]`);
    rule = k;
    out[k] = parseRule(k, v, loc, [...at, k]);
  }
  if (rule === undefined) throw loc.parsing(at, 'Missing intervals from interval query definition');
  return { [field]: out };
}

/** One rule's body (IntervalsSourceProvider.fromXContent). */
function parseRule(name: string, v: unknown, loc: Locator, path: JsonPath): Obj {
  if (!RULES.includes(name)) throw loc.parsing(path, `Unknown interval type [${name}], expecting one of [${RULES.filter((r) => r !== 'fuzzy').join(', ')}]`);
  if (!isObject(v)) throw loc.parsing(path, `[${name}] Expected START_OBJECT but was: ${tokenName(v)}`);
  const out: Obj = {};
  for (const [k, x] of Object.entries(v)) {
    const at = [...path, k];
    if (!KNOWN[name].includes(k)) throw unknownField(loc, at, name, k, KNOWN[name]);
    if (k === 'intervals') {
      if (!Array.isArray(x)) throw loc.parsing(at, `[${name}] intervals doesn't support values of type: ${tokenName(x)}`);
      out.intervals = x.map((inner, i) => parseInner(inner, loc, [...at, i]));
    } else if (k === 'filter') out.filter = parseFilter(x, loc, at);
    else if (k === 'max_gaps' || k === 'prefix_length') out[k] = intValue(x, name, k, loc, at);
    else if (k === 'ordered' || k === 'transpositions') out[k] = boolValue(x, name, k, loc, at);
    else if (STRINGS.has(k)) {
      if (typeof x !== 'string' && typeof x !== 'number' && typeof x !== 'boolean') throw loc.xContent(at, `[${name}] ${k} doesn't support values of type: ${tokenName(x)}`);
      out[k] = String(x);
    } else out[k] = x;
  }
  const req = REQUIRED[name];
  if (req && out[req] === undefined) throw loc.xContent(path, `Required [${req}]`);
  if (name === 'range') {
    if ((out.gte === undefined) === (out.gt === undefined)) throw illegalArgument('Either [gte] or [gt], one of them must be provided');
    if ((out.lte === undefined) === (out.lt === undefined)) throw illegalArgument('Either [lte] or [lt], one of them must be provided');
  }
  if (name === 'match' || name === 'all_of') {
    out.max_gaps ??= -1;
    out.ordered ??= false;
  }
  return out;
}

/** An element of `intervals: [...]`: exactly one rule. */
function parseInner(v: unknown, loc: Locator, path: JsonPath): Obj {
  if (!isObject(v)) throw loc.parsing(path, `Expected [FIELD_NAME] but got [${tokenName(v)}]`);
  const keys = Object.keys(v);
  if (keys.length === 0) throw loc.parsing(path, 'Expected [FIELD_NAME] but got [END_OBJECT]');
  if (keys.length > 1) throw loc.parsing([...path, keys[1]], 'Expected [END_OBJECT] but got [FIELD_NAME]');
  return { [keys[0]]: parseRule(keys[0], v[keys[0]], loc, [...path, keys[0]]) };
}

/** `filter: {<type>: {<rule>}}` (IntervalFilter.fromXContent); scripts are refused here. */
function parseFilter(v: unknown, loc: Locator, path: JsonPath): Obj {
  if (!isObject(v)) throw loc.parsing(path, `Expected [FIELD_NAME] but got [${tokenName(v)}]`);
  const keys = Object.keys(v);
  if (keys.length !== 1) throw loc.parsing(path, keys.length ? 'Expected [END_OBJECT] but got [FIELD_NAME]' : 'Expected [FIELD_NAME] but got [END_OBJECT]');
  const type = keys[0];
  if (type === 'script') throw illegalArgument('[script] interval filters are not supported');
  const inner = v[type];
  if (!isObject(inner)) throw loc.parsing([...path, type], `Expected [START_OBJECT] but got [${tokenName(inner)}]`);
  if (!FILTERS.includes(type.toLowerCase())) throw illegalArgument(`Unknown filter type [${type.toLowerCase()}]`);
  return { [type.toLowerCase()]: parseInner(inner, loc, [...path, type]) };
}

function intValue(v: unknown, name: string, key: string, loc: Locator, path: JsonPath): number {
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw loc.xContent(path, `[${name}] failed to parse field [${key}]`);
  return n;
}

function boolValue(v: unknown, name: string, key: string, loc: Locator, path: JsonPath): boolean {
  if (v === true || v === 'true') return true;
  if (v === false || v === 'false') return false;
  throw loc.xContent(path, `[${name}] failed to parse field [${key}]`);
}
