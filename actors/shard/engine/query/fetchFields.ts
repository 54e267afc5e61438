/**
 * The `fields` section of hits: `docvalue_fields` (values from doc values: keywords sorted,
 * numbers, dates in the field's format or the request's) and `fields` (values from `_source` read
 * through the mapping: coerced numbers, formatted dates, multi-fields, `include_unmapped`), as ES's
 * FetchDocValuesPhase and FetchFieldsPhase. Patterns (`*`) expand over mapped leaves.
 */
import { decodeDouble, decodeGeo, decodeIp, decodeLong, RANGE_TYPES, rangeBounds } from '../index/fieldCodecs';
import { parsePoint } from '../index/encodedValues';
import { illegalArgument } from '../../../wire/esErrors';
import { simpleMatch } from '../../../automaton';
import { parseSourceJson } from '../../../wire/sourceJson';
import { dateFormatter, splitNanos, type DateFormatter } from '../base/dates';
import { floatValue } from '../index/analysis';
import type { FieldDef } from '../index/mapping';
import type { ShardHit, ShardQueryRequest } from '../types';
import type { QueryContext } from './qnode';

type Value = string | number | boolean | bigint | null | Record<string, unknown>;
const NUMERIC = new Set(['long', 'integer', 'short', 'byte', 'double', 'float', 'half_float', 'scaled_float', 'unsigned_long']);
const fielddataOnText = (f: string) => illegalArgument(
  `Text fields are not optimised for operations that require per-document field data like aggregations and sorting, so these operations are disabled by default. Please use a keyword field instead. Alternatively, set fielddata=true on [${f}] in order to load field data by uninverting the inverted index. Note that this can use significant memory.`,
);

/** Sets `fields` of each hit. */
export function addFetchFields(ctx: QueryContext, req: ShardQueryRequest, hits: ShardHit[]): void {
  const m = ctx.store.mapping;
  const leaves = m.allLeaves();
  const expand = (pattern: string) => (pattern.includes('*') ? leaves.filter((d) => d.type !== 'object' && simpleMatch(pattern, d.path)) : m.field(pattern) ? [m.field(pattern)!] : []);
  const dv: Array<{ def: FieldDef; fmt?: string }> = [];
  for (const e of req.docvalueFields ?? []) {
    for (const def of expand(e.field)) {
      if (def.type === 'text' && !def.fielddata) throw fielddataOnText(def.path);
      dv.push({ def, fmt: e.format });
    }
  }
  const src = req.fields ?? [];
  for (const h of hits) {
    const out = new Map<string, Value[]>();
    for (const { def, fmt } of dv) {
      const vals = docValues(ctx, def, h.doc, fmt);
      if (vals.length) out.set(def.path, vals);
    }
    if (src.length) fromSource(ctx, h.doc, src, leaves, expand, out);
    if (out.size) h.fields = `{${[...out].map(([k, v]) => `${JSON.stringify(k)}:${renderValues(v)}`).join(',')}}`;
  }
}

/** A range term as `{gte, lte}` (numbers, dates as epoch millis, ips as addresses). */
function decodeRange(type: FieldDef['type'], term: string): Record<string, unknown> {
  const [lo, hi] = rangeBounds(type, term);
  if (type === 'ip_range') return { gte: decodeIp(lo), lte: decodeIp(hi) };
  if (type === 'float_range' || type === 'double_range') return { gte: decodeDouble(lo), lte: decodeDouble(hi) };
  const n = (h: string) => { const b = decodeLong(h); return Number.isSafeInteger(Number(b)) ? Number(b) : b.toString(); };
  return { gte: n(lo), lte: n(hi) };
}

function renderValues(v: Value[]): string {
  return `[${v.map((x) => (typeof x === 'bigint' ? x.toString() : JSON.stringify(x))).join(',')}]`;
}

function formatterOf(ctx: QueryContext, def: FieldDef, fmt: string | undefined): DateFormatter {
  return fmt ? dateFormatter(fmt) : dateFormatter((def.format ?? 'strict_date_optional_time').split('||')[0]);
}

function docValues(ctx: QueryContext, def: FieldDef, doc: number, fmt: string | undefined): Value[] {
  const raw = ctx.store.values(def.path, doc);
  if (def.type === 'geo_point') return raw.map((t) => decodeGeo(String(t)));
  if (RANGE_TYPES.has(def.type)) return raw.map((t) => decodeRange(def.type, String(t)));
  if (def.type === 'date' || def.type === 'date_nanos') {
    const f = formatterOf(ctx, def, fmt);
    return raw.map((v) => (typeof v === 'bigint' ? f.format(splitNanos(v)) : f.format({ ms: Number(v), ns: 0 })));
  }
  if (NUMERIC.has(def.type) && fmt !== undefined) return raw.map((v) => decimalFormat(Number(v), fmt));
  if (def.type === 'float' || def.type === 'half_float') return raw.map((v) => Number(v));
  return raw as Value[];
}

