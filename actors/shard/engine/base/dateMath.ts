/** ES date math: `now-1d/d`, `2020-01-01||+1M/d`, with rounding and time zones. */
import { DAY, DateParseError, civilFromDays, daysFromCivil, daysInMonth, localToUtc, tzOffsetMs, type DateFormatter, type Instant } from './dates';

const UNIT = /^[yMwdhHms]$/;

function addUnits(ms: number, n: number, unit: string, tz: string | undefined): number {
  switch (unit) {
    case 'h': case 'H': return ms + n * 3_600_000;
    case 'm': return ms + n * 60_000;
    case 's': return ms + n * 1000;
  }
  const local = ms + tzOffsetMs(tz, ms);
  const days = Math.floor(local / DAY);
  const tod = local - days * DAY;
  let [y, mo, d] = civilFromDays(days);
  if (unit === 'd' || unit === 'w') return localToUtc((days + n * (unit === 'w' ? 7 : 1)) * DAY + tod, tz);
  if (unit === 'y') y += n;
  else {
    const t = y * 12 + (mo - 1) + n;
    y = Math.floor(t / 12);
    mo = t - y * 12 + 1;
  }
  d = Math.min(d, daysInMonth(y, mo));
  return localToUtc(daysFromCivil(y, mo, d) * DAY + tod, tz);
}

function roundTo(ms: number, unit: string, up: boolean, tz: string | undefined): Instant {
  const local = ms + tzOffsetMs(tz, ms);
  const days = Math.floor(local / DAY);
  const [y, mo] = civilFromDays(days);
  let start: number; // local millis of the unit's start
  switch (unit) {
    case 'y': start = daysFromCivil(y, 1, 1) * DAY; break;
    case 'M': start = daysFromCivil(y, mo, 1) * DAY; break;
    case 'w': start = (days - (((days + 3) % 7) + 7) % 7) * DAY; break; // ISO weeks start on Monday
    case 'd': start = days * DAY; break;
    case 'h': case 'H': start = Math.floor(local / 3_600_000) * 3_600_000; break;
    case 'm': start = Math.floor(local / 60_000) * 60_000; break;
    default: start = Math.floor(local / 1000) * 1000;
  }
  const startUtc = localToUtc(start, tz);
  if (!up) return { ms: startUtc, ns: 0 };
  return { ms: addUnits(startUtc, 1, unit, tz) - 1, ns: 999_999 };
}

/** Options of date math evaluation. */
export interface DateMathOptions {
  now: number;
  roundUp?: boolean;
  tz?: string;
}

/**
 * Parses `now…` or `<date>||<math>` (or a plain date) to an instant. `roundUp` is set for `gt`/`lte`
 * bounds: `/unit` then rounds to the unit's last nano and absent date fields are maxed.
 * @example parseDateMath('now-1d/d', fmt, { now }) // start of yesterday (UTC)
 */
export function parseDateMath(text: string, fmt: DateFormatter, o: DateMathOptions): Instant {
  let base: Instant;
  let math: string;
  if (text.startsWith('now')) {
    base = { ms: o.now, ns: 0 };
    math = text.slice(3);
  } else {
    const k = text.indexOf('||');
    if (k < 0) return fmt.parse(text, o.roundUp, o.tz);
    base = fmt.parse(text.slice(0, k), false, o.tz);
    math = text.slice(k + 2);
  }
  let { ms, ns } = base;
  for (let i = 0; i < math.length; ) {
    const c = math[i++];
    if (c === '/') {
      const unit = math[i++];
      if (!unit || !UNIT.test(unit)) throw new DateParseError(text, fmt.pattern);
      ({ ms, ns } = roundTo(ms, unit, o.roundUp ?? false, o.tz));
    } else if (c === '+' || c === '-') {
      let j = i;
      while (j < math.length && math[j] >= '0' && math[j] <= '9') j++;
      const n = j > i ? Number(math.slice(i, j)) : 1;
      const unit = math[j];
      if (!unit || !UNIT.test(unit)) throw new DateParseError(text, fmt.pattern);
      ms = addUnits(ms, c === '-' ? -n : n, unit, o.tz);
      i = j + 1;
    } else throw new DateParseError(text, fmt.pattern);
  }
  return { ms, ns };
}
