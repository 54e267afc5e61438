/**
 * ES date formats (the common built-ins and Java-style patterns): parsing and printing, on epoch
 * nanos split as {ms, ns} so dates far outside the JS Date range (e.g. the Long.MAX_VALUE sort
 * sentinel) still work. Date math lives in dateMath.ts.
 */

import { linearRegExp } from '../../../automaton';

/** An instant: `ms` = floor(epoch millis), `ns` in [0, 999999] = nanos within that milli. */
export interface Instant {
  ms: number;
  ns: number;
  /** Exact millis when `ms` is beyond 2^53 (e.g. the Long.MAX_VALUE sort sentinel); printing uses it. */
  msBig?: bigint;
}

/** The default `format` of `date` / `date_nanos` fields. */
export const DEFAULT_DATE_FORMAT = 'strict_date_optional_time||epoch_millis';

/** Thrown by parsers; callers wrap it in the ES error of their context. */
export class DateParseError extends Error {
  constructor(readonly text: string, readonly format: string) {
    super(`failed to parse date field [${text}] with format [${format}]`);
    this.name = 'DateParseError';
  }
}

interface Fields {
  year: number; month?: number; day?: number; hour?: number; minute?: number; second?: number;
  nano?: number; offsetSec?: number; ampm?: 'am' | 'pm';
}

type Alt =
  | { kind: 'epoch'; unitMs: number; maxFrac: number }
  | { kind: 'fields'; parse: (s: string) => Fields | null; print: (i: Instant) => string };

/** A parsed ES `format`: parses with each alternative in turn, prints with the first. */
export interface DateFormatter {
  readonly pattern: string;
  /** `roundUp` fills absent fields like ES's round-up parser (time at its maximum, month/day 1). */
  parse(text: string, roundUp?: boolean, tz?: string): Instant;
  format(i: Instant): string;
}

// ---- civil calendar (proleptic Gregorian, any year) ----

/** Millis per day. */
export const DAY = 86_400_000;

/** Days since 1970-01-01 of a proleptic Gregorian date. */
export function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  return era * 146097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719468;
}

/** [year, month, day] of a day number (days since 1970-01-01). */
export function civilFromDays(z: number): [number, number, number] {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

/** Number of days of a month. */
export const daysInMonth = (y: number, m: number) => daysFromCivil(m === 12 ? y + 1 : y, m === 12 ? 1 : m + 1, 1) - daysFromCivil(y, m, 1);

// ---- time zones: fixed offsets, UTC, or IANA names through Intl ----

const OFFSET = /^([+-])(\d{2}):?(\d{2})?$/;

/** Offset of `tz` from UTC at the UTC instant `utcMs`, in ms. */
export function tzOffsetMs(tz: string | undefined, utcMs: number): number {
  if (!tz || tz === 'UTC' || tz === 'Z' || tz === 'GMT') return 0;
  const m = OFFSET.exec(tz);
  if (m) return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 3600 + Number(m[3] ?? 0) * 60) * 1000;
  const clamped = Math.max(-8.64e15, Math.min(8.64e15, utcMs));
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: tz, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
  }).formatToParts(new Date(clamped));
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value ?? 0);
  const local = daysFromCivil(get('year'), get('month'), get('day')) * DAY + ((get('hour') * 60 + get('minute')) * 60 + get('second')) * 1000;
  return local - (clamped - (((clamped % 1000) + 1000) % 1000));
}

/** UTC millis of a local wall-clock time in `tz`. */
export function localToUtc(localMs: number, tz: string | undefined): number {
  const guess = localMs - tzOffsetMs(tz, localMs);
  return localMs - tzOffsetMs(tz, guess);
}

// ---- fields <-> instant ----

