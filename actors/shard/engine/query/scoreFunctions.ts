/**
 * The score functions of `function_score` (ES's ScoreFunctionBuilders): `weight`,
 * `field_value_factor`, `random_score`, and the decay functions `gauss`, `exp`, `linear` on
 * numeric and date fields. Each becomes `(doc, subQueryScore) => number` bound to one searcher.
 */
import { EsError, illegalArgument } from '../../../wire/esErrors';
import { murmur3Bytes } from '../base/routing';
import { parseTimeValue } from '../../../wire/timeValue';
import { parseDateMath } from '../base/dateMath';
import { NUMERIC_TYPES } from '../index/fieldDef';
import type { QueryContext } from './qnode';

type Obj = Record<string, unknown>;

/** A bound score function and the weight it carries (1 when none). */
export interface BoundFunction {
  score: (doc: number, subQueryScore: number) => number;
  weight: number;
}

const enc = new TextEncoder();

/** Binds one `functions` entry (or the single inline function). */
export function bindFunction(entry: Obj, ctx: QueryContext): BoundFunction {
  const weight = entry.weight === undefined ? undefined : Number(entry.weight);
  const name = Object.keys(entry).find((k) => k !== 'filter' && k !== 'weight');
  const inner = name ? bindNamed(name, entry[name] as Obj, ctx) : () => 1;
  if (weight === undefined) return { score: inner, weight: 1 };
  return { score: (d, s) => inner(d, s) * weight, weight };
}

function bindNamed(name: string, spec: Obj, ctx: QueryContext): (doc: number, s: number) => number {
  switch (name) {
    case 'field_value_factor': return fieldValueFactor(spec, ctx);
    case 'random_score': return randomScore(spec, ctx);
    case 'gauss':
    case 'exp':
    case 'linear': return decay(name, spec, ctx);
    default: return () => 1;
  }
}

const MODIFIERS: Record<string, (x: number) => number> = {
  none: (x) => x,
  log: (x) => Math.log10(x),
  log1p: (x) => Math.log10(x + 1),
  log2p: (x) => Math.log10(x + 2),
  ln: (x) => Math.log(x),
  ln1p: (x) => Math.log1p(x),
  ln2p: (x) => Math.log1p(x + 1),
  square: (x) => x * x,
  sqrt: (x) => Math.sqrt(x),
  reciprocal: (x) => 1 / x,
};

function fieldValueFactor(spec: Obj, ctx: QueryContext): (doc: number) => number {
  const field = String(spec.field);
  const factor = spec.factor === undefined ? 1 : Math.fround(Number(spec.factor));
  const modName = String(spec.modifier ?? 'none').toLowerCase();
  const modifier = MODIFIERS[modName];
  const missing = spec.missing === undefined ? undefined : Number(spec.missing);
  const type = ctx.store.fieldType(field);
  if (type === undefined && missing === undefined) {
    throw illegalArgument(`Unable to find a field mapper for field [${field}]. No 'missing' value defined.`);
  }
  if (type !== undefined && !NUMERIC_TYPES.has(type)) throw illegalArgument(`field [${field}] of type [${type}] is not numeric: [field_value_factor] needs numbers`);
  return (doc) => {
    const vs = type === undefined ? [] : ctx.store.values(field, doc);
    let value: number;
    if (vs.length) value = Number(vs[0]);
    else if (missing !== undefined) value = missing;
    else throw illegalArgument(`Missing value for field [${field}]`);
    const val = value * factor;
    const result = modifier(val);
    if (!Number.isFinite(result)) {
      throw illegalArgument(`Result of field modification [${modName}(${val})] must be a number`);
    }
    return result;
  };
}

