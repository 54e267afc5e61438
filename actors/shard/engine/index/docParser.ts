import { EsError } from '../../../wire/esErrors';
import type { FieldType } from '../types';
import { DEFAULT_DATE_FORMAT, dateFormatter, type Instant } from '../base/dates';
import { analyze } from './analysis';
import { isEncoded } from './fieldCodecs';
import { encodeValue, isPointArray } from './encodedValues';
import { checkNesting, checkTermLength, MAX_TERM_BYTES } from './docLimits';
import { checkObjectDepth, leafDef, mapperParsing, objectDef, type Dynamic, type FieldDef, type MappingView } from './fieldDef';

/**
 * A field value after mapping: keyword/text -> string; integer types -> number (bigint beyond 2^53);
 * floating types -> number; boolean -> 0 | 1; date/date_nanos -> Instant (date keeps ns = 0).
 */
export type FieldValue = string | number | bigint | Instant;

/** Values of one leaf field (or multi-field) of a document. */
export interface ParsedField {
  def: FieldDef;
  values: FieldValue[];
  /** `text` fields: the analyzed tokens of all values, so indexing the doc is a plain append. */
  tokens?: string[];
  /** `text` fields with several values: where each value's tokens end in `tokens` (positions). */
  valueEnds?: number[];
}

/** A document flattened into leaf field values (one entry per field path). */
export type ParsedDoc = ParsedField[];

/** A text field's tokens (and value ends when it has several values). */
function analyzeText(f: ParsedField): void {
  if (f.values.length === 1) {
    f.tokens = analyze(f.values[0] as string);
    return;
  }
  const tokens: string[] = [];
  const ends: number[] = [];
  for (const v of f.values) {
    for (const t of analyze(v as string)) tokens.push(t);
    ends.push(tokens.length);
  }
  f.tokens = tokens;
  f.valueEnds = ends;
}

const METADATA = new Set(['_id', '_index', '_routing', '_source', '_seq_no', '_primary_term', '_version', '_field_names', '_ignored', '_tier', '_doc_count', '_data_stream_timestamp', '_feature', '_nested_path']);

const LIMITS: Partial<Record<FieldType, [bigint, bigint, string]>> = {
  long: [-(2n ** 63n), 2n ** 63n - 1n, 'a long'],
  integer: [-(2n ** 31n), 2n ** 31n - 1n, 'an integer'],
  short: [-32768n, 32767n, 'a short'],
  byte: [-128n, 127n, 'a byte'],
  unsigned_long: [0n, 2n ** 64n - 1n, 'an unsigned_long'],
};

const MAX_NANOS = 2n ** 63n - 1n;

class Ctx {
  /** Fields in order of first value; looked up by path (a Map once there are many). */
  readonly out: ParsedField[] = [];
  private byPath?: Map<string, ParsedField>;
  readonly undo: Array<() => void> = [];
  private floatPaths?: Map<string, boolean>;
  /** Inside a nested object (not included in the parent): values are checked, not kept. */
  nestedDepth = 0;
  constructor(readonly m: MappingView, readonly id: string, readonly raw?: string) {}
  add(def: FieldDef, v: FieldValue): void {
    if (this.nestedDepth > 0) return;
    let f: ParsedField | undefined;
    if (this.byPath) f = this.byPath.get(def.path);
    else for (let i = 0; i < this.out.length && !f; i++) if (this.out[i].def.path === def.path) f = this.out[i];
    if (f) {
      f.values.push(v);
      return;
    }
    // `[v]`, not `[]` + push: a first push would give the array room for 16 values.
    this.out.push((f = { def, values: [v] }));
    if (this.byPath) this.byPath.set(def.path, f);
    else if (this.out.length > 12) this.byPath = new Map(this.out.map((x) => [x.def.path, x]));
  }
  /** Whether the first number literal at `path` in the raw JSON was written as a float. */
  isFloatLiteral(path: string): boolean {
    if (this.raw === undefined) return false;
    this.floatPaths ??= scanNumberKinds(this.raw);
    return this.floatPaths.get(path) ?? false;
  }
}

