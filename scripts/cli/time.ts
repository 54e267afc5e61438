const UNIT: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A point in time for `--since/--until/--at`: ISO-8601 (`2024-05-01T10:00:00Z`, `2024-05-01`), epoch
 * milliseconds (`1714557600000`), `now`, or a time value before now (`-15m`, `-2h`, `-1d`, ES units).
 */
export function parseTime(s: string, now = Date.now()): number {
  const t = s.trim();
  if (t === 'now') return now;
  const rel = /^-(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(t);
  if (rel) return now - Math.round(Number(rel[1]) * UNIT[rel[2]]);
  if (/^\d{10,}$/.test(t)) return Number(t);
  const ms = Date.parse(t);
  if (Number.isNaN(ms)) throw new Error(`cannot parse time [${s}]: use ISO-8601, epoch ms, now, or -<n><ms|s|m|h|d>`);
  return ms;
}
