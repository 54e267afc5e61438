import { EsError } from './esErrors';

/**
 * ES byte sizes: `ByteSizeValue.toString` (`972.7mb`, `0b`) and the memory-size settings of the
 * circuit breakers, which take bytes (`512mb`, `-1` for no limit) or a share of the heap (`60%`),
 * as `MemorySizeValue.parseBytesSizeValueOrHeapRatio` reads them.
 */

const UNIT_BYTES: Readonly<Record<string, number>> = { b: 1, k: 1024, kb: 1024, m: 1024 ** 2, mb: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3, t: 1024 ** 4, tb: 1024 ** 4, p: 1024 ** 5, pb: 1024 ** 5 };
const SUFFIXES = ['b', 'kb', 'mb', 'gb', 'tb', 'pb'] as const;

/**
 * `ByteSizeValue#toString`: the largest unit the value reaches, one decimal kept by truncation as
 * `Strings.format1Decimals` does (it cuts the decimal text, it does not round), `.0` dropped.
 * @example formatBytes(1017560880) // '970.4mb'
 */
export function formatBytes(bytes: number): string {
  let u = 0;
  while (u < SUFFIXES.length - 1 && bytes >= 1024 ** (u + 1)) u++;
  if (u === 0) return `${bytes}b`;
  const text = String(bytes / 1024 ** u);
  const dot = text.indexOf('.');
  if (dot < 0) return `${text}${SUFFIXES[u]}`;
  const tenth = text[dot + 1];
  return tenth === '0' ? `${text.slice(0, dot)}${SUFFIXES[u]}` : `${text.slice(0, dot + 2)}${SUFFIXES[u]}`;
}

/** ES's `ElasticsearchParseException` (400 `parse_exception`). */
const parseError = (reason: string) => new EsError('parse_exception', 400, reason);

/**
 * `ByteSizeValue.parseBytesSizeValue`: `<n><unit>` with unit `b k kb m mb g gb t tb p pb` (case and
 * spaces ignored), the unit-less `0` and `-1`; fractions are read (ES deprecates them), values
 * below -1 refused.
 * @throws EsError 400 `parse_exception` with ES's reason.
 */
export function parseBytes(raw: unknown, setting: string): number {
  const value = String(raw);
  if (value === '0') return 0;
  if (value === '-1') return -1;
  const norm = value.toLowerCase().trim();
  const m = /^(.*?)(kb|mb|gb|tb|pb|k|m|g|t|p|b)$/.exec(norm);
  if (!m) throw parseError(`failed to parse setting [${setting}] with value [${value}] as a size in bytes: unit is missing or unrecognized`);
  const digits = m[1].trim();
  let n: number;
  if (/^[+-]?\d+$/.test(digits)) n = Number(digits) * UNIT_BYTES[m[2]];
  else if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(digits)) n = Math.trunc(Number(digits) * UNIT_BYTES[m[2]]);
  else throw parseError(`failed to parse setting [${setting}] with value [${value}]`);
  if (n < -1 || !Number.isFinite(n)) throw parseError(`failed to parse setting [${setting}] with value [${value}] as a size in bytes`);
  return n;
}

/**
 * A memory-size setting (`indices.breaker.request.limit`): bytes, or a percentage of `heapMax`.
 * @example parseMemorySize('60%', 'indices.breaker.request.limit', 1000) // 600
 */
export function parseMemorySize(raw: unknown, setting: string, heapMax: number): number {
  const value = String(raw);
  if (!value.endsWith('%')) return parseBytes(value, setting);
  const pct = value.slice(0, -1);
  const n = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(pct) ? Number(pct) : NaN;
  if (Number.isNaN(n)) throw parseError(`failed to parse [${pct}] as a double`);
  if (n < 0 || n > 100) throw parseError(`percentage should be in [0-100], got [${pct}]`);
  return Math.trunc((n / 100) * heapMax);
}