/** See MappingView.parse. */
export function parseDocument(m: MappingView, source: unknown, id: string, raw?: string): ParsedDoc {
  return prepareDocument(m, source, id, raw).fields;
}

/** A validated, analyzed document and the undo of the dynamic mapping additions it made. */
export interface PreparedDoc {
  fields: ParsedDoc;
  /** Removes the fields this document added to the mapping (when the write is abandoned later). */
  undo(): void;
}

/**
 * Validates and analyzes a document: everything that can fail fails here, as ES's 4xx, with the
 * mapping as it was; afterwards indexing the result cannot fail. New dynamic fields are attached to
 * the mapping (later documents of the same batch see them); `undo` detaches them again.
 */
export function prepareDocument(m: MappingView, source: unknown, id: string, raw?: string): PreparedDoc {
  if (source === null || typeof source !== 'object' || Array.isArray(source)) {
    throw mapperParsing('failed to parse', new EsError('not_x_content_exception', 400, 'Compressor detection can only be called on some xcontent bytes or compressed xcontent bytes'));
  }
  if (raw !== undefined) checkNesting(raw);
  const ctx = new Ctx(m, id, raw);
  let fields: ParsedDoc;
  try {
    walkObject(ctx, m.root, source as Record<string, unknown>, m.root.dynamic ?? 'true', true);
    fields = [...ctx.out.values()];
    // Analysis belongs to validation: whatever fails here fails before the store changes.
    for (const f of fields) if (f.def.type === 'text') analyzeText(f);
  } catch (e) {
    undoAll(ctx.undo);
    throw e;
  }
  return { fields, undo: () => undoAll(ctx.undo.splice(0)) };
}

function undoAll(undo: Array<() => void>): void {
  for (let i = undo.length - 1; i >= 0; i--) undo[i]();
}

function walkObject(ctx: Ctx, obj: FieldDef, value: Record<string, unknown>, dyn: Dynamic, isRoot = false): void {
  for (const key of Object.keys(value)) {
    const v = value[key];
    // (a first char in '!'..'~' is not whitespace: the regex only for other keys)
    const c0 = key.charCodeAt(0);
    if (key.length === 0 || ((c0 <= 0x20 || c0 >= 0x7f) && /^\s*$/.test(key))) throw mapperParsing('field name cannot be an empty string');
    if (isRoot && METADATA.has(key)) {
      throw mapperParsing(`Field [${key}] is a metadata field and cannot be added inside a document. Use the index API request parameters.`);
    }
    if (key.indexOf('.') < 0) {
      walkValue(ctx, obj, key, v, dyn);
      continue;
    }
    const parts = key.split('.');
    checkDottedName(key, parts);
    let parent: FieldDef | undefined = obj;
    let d = dyn;
    for (let i = 0; i < parts.length - 1 && parent; i++) {
      // dotted keys: `{"a.b": 1}` is `{"a": {"b": 1}}`
      const child = resolveObject(ctx, parent, parts[i], d);
      // An unmapped object under dynamic false/runtime, or a disabled one: this key is skipped
      // (in _source only), never the keys after it.
      parent = child && child.enabled !== false ? child : undefined;
      if (parent) d = parent.dynamic ?? d;
    }
    if (parent) walkValue(ctx, parent, parts[parts.length - 1], v, d);
  }
}

/**
 * ES's DotExpandingXContentParser checks of a dotted name: only dots, or an empty part (leading,
 * trailing or doubled dot), or a blank one, are refused (a "." key made the mapping proposal loop).
 */
function checkDottedName(key: string, parts: string[]): void {
  if (parts.every((p) => p === '')) throw mapperParsing('field name cannot contain only dots');
  for (const p of parts) {
    if (p === '') throw mapperParsing(`object field starting or ending with a [.] makes object resolution ambiguous: [${key}]`);
    if (!p.trim()) throw mapperParsing(`field name cannot contain only whitespace: ['${key}']`);
  }
}