function randomScore(spec: Obj, ctx: QueryContext): (doc: number) => number {
  const field = spec.field === undefined ? undefined : String(spec.field);
  if (field === '_id') {
    throw illegalArgument('Fielddata access on the _id field is disallowed, you can re-enable it by updating the dynamic cluster setting: indices.id_field_data.enabled');
  }
  // no seed: a fresh order per request; a seed: the same order every time (salted with the shard, as ES)
  const seed = spec.seed === undefined ? (ctx.now ^ (Math.random() * 0x7fffffff)) | 0 : Number(BigInt.asIntN(32, BigInt(Math.trunc(Number(spec.seed)))));
  const salted = (seed ^ (ctx.store.shardId * 0x9e3779b1)) | 0;
  const key = (doc: number): string => {
    if (field === undefined || field === '_seq_no') return String(doc);
    const vs = ctx.store.values(field, doc);
    return vs.length ? String(vs[0]) : '';
  };
  return (doc) => (murmur3Bytes(enc.encode(key(doc)), salted) & 0x00ffffff) / (1 << 24);
}

type Mode = 'min' | 'max' | 'avg' | 'sum';

function decay(kind: 'gauss' | 'exp' | 'linear', spec: Obj, ctx: QueryContext): (doc: number) => number {
  const field = Object.keys(spec).find((k) => k !== 'multi_value_mode')!;
  const p = spec[field] as Obj;
  const mode = String(spec.multi_value_mode ?? 'min').toLowerCase() as Mode;
  const type = ctx.store.fieldType(field);
  if (type === undefined) return () => 1; // unmapped: every doc scores 1, as a missing value does
  const isDate = type === 'date' || type === 'date_nanos';
  if (!isDate && !NUMERIC_TYPES.has(type)) {
    throw new EsError('parsing_exception', 400, `field [${field}] is of type [${type}], but only numeric types are supported.`);
  }
  const num = (v: unknown, what: string): number => {
    const n = Number(v);
    if (v === undefined || v === null || Number.isNaN(n)) throw new EsError('parse_exception', 400, `[${kind}] ${what} must be a number`);
    return n;
  };
  let origin: number;
  let scale: number;
  let offset: number;
  if (isDate) {
    const def = ctx.store.mapping.field(field)!;
    const fmt = ctx.store.mapping.formatterOf(def);
    origin = p.origin === undefined ? ctx.now : typeof p.origin === 'number' ? p.origin : parseDateMath(String(p.origin), fmt, { now: ctx.now }).ms;
    scale = parseTimeValue(String(p.scale), `${field}.scale`);
    offset = p.offset === undefined ? 0 : parseTimeValue(String(p.offset), `${field}.offset`);
  } else {
    if (p.origin === undefined) throw new EsError('parse_exception', 400, `[${kind}] must provide origin`);
    origin = num(p.origin, 'origin');
    scale = num(p.scale, 'scale');
    offset = p.offset === undefined ? 0 : num(p.offset, 'offset');
  }
  if (scale <= 0) throw illegalArgument(`[${kind}] scale must be greater than 0`);
  const d = p.decay === undefined ? 0.5 : Number(p.decay);
  const fn = kind === 'gauss'
    ? ((s) => (x: number) => Math.exp((0.5 * x * x) / s))((0.5 * scale * scale) / Math.log(d))
    : kind === 'exp'
      ? ((s) => (x: number) => Math.exp(s * x))(Math.log(d) / scale)
      : ((s) => (x: number) => Math.max(0, (s - x) / s))(scale / (1 - d));
  return (doc) => {
    const vs = ctx.store.values(field, doc);
    if (!vs.length) return 1;
    const dists = vs.map((v) => Math.max(0, Math.abs(Number(isDate && typeof v === 'bigint' ? v / 1_000_000n : v) - origin) - offset));
    const dist = mode === 'min' ? Math.min(...dists) : mode === 'max' ? Math.max(...dists) : mode === 'sum' ? dists.reduce((a, b) => a + b, 0) : dists.reduce((a, b) => a + b, 0) / dists.length;
    return fn(dist);
  };
}
