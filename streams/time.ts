import { MS_PER } from '../actors/wire/timeValue';

/**
 * A point in time for `--since/--until/--at` (and the console's history): ISO-8601
 * (`2024-05-01T10:00:00Z`, `2024-05-01`), epoch milliseconds (`1714557600000`), `now`, or an ES
 * time value before now (`-15m`, `-2h`, `-1d`, `-1.5h`).
 */
export function parseTime(s: string, now = Date.now()): number {
  const t = s.trim();
  if (t === 'now') return now;
  // ES's units; unlike an ES time value a fraction is fine here (`-1.5h`)
  const rel = /^-(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(t);
  if (rel) return now - Math.round(Number(rel[1]) * MS_PER[rel[2]]);
  if (/^\d{10,}$/.test(t)) return Number(t);
  const ms = Date.parse(t);
  if (Number.isNaN(ms)) throw badTime(s);
  return ms;
}

const badTime = (s: string) => new Error(`cannot parse time [${s}]: use ISO-8601, epoch ms, now, or -<n><ms|s|m|h|d>`);
