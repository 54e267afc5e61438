import { EsError } from './esErrors';

/**
 * ES time values (`scroll`, `keep_alive`, `timeout`, `fixed_interval`): `<n><unit>` with unit
 * `d h m s ms micros nanos`, plus the unit-less magic values `-1` and `0`. Mirrors
 * `org.elasticsearch.core.TimeValue.parseTimeValue` / `toString`.
 */

/** Milliseconds per ES time unit. */
export const MS_PER: Readonly<Record<string, number>> = { nanos: 1e-6, micros: 1e-3, ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

// ES 8 throws IllegalArgumentException here; the wire contract (search-paging.md §0) wants
// `parse_exception` for the REST params, so all time-value failures use it.
const timeValueError = (reason: string) => new EsError('parse_exception', 400, reason);

/**
 * Parses an ES time value (REST parameters, body fields, settings) into milliseconds (sub-millisecond units truncate, like `TimeValue.millis()`).
 * `-1` (any unit, or unit-less) returns -1; `0` returns 0.
 * @throws EsError 400 `parse_exception` with ES's reason text.
 * @example parseTimeValue('1m', 'scroll') // 60000
 */
export function parseTimeValue(raw: unknown, settingName: string): number {
  const value = String(raw); // a YAML or JSON number has no unit: refused as ES does (but -1 and 0)
  const normalized = value.toLowerCase().trim();
  // Order matters: "ms" before "s", "nanos"/"micros" before "s"; minutes are case-sensitive ("M" = months).
  const unit = normalized.endsWith('nanos') ? 'nanos'
    : normalized.endsWith('micros') ? 'micros'
    : normalized.endsWith('ms') ? 'ms'
    : normalized.endsWith('s') ? 's'
    : value.endsWith('m') ? 'm'
    : normalized.endsWith('h') ? 'h'
    : normalized.endsWith('d') ? 'd'
    : undefined;
  if (unit === undefined) {
    if (/^-0*1$/.test(normalized)) return -1;
    if (/^0+$/.test(normalized)) return 0;
    throw timeValueError(`failed to parse setting [${settingName}] with value [${value}] as a time value: unit is missing or unrecognized`);
  }
  const digits = normalized.slice(0, normalized.length - unit.length).trim();
  if (!/^[+-]?\d+$/.test(digits)) {
    // Java falls back to Double.parseDouble only to pick the message.
    if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[fFdD]?$/.test(digits)) {
      throw timeValueError(`failed to parse [${value}], fractional time values are not supported`);
    }
    throw timeValueError(`failed to parse [${value}]`);
  }
  const n = Number(digits);
  if (n < -1) {
    throw timeValueError(`failed to parse setting [${settingName}] with value [${value}] as a time value: negative durations are not supported`);
  }
  if (n === -1) return -1;
  return Math.trunc(n * MS_PER[unit]);
}

const UNITS: Array<[number, string]> = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'm'],
  [1_000, 's'],
  [1, 'ms'],
];

/**
 * Formats milliseconds the way `TimeValue.toString()` does: the largest unit that fits, one
 * truncated fraction digit, trailing zero dropped (`86400000` → `1d`, `90000` → `1.5m`,
 * `100000` → `1.6m`, `0` → `0s`, `-1` → `-1`).
 */
export function formatTimeValue(ms: number): string {
  if (ms < 0) return String(Math.trunc(ms));
  if (ms === 0) return '0s';
  const [size, suffix] = UNITS.find(([u]) => ms >= u) ?? [1e-3, 'micros'];
  return formatDecimal(ms / size) + suffix;
}

/** Java's `TimeValue.formatDecimal(value, 1)`: keep one fraction digit, truncated, unless it is 0. */
function formatDecimal(value: number): string {
  const s = String(value);
  const dot = s.indexOf('.');
  if (dot < 0 || s.includes('e')) return s;
  const frac = s[dot + 1];
  return frac === '0' ? s.slice(0, dot) : `${s.slice(0, dot)}.${frac}`;
}
