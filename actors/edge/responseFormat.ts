import { parseJson, stringify } from '../wire/json';
import { RawJson } from '../wire/rest';
import { flattenSettings, nestSettings } from './settingsShape';

/**
 * ES's common response parameters, applied in one place on the way out (RestController /
 * AbstractRestChannel): `filter_path` (`*`, `**`, `-` exclusions), `flat_settings`, `human`,
 * `pretty`, `error_trace`. Every route gets them; a body is only re-read when one of them is set.
 */

/** What a request asked of its response's shape. */
export interface ResponseShape {
  includes: string[][];
  excludes: string[][];
  /** `flat_settings`: true flat keys, false nested, undefined as the route renders them. */
  flat?: boolean;
  human: boolean;
  pretty: boolean;
  errorTrace: boolean;
  /** The route's pattern (settings are only reshaped where a route renders settings). */
  pattern?: string;
}

/** ES's boolean parameter reading: present without a value (`?pretty`) counts as true. */
const flag = (v: string | undefined) => v !== undefined && v !== 'false';

/** The shape a request's query string asks for, or undefined when it asks nothing (the common case). */
export function responseShape(query: Record<string, string>, pattern?: string): ResponseShape | undefined {
  const fp = query.filter_path;
  const fs = query.flat_settings;
  if (fp === undefined && fs === undefined && query.human === undefined && query.pretty === undefined && query.error_trace === undefined) return undefined;
  const includes: string[][] = [];
  const excludes: string[][] = [];
  for (const raw of (fp ?? '').split(',')) {
    const f = raw.trim();
    if (!f) continue;
    if (f.startsWith('-')) excludes.push(f.slice(1).split('.'));
    else includes.push(f.split('.'));
  }
  return {
    includes,
    excludes,
    flat: fs === undefined ? undefined : flag(fs),
    human: flag(query.human),
    pretty: flag(query.pretty),
    errorTrace: flag(query.error_trace),
    pattern,
  };
}

/**
 * The body as the shape asks: a JSON value (a RawJson is parsed first) filtered, reshaped and with
 * human-readable fields; error bodies are never filtered (ES builds them without the filters).
 */
export function shapeBody(body: unknown, shape: ResponseShape, isError: boolean, stack?: string): unknown {
  let v = body instanceof RawJson ? parseJson(rawText(body)) : body;
  if (v === undefined || v === null || typeof v !== 'object') return v;
  if (isError) return shape.errorTrace && stack ? withStackTrace(v as Obj, stack) : v;
  if (shape.flat !== undefined && shape.pattern && SETTINGS_ROUTES.some((r) => r.test(shape.pattern!))) v = reshapeSettings(v, shape.flat, shape.pattern);
  if (shape.human) v = humanize(v);
  if (shape.includes.length) v = include(v, shape.includes) ?? {};
  if (shape.excludes.length) v = exclude(v, shape.excludes) ?? {};
  return v;
}

/** Serializes a shaped body: compact, or Jackson's pretty printer as ES uses it (2-space indents, ` : `, a final newline). */
export function serialize(v: unknown, pretty: boolean): string {
  return pretty ? `${prettyJson(v, '')}\n` : stringify(v);
}

function rawText(r: RawJson): string {
  return r.chunks.map((c) => (typeof c === 'string' ? c : c.toString('utf8'))).join('');
}

// ---- filter_path (ES FilterPath / FilterPathBasedFilter) ----

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Glob of one path segment (`*` any run of characters). */
function segMatch(pattern: string, name: string): boolean {
  if (pattern === '*' || pattern === name) return true;
  if (!pattern.includes('*')) return false;
  const re = new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return re.test(name);
}

/**
 * What remains of each filter once a field (its name may hold dots: each dotted part is a step)
 * is entered: `done` when a filter ends here, `rest` the filters that go on below it.
 */
function step(filters: string[][], name: string): { done: boolean; rest: string[][] } {
  let cur = filters;
  for (const part of name.split('.')) {
    const next: string[][] = [];
    let done = false;
    for (const f of cur) {
      if (!f.length) continue;
      if (f[0] === '**') {
        next.push(f); // `**` takes this step too
        const after = f.slice(1);
        if (!after.length) done = true;
        else if (segMatch(after[0], part)) after.length === 1 ? (done = true) : next.push(after.slice(1));
      } else if (segMatch(f[0], part)) {
        if (f.length === 1) done = true;
        else next.push(f.slice(1));
      }
    }
    if (done) return { done: true, rest: [] };
    cur = next;
    if (!cur.length) break;
  }
  return { done: false, rest: cur };
}

/** Keeps what the inclusive filters name (with its whole subtree); empty parents go. */
function include(v: unknown, filters: string[][]): unknown {
  if (Array.isArray(v)) {
    const out = v.map((x) => (isObj(x) || Array.isArray(x) ? include(x, filters) : undefined)).filter((x) => x !== undefined);
    return out.length ? out : undefined;
  }
  if (!isObj(v)) return undefined;
  const out: Obj = {};
  let any = false;
  for (const [k, x] of Object.entries(v)) {
    const { done, rest } = step(filters, k);
    if (done) {
      out[k] = x;
      any = true;
    } else if (rest.length) {
      const kept = include(x, rest);
      if (kept !== undefined) {
        out[k] = kept;
        any = true;
      }
    }
  }
  return any ? out : undefined;
}