function toInstant(f: Fields, roundUp: boolean, tz: string | undefined): Instant {
  let hour = f.hour ?? (roundUp ? 23 : 0);
  if (f.ampm) hour = (hour % 12) + (f.ampm === 'pm' ? 12 : 0);
  const minute = f.minute ?? (roundUp ? 59 : 0);
  const second = f.second ?? (roundUp ? 59 : 0);
  const nano = f.nano ?? (roundUp ? 999_999_999 : 0);
  const month = f.month ?? 1, day = f.day ?? 1;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(f.year, month) || hour > 23 || minute > 59 || second > 59) {
    throw new RangeError('field out of range');
  }
  const local = daysFromCivil(f.year, month, day) * DAY + ((hour * 60 + minute) * 60 + second) * 1000 + Math.floor(nano / 1e6);
  const ms = f.offsetSec !== undefined ? local - f.offsetSec * 1000 : localToUtc(local, tz);
  return { ms, ns: nano % 1e6 };
}

interface Civil { y: number; mo: number; d: number; h: number; mi: number; s: number; nanoOfSec: number }

function civil(i: Instant): Civil {
  let days: number, msOfDay: number;
  if (i.msBig !== undefined) {
    const D = BigInt(DAY);
    const r = ((i.msBig % D) + D) % D;
    days = Number((i.msBig - r) / D);
    msOfDay = Number(r);
  } else {
    days = Math.floor(i.ms / DAY);
    msOfDay = i.ms - days * DAY;
  }
  const [y, mo, d] = civilFromDays(days);
  const secOfDay = Math.floor(msOfDay / 1000);
  return { y, mo, d, h: Math.floor(secOfDay / 3600), mi: Math.floor(secOfDay / 60) % 60, s: secOfDay % 60, nanoOfSec: (msOfDay % 1000) * 1e6 + i.ns };
}

const pad = (n: number, w: number) => String(n).padStart(w, '0');
const year4 = (y: number) => (y > 9999 ? `+${y}` : y < 0 ? `-${pad(-y, 4)}` : pad(y, 4));

function fraction(nanoOfSec: number, min: number, max: number): string {
  let s = pad(nanoOfSec, 9).slice(0, max);
  while (s.length > min && s.endsWith('0')) s = s.slice(0, -1);
  return s;
}

// ---- the ISO "optional time" family ----

const digitAt = (s: string, i: number) => {
  const c = s.charCodeAt(i) - 0x30;
  return c >= 0 && c <= 9 ? c : -100; // any non-digit makes the field negative
};
const twoAt = (s: string, i: number) => digitAt(s, i) * 10 + digitAt(s, i + 1);

/**
 * The common shape `yyyy-MM-ddTHH:mm:ss[.fffffffff]Z` without the regex (every date indexed goes
 * through here): the same fields as the regex below gives it; null for anything else.
 */
