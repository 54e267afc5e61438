/**
 * String tables (ids, routings, tombstone ids, term dictionaries): Uint32 offsets into one byte
 * section, UTF-8, or UTF-16LE when some string is not well-formed (a lone surrogate, which UTF-8
 * cannot carry). Plus the id hashes behind the on-disk id hash table and the bloom filter.
 */
import { compareStrings, grow } from '../base/bits';
import type { Slicer, Steps } from './steps';

// String.prototype.isWellFormed is in Node 20; the project's TS lib predates it.
const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/** 32-bit hash of a string's UTF-16 code units (murmur3-style mixing). */
export function hashString(s: string, seed: number): number {
  let h = seed ^ s.length;
  for (let i = 0; i < s.length; i++) {
    let k = Math.imul(s.charCodeAt(i), 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    h ^= Math.imul(k, 0x1b873593);
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export const SEED1 = 0x9747b28c;
export const SEED2 = 0x5bd1e995;

/** Builds a string table in memory (offsets + bytes), switching to UTF-16 on the first ill-formed string. */
export class StringTableBuilder {
  offs = new Uint32Array(16);
  bytes = Buffer.allocUnsafe(1024);
  count = 0;
  size = 0;
  utf16 = false;

  add(s: string): void {
    if (!this.utf16 && !isWellFormed(s)) this.toUtf16();
    const max = this.utf16 ? s.length * 2 : s.length * 3;
    if (this.size + max > this.bytes.length) {
      const next = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.size + max));
      this.bytes.copy(next, 0, 0, this.size);
      this.bytes = next;
    }
    this.size += this.bytes.write(s, this.size, this.utf16 ? 'utf16le' : 'utf8');
    this.offs = grow(this.offs, this.count + 2);
    this.offs[++this.count] = this.size;
    if (this.size > 0xffffffff) throw new RangeError('string table over 4 GB');
  }

  /** Offsets (count + 1) and bytes, trimmed. */
  finish(): { offs: Uint32Array; bytes: Uint8Array } {
    return { offs: this.offs.subarray(0, this.count + 1), bytes: this.bytes.subarray(0, this.size) };
  }

  private toUtf16(): void {
    const old = this.bytes;
    const strs: string[] = [];
    for (let i = 0; i < this.count; i++) strs.push(old.toString('utf8', this.offs[i], this.offs[i + 1]));
    this.utf16 = true;
    this.count = 0;
    this.size = 0;
    this.bytes = Buffer.allocUnsafe(Math.max(1024, old.length * 2));
    for (const s of strs) this.add(s);
  }
}

/**
 * Open-addressing table of entries by hash: `slots` holds entry numbers (-1 = empty), twice as
 * many slots as entries, linear probing. Entries are inserted in order, so equal keys are met in
 * ascending entry order on a probe.
 */
export function* buildHashSlots(hashes: Uint32Array, n: number, sl: Slicer): Steps<Int32Array> {
  let cap = 16;
  while (cap < n * 2) cap *= 2;
  const slots = new Int32Array(cap).fill(-1);
  const mask = cap - 1;
  for (let i = 0; i < n; i++) {
    let s = hashes[i] & mask;
    while (slots[s] !== -1) s = (s + 1) & mask;
    slots[s] = i;
    if (sl.due()) {
      yield;
      sl.reset();
    }
  }
  return slots;
}

/** Bits per id of the bloom filter and its number of probes (about 1% false positives). */
export const BLOOM_BITS_PER_KEY = 10;
export const BLOOM_K = 7;

/** Words (32 bits) of a bloom filter for n keys. */
export const bloomWords = (n: number): number => Math.max(2, Math.ceil((n * BLOOM_BITS_PER_KEY) / 32));

export function bloomAdd(words: Uint32Array, s: string): void {
  const m = words.length * 32;
  const h1 = hashString(s, SEED1);
  const h2 = hashString(s, SEED2) | 1;
  for (let i = 0; i < BLOOM_K; i++) {
    const b = ((h1 + Math.imul(i, h2)) >>> 0) % m;
    words[b >>> 5] |= 1 << (b & 31);
  }
}

export function bloomHas(words: Uint32Array, s: string, k: number): boolean {
  const m = words.length * 32;
  const h1 = hashString(s, SEED1);
  const h2 = hashString(s, SEED2) | 1;
  for (let i = 0; i < k; i++) {
    const b = ((h1 + Math.imul(i, h2)) >>> 0) % m;
    if ((words[b >>> 5] & (1 << (b & 31))) === 0) return false;
  }
  return true;
}

/** A string table read from a segment: offsets + bytes views of cached sections. */
export class StringTable {
  private readonly buf: Buffer;
  constructor(readonly offs: Uint32Array, bytes: Uint8Array, readonly utf16: boolean) {
    this.buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get size(): number {
    return this.offs.length - 1;
  }

  get(i: number): string {
    return this.buf.toString(this.utf16 ? 'utf16le' : 'utf8', this.offs[i], this.offs[i + 1]);
  }

  /** Bytes of a key in this table's encoding. */
  encode(s: string): Uint8Array {
    return Buffer.from(s, this.utf16 ? 'utf16le' : 'utf8');
  }

  equals(i: number, key: Uint8Array): boolean {
    const a = this.offs[i];
    const n = this.offs[i + 1] - a;
    if (n !== key.length) return false;
    const b = this.buf;
    for (let j = 0; j < n; j++) if (b[a + j] !== key[j]) return false;
    return true;
  }

  /** Entry i against key: < 0, 0, > 0 (byte order; UTF-8 byte order is code point order). */
  compare(i: number, key: Uint8Array): number {
    const a = this.offs[i];
    const n = this.offs[i + 1] - a;
    const m = Math.min(n, key.length);
    const b = this.buf;
    for (let j = 0; j < m; j++) {
      const d = b[a + j] - key[j];
      if (d !== 0) return d;
    }
    return n - key.length;
  }

  /** Entry i against a string (UTF-16 tables compare code points via the decoded string). */
  compareString(i: number, key: string, bytes: Uint8Array): number {
    if (!this.utf16) return this.compare(i, bytes);
    const s = this.get(i);
    return compareStrings(s, key);
  }

  /** Index of `key` in a sorted table, or -1. */
  indexOf(key: string): number {
    const bytes = this.encode(key);
    let lo = 0, hi = this.size - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = this.compareString(mid, key, bytes);
      if (c === 0) return mid;
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** Entries whose bytes equal key's, found through a hash slot table (ascending). */
  lookup(slots: Int32Array, key: string): number[] {
    const out: number[] = [];
    const bytes = this.encode(key);
    const mask = slots.length - 1;
    for (let s = hashString(key, SEED1) & mask; slots[s] !== -1; s = (s + 1) & mask) {
      const e = slots[s];
      if (this.equals(e, bytes)) out.push(e);
    }
    return out.length > 1 ? out.sort((a, b) => a - b) : out;
  }
}
