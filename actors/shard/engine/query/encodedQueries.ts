/**
 * Queries over the encoded field types (index/fieldCodecs.ts), constant-scored as ES's point
 * queries are: `ip` terms (exact, CIDR prefixes) and ranges; range-type fields against a value
 * (`term`: the ranges holding it) or a range (`range` with `relation` intersects / within /
 * contains); `geo_distance` and `geo_bounding_box` over `geo_point`. Matching terms are found by
 * walking the column's dictionary (one test per distinct value) and their postings united.
 */
import { illegalArgument } from '../../../wire/esErrors';
import { Bitset } from '../base/bits';
import { forEachPosting, type KeywordView } from '../index/columnViews';
import type { FieldDef } from '../index/mapping';
import {
  boundWidth, cidrTerms, decodeGeo, encodeDouble, encodeIp, encodeLong, ipStep, parseIp, notAnIp, rangeBounds,
} from '../index/fieldCodecs';
import { nextAfter, parsePoint } from '../index/encodedValues';
import type { QNode, QueryContext } from './qnode';

type Obj = Record<string, unknown>;
const NONE: QNode = { k: 'none' };

/** Docs of the terms a test accepts, as a constant-score node. */
function termsWhere(col: KeywordView | undefined, ctx: QueryContext, boost: number, test: (term: string) => boolean): QNode {
  if (!col) return NONE;
  const n = ctx.s.maxDoc;
  return {
    k: 'const', boost,
    bits: () => {
      const bits = new Bitset(n);
      col.forEachTerm((t, o) => {
        if (test(t)) forEachPosting(col.postingsOf(o), n, (d) => bits.set(d));
      });
      return bits;
    },
  };
}

const keywordCol = (ctx: QueryContext, def: FieldDef) => {
  const c = ctx.store.column(def.path);
  return c?.kind === 'keyword' ? c : undefined;
};

/** An IP query value as a [first, last] term span (a CIDR prefix, or one address). */
function ipSpan(v: unknown): [string, string] {
  const s = String(v);
  if (s.includes('/')) return cidrTerms(s);
  if (!parseIp(s)) throw illegalArgument(notAnIp(s));
  const t = encodeIp(s);
  return [t, t];
}

/** `term` / `terms` on an encoded-type field. */
export function encodedTermNode(def: FieldDef, values: unknown[], boost: number, ctx: QueryContext): QNode {
  const col = keywordCol(ctx, def);
  if (def.type === 'ip') {
    const spans = values.map(ipSpan);
    return termsWhere(col, ctx, boost, (t) => spans.some(([lo, hi]) => t >= lo && t <= hi));
  }
  if (def.type === 'geo_point') throw illegalArgument(`Geometry fields do not support exact searching, use dedicated geometry queries instead: [${def.path}]`);
  const points = values.map((v) => rangePoint(def, v, ctx));
  return termsWhere(col, ctx, boost, (t) => {
    const [lo, hi] = rangeBounds(def.type, t);
    return points.some((p) => lo <= p && p <= hi);
  });
}

/** A value as an encoded bound of a range type. */
function rangePoint(def: FieldDef, v: unknown, ctx: QueryContext, upper = false, inclusive = true): string {
  const t = def.type;
  if (t === 'ip_range') {
    const e = ipSpan(v)[upper ? 1 : 0];
    return inclusive ? e : ipStep(e, !upper) ?? e;
  }
  if (t === 'float_range' || t === 'double_range') {
    let x = t === 'float_range' ? Math.fround(Number(v)) : Number(v);
    if (Number.isNaN(x)) throw illegalArgument(`For input string: "${String(v)}"`);
    if (!inclusive) x = nextAfter(x, t === 'float_range', !upper);
    return encodeDouble(x);
  }
  let n: bigint;
  if (t === 'date_range') {
    const fmt = ctx.store.mapping.formatterOf(def);
    try {
      n = BigInt(fmt.parse(String(v)).ms);
    } catch {
      throw illegalArgument(`failed to parse date field [${String(v)}] with format [${fmt.pattern}]`);
    }
  } else {
    const s = String(v).trim();
    if (!/^[+-]?\d+(\.\d+)?$/.test(s)) throw illegalArgument(`For input string: "${s}"`);
    n = BigInt(s.split('.')[0]);
  }
  if (!inclusive) n += upper ? -1n : 1n;
  return encodeLong(n);
}