function resolveObject(ctx: Ctx, parent: FieldDef, name: string, dyn: Dynamic): FieldDef | undefined {
  const cur = parent.properties!.get(name);
  if (cur) {
    if (cur.type !== 'object') throw mapperParsing(`Could not dynamically add mapping for field [${join(parent.path, name)}]. Existing mapping for [${cur.path}] must be of type object but found [${cur.type}].`);
    return cur;
  }
  if (!allowNew(dyn, parent, name)) return undefined;
  const path = join(parent.path, name);
  checkObjectDepth(path, ctx.m.depthLimit);
  const def = objectDef(path, {});
  ctx.undo.push(ctx.m.attach(parent, name, def));
  return def;
}

function allowNew(dyn: Dynamic, parent: FieldDef, name: string): boolean {
  if (dyn === 'strict') {
    throw new EsError('strict_dynamic_mapping_exception', 400, `[${parent.path || '_doc'}] mapping set to strict, dynamic introduction of [${name}] within [${parent.path || '_doc'}] is not allowed`);
  }
  return dyn === 'true';
}

const includedInParent = (def: FieldDef) => [def.params.include_in_parent, def.params.include_in_root].some((x) => x === true || x === 'true');

function walkValue(ctx: Ctx, parent: FieldDef, name: string, v: unknown, dyn: Dynamic): void {
  // geo points and ranges are objects or [lon, lat] arrays that are one value
  const enc = parent.properties!.get(name);
  if (enc && isEncoded(enc.type) && v !== null && typeof v === 'object' && (!Array.isArray(v) || (enc.type === 'geo_point' && isPointArray(v)))) {
    indexLeaf(ctx, enc, v);
    return;
  }
  if (Array.isArray(v)) {
    for (const x of v) walkValue(ctx, parent, name, x, dyn);
    return;
  }
  let def = parent.properties!.get(name);
  if (v !== null && typeof v === 'object') {
    if (def && def.type !== 'object') throw failedToParse(ctx, def, preview(v));
    if (!def) def = resolveObject(ctx, parent, name, dyn);
    if (!def || def.enabled === false) return;
    const apart = def.nested === true && !includedInParent(def);
    if (apart) ctx.nestedDepth++;
    try {
      walkObject(ctx, def, v as Record<string, unknown>, def.dynamic ?? dyn);
    } finally {
      if (apart) ctx.nestedDepth--;
    }
    return;
  }
  if (def?.type === 'object') {
    if (v === null) return;
    throw mapperParsing(`object mapping for [${join(parent.path, name)}] tried to parse field [${name}] as object, but found a concrete value`);
  }
  if (v === null) {
    if (def?.nullValue !== undefined) indexLeaf(ctx, def, def.nullValue);
    return;
  }
  if (!def) {
    if (!allowNew(dyn, parent, name)) return;
    def = dynamicDef(ctx, join(parent.path, name), v);
    ctx.undo.push(ctx.m.attach(parent, name, def));
  }
  indexLeaf(ctx, def, v);
}

function dynamicDef(ctx: Ctx, path: string, v: unknown): FieldDef {
  const m = ctx.m;
  if (typeof v === 'boolean') return leafDef(path, 'boolean', {});
  if (typeof v === 'bigint') return leafDef(path, 'long', {});
  if (typeof v === 'number') return leafDef(path, Number.isInteger(v) && !ctx.isFloatLiteral(path) ? 'long' : 'float', {});
  const s = String(v);
  const asNumber = s.trim() !== '' && Number.isFinite(Number(s));
  if (asNumber && m.numericDetection) return leafDef(path, /^[+-]?\d+$/.test(s.trim()) ? 'long' : 'float', {});
  if (!asNumber && m.dateDetection) {
    for (const f of m.dynamicDateFormats) {
      const full = f === 'strict_date_optional_time' ? DEFAULT_DATE_FORMAT : f;
      try {
        dateFormatter(full).parse(s);
      } catch {
        continue;
      }
      return leafDef(path, 'date', full === DEFAULT_DATE_FORMAT ? {} : { format: full });
    }
  }
  const def = leafDef(path, 'text', {});
  def.fields = new Map([['keyword', leafDef(`${path}.keyword`, 'keyword', { ignore_above: 256 })]]);
  return def;
}

