import { illegalArgument } from '../../../wire/esErrors';
import { parseTimeValue } from '../../../wire/timeValue';
import { localToUtc, tzOffsetMs } from '../base/dates';

/**
 * Dates for aggregations, UTC only: printing epoch millis with ES/Java formats (key_as_string,
 * value_as_string) and calendar rounding for `date_histogram`.
 */

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** Named ES formats as Java patterns (the printing side of each). */
const NAMED: Record<string, string> = {
  strict_date_optional_time: "yyyy-MM-dd'T'HH:mm:ss.SSSXXX",
  date_optional_time: "yyyy-MM-dd'T'HH:mm:ss.SSSXXX",
  iso8601: "yyyy-MM-dd'T'HH:mm:ss.SSSXXX",
  strict_date_optional_time_nanos: "yyyy-MM-dd'T'HH:mm:ss.SSSSSSSSSXXX",
  strict_date_time: "yyyy-MM-dd'T'HH:mm:ss.SSSXXX",
  date_time: "yyyy-MM-dd'T'HH:mm:ss.SSSXXX",
  strict_date_time_no_millis: "yyyy-MM-dd'T'HH:mm:ssXXX",
  date_time_no_millis: "yyyy-MM-dd'T'HH:mm:ssXXX",
  strict_date: 'yyyy-MM-dd',
  date: 'yyyy-MM-dd',
  basic_date: 'yyyyMMdd',
  basic_date_time: "yyyyMMdd'T'HHmmss.SSSXXX",
  strict_date_hour: "yyyy-MM-dd'T'HH",
  date_hour: "yyyy-MM-dd'T'HH",
  strict_date_hour_minute: "yyyy-MM-dd'T'HH:mm",
  date_hour_minute: "yyyy-MM-dd'T'HH:mm",
  strict_date_hour_minute_second: "yyyy-MM-dd'T'HH:mm:ss",
  date_hour_minute_second: "yyyy-MM-dd'T'HH:mm:ss",
  strict_date_hour_minute_second_millis: "yyyy-MM-dd'T'HH:mm:ss.SSS",
  date_hour_minute_second_millis: "yyyy-MM-dd'T'HH:mm:ss.SSS",
  strict_year_month: 'yyyy-MM',
  year_month: 'yyyy-MM',
  strict_year: 'yyyy',
  year: 'yyyy',
  strict_hour_minute_second: 'HH:mm:ss',
  hour_minute_second: 'HH:mm:ss',
};

/** The default printer of a `date` field (`strict_date_optional_time||epoch_millis`). */
export const DEFAULT_DATE_FORMAT = 'strict_date_optional_time';

/**
 * Prints epoch millis with an ES format (`a||b` prints with `a`): named formats, `epoch_millis`,
 * `epoch_second`, or a Java pattern (`yyyy-MM-dd'T'HH:mm`).
 * @example formatDate(0, 'strict_date_optional_time') // '1970-01-01T00:00:00.000Z'
 */
export function formatDate(ms: number, format: string = DEFAULT_DATE_FORMAT, tz?: string): string {
  const f = format.split('||')[0].trim();
  if (f === 'epoch_millis') return String(Math.trunc(ms));
  if (f === 'epoch_second') return String(Math.trunc(ms / 1000));
  const offset = tz ? tzOffsetMs(tz, ms) : 0;
  return formatPattern(ms + offset, NAMED[f] ?? NAMED[f.replace(/^strict_/, '')] ?? f, offset);
}

/** A zone offset as the X/x/Z pattern letters print it (`Z` for UTC with X). */
function offsetText(offsetMs: number, c: string, n: number): string {
  const min = Math.round(offsetMs / 60000);
  if (min === 0 && c === 'X') return 'Z';
  const sign = min < 0 ? '-' : '+';
  const h = pad(Math.floor(Math.abs(min) / 60), 2), m = pad(Math.abs(min) % 60, 2);
  if (c === 'Z') return n >= 4 ? (min === 0 ? 'GMT' : `GMT${sign}${h}:${m}`) : `${sign}${h}${m}`;
  return n === 1 ? `${sign}${h}${m === '00' ? '' : m}` : n === 2 ? `${sign}${h}${m}` : `${sign}${h}:${m}`;
}

function formatPattern(ms: number, pattern: string, offsetMs = 0): string {
  const d = new Date(Math.floor(ms));
  const frac = ((ms % 1000) + 1000) % 1000;
  let out = '';
  for (let i = 0; i < pattern.length; ) {
    const c = pattern[i];
    if (c === "'") {
      const end = pattern.indexOf("'", i + 1);
      const lit = pattern.slice(i + 1, end < 0 ? pattern.length : end);
      out += lit === '' ? "'" : lit;
      i = end < 0 ? pattern.length : end + 1;
      continue;
    }
    if (!/[A-Za-z]/.test(c)) {
      out += c;
      i++;
      continue;
    }
    let n = 1;
    while (pattern[i + n] === c) n++;
    out += c === 'X' || c === 'x' || c === 'Z' ? offsetText(offsetMs, c, n) : field(c, n, d, frac);
    i += n;
  }
  return out;
}

const pad = (v: number, n: number) => String(v).padStart(n, '0');