/** `range` on an ip field, or on a range-type field with `relation`. */
export function encodedRangeNode(def: FieldDef, spec: Obj, lowV: unknown, highV: unknown, gteSet: boolean, lteSet: boolean, boost: number, ctx: QueryContext): QNode {
  const col = keywordCol(ctx, def);
  if (def.type === 'geo_point') throw illegalArgument(`Field [${def.path}] of type [geo_point] does not support range queries`);
  if (def.type === 'ip') {
    let lo = lowV === undefined || lowV === null ? '0'.repeat(32) : ipSpan(lowV)[0];
    let hi = highV === undefined || highV === null ? 'f'.repeat(32) : ipSpan(highV)[1];
    if (!gteSet && lowV !== undefined && lowV !== null) {
      const up = ipStep(lo, true);
      if (up === null) return NONE;
      lo = up;
    }
    if (!lteSet && highV !== undefined && highV !== null) {
      const down = ipStep(hi, false);
      if (down === null) return NONE;
      hi = down;
    }
    return termsWhere(col, ctx, boost, (t) => t >= lo && t <= hi);
  }
  const w = boundWidth(def.type);
  const qlo = lowV === undefined || lowV === null ? '0'.repeat(w) : rangePoint(def, lowV, ctx, false, gteSet);
  const qhi = highV === undefined || highV === null ? 'f'.repeat(w) : rangePoint(def, highV, ctx, true, lteSet);
  const relation = String(spec.relation ?? 'intersects').toLowerCase();
  if (!['intersects', 'within', 'contains'].includes(relation)) throw illegalArgument(`[range] query does not support relation [${String(spec.relation)}]`);
  return termsWhere(col, ctx, boost, (t) => {
    const [lo, hi] = rangeBounds(def.type, t);
    if (relation === 'within') return lo >= qlo && hi <= qhi;
    if (relation === 'contains') return lo <= qlo && hi >= qhi;
    return lo <= qhi && hi >= qlo;
  });
}

// ---- geo ----

/** Earth's mean radius in meters (GeoUtils.EARTH_MEAN_RADIUS). */
export const EARTH_MEAN_RADIUS = 6371008.7714;