/** The DecimalFormat subset ES users pass (`#.0`, `0.00`, `#,##0.###`). */
function decimalFormat(x: number, pattern: string): string {
  const [int, frac = ''] = pattern.split('.');
  const min = (frac.match(/0/g) ?? []).length;
  const max = min + (frac.match(/#/g) ?? []).length;
  let s = x.toFixed(max);
  if (max > min) s = s.replace(new RegExp(`0{1,${max - min}}$`), '').replace(/\.$/, '');
  const minInt = (int.replace(/,/g, '').match(/0/g) ?? []).length;
  const [ip, fp] = s.split('.');
  let whole = ip.replace('-', '');
  if (minInt === 0 && whole === '0' && fp) whole = '';
  whole = whole.padStart(minInt, '0');
  if (int.includes(',')) whole = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${x < 0 ? '-' : ''}${whole}${fp ? `.${fp}` : ''}`;
}

/** FetchFieldsPhase: mapped leaves matching the patterns read from `_source` (multi-fields from their parent's value). */
function fromSource(
  ctx: QueryContext, doc: number, specs: NonNullable<ShardQueryRequest['fields']>, leaves: FieldDef[],
  expand: (p: string) => FieldDef[], out: Map<string, Value[]>,
): void {
  let source: unknown;
  try {
    source = parseSourceJson(ctx.store.source(doc));
  } catch {
    return;
  }
  const parentOf = new Map<string, string>();
  for (const d of leaves) for (const sub of d.fields?.values() ?? []) parentOf.set(sub.path, d.path);
  for (const spec of specs) {
    for (const def of expand(spec.field)) {
      if (def.type === 'object' || out.has(def.path)) continue;
      const at = parentOf.get(def.path) ?? def.path;
      const vals = valuesAt(source, at).flatMap((v) => sourceValue(ctx, def, v, spec.format));
      if (vals.length) out.set(def.path, vals);
    }
    if (spec.include_unmapped) {
      for (const [path, v] of flatten(source, '')) {
        if (out.has(path) || ctx.store.mapping.field(path) || !(spec.field.includes('*') ? simpleMatch(spec.field, path) : spec.field === path)) continue;
        out.set(path, v);
      }
    }
  }
}

/** Values at a dotted path of the source, whatever mix of objects, dotted keys and arrays holds them. */
export function valuesAt(o: unknown, path: string): unknown[] {
  if (o === undefined || o === null) return [];
  if (Array.isArray(o)) return o.flatMap((x) => valuesAt(x, path));
  if (path === '') return [o];
  if (typeof o !== 'object') return [];
  const rec = o as Record<string, unknown>;
  const out: unknown[] = [];
  const parts = path.split('.');
  for (let i = 1; i <= parts.length; i++) {
    const key = parts.slice(0, i).join('.');
    if (key in rec) out.push(...valuesAt(rec[key], parts.slice(i).join('.')));
  }
  return out;
}

function flatten(o: unknown, prefix: string): Array<[string, Value[]]> {
  if (o === null || typeof o !== 'object' || Array.isArray(o)) {
    const vs = (Array.isArray(o) ? o : [o]).filter((x) => x === null || typeof x !== 'object') as Value[];
    return prefix ? [[prefix, vs]] : [];
  }
  return Object.entries(o as Record<string, unknown>).flatMap(([k, v]) => flatten(v, prefix ? `${prefix}.${k}` : k));
}

/** A `_source` value as the field's type reads it (FieldMapper.valueFetcher). */
function sourceValue(ctx: QueryContext, def: FieldDef, v: unknown, fmt: string | undefined): Value[] {
  if (v === null || v === undefined) return def.nullValue !== undefined ? sourceValue(ctx, def, def.nullValue, fmt) : [];
  if (def.type === 'geo_point') {
    try {
      const p = parsePoint(v);
      return [{ type: 'Point', coordinates: [p.lon, p.lat] }]; // GeoJSON, as the fields API renders points
    } catch {
      return [];
    }
  }
  if (RANGE_TYPES.has(def.type) && typeof v === 'object') return [v as Record<string, unknown>];
  if (typeof v === 'object' && !(typeof v === 'bigint')) return [];
  switch (def.type) {
    case 'keyword': {
      const s = String(v);
      return def.ignoreAbove !== undefined && s.length > def.ignoreAbove ? [] : [s];
    }
    case 'text': return [String(v)];
    case 'boolean': return v === true || v === 'true' ? [true] : v === false || v === 'false' || v === '' ? [false] : [];
    case 'date':
    case 'date_nanos': {
      try {
        const parser = ctx.store.mapping.formatterOf(def);
        const i = typeof v === 'number' ? { ms: v, ns: 0 } : parser.parse(String(v));
        return [formatterOf(ctx, def, fmt).format(i)];
      } catch {
        return [];
      }
    }
    default: {
      if (!NUMERIC.has(def.type)) return [typeof v === 'bigint' ? v : (v as Value)];
      const n = typeof v === 'bigint' ? v : Number(v);
      if (typeof n === 'number' && Number.isNaN(n)) return [];
      if (typeof n === 'bigint') return [n];
      if (def.type === 'float' || def.type === 'half_float') return [floatValue(n)];
      if (['long', 'integer', 'short', 'byte', 'unsigned_long'].includes(def.type)) return [Math.trunc(n)];
      return [n];
    }
  }
}
