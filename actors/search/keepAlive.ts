import { allShardsFailed, illegalArgument, type EsError } from '../wire/esErrors';
import { formatTimeValue, parseTimeValue } from '../wire/timeValue';
import type { SearchServices } from './services';

/**
 * Keep alives of scrolls and PITs, in one place: the limits (`search.default_keep_alive`,
 * `search.max_keep_alive`, `search.max_open_scroll_context`), the check against the maximum and its
 * ES error text. Limits are checked before events reach a context machine (mirrors
 * `SearchService.checkKeepAliveLimit`).
 */

/** Parsed time values of the keep-alive settings, by their text (the settings change rarely). */
const parsed = new Map<string, number>();
function timeSetting(value: string, name: string): number {
  const key = `${name}=${value}`;
  let ms = parsed.get(key);
  if (ms === undefined) {
    ms = parseTimeValue(value, name); // throws for a bad value: never remembered
    if (parsed.size > 64) parsed.clear();
    parsed.set(key, ms);
  }
  return ms;
}

/** `search.*` keep-alive limits, read live so `PUT /_cluster/settings` takes effect at once. */
export function keepAliveLimits(s: Pick<SearchServices, 'ctx'>) {
  return {
    defaultMs: timeSetting(s.ctx.settings.str('search.default_keep_alive', '5m'), 'search.default_keep_alive'),
    maxMs: timeSetting(s.ctx.settings.str('search.max_keep_alive', '24h'), 'search.max_keep_alive'),
    maxOpenScroll: s.ctx.settings.num('search.max_open_scroll_context', 500),
  };
}

/**
 * ES's error for a keep alive over `search.max_keep_alive` (`TimeValue.toString` truncates: 100 s
 * is `1.6m`). Equality is allowed, so callers test `ms > maxMs`.
 */
export function keepAliveTooLarge(ms: number, maxMs: number): EsError {
  return illegalArgument(
    `Keep alive for request (${formatTimeValue(ms)}) is too large. It must be less than (${formatTimeValue(maxMs)}). ` +
      'This limit can be set by changing the [search.max_keep_alive] cluster level setting.',
  );
}

/** The keep alive if it is within `maxMs`, else ES's 400 (wrapped as a shard failure, as ES sends it). */
export function checkKeepAlive(ms: number, maxMs: number): number {
  if (ms > maxMs) throw allShardsFailed([keepAliveTooLarge(ms, maxMs)]);
  return ms;
}

/** A keep alive parsed (`scroll`, `keep_alive`: ES's time value) and checked against the live maximum. */
export function keepAliveOrThrow(s: Pick<SearchServices, 'ctx'>, ms: number): number {
  return checkKeepAlive(ms, keepAliveLimits(s).maxMs);
}

/** Parses a keep alive parameter (ES time value; its 400 names the parameter). */
export const parseKeepAlive = (value: string, name: string): number => parseTimeValue(value, name);

/** A keep alive as ES prints it (`TimeValue.toString`: 90 s → `1.5m`, 100 s → `1.6m`, 24 h → `1d`). */
export const formatKeepAlive = formatTimeValue;
