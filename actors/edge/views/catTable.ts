import { stringify as yaml } from 'yaml';
import { illegalArgument } from '../../wire/esErrors';
import { RawJson, type EsRequest, type EsResponse } from '../../wire/rest';

/**
 * The `_cat` table machinery (ES RestTable): columns with aliases and defaults, `v` (header),
 * `h` (columns by name, alias or wildcard), `s` (sort, `col:desc`), `bytes` / `time` (units of
 * size and time cells), `help`, and `format=json|yaml|text`.
 */

export type CellKind = 'string' | 'number' | 'bytes' | 'time' | 'percent';

export interface Column {
  name: string;
  aliases?: string[];
  desc: string;
  /** Shown without `h` (default true). */
  default?: boolean;
  align?: 'left' | 'right';
  kind?: CellKind;
}

/** A row: column name -> value (bytes and times as numbers of bytes / millis; null = empty). */
export type Row = Record<string, string | number | boolean | null | undefined>;

const UNITS = ['b', 'kb', 'mb', 'gb', 'tb', 'pb'] as const;
const BYTE_FACTORS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3, tb: 1024 ** 4, pb: 1024 ** 5 };
const TIME_FACTORS: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, ms: 1, micros: 0.001, nanos: 0.000001 };

/** ES's `Strings.format1Decimals`: one decimal, dropped when it is zero. */
function oneDecimal(v: number, suffix: string): string {
  const r = Math.round(v * 10);
  return r % 10 === 0 ? `${r / 10}${suffix}` : `${(r / 10).toFixed(1)}${suffix}`;
}

