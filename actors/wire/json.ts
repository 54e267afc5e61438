import { parse as losslessParse } from 'lossless-json';
import { EsError } from './esErrors';

/**
 * JSON that keeps 64-bit integers exact. Longs beyond 2^53 (sort values, the missing-value sentinels,
 * `_shard_doc`) arrive and leave as bigint; everything else is a plain number.
 */

const LONG_DIGITS = /\d{16}/;

/**
 * Deepest nesting of objects and arrays a request body may have: Jackson's default
 * `StreamReadConstraints.maxNestingDepth`, which Elasticsearch 8 keeps.
 */
export const MAX_NESTING_DEPTH = 1000;

/**
 * Bound for JSON the node parses for itself: shard messages wrap a request a few levels deeper than
 * its body held it, and shard replies nest deeper than the request (each level of sub-aggregations
 * becomes `{buckets:[{…, sub:{…}}]}`). Bodies are bounded at 1,000, so nothing the node exchanges
 * comes near this; it is a backstop, well within what the recursive lossless parser can take.
 */
const INTERNAL_MAX_DEPTH = 4 * MAX_NESTING_DEPTH;

/** JSON nested deeper than allowed: Jackson's StreamConstraintsException. */
export class JsonDepthError extends SyntaxError {
  constructor(readonly depth: number, readonly max: number, readonly position: number) {
    super(`Document nesting depth (${depth}) exceeds the maximum allowed (${max}, from \`StreamReadConstraints.getMaxNestingDepth()\`)`);
    this.name = 'JsonDepthError';
  }
}

/**
 * Offset of the bracket that takes `text` deeper than `max` levels of objects and arrays, or -1.
 * Linear, no recursion; brackets inside strings do not count. Text of `max` characters or fewer
 * cannot hold `max + 1` brackets and is not scanned.
 */
export function nestingOverflow(text: string, max: number): number {
  const n = text.length;
  if (n <= max) return -1;
  let depth = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // skip the string: the next quote not escaped by an odd run of backslashes
      for (;;) {
        const q = text.indexOf('"', i + 1);
        if (q < 0) return -1;
        let b = q - 1;
        while (text.charCodeAt(b) === 92) b--;
        i = q;
        if ((q - 1 - b) % 2 === 0) break;
      }
    } else if (c === 123 || c === 91) {
      if (++depth > max) return i;
    } else if (c === 125 || c === 93) depth--;
  }
  return -1;
}

function checkDepth(text: string, max: number): void {
  const at = nestingOverflow(text, max);
  if (at >= 0) throw new JsonDepthError(max + 1, max, at);
}

function parseNumber(text: string): number | bigint {
  if (/^-?\d+$/.test(text)) {
    const n = Number(text);
    return Number.isSafeInteger(n) ? n : BigInt(text);
  }
  return Number(text);
}

/**
 * Parses JSON text; integers outside the safe range become bigint. Throws SyntaxError (a
 * JsonDepthError beyond `maxDepth` levels of nesting).
 */
export function parseJson<T = unknown>(text: string, maxDepth = INTERNAL_MAX_DEPTH): T {
  checkDepth(text, maxDepth);
  // Fast path: without a run of 16 digits no number can be unsafe.
  if (!LONG_DIGITS.test(text)) return JSON.parse(text) as T;
  try {
    return losslessParse(text, null, parseNumber) as T;
  } catch (e) {
    // the lossless parser recurses: on a stack already deep, report depth rather than crash
    if (e instanceof RangeError) throw new JsonDepthError(maxDepth + 1, maxDepth, 0);
    throw e;
  }
}

function errorPosition(msg: string): number {
  const m = /position (\d+)/.exec(msg) ?? /\(char (\d+)\)/.exec(msg);
  return m ? Number(m[1]) : 0;
}

function lineCol(text: string, pos: number): [number, number] {
  let line = 1;
  let col = 1;
  for (let i = 0; i < pos && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      col = 1;
    } else col++;
  }
  return [line, col];
}

/**
 * Parses a request body; malformed JSON, or JSON nested deeper than {@link MAX_NESTING_DEPTH},
 * becomes ES's 400 `x_content_parse_exception`.
 */
export function parseBody<T = unknown>(text: string, maxDepth = MAX_NESTING_DEPTH): T {
  try {
    return parseJson<T>(text, maxDepth);
  } catch (e) {
    const msg = (e as Error).message;
    const [line, col] = lineCol(text, e instanceof JsonDepthError ? e.position : errorPosition(msg));
    throw new EsError('x_content_parse_exception', 400, `[${line}:${col}] ${msg.replace(/ in JSON at position \d+.*$/, '')}`, {
      meta: { line, col },
    });
  }
}

const BIG = /"\uE000big:(-?\d+)"/g;

/**
 * JSON.stringify that writes bigint as bare integer digits. Plain JSON.stringify first (no replacer:
 * several times faster on large replies); only a value holding a bigint, which makes it throw,
 * takes the replacer path.
 */
export function stringify(v: unknown): string {
  try {
    return JSON.stringify(v);
  } catch (e) {
    if (!(e instanceof TypeError) || !/BigInt/i.test(e.message)) throw e;
  }
  return stringifyBig(v);
}

function stringifyBig(v: unknown): string {
  let sawBig = false;
  const s = JSON.stringify(v, (_k, x) => {
    if (typeof x === 'bigint') {
      sawBig = true;
      return `\uE000big:${x}`;
    }
    return x;
  });
  return sawBig ? s.replace(BIG, '$1') : s;
}
