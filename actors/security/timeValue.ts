import { EsError } from '../wire/esErrors';

const UNITS: Record<string, number> = {
  nanos: 1e-6,
  micros: 1e-3,
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/**
 * Parses an ES time value (`20m`, `1h`, `500ms`, `7d`) into milliseconds. Throws ES's 400
 * `parse_exception` for anything else, naming the setting or field as ES does.
 */
export function parseTimeValue(v: unknown, field: string): number {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  const s = String(v ?? '').trim();
  const m = /^(-?\d+(?:\.\d+)?)\s*(nanos|micros|ms|s|m|h|d)$/i.exec(s);
  if (!m) {
    if (s === '-1' || s === '0') return Number(s);
    throw new EsError(
      'parse_exception',
      400,
      `failed to parse setting [${field}] with value [${s}] as a time value: unit is missing or unrecognized`,
    );
  }
  return Math.round(Number(m[1]) * UNITS[m[2].toLowerCase()]);
}

/** Reads a list setting given as a YAML array or a comma-separated string. */
export function listSetting(v: unknown): string[] {
  if (v === undefined || v === null || v === '') return [];
  if (Array.isArray(v)) return v.map(String);
  return String(v)
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}
