/**
 * The `standard` analyzer (UAX#29-style word splitting + lowercase, no stop words, max token length
 * 255) and Lucene's BM25 arithmetic (float32, one-byte length norms), so scores and ordering match ES.
 */

// Character classes of the tokenizer, one bit each, per code point.
const WORD = 1; // letters (except Han/Hiragana), marks, digits, number letters, connectors
const LETTER = 2; // letters except Han/Hiragana
const DIGIT = 4; // \p{Nd}
const IDEO = 8; // Han/Hiragana: one token per character
const MID_LETTER = 16; // UAX#29 WB6/7: letter [:.'’·] letter does not break
const MID_NUM = 32; // UAX#29 WB11/12: digit [.,;'’] digit does not break
const KNOWN = 128;

const RE_IDEO = /[\p{Script=Han}\p{Script=Hiragana}]/u;
const RE_LETTER = /\p{L}/u;
const RE_WORD_OTHER = /[\p{M}\p{Nd}\p{Nl}\p{No}\p{Pc}]/u;
const RE_DIGIT = /\p{Nd}/u;

function computeClass(cp: number): number {
  const ch = String.fromCodePoint(cp);
  let c = KNOWN;
  if (RE_IDEO.test(ch)) c |= IDEO;
  else if (RE_LETTER.test(ch)) c |= LETTER | WORD;
  // Han numerals (\p{Nl}, \p{No}) start a token of their own but continue a word run
  if (RE_WORD_OTHER.test(ch)) c |= WORD;
  if (RE_DIGIT.test(ch)) c |= DIGIT;
  if (cp === 0x3a || cp === 0x2e || cp === 0x27 || cp === 0x2019 || cp === 0xb7) c |= MID_LETTER;
  if (cp === 0x2e || cp === 0x2c || cp === 0x3b || cp === 0x27 || cp === 0x2019) c |= MID_NUM;
  return c;
}

// Filled lazily (one byte per code point): the class tests run once per distinct character.
const CLASSES = new Uint8Array(0x110000);

function classOf(cp: number): number {
  const c = CLASSES[cp];
  return c !== 0 ? c : (CLASSES[cp] = computeClass(cp));
}

const MAX_TOKEN_LENGTH = 255;

/**
 * Tokens of `text` as the `standard` analyzer emits them. A linear scan (no backtracking regexp), so
 * a single multi-megabyte token costs time proportional to its length and a constant stack.
 */
/** Text of ASCII word characters and whitespace only: its tokens are the runs of [A-Za-z0-9_]. */
const PLAIN_ASCII = /^[A-Za-z0-9_ \t\n\r\f\v]*$/;

export function analyze(text: string): string[] {
  const out: string[] = [];
  if (PLAIN_ASCII.test(text)) {
    // Ingest fast path (no class lookups): the same tokens as the scan below.
    let start = -1;
    for (let i = 0; i <= text.length; i++) {
      const c = i < text.length ? text.charCodeAt(i) : 0x20;
      if ((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || c === 0x5f) {
        if (start < 0) start = i;
      } else if (start >= 0) {
        push(out, text.slice(start, i));
        start = -1;
      }
    }
    return out;
  }
  const n = text.length;
  let i = 0;
  while (i < n) {
    const cp = text.codePointAt(i)!;
    const w = cp > 0xffff ? 2 : 1;
    const c = classOf(cp);
    if (c & IDEO) {
      push(out, text.slice(i, i + w));
      i += w;
      continue;
    }
    if (!(c & WORD)) {
      i += w;
      continue;
    }
    const start = i;
    let prev = c;
    i += w;
    for (;;) {
      // the rest of a run of word characters
      while (i < n) {
        const p = text.codePointAt(i)!;
        const pc = classOf(p);
        if (!(pc & WORD)) break;
        prev = pc;
        i += p > 0xffff ? 2 : 1;
      }
      if (i >= n) break;
      // a mid character joins two runs when the characters on both sides allow it
      const mid = text.codePointAt(i)!;
      const mc = classOf(mid);
      const mw = mid > 0xffff ? 2 : 1;
      if (!(mc & (MID_LETTER | MID_NUM)) || i + mw >= n) break;
      const next = classOf(text.codePointAt(i + mw)!);
      const joins = (mc & MID_LETTER && prev & LETTER && next & LETTER) || (mc & MID_NUM && prev & DIGIT && next & DIGIT);
      if (!joins) break;
      i += mw;
    }
    push(out, text.slice(start, i));
  }
  return out;
}

function push(out: string[], token: string): void {
  const t = token.toLowerCase();
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

/**
 * A term's BM25 weight as ES computes it: ES 8 scores with LegacyBM25Similarity, which hands
 * Lucene's BM25 the boost times (1 + k1), so weight = boost * 2.2 * idf (float32 at each step).
 */
export function bm25Weight(boost: number, termIdf: number): number {
  return f(f(boost * K1_PLUS_1) * termIdf);
}
const K1_PLUS_1 = f(1 + K1);

/** `weight - weight / (1 + freq * normInverse)`, weight = bm25Weight(boost, idf). */
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

/** ES's position_increment_gap of text fields: the gap between the values of a multi-valued field. */
export const POSITION_INCREMENT_GAP = 100;

/**
 * Positions of `tokens` (the analyzed values, one after another; `valueEnds[k]` = end of value k's
 * tokens): 0, 1, … within a value, each value after the first starting POSITION_INCREMENT_GAP + 1
 * after the previous value's last token (Lucene's invert loop).
 */
export function tokenPositions(n: number, valueEnds?: number[]): Uint32Array {
  const out = new Uint32Array(n);
  if (!valueEnds || valueEnds.length < 2) {
    for (let i = 0; i < n; i++) out[i] = i;
    return out;
  }
  let last = -1;
  let i = 0;
  valueEnds.forEach((end, k) => {
    if (k > 0) last += POSITION_INCREMENT_GAP;
    for (; i < end; i++) out[i] = ++last;
  });
  return out;
}