function isoUtc(s: string): Fields | null {
  const n = s.length;
  if (n < 20 || n > 30 || s.charCodeAt(n - 1) !== 0x5a /* Z */) return null;
  if (s.charCodeAt(4) !== 0x2d || s.charCodeAt(7) !== 0x2d || s.charCodeAt(10) !== 0x54 || s.charCodeAt(13) !== 0x3a || s.charCodeAt(16) !== 0x3a) return null;
  const century = twoAt(s, 0);
  const yy = twoAt(s, 2);
  const month = twoAt(s, 5);
  const day = twoAt(s, 8);
  const hour = twoAt(s, 11);
  const minute = twoAt(s, 14);
  const second = twoAt(s, 17);
  if (century < 0 || yy < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return null;
  const year = century * 100 + yy;
  let nano: number | undefined;
  if (n > 20) {
    const len = n - 21;
    if (s.charCodeAt(19) !== 0x2e /* . */ || len < 1) return null;
    let v = 0;
    for (let i = 20; i < n - 1; i++) {
      const d = digitAt(s, i);
      if (d < 0) return null;
      v = v * 10 + d;
    }
    nano = v * 10 ** (9 - len);
  }
  return { year, month, day, hour, minute, second, nano, offsetSec: 0 };
}

/** Group `i` of a match as a number (no closure per parse: this runs for every date indexed). */
const numAt = (m: RegExpExecArray, i: number) => (m[i] === undefined ? undefined : Number(m[i]));

function isoAlt(strict: boolean, nanos: boolean): Alt {
  const n2 = strict ? String.raw`(\d{2})` : String.raw`(\d{1,2})`;
  const re = new RegExp(
    String.raw`^(${strict ? String.raw`\d{4}` : String.raw`[+-]?\d{1,9}`})(?:-${n2}(?:-${n2}(?:T${n2}(?::${n2}(?::${n2}(?:[.,](\d{1,9}))?)?)?)?)?)?` +
      String.raw`(Z|[+-]\d{2}(?::?\d{2})?)?$`,
  );
  return {
    kind: 'fields',
    parse: (s) => {
      const fast = isoUtc(s);
      if (fast) return fast;
      const m = re.exec(s);
      if (!m) return null;
      return {
        year: Number(m[1]), month: numAt(m, 2), day: numAt(m, 3), hour: numAt(m, 4), minute: numAt(m, 5), second: numAt(m, 6),
        nano: m[7] === undefined ? undefined : Number(m[7].padEnd(9, '0')), offsetSec: parseOffset(m[8]),
      };
    },
    print: (i) => {
      const c = civil(i);
      return `${year4(c.y)}-${pad(c.mo, 2)}-${pad(c.d, 2)}T${pad(c.h, 2)}:${pad(c.mi, 2)}:${pad(c.s, 2)}.${fraction(c.nanoOfSec, 3, nanos ? 9 : 3)}Z`;
    },
  };
}

function parseOffset(z: string | undefined): number | undefined {
  if (z === undefined) return undefined;
  if (z === 'Z') return 0;
  const m = OFFSET.exec(z);
  return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 3600 + Number(m[3] ?? 0) * 60) : undefined;
}

// ---- Java-style patterns (yyyy-MM-dd HH:mm:ss.SSSXXX, 'T' literals, [optional]) ----

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

type Tok = { lit: string } | { ch: string; n: number } | { opt: Tok[] };