/** ByteSizeValue#toString: the largest unit with a value of at least 1 (`4.5kb`, `225b`). */
export function humanBytes(bytes: number): string {
  let u = 0;
  let v = bytes;
  while (u < UNITS.length - 1 && Math.abs(v) >= 1024) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${bytes}b` : oneDecimal(v, UNITS[u]);
}

/** TimeValue#toString (`15ms`, `1.2s`, `3.4m`, `2h`, `1d`). */
export function humanTime(ms: number): string {
  if (ms >= 86_400_000) return oneDecimal(ms / 86_400_000, 'd');
  if (ms >= 3_600_000) return oneDecimal(ms / 3_600_000, 'h');
  if (ms >= 60_000) return oneDecimal(ms / 60_000, 'm');
  if (ms >= 1000) return oneDecimal(ms / 1000, 's');
  return `${Math.round(ms)}ms`;
}

const glob = (p: string) => new RegExp(`^${p.split('*').map((x) => x.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);

interface Display {
  col: Column;
  /** The name the caller used (alias or name): ES keys JSON rows by it. */
  display: string;
}

function displayColumns(cols: Column[], h: string | undefined): Display[] {
  if (h === undefined || h === '') return cols.filter((c) => c.default !== false).map((col) => ({ col, display: col.name }));
  const out: Display[] = [];
  for (const want of h.split(',').map((x) => x.trim()).filter(Boolean)) {
    if (want.includes('*')) {
      const re = glob(want);
      for (const col of cols) if (re.test(col.name) && !out.some((d) => d.col === col)) out.push({ col, display: col.name });
      continue;
    }
    const col = cols.find((c) => c.name === want || c.aliases?.includes(want));
    if (col) out.push({ col, display: want });
  }
  return out;
}

function sortKey(v: Row[string]): number | string | null {
  if (v === null || v === undefined) return null;
  return typeof v === 'number' ? v : typeof v === 'boolean' ? String(v) : v;
}

function sortRows(rows: Row[], cols: Column[], s: string | undefined): Row[] {
  if (!s) return rows;
  const keys = s.split(',').map((x) => x.trim()).filter(Boolean).map((spec) => {
    const [name, dir] = spec.split(':');
    const col = cols.find((c) => c.name === name || c.aliases?.includes(name))!; // checked by checkSortColumns
    if (dir !== undefined && dir !== 'asc' && dir !== 'desc') throw illegalArgument(`Unable to parse sort direction [${dir}] for column [${name}]`);
    return { col, sign: dir === 'desc' ? -1 : 1 };
  });
  return [...rows].sort((a, b) => {
    for (const { col, sign } of keys) {
      const x = sortKey(a[col.name]);
      const y = sortKey(b[col.name]);
      if (x === y) continue;
      if (x === null) return 1; // nulls last
      if (y === null) return -1;
      const c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x) < String(y) ? -1 : 1;
      if (c !== 0) return sign * c;
    }
    return 0;
  });
}

function checkSortColumns(cols: Column[], s: string | undefined): void {
  for (const spec of (s ?? '').split(',').map((x) => x.trim()).filter(Boolean)) {
    const name = spec.split(':')[0];
    if (!cols.some((c) => c.name === name || c.aliases?.includes(name))) {
      throw illegalArgument(`Unable to sort by unknown sort key \`${name}\``);
    }
  }
}

/** A cell as text: sizes and times in the unit asked for (`bytes=`, `time=`), or human-readable. */
function cellText(v: Row[string], col: Column, req: EsRequest): string | null {
  if (v === null || v === undefined) return null;
  if (col.kind === 'bytes' && typeof v === 'number') {
    const unit = req.query.bytes;
    if (unit === undefined) return humanBytes(v);
    const f = BYTE_FACTORS[unit];
    if (!f) throw illegalArgument(`failed to parse setting [bytes] with value [${unit}] as a size in bytes: unit is missing or unrecognized`);
    return String(Math.floor(v / f));
  }
  if (col.kind === 'time' && typeof v === 'number') {
    const unit = req.query.time;
    if (unit === undefined) return humanTime(v);
    const f = TIME_FACTORS[unit];
    if (!f) throw illegalArgument(`failed to parse [${unit}], unit is missing or unrecognized`);
    return String(Math.floor(v / f));
  }
  return String(v);
}

function pad(text: string, width: number, right: boolean, last: boolean): string {
  if (right) return text.padStart(width);
  return last ? text : text.padEnd(width);
}

const truthy = (v: string | undefined) => v !== undefined && v !== 'false';

/** Renders a cat table for a request (text by default; `format=json|yaml`; `help`). */
export function catResponse(req: EsRequest, cols: Column[], rows: Row[]): EsResponse {
  // A text body is not JSON: keep the edge's `pretty` printer away from it.
  const format = (req.query.format ?? 'text').toLowerCase();
  if (format === 'text' || req.query.help !== undefined) delete (req.query as Record<string, string>).pretty;
  if (truthy(req.query.help) || req.query.help === '') {
    const w1 = Math.max(...cols.map((c) => c.name.length));
    const w2 = Math.max(...cols.map((c) => (c.aliases ?? []).join(',').length));
    const text = cols.map((c) => `${c.name.padEnd(w1)} | ${(c.aliases ?? []).join(',').padEnd(w2)} | ${c.desc}\n`).join('');
    return text_(text);
  }
  checkSortColumns(cols, req.query.s);
  const shown = displayColumns(cols, req.query.h);
  const sorted = sortRows(rows, cols, req.query.s);
  const cells = sorted.map((r) => shown.map((d) => cellText(r[d.col.name], d.col, req)));
  if (format === 'json' || format === 'yaml') {
    const objs = cells.map((line) => Object.fromEntries(shown.map((d, i) => [d.display, line[i]])));
    if (format === 'yaml') return text_(yaml(objs).replace(/^/, '---\n'), 'application/yaml');
    return { body: objs };
  }
  if (format !== 'text') throw illegalArgument(`Unsupported format [${format}]`);
  const header = truthy(req.query.v) || req.query.v === '';
  const widths = shown.map((d, i) => Math.max(header ? d.display.length : 0, ...cells.map((line) => (line[i] ?? '').length)));
  const lines: string[] = [];
  const render = (values: Array<string | null>) =>
    values.map((v, i) => pad(v ?? '', widths[i], shown[i].col.align === 'right', i === values.length - 1)).join(' ') + '\n';
  if (header) lines.push(render(shown.map((d) => d.display)));
  for (const line of cells) lines.push(render(line));
  return text_(lines.join(''));
}

function text_(text: string, type = 'text/plain; charset=UTF-8'): EsResponse {
  return { body: new RawJson([text]), headers: { 'content-type': type } };
}