/** Haversine distance in meters (GeoUtils.arcDistance). */
export function arcDistance(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const r = Math.PI / 180;
  const h = Math.sin(((lat2 - lat1) * r) / 2) ** 2 + Math.cos(lat1 * r) * Math.cos(lat2 * r) * Math.sin(((lon2 - lon1) * r) / 2) ** 2;
  return 2 * EARTH_MEAN_RADIUS * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** GeoUtils.planeDistance: an equirectangular approximation. */
export function planeDistance(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const r = Math.PI / 180;
  const x = (lon2 - lon1) * r * Math.cos(((lat2 + lat1) / 2) * r);
  const y = (lat2 - lat1) * r;
  return Math.sqrt(x * x + y * y) * EARTH_MEAN_RADIUS;
}

const UNITS: Record<string, number> = {
  in: 0.0254, inch: 0.0254, yd: 0.9144, yards: 0.9144, ft: 0.3048, feet: 0.3048, km: 1000, kilometers: 1000, nmi: 1852, NM: 1852,
  nauticalmiles: 1852, mm: 0.001, millimeters: 0.001, cm: 0.01, centimeters: 0.01, mi: 1609.344, miles: 1609.344, m: 1, meters: 1,
};

/** DistanceUnit.parse: "12km", "5mi", a bare number in `dflt` units; meters. */
export function parseDistance(v: unknown, dflt = 'm'): number {
  const s = String(v).trim();
  const m = /^([+-]?\d*\.?\d+(?:[eE][+-]?\d+)?)\s*([a-zA-Z]*)$/.exec(s);
  if (!m) throw illegalArgument(`failed to parse [${s}]`);
  const unit = m[2] || dflt;
  const f = UNITS[unit] ?? UNITS[unit.toLowerCase()];
  if (f === undefined) throw illegalArgument(`No distance unit match [${unit}]`);
  return Number(m[1]) * f;
}

/** Meters per unit (for sort values in `unit`). */
export const unitMeters = (unit: string) => {
  const f = UNITS[unit] ?? UNITS[unit.toLowerCase()];
  if (f === undefined) throw illegalArgument(`No distance unit match [${unit}]`);
  return f;
};

/** `geo_distance`: points within `distance` of the origin. */
export function geoDistanceNode(body: Obj, ctx: QueryContext): QNode {
  const field = Object.keys(body).find((k) => !['distance', 'distance_type', 'validation_method', 'boost', '_name', 'ignore_unmapped', 'unit'].includes(k));
  if (!field) throw illegalArgument('geo_distance requires a point field');
  const def = ctx.store.mapping.field(field);
  if (!def) {
    if (body.ignore_unmapped === true) return NONE;
    throw illegalArgument(`failed to find geo field [${field}]`);
  }
  if (def.type !== 'geo_point') throw illegalArgument(`Field [${field}] is of unsupported type [${def.type}] for [geo_distance] query`);
  const origin = parsePoint(body[field]);
  const dist = parseDistance(body.distance, String(body.unit ?? 'm'));
  const plane = body.distance_type === 'plane';
  const boost = body.boost === undefined ? 1 : Math.fround(Number(body.boost));
  return termsWhere(keywordCol(ctx, def), ctx, boost, (t) => {
    const p = decodeGeo(t);
    return (plane ? planeDistance : arcDistance)(origin.lat, origin.lon, p.lat, p.lon) <= dist;
  });
}

/** `geo_bounding_box`: points inside a box (`top_left`/`bottom_right`, `top`/`left`/…, WKT BBOX); the box may cross the dateline. */
export function geoBoundingBoxNode(body: Obj, ctx: QueryContext): QNode {
  const field = Object.keys(body).find((k) => !['validation_method', 'type', 'boost', '_name', 'ignore_unmapped'].includes(k));
  if (!field) throw illegalArgument('failed to parse [geo_bbox] query. field name expected');
  const def = ctx.store.mapping.field(field);
  if (!def) {
    if (body.ignore_unmapped === true) return NONE;
    throw illegalArgument(`failed to find geo field [${field}]`);
  }
  if (def.type !== 'geo_point') throw illegalArgument(`Field [${field}] is of unsupported type [${def.type}] for [geo_bounding_box] query`);
  const box = parseBox(body[field] as Obj);
  const boost = body.boost === undefined ? 1 : Math.fround(Number(body.boost));
  return termsWhere(keywordCol(ctx, def), ctx, boost, (t) => {
    const p = decodeGeo(t);
    if (p.lat > box.top || p.lat < box.bottom) return false;
    return box.left <= box.right ? p.lon >= box.left && p.lon <= box.right : p.lon >= box.left || p.lon <= box.right;
  });
}

function parseBox(o: Obj): { top: number; bottom: number; left: number; right: number } {
  if (typeof o?.wkt === 'string') {
    const m = /^BBOX\s*\(\s*([^,]+),([^,]+),([^,]+),([^)]+)\)$/i.exec(o.wkt.trim());
    if (!m) throw illegalArgument(`failed to parse WKT bounding box [${o.wkt}]`);
    const [left, right, top, bottom] = m.slice(1).map(Number);
    return { top, bottom, left, right };
  }
  let top = NaN, bottom = NaN, left = NaN, right = NaN;
  const corner = (v: unknown) => parsePoint(v);
  if (o.top_left !== undefined) ({ lat: top, lon: left } = corner(o.top_left));
  if (o.bottom_right !== undefined) ({ lat: bottom, lon: right } = corner(o.bottom_right));
  if (o.top_right !== undefined) ({ lat: top, lon: right } = corner(o.top_right));
  if (o.bottom_left !== undefined) ({ lat: bottom, lon: left } = corner(o.bottom_left));
  if (o.top !== undefined) top = Number(o.top);
  if (o.bottom !== undefined) bottom = Number(o.bottom);
  if (o.left !== undefined) left = Number(o.left);
  if (o.right !== undefined) right = Number(o.right);
  if ([top, bottom, left, right].some(Number.isNaN)) throw illegalArgument('failed to parse bounding box. Conflicting definition found using well-known text and explicit corners.');
  if (top < bottom) throw illegalArgument(`top is below bottom corner: ${top} vs. ${bottom}`);
  return { top, bottom, left, right };
}
