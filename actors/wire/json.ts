import { parse as losslessParse } from 'lossless-json';
import { EsError } from './esErrors';

/**
 * JSON that keeps 64-bit integers exact. Longs beyond 2^53 (sort values, the missing-value sentinels,
 * `_shard_doc`) arrive and leave as bigint; everything else is a plain number.
 */

const LONG_DIGITS = /\d{16}/;

function parseNumber(text: string): number | bigint {
  if (/^-?\d+$/.test(text)) {
    const n = Number(text);
    return Number.isSafeInteger(n) ? n : BigInt(text);
  }
  return Number(text);
}

/** Parses JSON text; integers outside the safe range become bigint. Throws SyntaxError. */
export function parseJson<T = unknown>(text: string): T {
  // Fast path: without a run of 16 digits no number can be unsafe.
  if (!LONG_DIGITS.test(text)) return JSON.parse(text) as T;
  return losslessParse(text, null, parseNumber) as T;
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

/** Parses a request body; malformed JSON becomes ES's 400 `x_content_parse_exception`. */
export function parseBody<T = unknown>(text: string): T {
  try {
    return parseJson<T>(text);
  } catch (e) {
    const msg = (e as Error).message;
    const m = /position (\d+)/.exec(msg) ?? /\(char (\d+)\)/.exec(msg);
    const [line, col] = lineCol(text, m ? Number(m[1]) : 0);
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
