/**
 * Document values of the encoded field types (fieldCodecs.ts) as ES's mappers read them: `ip`
 * literals; `geo_point` in every input form (object, "lat,lon", geohash, [lon, lat], WKT POINT,
 * GeoJSON); range objects (`gte`/`gt`/`lte`/`lt`, CIDR strings for `ip_range`), with ES's texts.
 */
import { EsError } from '../../../wire/esErrors';
import type { DateFormatter } from '../base/dates';
import type { FieldDef } from './fieldDef';
import { cidrTerms, encodeDouble, encodeGeo, encodeIp, encodeLong, ipStep, notAnIp, parseIp, RANGE_TYPES, rangeTerm } from './fieldCodecs';

const bad = (msg: string) => new EsError('illegal_argument_exception', 400, msg);

/** Whether a raw value is one geo_point written as an array (`[lon, lat]` or `[lon, lat, z]`). */
export const isPointArray = (v: unknown): boolean => Array.isArray(v) && (v.length === 2 || v.length === 3) && v.every((x) => typeof x === 'number');

/** The term of one value of an encoded-type field; undefined to skip it (ignore_malformed). */
export function encodeValue(def: FieldDef, v: unknown, fmt: () => DateFormatter): string | undefined {
  const ignore = def.params.ignore_malformed === true || def.params.ignore_malformed === 'true';
  try {
    if (def.type === 'ip') {
      const s = String(v);
      if (!parseIp(s)) throw bad(notAnIp(s));
      return encodeIp(s);
    }
    if (def.type === 'geo_point') {
      const p = parsePoint(v);
      if (p.lat > 90 || p.lat < -90) throw bad(`illegal latitude value [${javaDouble(p.lat)}] for ${def.path}`);
      if (p.lon > 180 || p.lon < -180) throw bad(`illegal longitude value [${javaDouble(p.lon)}] for ${def.path}`);
      return encodeGeo(p.lat, p.lon);
    }
    if (RANGE_TYPES.has(def.type)) return encodeRange(def, v, fmt);
  } catch (e) {
    if (ignore) return undefined;
    throw e;
  }
  return undefined;
}

const javaDouble = (x: number) => (Number.isInteger(x) ? `${x}.0` : String(x));

/** GeoUtils.parseGeoPoint: the point of any accepted form. */
export function parsePoint(v: unknown): { lat: number; lon: number } {
  if (isPointArray(v)) {
    const a = v as number[];
    return { lon: a[0], lat: a[1] };
  }
  if (typeof v === 'string') return parsePointString(v.trim());
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    if (o.type !== undefined) {
      if (String(o.type).toLowerCase() !== 'point' || !isPointArray(o.coordinates)) throw bad('[type] for geo_point can only be \'Point\'');
      const c = o.coordinates as number[];
      return { lon: c[0], lat: c[1] };
    }
    if (o.lat === undefined || o.lon === undefined) throw bad(o.lat === undefined ? 'field [lat] missing' : 'field [lon] missing');
    const lat = Number(o.lat), lon = Number(o.lon);
    if (Number.isNaN(lat) || Number.isNaN(lon)) throw bad('latitude must be a number');
    return { lat, lon };
  }
  throw bad('geo_point expected');
}

function parsePointString(s: string): { lat: number; lon: number } {
  const wkt = /^POINT\s*\(\s*(\S+)\s+(\S+)(?:\s+\S+)?\s*\)$/i.exec(s);
  if (wkt) return { lon: Number(wkt[1]), lat: Number(wkt[2]) };
  const comma = s.split(',');
  if (comma.length === 2 || comma.length === 3) {
    const lat = Number(comma[0].trim()), lon = Number(comma[1].trim());
    if (Number.isNaN(lat) || Number.isNaN(lon)) throw bad(`failed to parse [${s}]`);
    return { lat, lon };
  }
  return geohashPoint(s);
}

const BASE32 = '0123456789bcdefghjkmnpqrstuvwxyz';

/** The centre of a geohash cell (GeoHashUtils decode). */
export function geohashPoint(hash: string): { lat: number; lon: number } {
  let latLo = -90, latHi = 90, lonLo = -180, lonHi = 180;
  let even = true;
  for (const c of hash.toLowerCase()) {
    const d = BASE32.indexOf(c);
    if (d < 0) throw bad(`unsupported symbol [${c}] in geohash [${hash}]`);
    for (let b = 4; b >= 0; b--) {
      const bit = (d >> b) & 1;
      if (even) {
        const mid = (lonLo + lonHi) / 2;
        if (bit) lonLo = mid; else lonHi = mid;
      } else {
        const mid = (latLo + latHi) / 2;
        if (bit) latLo = mid; else latHi = mid;
      }
      even = !even;
    }
  }
  return { lat: (latLo + latHi) / 2, lon: (lonLo + lonHi) / 2 };
}

