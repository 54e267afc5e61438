/** Small building blocks: a fixed-size bitset and growth helpers for typed-array columns. */

/** A set of doc ids in [0, size). Word-wise ops assume equal sizes. */
export class Bitset {
  readonly words: Uint32Array;
  constructor(readonly size: number) {
    this.words = new Uint32Array((size + 31) >>> 5);
  }
  static all(size: number): Bitset {
    const b = new Bitset(size);
    b.setRange(0, size);
    return b;
  }
  set(i: number): void {
    this.words[i >>> 5] |= 1 << (i & 31);
  }
  has(i: number): boolean {
    return (this.words[i >>> 5] & (1 << (i & 31))) !== 0;
  }
  clear(i: number): void {
    this.words[i >>> 5] &= ~(1 << (i & 31));
  }
  /** Sets [from, to). */
  setRange(from: number, to: number): void {
    for (let i = from; i < to && (i & 31) !== 0; i++) this.set(i);
    let i = Math.max(from, (from + 31) & ~31);
    for (; i + 32 <= to; i += 32) this.words[i >>> 5] = 0xffffffff;
    for (; i < to; i++) this.set(i);
  }
  and(o: Bitset): this {
    const w = this.words, v = o.words;
    for (let i = 0; i < w.length; i++) w[i] &= v[i];
    return this;
  }
  or(o: Bitset): this {
    const w = this.words, v = o.words;
    for (let i = 0; i < w.length; i++) w[i] |= v[i];
    return this;
  }
  andNot(o: Bitset): this {
    const w = this.words, v = o.words;
    for (let i = 0; i < w.length; i++) w[i] &= ~v[i];
    return this;
  }
  count(): number {
    let n = 0;
    const w = this.words;
    for (let i = 0; i < w.length; i++) n += popcount(w[i]);
    return n;
  }
  /** First set bit >= from, or -1. */
  next(from: number): number {
    const w = this.words;
    let wi = from >>> 5;
    if (wi >= w.length) return -1;
    let word = w[wi] & (0xffffffff << (from & 31));
    for (;;) {
      if (word !== 0) {
        const r = (wi << 5) + (31 - Math.clz32(word & -word));
        return r < this.size ? r : -1;
      }
      if (++wi >= w.length) return -1;
      word = w[wi];
    }
  }
  /** Last set bit <= from, or -1. */
  prev(from: number): number {
    if (from < 0) return -1;
    const w = this.words;
    let wi = Math.min(from, this.size - 1) >>> 5;
    const sh = 31 - (Math.min(from, this.size - 1) & 31);
    let word = sh === 0 ? w[wi] : w[wi] & (0xffffffff >>> sh);
    for (;;) {
      if (word !== 0) return (wi << 5) + 31 - Math.clz32(word);
      if (--wi < 0) return -1;
      word = w[wi];
    }
  }
  /** Calls fn for every set bit, ascending. */
  forEach(fn: (i: number) => void): void {
    const w = this.words;
    for (let wi = 0; wi < w.length; wi++) {
      let word = w[wi];
      while (word !== 0) {
        const t = word & -word;
        fn((wi << 5) + 31 - Math.clz32(t));
        word ^= t;
      }
    }
  }
  clone(): Bitset {
    const b = new Bitset(this.size);
    b.words.set(this.words);
    return b;
  }
}

/** Number of set bits of a 32-bit word. */
export function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

type Typed = Float64Array | Int32Array | Uint32Array | Uint16Array | Uint8Array;

/** Capacity for at least `need` slots: x2 while small, x1.5 beyond 1M (keeps slack per doc low). */
export function nextCapacity(cur: number, need: number): number {
  let c = Math.max(cur, 16);
  while (c < need) c = c < 1 << 20 ? c * 2 : Math.ceil(c * 1.5);
  return c;
}

/** Returns `a` or a larger copy holding at least `need` slots; new slots get `fill`. */
export function grow<T extends Typed>(a: T, need: number, fill = 0): T {
  if (need <= a.length) return a;
  const b = new (a.constructor as new (n: number) => T)(nextCapacity(a.length, need));
  b.set(a as never);
  if (fill !== 0) b.fill(fill, a.length);
  return b;
}

/** Index of the first element >= x in the ascending prefix a[0..n). */
export function lowerBound(a: Int32Array, n: number, x: number): number {
  let lo = 0, hi = n;
  while (lo < hi) {
    const m = (lo + hi) >>> 1;
    if (a[m] < x) lo = m + 1;
    else hi = m;
  }
  return lo;
}

/** Index of the first element > x in the ascending prefix a[0..n) of a Float64Array. */
export function upperBoundF64(a: Float64Array, n: number, x: number): number {
  let lo = 0, hi = n;
  while (lo < hi) {
    const m = (lo + hi) >>> 1;
    if (a[m] <= x) lo = m + 1;
    else hi = m;
  }
  return lo;
}

/** Code point order (= Lucene's UTF-8 byte order) for strings; JS `<` is UTF-16 order. */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i), y = b.charCodeAt(i);
    if (x !== y) {
      // surrogates (U+D800..DFFF) encode code points above U+FFFF: they sort after U+E000..FFFF
      if (x >= 0xd800 && y >= 0xd800) {
        x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
        y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
      }
      return x - y;
    }
  }
  return a.length - b.length;
}