function indexLeaf(ctx: Ctx, def: FieldDef, v: unknown): void {
  const out = convert(ctx, def, v);
  if (out !== undefined) ctx.add(def, out);
  // multi-fields see the same raw value (a loop: a closure here would cost every leaf a context)
  if (def.fields) for (const sub of def.fields.values()) indexLeaf(ctx, sub, v);
}

function convert(ctx: Ctx, def: FieldDef, v: unknown): FieldValue | undefined {
  const t = def.type;
  if (t === 'keyword' || t === 'text') {
    const s = typeof v === 'string' ? v : String(v);
    if (t === 'text') return s;
    if (def.ignoreAbove !== undefined && s.length > def.ignoreAbove) return undefined;
    // a keyword is one term; at most 3 UTF-8 bytes per UTF-16 unit, so only long values need counting
    if (s.length > MAX_TERM_BYTES / 3) checkTermLength(def, s);
    return s;
  }
  if (isEncoded(t)) {
    try {
      return encodeValue(def, v, () => ctx.m.formatterOf(def));
    } catch (e) {
      throw failedToParse(ctx, def, preview(v), e instanceof EsError ? e : new EsError('illegal_argument_exception', 400, (e as Error).message));
    }
  }
  if (typeof v === 'string' && v.length === 0 && t !== 'date' && t !== 'date_nanos') return undefined; // "" = null for numbers/booleans
  try {
    if (t === 'boolean') return toBoolean(v);
    if (t === 'date' || t === 'date_nanos') return toDate(ctx, def, v);
    const lim = LIMITS[t];
    return lim ? toInteger(v, lim) : toFloating(def, v);
  } catch (e) {
    throw failedToParse(ctx, def, preview(v), e instanceof EsError ? e : new EsError('illegal_argument_exception', 400, (e as Error).message));
  }
}

function toBoolean(v: unknown): number {
  if (v === true || v === 'true') return 1;
  if (v === false || v === 'false') return 0;
  throw new EsError('illegal_argument_exception', 400, `Failed to parse value [${String(v)}] as only [true] or [false] are allowed.`);
}

function toInteger(v: unknown, [min, max, name]: [bigint, bigint, string]): number | bigint {
  // A safe integer (the usual case) needs no bigint: the limits compare exactly as numbers here.
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= Number(min) && v <= Number(max)) return v === 0 ? 0 : v;
  let big: bigint;
  if (typeof v === 'bigint') big = v;
  else if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new EsError('illegal_argument_exception', 400, `[${v}] is not a valid number`);
    if (Math.abs(v) >= 2 ** 64) throw new EsError('illegal_argument_exception', 400, `Value [${v}] is out of range for ${name}`);
    big = BigInt(Math.trunc(v)); // coerce: decimals are truncated
  } else if (typeof v === 'string' && /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(v)) {
    const s = v.trim();
    big = /^[+-]?\d+$/.test(s) ? BigInt(s) : BigInt(Math.trunc(Number(s)));
  } else {
    throw new EsError('number_format_exception', 400, `For input string: "${String(v)}"`);
  }
  if (big < min || big > max) throw new EsError('illegal_argument_exception', 400, `Value [${String(v)}] is out of range for ${name}`);
  const n = Number(big);
  return Number.isSafeInteger(n) ? n : big;
}

