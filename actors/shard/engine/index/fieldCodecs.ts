/**
 * Field types kept as keyword columns of encoded terms (issue 24): `ip` (16 bytes, IPv4 as
 * IPv4-mapped IPv6, as InetAddressPoint), `geo_point` (latitude and longitude quantized to 32 bits
 * each, as Lucene's GeoEncodingUtils) and the range types (two bounds). Every term is fixed-width
 * lowercase hex whose string order is the value order (ip bytes; points by latitude then
 * longitude; ranges by lower then upper bound), so the keyword column, its on-disk segment form,
 * its sorts and its ordinals serve these types unchanged; queries, sorts and aggregations decode
 * terms through this module.
 */
import type { FieldType } from '../types';
import { parseIp } from '../base/ip';

export { parseIp };

/** Field types stored as encoded keyword terms. */
export const ENCODED_TYPES = new Set<FieldType>(['ip', 'geo_point', 'integer_range', 'long_range', 'float_range', 'double_range', 'date_range', 'ip_range']);
export const RANGE_TYPES = new Set<FieldType>(['integer_range', 'long_range', 'float_range', 'double_range', 'date_range', 'ip_range']);
export const isEncoded = (t: FieldType | undefined): boolean => t !== undefined && ENCODED_TYPES.has(t);

const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
const unhex = (s: string) => Uint8Array.from({ length: s.length / 2 }, (_, i) => parseInt(s.slice(2 * i, 2 * i + 2), 16));

// ---- ip ----

/** ES's error for a bad IP literal. */
export const notAnIp = (s: string) => `'${s}' is not an IP string literal.`;

/** An IP's term (32 hex chars). */
export function encodeIp(s: string): string {
  const b = parseIp(s);
  if (!b) throw new Error(notAnIp(s));
  return hex(b);
}

/** InetAddresses.toAddrString of a term: dotted quad for IPv4-mapped addresses, else RFC 5952. */
export function formatIpBytes(b: Uint8Array): string {
  if (b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff) return `${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
  const g = Array.from({ length: 8 }, (_, i) => (b[2 * i] << 8) | b[2 * i + 1]);
  let best = -1, bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) (best = i), (bestLen = j - i);
    i = j;
  }
  const str = (a: number[]) => a.map((x) => x.toString(16)).join(':');
  return best < 0 ? str(g) : `${str(g.slice(0, best))}::${str(g.slice(best + bestLen))}`;
}

export const decodeIp = (term: string) => formatIpBytes(unhex(term));

/** InetAddresses.parseCidr: [first, last] terms of `a.b.c.d/n` (or an IPv6 prefix). */
export function cidrTerms(s: string): [string, string] {
  const slash = s.indexOf('/');
  const addr = s.slice(0, slash), len = s.slice(slash + 1);
  const b = parseIp(addr);
  if (!b || !/^\d+$/.test(len)) throw new Error(`Expected [ip/prefix] but was [${s}]`);
  const v4 = !addr.includes(':');
  const bits = Number(len) + (v4 ? 96 : 0);
  if (Number(len) > (v4 ? 32 : 128)) throw new Error(`Illegal prefix length [${len}] in [${s}]`);
  const lo = new Uint8Array(b), hi = new Uint8Array(b);
  for (let i = 0; i < 128; i++) {
    if (i < bits) continue;
    lo[i >> 3] &= ~(0x80 >> (i & 7));
    hi[i >> 3] |= 0x80 >> (i & 7);
  }
  return [hex(lo), hex(hi)];
}

/** The term one after (or before) an ip term (gt / lt bounds); null past the ends. */
export function ipStep(term: string, up: boolean): string | null {
  const b = unhex(term);
  for (let i = 15; i >= 0; i--) {
    if (up ? b[i] < 0xff : b[i] > 0) {
      b[i] += up ? 1 : -1;
      return hex(b);
    }
    b[i] = up ? 0 : 0xff;
  }
  return null;
}

// ---- geo_point ----

const LAT_DECODE = 180 / 2 ** 32;
const LON_DECODE = 360 / 2 ** 32;

/** GeoEncodingUtils.encodeLatitude / encodeLongitude (the top edge folds one step down). */
export const encodeLat = (lat: number) => Math.floor((lat === 90 ? 90 - LAT_DECODE / 2 : lat) / LAT_DECODE);
export const encodeLon = (lon: number) => Math.floor((lon === 180 ? 180 - LON_DECODE / 2 : lon) / LON_DECODE);

/** A point's term: 8 hex of latitude + 8 of longitude, both offset to unsigned. */
export function encodeGeo(lat: number, lon: number): string {
  const h = (n: number) => (n + 2 ** 31).toString(16).padStart(8, '0');
  return h(encodeLat(lat)) + h(encodeLon(lon));
}

/** The decoded point of a term (what ES returns and computes distances from). */
export function decodeGeo(term: string): { lat: number; lon: number } {
  return { lat: (parseInt(term.slice(0, 8), 16) - 2 ** 31) * LAT_DECODE, lon: (parseInt(term.slice(8, 16), 16) - 2 ** 31) * LON_DECODE };
}

// ---- ranges ----

/** A sortable hex of a long (offset binary). */
export const encodeLong = (v: bigint) => BigInt.asUintN(64, v + (1n << 63n)).toString(16).padStart(16, '0');
export const decodeLong = (h: string) => BigInt(`0x${h}`) - (1n << 63n);

/** A sortable hex of a double (NumericUtils.doubleToSortableLong). */
export function encodeDouble(v: number): string {
  const dv = new DataView(new ArrayBuffer(8));
  dv.setFloat64(0, v === 0 ? 0 : v);
  let bits = dv.getBigUint64(0);
  bits = bits & (1n << 63n) ? ~bits & ((1n << 64n) - 1n) : bits | (1n << 63n);
  return bits.toString(16).padStart(16, '0');
}

export function decodeDouble(h: string): number {
  let bits = BigInt(`0x${h}`);
  bits = bits & (1n << 63n) ? bits & ~(1n << 63n) : ~bits & ((1n << 64n) - 1n);
  const dv = new DataView(new ArrayBuffer(8));
  dv.setBigUint64(0, bits);
  return dv.getFloat64(0);
}

/** Width of one encoded bound of a range type. */
export const boundWidth = (t: FieldType) => (t === 'ip_range' ? 32 : 16);

/** A range term: the encoded lower bound then the upper. */
export const rangeTerm = (lo: string, hi: string) => lo + hi;
export const rangeBounds = (t: FieldType, term: string): [string, string] => [term.slice(0, boundWidth(t)), term.slice(boundWidth(t))];

/**
 * Doc values of a keyword column as DocValuesReader gives them for the field's type: ip terms as
 * addresses; other encoded types keep their terms (their readers decode them). Any leaf reading a
 * keyword column for `values()` calls this (the buffer, and the disk segments alike).
 */
export function docValuesOf(type: FieldType | undefined, terms: string[]): string[] {
  return type === 'ip' ? terms.map(decodeIp) : terms;
}
