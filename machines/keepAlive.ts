/**
 * Keep-alive limits, checked before events reach a context machine
 * (mirrors SearchService.checkKeepAliveLimit).
 */
export class KeepAliveTooLarge extends Error {
  constructor(readonly requestedMs: number, readonly maxMs: number) {
    super(`Keep alive for request (${formatKeepAlive(requestedMs)}) is too large. It must be less than (${formatKeepAlive(maxMs)}). This limit can be set by changing the [search.max_keep_alive] cluster level setting.`);
    this.name = 'KeepAliveTooLarge';
  }
}

/** Throws KeepAliveTooLarge when `ms` exceeds `maxMs` (equality allowed, as ES). */
export function checkKeepAlive(ms: number, maxMs: number): number {
  if (ms > maxMs) throw new KeepAliveTooLarge(ms, maxMs);
  return ms;
}

const UNITS: Array<[number, string]> = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'm'],
  [1000, 's'],
];

/** ES TimeValue#toString: the largest unit with at least one whole, one decimal if needed (24h -> 1d, 90s -> 1.5m). */
export function formatKeepAlive(ms: number): string {
  for (const [size, unit] of UNITS) {
    if (ms >= size) {
      const v = ms / size;
      const rounded = Math.round(v * 10) / 10;
      return `${Number.isInteger(rounded) ? rounded : rounded.toFixed(1)}${unit}`;
    }
  }
  return `${ms}ms`;
}