function field(c: string, n: number, d: Date, frac: number): string {
  switch (c) {
    case 'y':
    case 'u':
      return n === 2 ? pad(d.getUTCFullYear() % 100, 2) : pad(d.getUTCFullYear(), n);
    case 'M':
      return n >= 4 ? MONTHS[d.getUTCMonth()] : n === 3 ? MONTHS[d.getUTCMonth()].slice(0, 3) : pad(d.getUTCMonth() + 1, n);
    case 'd': return pad(d.getUTCDate(), n);
    case 'H': return pad(d.getUTCHours(), n);
    case 'h': return pad(d.getUTCHours() % 12 || 12, n);
    case 'm': return pad(d.getUTCMinutes(), n);
    case 's': return pad(d.getUTCSeconds(), n);
    case 'S': return pad(Math.floor(frac), 3).padEnd(n, '0').slice(0, n);
    case 'E': return n >= 4 ? DAYS[d.getUTCDay()] : DAYS[d.getUTCDay()].slice(0, 3);
    case 'a': return d.getUTCHours() < 12 ? 'AM' : 'PM';
    case 'D': return pad(Math.floor((d.getTime() - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86_400_000) + 1, n);
    case 'X': return 'Z'; // UTC only
    case 'Z': return n >= 4 ? 'GMT' : '+0000';
    case 'x': return n >= 3 ? '+00:00' : '+00';
    default: return c.repeat(n);
  }
}

/** Parses a date the way a `date` field would (epoch millis number or an ISO-8601 string). */
export function parseDateValue(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string') {
    if (/^-?\d+$/.test(v)) return Number(v);
    const t = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(v) || !v.includes('T') ? v : `${v}Z`);
    if (!Number.isNaN(t)) return t;
  }
  throw illegalArgument(`failed to parse date field [${String(v)}] with format [strict_date_optional_time||epoch_millis]`);
}

export type CalendarUnit = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'quarter' | 'year';

/** `DateHistogramAggregationBuilder.DATE_FIELD_UNITS`. */
export const CALENDAR_UNITS: Record<string, CalendarUnit> = {
  second: 'second', '1s': 'second', minute: 'minute', '1m': 'minute', hour: 'hour', '1h': 'hour', day: 'day', '1d': 'day',
  week: 'week', '1w': 'week', month: 'month', '1M': 'month', quarter: 'quarter', '1q': 'quarter', year: 'year', '1y': 'year',
};

const FIXED_MS: Partial<Record<CalendarUnit, number>> = { second: 1_000, minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** A date_histogram rounding: the bucket key of a value, and the key after a key. */
export interface Rounding {
  round(ms: number): number;
  next(key: number): number;
}

/** Calendar rounding in UTC (weeks start on Monday, like ES's ISO weeks). */
export function calendarRounding(unit: CalendarUnit, offset = 0): Rounding {
  const fixed = FIXED_MS[unit];
  if (fixed) return fixedRounding(fixed, offset);
  if (unit === 'week') return fixedRounding(7 * 86_400_000, offset + 4 * 86_400_000); // 1970-01-05 was a Monday
  const months = unit === 'month' ? 1 : unit === 'quarter' ? 3 : 12;
  return {
    round(ms) {
      const d = new Date(ms - offset);
      const m = d.getUTCFullYear() * 12 + d.getUTCMonth();
      const start = m - (((m % months) + months) % months);
      return Date.UTC(Math.floor(start / 12), start % 12, 1) + offset;
    },
    next(key) {
      const d = new Date(key - offset);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1) + offset;
    },
  };
}

/** Fixed-length buckets aligned on the epoch (plus offset). */
export function fixedRounding(intervalMs: number, offset = 0): Rounding {
  return {
    round: (ms) => Math.floor((ms - offset) / intervalMs) * intervalMs + offset,
    next: (key) => key + intervalMs,
  };
}

/** The rounding of a date_histogram spec. */
export function histogramRounding(params: Record<string, unknown>): Rounding {
  const base = utcRounding(params);
  const tz = zoneOf(params.time_zone);
  if (!tz) return base;
  // TimeZoneRounding: rounded in local time, keys are the UTC instants of the local boundaries
  return {
    round: (ms) => localToUtc(base.round(ms + tzOffsetMs(tz, ms)), tz),
    next: (key) => localToUtc(base.next(key + tzOffsetMs(tz, key)), tz),
  };
}

/** A date_histogram `time_zone` (undefined for UTC); refused when Java would not know it. */
export function zoneOf(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  const s = String(v);
  if (['utc', 'z', '+00:00', '-00:00', '+00', 'etc/utc', 'gmt', 'utc+00:00'].includes(s.toLowerCase())) return undefined;
  if (/^[+-]\d{2}(:?\d{2})?$/.test(s)) return s;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: s });
  } catch {
    throw illegalArgument(`Unknown time-zone ID: ${s}`);
  }
  return s;
}

function utcRounding(params: Record<string, unknown>): Rounding {
  const offset = parseOffset(params.offset);
  if (params.calendar_interval !== undefined) return calendarRounding(CALENDAR_UNITS[String(params.calendar_interval)], offset);
  if (params.fixed_interval !== undefined) {
    return fixedRounding(parseTimeValue(String(params.fixed_interval), 'date_histogram.fixedInterval'), offset);
  }
  throw illegalArgument('Invalid interval specified, must be non-null and non-empty');
}

function parseOffset(v: unknown): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number') return v;
  const s = String(v).trim();
  const sign = s.startsWith('-') ? -1 : 1;
  return sign * parseTimeValue(s.replace(/^[+-]/, ''), 'offset');
}