/** Drops what the exclusive filters name; the rest stays as it was. */
function exclude(v: unknown, filters: string[][]): unknown {
  if (Array.isArray(v)) return v.map((x) => (isObj(x) || Array.isArray(x) ? exclude(x, filters) : x));
  if (!isObj(v)) return v;
  const out: Obj = {};
  for (const [k, x] of Object.entries(v)) {
    const { done, rest } = step(filters, k);
    if (done) continue;
    out[k] = rest.length ? exclude(x, rest) : x;
  }
  return out;
}

// ---- flat_settings ----

/** Routes that render settings: their `settings` (and cluster settings' top-level) objects follow `flat_settings`. */
const SETTINGS_ROUTES = [
  /^\/_cluster\/settings$/, /^\/_template/, /^\/_index_template/, /^\/_component_template/, /^\/\{index\}$/, /^\/_cluster\/state/, /^\/_nodes/,
];
const CLUSTER_LEVEL = new Set(['persistent', 'transient', 'defaults']);

function reshapeSettings(v: unknown, flat: boolean, pattern: string): unknown {
  const form = (o: unknown) => (isObj(o) ? (flat ? flattenSettings(o) : nestSettings(flattenSettings(o))) : o);
  if (pattern === '/_cluster/settings' && isObj(v)) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, CLUSTER_LEVEL.has(k) ? form(x) : x]));
  }
  const walk = (x: unknown, depth: number): unknown => {
    if (depth > 12) return x;
    if (Array.isArray(x)) return x.map((e) => walk(e, depth + 1));
    if (!isObj(x)) return x;
    return Object.fromEntries(Object.entries(x).map(([k, e]) => [k, k === 'settings' || k === 'defaults' ? form(e) : walk(e, depth + 1)]));
  };
  return walk(v, 0);
}

// ---- human ----

const UNITS_TIME: Array<[number, string]> = [[86_400_000, 'd'], [3_600_000, 'h'], [60_000, 'm'], [1000, 's'], [1, 'ms']];
const UNITS_BYTES: Array<[number, string]> = [[2 ** 50, 'pb'], [2 ** 40, 'tb'], [2 ** 30, 'gb'], [2 ** 20, 'mb'], [2 ** 10, 'kb'], [1, 'b']];

/** One decimal, dropped when it is 0 (ES Strings.format1Decimals). */
const oneDecimal = (x: number, unit: string) => {
  const r = Math.round(x * 10) / 10;
  return `${Number.isInteger(r) ? r.toFixed(0) : r.toFixed(1)}${unit}`;
};
/** ES TimeValue.toString of a duration in ms. */
export function humanTime(ms: number): string {
  if (ms === 0) return '0s';
  for (const [n, u] of UNITS_TIME) if (Math.abs(ms) >= n) return oneDecimal(ms / n, u);
  return oneDecimal(ms * 1_000_000, 'nanos');
}
/** ES ByteSizeValue.toString. */
export function humanBytes(b: number): string {
  for (const [n, u] of UNITS_BYTES) if (Math.abs(b) >= n) return oneDecimal(b / n, u);
  return '0b';
}

/**
 * ES's `human=true`: next to each `<x>_in_millis`, `<x>_in_nanos` and `<x>_in_bytes` number, `<x>`
 * as ES writes it (readable first): a date for epoch times (`start_time_in_millis`), a time value
 * for durations, a byte size for sizes.
 */
function humanize(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(humanize);
  if (!isObj(v)) return v;
  const out: Obj = {};
  for (const [k, x] of Object.entries(v)) {
    const m = /^(.+)_in_(millis|nanos|bytes)$/.exec(k);
    const n = typeof x === 'number' ? x : typeof x === 'bigint' ? Number(x) : undefined;
    if (m && n !== undefined && !Object.hasOwn(v, m[1])) {
      const [, base, unit] = m;
      out[base] =
        unit === 'bytes' ? humanBytes(n)
        : unit === 'nanos' ? humanTime(n / 1e6)
        : /(time|date|timestamp)$/.test(base) && n > 1e11 ? new Date(n).toISOString()
        : humanTime(n);
    }
    out[k] = humanize(x);
  }
  return out;
}

// ---- error_trace ----

/** `error_trace=true`: every error object gets a `stack_trace`. */
function withStackTrace(v: Obj, stack: string): Obj {
  const add = (e: unknown): unknown => {
    if (!isObj(e)) return e;
    const o: Obj = { ...e, stack_trace: stack };
    if (Array.isArray(e.root_cause)) o.root_cause = e.root_cause.map(add);
    if (isObj(e.caused_by)) o.caused_by = add(e.caused_by);
    return o;
  };
  return isObj(v.error) ? { ...v, error: add(v.error) } : v;
}

// ---- pretty ----

function prettyJson(v: unknown, indent: string): string {
  if (Array.isArray(v)) {
    if (!v.length) return '[ ]';
    const inner = indent + '  ';
    return `[\n${v.map((x) => inner + prettyJson(x, inner)).join(',\n')}\n${indent}]`;
  }
  if (isObj(v)) {
    const entries = Object.entries(v).filter(([, x]) => x !== undefined);
    if (!entries.length) return '{ }';
    const inner = indent + '  ';
    return `{\n${entries.map(([k, x]) => `${inner}${JSON.stringify(k)} : ${prettyJson(x, inner)}`).join(',\n')}\n${indent}}`;
  }
  return stringify(v) ?? 'null';
}
