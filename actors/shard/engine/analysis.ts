/**
 * The `standard` analyzer (UAX#29-style word splitting + lowercase, no stop words, max token length
 * 255) and Lucene's BM25 arithmetic (float32, one-byte length norms), so scores and ordering match ES.
 */

// A word char: letters (except Han/Hiragana, which are one token per char), marks, digits, connectors.
const W = String.raw`(?:[^\P{L}\p{Script=Han}\p{Script=Hiragana}]|[\p{M}\p{Nd}\p{Nl}\p{No}\p{Pc}])`;
const L = String.raw`[^\P{L}\p{Script=Han}\p{Script=Hiragana}]`;
// UAX#29 WB6/7 (letter [:.'’] letter) and WB11/12 (digit [.,;'’] digit) do not break.
const TOKEN = new RegExp(
  String.raw`[\p{Script=Han}\p{Script=Hiragana}]|${W}+(?:(?:(?<=${L})[:.'’·](?=${L})|(?<=\p{Nd})[.,;'’](?=\p{Nd}))${W}+)*`,
  'gu',
);

const MAX_TOKEN_LENGTH = 255;

/**
 * Text of ASCII word characters and whitespace only: its tokens are the runs of [A-Za-z0-9_] (the
 * regex's word characters in ASCII; the UAX#29 joiners `:.',;` cannot occur), found without it.
 */
const PLAIN_ASCII = /^[A-Za-z0-9_ \t\n\r\f\v]*$/;

/** Tokens of `text` as the `standard` analyzer emits them. */
export function analyze(text: string): string[] {
  const out: string[] = [];
  if (PLAIN_ASCII.test(text)) {
    // Ingest fast path (no regex match objects): the same tokens as the loop below.
    let start = -1;
    for (let i = 0; i <= text.length; i++) {
      const c = i < text.length ? text.charCodeAt(i) : 0x20;
      if ((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || c === 0x5f) {
        if (start < 0) start = i;
      } else if (start >= 0) {
        pushToken(out, text.slice(start, i).toLowerCase());
        start = -1;
      }
    }
    return out;
  }
  TOKEN.lastIndex = 0;
  for (let m = TOKEN.exec(text); m !== null; m = TOKEN.exec(text)) pushToken(out, m[0].toLowerCase());
  return out;
}

function pushToken(out: string[], t: string): void {
  if (t.length <= MAX_TOKEN_LENGTH) out.push(t);
  else for (let i = 0; i < t.length; i += MAX_TOKEN_LENGTH) out.push(t.slice(i, i + MAX_TOKEN_LENGTH));
}

// ---- Lucene SmallFloat int4 / byte4 (norm encoding of field lengths) ----

function longToInt4(i: number): number {
  const numBits = 32 - Math.clz32(i);
  if (numBits < 4) return i;
  const shift = numBits - 4;
  return ((i >>> shift) & 0x07) | ((shift + 1) << 3);
}

function int4ToLong(i: number): number {
  const bits = i & 0x07;
  const shift = (i >>> 3) - 1;
  return shift === -1 ? bits : (bits | 0x08) * 2 ** shift;
}

const NUM_FREE_VALUES = 255 - longToInt4(0x7fffffff); // 24

/** Field length (token count) -> one-byte norm. */
export function lengthToNorm(len: number): number {
  return len < NUM_FREE_VALUES ? len : NUM_FREE_VALUES + longToInt4(len - NUM_FREE_VALUES);
}

/** Decoded length of every norm byte. */
export const LENGTH_TABLE: Float32Array = (() => {
  const t = new Float32Array(256);
  for (let i = 0; i < 256; i++) t[i] = i < NUM_FREE_VALUES ? i : NUM_FREE_VALUES + int4ToLong(i - NUM_FREE_VALUES);
  return t;
})();

// ---- BM25 (k1 = 1.2, b = 0.75), float32 like Lucene's BM25Similarity ----

const f = Math.fround;
const K1 = f(1.2);
const B = f(0.75);

/** Collection statistics of one field, as seen by one searcher. */
export interface FieldStats {
  docCount: number;
  /** Sum of field lengths (text) or of per-doc distinct terms (keyword: norms omitted). */
  sumTotalTermFreq: number;
}

/** BM25 idf: log(1 + (N - n + 0.5) / (n + 0.5)), as float32. */
export function idf(docFreq: number, docCount: number): number {
  return f(Math.log(1 + (docCount - docFreq + 0.5) / (docFreq + 0.5)));
}

/** Per-norm-byte 1/(k1*((1-b)+b*dl/avgdl)) for one field. */
export function normCache(stats: FieldStats): Float32Array {
  const avgdl = f(stats.sumTotalTermFreq / stats.docCount);
  const c = new Float32Array(256);
  const oneMinusB = f(1 - B);
  for (let i = 0; i < 256; i++) c[i] = f(1 / f(K1 * f(oneMinusB + f(f(B * LENGTH_TABLE[i]) / avgdl))));
  return c;
}

/** `weight - weight / (1 + freq * normInverse)`, weight = boost * idf. */
export function bm25(weight: number, freq: number, normInverse: number): number {
  return f(weight - f(weight / f(1 + f(freq * normInverse))));
}

/** Shortest decimal that round-trips as float32, as a JS number (Java prints floats that way). */
export function floatValue(x: number): number {
  if (!Number.isFinite(x) || x === 0 || Number.isInteger(x)) return x;
  const fx = f(x);
  for (let p = 1; p < 10; p++) {
    const y = Number(fx.toPrecision(p));
    if (f(y) === fx) return y;
  }
  return fx;
}
