import { EsError, parsingException } from '../../../wire/esErrors';

/**
 * Helpers for reproducing ES's request-parsing errors on already-parsed JSON: token names
 * (`VALUE_STRING`, `START_OBJECT`, …), `[line:col]` locations (found again in the raw body text
 * when the caller has it, else 1:1) and the "did you mean" suggestions.
 */

export type JsonPath = ReadonlyArray<string | number>;

/** The Jackson token kind ES names in its messages for a parsed JSON value. */
export function tokenName(v: unknown): string {
  if (v === null || v === undefined) return 'VALUE_NULL';
  if (Array.isArray(v)) return 'START_ARRAY';
  switch (typeof v) {
    case 'string': return 'VALUE_STRING';
    case 'number':
    case 'bigint': return 'VALUE_NUMBER';
    case 'boolean': return 'VALUE_BOOLEAN';
    default: return 'START_OBJECT';
  }
}

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Finds `[line, col]` of values and keys in the raw request body (Jackson style: 1-based, columns in bytes). */
export class Locator {
  constructor(private readonly text?: string) {}

  /** Location of the value at `path` (of the key itself with `key: true`); 1:1 when unknown. */
  at(path: JsonPath, key = false): [number, number] {
    if (!this.text) return [1, 1];
    try {
      const pos = find(this.text, path, key);
      return pos < 0 ? [1, 1] : lineCol(this.text, pos);
    } catch {
      return [1, 1];
    }
  }

  /** `parsing_exception` with `line`/`col` of the value at `path`. */
  parsing(path: JsonPath, reason: string, key = false): EsError {
    const [line, col] = this.at(path, key);
    return parsingException(reason, line, col);
  }

  /** `x_content_parse_exception` `[l:c] reason`, optionally with a `caused_by`. */
  xContent(path: JsonPath, reason: string, cause?: EsError, key = false): EsError {
    const [line, col] = this.at(path, key);
    return new EsError('x_content_parse_exception', 400, `[${line}:${col}] ${reason}`, cause ? { causedBy: cause } : {});
  }
}

function lineCol(text: string, pos: number): [number, number] {
  const before = text.slice(0, pos);
  const nl = before.lastIndexOf('\n');
  const line = before.split('\n').length;
  return [line, Buffer.byteLength(before.slice(nl + 1)) + 1];
}

const WS = /\s/;

function skipWs(t: string, i: number): number {
  while (i < t.length && WS.test(t[i])) i++;
  return i;
}

function skipString(t: string, i: number): number {
  for (i++; i < t.length; i++) {
    if (t[i] === '\\') i++;
    else if (t[i] === '"') return i + 1;
  }
  return i;
}

/** Index just past the value starting at i. */
function skipValue(t: string, i: number): number {
  if (t[i] === '"') return skipString(t, i);
  if (t[i] === '{' || t[i] === '[') {
    let depth = 0;
    for (; i < t.length; i++) {
      const c = t[i];
      if (c === '"') i = skipString(t, i) - 1;
      else if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') if (--depth === 0) return i + 1;
    }
    return i;
  }
  while (i < t.length && !/[,\]}\s]/.test(t[i])) i++;
  return i;
}

/** Offset of the value (or key) at path, -1 if absent. */
function find(t: string, path: JsonPath, key: boolean): number {
  let i = skipWs(t, 0);
  let keyPos = -1;
  for (const step of path) {
    if (typeof step === 'number') {
      if (t[i] !== '[') return -1;
      i = skipWs(t, i + 1);
      for (let n = 0; n < step; n++) i = skipWs(t, skipWs(t, skipValue(t, i)) + 1);
      continue;
    }
    if (t[i] !== '{') return -1;
    i = skipWs(t, i + 1);
    for (;;) {
      if (t[i] !== '"') return -1;
      const end = skipString(t, i);
      const name = JSON.parse(t.slice(i, end)) as string;
      keyPos = i;
      i = skipWs(t, skipWs(t, end) + 1); // past ':'
      if (name === step) break;
      i = skipWs(t, skipValue(t, i));
      if (t[i] !== ',') return -1;
      i = skipWs(t, i + 1);
    }
  }
  return key ? keyPos : i;
}

/** Lucene `LevenshteinDistance.getDistance`: 1 - edits / max(length). */
export function similarity(a: string, b: string): number {
  if (a.length === 0 || b.length === 0) return a === b ? 1 : 0;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return 1 - prev[b.length] / Math.max(a.length, b.length);
}

/** Candidates scoring > 0.5, best first then by name (ES `SuggestingErrorOnUnknown` / `BaseRestHandler`). */
export function closest(unknown: string, candidates: Iterable<string>): string[] {
  const scored: Array<[number, string]> = [];
  for (const c of candidates) {
    const s = similarity(unknown, c);
    if (s > 0.5) scored.push([s, c]);
  }
  return scored.sort((x, y) => y[0] - x[0] || (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0)).map(([, c]) => c);
}

/** ` did you mean [x]?` / ` did you mean any of [a, b]?` / `` (`SuggestingErrorOnUnknown.suggest`). */
export function didYouMean(unknown: string, candidates: Iterable<string>): string {
  const keys = closest(unknown, candidates);
  if (keys.length === 0) return '';
  return keys.length === 1 ? ` did you mean [${keys[0]}]?` : ` did you mean any of [${keys.join(', ')}]?`;
}

/**
 * ObjectParser's error for an unknown field: `[l:c] [name] unknown field [f]` plus suggestions,
 * located at the field name.
 */
export function unknownField(loc: Locator, path: JsonPath, parserName: string, field: string, known: Iterable<string>): EsError {
  return loc.xContent(path, `[${parserName}] unknown field [${field}]${didYouMean(field, known)}`, undefined, true);
}

/** ObjectParser wrapping a setter's failure: `[l:c] [name] failed to parse field [f]`, cause in `caused_by`. */
export function failedToParseField(loc: Locator, path: JsonPath, parserName: string, cause: EsError): EsError {
  return loc.xContent(path, `[${parserName}] failed to parse field [${String(path[path.length - 1])}]`, cause);
}