function tokenize(p: string): Tok[] {
  const root: Tok[] = [];
  const stack: Tok[][] = [root];
  for (let i = 0; i < p.length; ) {
    const c = p[i];
    const cur = stack[stack.length - 1];
    if (c === "'") {
      const j = p.indexOf("'", i + 1);
      const end = j < 0 ? p.length : j;
      cur.push({ lit: end === i + 1 ? "'" : p.slice(i + 1, end) });
      i = end + 1;
    } else if (c === '[') {
      const opt: Tok[] = [];
      cur.push({ opt });
      stack.push(opt);
      i++;
    } else if (c === ']') {
      if (stack.length > 1) stack.pop();
      i++;
    } else if (/[a-zA-Z]/.test(c) && c !== 'T') {
      let j = i;
      while (p[j] === c) j++;
      cur.push({ ch: c, n: j - i });
      i = j;
    } else {
      cur.push({ lit: c });
      i++;
    }
  }
  return root;
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function tokRegex(toks: Tok[], groups: Array<{ ch: string; n: number }>): string {
  return toks
    .map((t) => {
      if ('lit' in t) return esc(t.lit);
      if ('opt' in t) return `(?:${tokRegex(t.opt, groups)})?`;
      groups.push(t);
      switch (t.ch) {
        case 'y': case 'u': case 'Y': return t.n === 2 ? String.raw`(\d{2})` : t.n === 4 ? String.raw`([+-]?\d{4,9})` : String.raw`([+-]?\d{1,9})`;
        case 'M': case 'L': return t.n >= 3 ? String.raw`([A-Za-z]+)` : t.n === 2 ? String.raw`(\d{2})` : String.raw`(\d{1,2})`;
        case 'S': return `(\\d{${t.n}})`;
        case 'n': return String.raw`(\d{1,9})`;
        case 'a': return String.raw`([AaPp][Mm])`;
        case 'E': return String.raw`([A-Za-z]+)`;
        case 'X': case 'x': case 'Z': case 'z': case 'V': case 'O': return String.raw`(Z|[+-]\d{2}(?::?\d{2})?)`;
        default: return t.n === 2 ? String.raw`(\d{2})` : String.raw`(\d{1,${Math.max(2, t.n)}})`;
      }
    })
    .join('');
}

function patternAlt(pattern: string): Alt {
  const toks = tokenize(pattern);
  const groups: Array<{ ch: string; n: number }> = [];
  // A custom format is user input: a backtracking RegExp of it can be exponential (`[y][y][y]…`).
  const re = linearRegExp(`^${tokRegex(toks, groups)}$`);
  const parse = (s: string): Fields | null => {
    const m = re.exec(s);
    if (!m) return null;
    const f: Fields = { year: 1970 };
    groups.forEach((g, i) => {
      const v = m[i + 1];
      if (v === undefined) return;
      switch (g.ch) {
        case 'y': case 'u': case 'Y': f.year = g.n === 2 ? 2000 + Number(v) : Number(v); break;
        case 'M': case 'L': f.month = g.n >= 3 ? MONTHS.indexOf(v.slice(0, 3).toLowerCase()) + 1 : Number(v); break;
        case 'd': f.day = Number(v); break;
        case 'H': case 'k': case 'h': case 'K': f.hour = Number(v); break;
        case 'm': f.minute = Number(v); break;
        case 's': f.second = Number(v); break;
        case 'S': case 'n': f.nano = Number(v.padEnd(9, '0').slice(0, 9)); break;
        case 'a': f.ampm = v.toLowerCase() as 'am' | 'pm'; break;
        case 'X': case 'x': case 'Z': case 'z': case 'V': case 'O': f.offsetSec = parseOffset(v); break;
      }
    });
    if (f.month === 0) return null;
    return f;
  };
  const printToks = (ts: Tok[], c: Civil): string =>
    ts.map((t) => {
      if ('lit' in t) return t.lit;
      if ('opt' in t) return printToks(t.opt, c);
      switch (t.ch) {
        case 'y': case 'u': case 'Y': return t.n === 2 ? pad(c.y % 100, 2) : t.n === 4 ? year4(c.y) : String(c.y);
        case 'M': case 'L': return t.n >= 4 ? MONTH_NAMES[c.mo - 1] : t.n === 3 ? MONTH_NAMES[c.mo - 1].slice(0, 3) : pad(c.mo, t.n);
        case 'd': return pad(c.d, t.n);
        case 'H': case 'k': return pad(c.h, t.n);
        case 'h': case 'K': return pad(c.h % 12 || 12, t.n);
        case 'a': return c.h < 12 ? 'AM' : 'PM';
        case 'm': return pad(c.mi, t.n);
        case 's': return pad(c.s, t.n);
        case 'S': return pad(c.nanoOfSec, 9).slice(0, t.n);
        case 'n': return String(c.nanoOfSec);
        case 'X': return t.n === 1 || t.n >= 3 ? 'Z' : 'Z';
        case 'x': return t.n === 1 ? '+00' : t.n === 2 ? '+0000' : '+00:00';
        case 'Z': return t.n >= 5 ? 'Z' : t.n === 4 ? 'GMT' : '+0000';
        case 'z': case 'V': return 'UTC';
        case 'E': return ['Thu', 'Fri', 'Sat', 'Sun', 'Mon', 'Tue', 'Wed'][(((Math.floor(daysFromCivil(c.y, c.mo, c.d)) % 7) + 7) % 7)];
        default: return '';
      }
    }).join('');
  return { kind: 'fields', parse, print: (i) => printToks(toks, civil(i)) };
}

// ---- named formats ----

const NAMED: Record<string, string> = {
  basic_date: 'yyyyMMdd', basic_date_time: "yyyyMMdd'T'HHmmss.SSSX", basic_date_time_no_millis: "yyyyMMdd'T'HHmmssX",
  date: 'yyyy-MM-dd', year_month_day: 'yyyy-MM-dd', year_month: 'yyyy-MM', year: 'yyyy',
  date_time: "yyyy-MM-dd'T'HH:mm:ss.SSSXXX", date_time_no_millis: "yyyy-MM-dd'T'HH:mm:ssXXX",
  date_hour: "yyyy-MM-dd'T'HH", date_hour_minute: "yyyy-MM-dd'T'HH:mm", date_hour_minute_second: "yyyy-MM-dd'T'HH:mm:ss",
  date_hour_minute_second_millis: "yyyy-MM-dd'T'HH:mm:ss.SSS", date_hour_minute_second_fraction: "yyyy-MM-dd'T'HH:mm:ss.SSS",
  hour_minute_second: 'HH:mm:ss', hour_minute: 'HH:mm', hour: 'HH',
};

function namedAlt(name: string): Alt | undefined {
  const snake = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  const strict = snake.startsWith('strict_');
  const base = strict ? snake.slice(7) : snake;
  switch (base) {
    case 'epoch_millis': return { kind: 'epoch', unitMs: 1, maxFrac: 6 };
    case 'epoch_second': return { kind: 'epoch', unitMs: 1000, maxFrac: 9 };
    case 'date_optional_time': case 'iso8601': return isoAlt(strict || base === 'iso8601', false);
    case 'date_optional_time_nanos': return isoAlt(strict, true);
  }
  return NAMED[base] ? patternAlt(NAMED[base]) : undefined;
}

function parseEpoch(text: string, alt: { unitMs: number; maxFrac: number }): Instant | null {
  const m = /^(-)?(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m || (m[3] && m[3].length > alt.maxFrac)) return null;
  // exact integer nanos (BigInt keeps 64-bit precision), then split
  const unitNs = BigInt(alt.unitMs) * 1_000_000n;
  const frac = m[3] ? (BigInt(m[3]) * unitNs) / 10n ** BigInt(m[3].length) : 0n;
  let nanos = BigInt(m[2]) * unitNs + frac;
  if (m[1]) nanos = -nanos;
  return splitNanos(nanos);
}

/** Instant of exact epoch nanos. */
export function splitNanos(nanos: bigint): Instant {
  let ms = nanos / 1_000_000n;
  let ns = nanos % 1_000_000n;
  if (ns < 0n) {
    ns += 1_000_000n;
    ms -= 1n;
  }
  return { ms: Number(ms), ns: Number(ns) };
}

/** Exact epoch nanos of an instant. */
export const toNanos = (i: Instant): bigint => (i.msBig ?? BigInt(i.ms)) * 1_000_000n + BigInt(i.ns);

const cache = new Map<string, DateFormatter>();

/** A formatter for an ES `format` string (alternatives separated by `||`); throws on unknown names. */
export function dateFormatter(format: string = DEFAULT_DATE_FORMAT): DateFormatter {
  const hit = cache.get(format);
  if (hit) return hit;
  const alts = format.split('||').map((p) => {
    const a = namedAlt(p) ?? (/^[a-z]+(_[a-z]+)+$/.test(p) ? undefined : patternAlt(p));
    if (!a) throw new Error(`Invalid format: [${format}]: Unknown pattern letter: ${p[0]}`);
    return a;
  });
  const df: DateFormatter = {
    pattern: format,
    parse(text, roundUp = false, tz) {
      for (const a of alts) {
        if (a.kind === 'epoch') {
          const r = parseEpoch(text, a);
          if (r) return r;
          continue;
        }
        const f = a.parse(text);
        if (!f) continue;
        try {
          return toInstant(f, roundUp, tz);
        } catch {
          continue;
        }
      }
      throw new DateParseError(text, format);
    },
    format(i) {
      const a = alts[0];
      if (a.kind === 'fields') return a.print(i);
      const nanos = toNanos(i);
      const unit = BigInt(a.unitMs) * 1_000_000n;
      const neg = nanos < 0n;
      const abs = neg ? -nanos : nanos;
      const whole = abs / unit, rest = abs % unit;
      const digits = a.unitMs === 1 ? 6 : 9;
      const frac = rest === 0n ? '' : `.${rest.toString().padStart(digits, '0').replace(/0+$/, '')}`;
      return `${neg ? '-' : ''}${whole}${frac}`;
    },
  };
  cache.set(format, df);
  return df;
}