const INT_MIN = -(2n ** 31n), INT_MAX = 2n ** 31n - 1n, LONG_MIN = -(2n ** 63n), LONG_MAX = 2n ** 63n - 1n;

/** One value of a range field: `{gte|gt, lte|lt}` (a missing bound is the type's end), or a CIDR for ip_range. */
function encodeRange(def: FieldDef, v: unknown, fmt: () => DateFormatter): string {
  const t = def.type;
  if (t === 'ip_range' && typeof v === 'string') {
    if (!v.includes('/')) throw bad(`error parsing field [${def.path}], expected an object but got ${def.path}`);
    const [lo, hi] = cidrTerms(v);
    return rangeTerm(lo, hi);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw bad(`error parsing field [${def.path}], expected an object but got ${def.path}`);
  let from: unknown, to: unknown, inclFrom = true, inclTo = true;
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (k === 'gte' || k === 'gt') (from = x), (inclFrom = k === 'gte');
    else if (k === 'lte' || k === 'lt') (to = x), (inclTo = k === 'lte');
    else throw bad(`error parsing field [${def.path}], with unknown parameter [${k}]`);
  }
  if (t === 'ip_range') {
    let lo = from === undefined || from === null ? '0'.repeat(32) : encodeIp(String(from));
    let hi = to === undefined || to === null ? 'f'.repeat(32) : encodeIp(String(to));
    if (!inclFrom && from !== undefined) lo = ipStep(lo, true) ?? lo;
    if (!inclTo && to !== undefined) hi = ipStep(hi, false) ?? hi;
    return rangeTerm(lo, hi);
  }
  if (t === 'float_range' || t === 'double_range') {
    const num = (x: unknown, d: number) => (x === undefined || x === null ? d : t === 'float_range' ? Math.fround(Number(x)) : Number(x));
    let lo = num(from, -Infinity), hi = num(to, Infinity);
    if (Number.isNaN(lo) || Number.isNaN(hi)) throw bad(`For input string: "${String(Number.isNaN(lo) ? from : to)}"`);
    if (!inclFrom) lo = nextAfter(lo, t === 'float_range', true);
    if (!inclTo) hi = nextAfter(hi, t === 'float_range', false);
    if (lo > hi) throw bad(`min value (${lo}) is greater than max value (${hi})`);
    return rangeTerm(encodeDouble(lo), encodeDouble(hi));
  }
  const [min, max] = t === 'integer_range' ? [INT_MIN, INT_MAX] : [LONG_MIN, LONG_MAX];
  const int = (x: unknown, d: bigint): bigint => {
    if (x === undefined || x === null) return d;
    if (t === 'date_range') {
      try {
        return BigInt(fmt().parse(String(x)).ms);
      } catch {
        throw bad(`failed to parse date field [${String(x)}] with format [${fmt().pattern}]`);
      }
    }
    const s = String(x).trim();
    if (!/^[+-]?\d+(\.\d+)?$/.test(s)) throw new EsError('number_format_exception', 400, `For input string: "${s}"`);
    const n = BigInt(s.split('.')[0]);
    if (n < min || n > max) throw bad(`Value [${s}] is out of range for ${t === 'integer_range' ? 'an integer' : 'a long'}`);
    return n;
  };
  let lo = int(from, min), hi = int(to, max);
  if (!inclFrom && from !== undefined) lo += 1n;
  if (!inclTo && to !== undefined) hi -= 1n;
  if (lo > hi) throw bad(`min value (${lo}) is greater than max value (${hi})`);
  return rangeTerm(encodeLong(lo), encodeLong(hi));
}

/** Math.nextUp / nextDown in float or double precision. */
export function nextAfter(x: number, float: boolean, up: boolean): number {
  if (!Number.isFinite(x)) return x;
  if (float) {
    const b = new Float32Array([x]), i = new Int32Array(b.buffer);
    if (x === 0) return up ? 1.401298464324817e-45 : -1.401298464324817e-45;
    i[0] += (x > 0) === up ? 1 : -1;
    return b[0];
  }
  const b = new Float64Array([x]), i = new BigInt64Array(b.buffer);
  if (x === 0) return up ? Number.MIN_VALUE : -Number.MIN_VALUE;
  i[0] += (x > 0) === up ? 1n : -1n;
  return b[0];
}