function toFloating(def: FieldDef, v: unknown): number {
  const n = typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  if (!Number.isFinite(n)) throw new EsError('number_format_exception', 400, `For input string: "${String(v)}"`);
  switch (def.type) {
    case 'float': return Math.fround(n);
    case 'half_float': return halfRound(n);
    case 'scaled_float': return Math.round(n * def.scalingFactor!) / def.scalingFactor!;
    default: return n;
  }
}

function toDate(ctx: Ctx, def: FieldDef, v: unknown): Instant {
  const text = typeof v === 'string' ? v : String(v);
  const fmt = ctx.m.formatterOf(def);
  let i: Instant;
  try {
    i = fmt.parse(text);
  } catch {
    throw new EsError('illegal_argument_exception', 400, `failed to parse date field [${text}] with format [${fmt.pattern}]`);
  }
  if (def.type === 'date') return { ms: i.ms, ns: 0 };
  if (i.ms < 0) throw new EsError('illegal_argument_exception', 400, `date[${fmt.format(i)}] is before the epoch in 1970 and cannot be stored in nanosecond resolution`);
  if (BigInt(i.ms) * 1_000_000n + BigInt(i.ns) > MAX_NANOS) throw new EsError('illegal_argument_exception', 400, `date[${fmt.format(i)}] is after 2262-04-11T23:47:16.854775807 and cannot be stored in nanosecond resolution`);
  return i;
}

function failedToParse(ctx: Ctx, def: FieldDef, shown: string, cause?: EsError): EsError {
  return mapperParsing(`failed to parse field [${def.path}] of type [${def.type}] in document with id '${ctx.id}'. Preview of field's value: '${shown}'`, cause);
}

/** Java `toString` of a parsed JSON value, as ES previews it. */
function preview(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(preview).join(', ')}]`;
  if (v !== null && typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${k}=${preview(x)}`).join(', ')}}`;
  return String(v);
}

const join = (a: string, b: string) => (a ? `${a}.${b}` : b);

/** Rounds to the nearest IEEE half-precision value (ties to even). */
export function halfRound(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const a = Math.abs(x);
  if (a >= 65520) return Math.sign(x) * Infinity;
  const e = Math.max(Math.floor(Math.log2(a)), -14);
  const q = 2 ** (e - 10);
  let r = a / q;
  const fl = Math.floor(r);
  r = r - fl > 0.5 || (r - fl === 0.5 && fl % 2 === 1) ? fl + 1 : fl;
  return Math.sign(x) * r * q;
}

/** For each dotted path, whether its first number literal in the JSON text is a float (`1.0`, `1e3`). */
export function scanNumberKinds(src: string): Map<string, boolean> {
  const out = new Map<string, boolean>();
  const stack: Array<{ arr: boolean; path: string }> = [];
  let key = '';
  let path = '';
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === '"') {
      let j = i + 1;
      let s = '';
      while (j < src.length && src[j] !== '"') {
        if (src[j] === '\\') {
          s += src[j + 1] === 'u' ? String.fromCharCode(parseInt(src.slice(j + 2, j + 6), 16)) : src[j + 1];
          j += src[j + 1] === 'u' ? 6 : 2;
        } else s += src[j++];
      }
      let k = j + 1;
      while (k < src.length && /\s/.test(src[k])) k++;
      if (src[k] === ':' && !stack[stack.length - 1]?.arr) key = s;
      i = j;
    } else if (c === '{' || c === '[') {
      const top = stack[stack.length - 1];
      path = top === undefined ? '' : top.arr ? top.path : join(top.path, key);
      stack.push({ arr: c === '[', path });
    } else if (c === '}' || c === ']') stack.pop();
    else if (c === '-' || (c >= '0' && c <= '9')) {
      let j = i;
      while (j < src.length && /[-+0-9.eE]/.test(src[j])) j++;
      const top = stack[stack.length - 1];
      const p = top.arr ? top.path : join(top.path, key);
      if (!out.has(p)) out.set(p, /[.eE]/.test(src.slice(i, j)));
      i = j - 1;
    }
  }
  return out;
}
