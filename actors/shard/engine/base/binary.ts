/**
 * Little-endian binary writer/reader for shard snapshots: scalars, typed arrays copied as raw bytes
 * (memcpy both ways) and arrays of strings packed in chunks, so loading a million `_source` texts
 * costs a few large decodes instead of a million small ones.
 */
import { parseJson, stringify } from '../../../wire/json';
import { ByteWriter } from '../../../wire/byteWriter';

type Typed = Float64Array<ArrayBuffer> | Int32Array<ArrayBuffer> | Uint32Array<ArrayBuffer> | Uint16Array<ArrayBuffer> | Uint8Array<ArrayBuffer>;
type AnyTyped = Float64Array | Int32Array | Uint32Array | Uint16Array | Uint8Array;
type TypedCtor<T extends Typed> = { new (n: number): T; readonly BYTES_PER_ELEMENT: number };

/** Chars per string chunk: big enough to amortize a decode, small enough to bound two-byte waste. */
const CHUNK_CHARS = 1 << 20;

/** How a chunk of strings is stored. */
const Chunk = {
  /** Pure ASCII: one latin1 decode, then slices by length. */
  Ascii: 0,
  /** UTF-8 with per-string byte lengths: one decode per string (non-ASCII text). */
  Utf8: 1,
  /** UTF-16LE code units: lone surrogates survive (they would not survive UTF-8). */
  Utf16: 2,
} as const;

// String.prototype.isWellFormed is in Node 20; the project's TS lib predates it.
const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * The byte writer (actors/wire/byteWriter.ts) for snapshots: instead of growing one buffer it
 * appends full 64 KB chunks to a list, and `parts()` hands them to a file writer without joining.
 */
export class ChunkWriter extends ByteWriter {
  private readonly out: Buffer[] = [];
  private flushed = 0;

  constructor() {
    super(1 << 16);
  }

  /** Bytes written so far. */
  get length(): number {
    return this.flushed + this.pos;
  }

  /** Room for `n` more bytes: the full chunk goes to the list rather than being copied into a larger one. */
  override ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    this.flush();
    if (n > this.buf.length) this.buf = Buffer.allocUnsafe(n);
  }

  private flush(): void {
    if (this.pos === 0) return;
    this.out.push(this.buf.subarray(0, this.pos));
    this.flushed += this.pos;
    this.buf = Buffer.allocUnsafe(Math.max(1 << 16, this.buf.length));
    this.pos = 0;
  }

  /** Large payloads go to the list as they are (no copy into the scratch buffer). */
  private raw(b: Buffer): void {
    this.flush();
    this.out.push(b);
    this.flushed += b.length;
  }

  /** A short string (names, paths): byte length + UTF-16LE (exact for any JS string). */
  str(s: string): void {
    const n = s.length * 2;
    this.u32(n);
    this.ensure(n);
    this.pos += this.buf.write(s, this.pos, 'utf16le');
  }
  json(v: unknown): void {
    this.str(stringify(v)); // 64-bit integers (mapping `_meta`, parameters) as digits
  }

  /** The first `n` elements of a typed array. */
  typed(a: AnyTyped, n: number): void {
    if (n > a.length) throw new RangeError(`typed array of ${a.length} has no ${n} elements`);
    this.u32(n);
    const bytes = Buffer.from(a.buffer, a.byteOffset, n * a.BYTES_PER_ELEMENT);
    if (bytes.length >= 1 << 14) this.raw(Buffer.from(bytes)); // a copy: the store keeps mutating its arrays
    else {
      this.ensure(bytes.length);
      this.pos += bytes.copy(this.buf, this.pos);
    }
  }

  /** `strs[from, to)`, in chunks (see Chunk). */
  strings(strs: readonly string[], from = 0, to = strs.length): void {
    for (const _ of this.stringSteps(strs, from, to));
  }

  /** `strings`, pausing after each chunk (callers yield to the event loop there). */
  *stringSteps(strs: readonly string[], from = 0, to = strs.length): Generator<void> {
    this.u32(to - from);
    let i = from;
    while (i < to) {
      let j = i;
      let chars = 0;
      while (j < to && (j === i || chars + strs[j].length <= CHUNK_CHARS)) chars += strs[j++].length;
      this.chunk(strs, i, j, chars);
      i = j;
      yield;
    }
  }

  private chunk(strs: readonly string[], from: number, to: number, chars: number): void {
    const lens = new Uint32Array(to - from);
    for (let k = from; k < to; k++) lens[k - from] = strs[k].length;
    const joined = strs.slice(from, to).join('');
    const utf8 = Buffer.from(joined, 'utf8');
    if (utf8.length === chars) {
      this.u8(Chunk.Ascii);
      this.typed(lens, lens.length);
      this.u32(utf8.length);
      this.raw(utf8);
      return;
    }
    if (!isWellFormed(joined)) {
      this.utf16Chunk(lens, joined);
      return;
    }
    // Per-string byte lengths: one string may end in a high surrogate and the next start with the
    // low one, so byte lengths are taken string by string, never from the joined text.
    const bytes = new Uint32Array(to - from);
    let total = 0;
    for (let k = from; k < to; k++) total += bytes[k - from] = Buffer.byteLength(strs[k], 'utf8');
    if (total !== utf8.length) {
      // only possible with surrogate halves split across strings: keep code units exactly
      this.utf16Chunk(lens, joined);
      return;
    }
    this.u8(Chunk.Utf8);
    this.typed(bytes, bytes.length);
    this.u32(utf8.length);
    this.raw(utf8);
  }

  /** A chunk kept as UTF-16 code units (text that UTF-8 cannot carry exactly, e.g. lone surrogates). */
  private utf16Chunk(lens: Uint32Array, joined: string): void {
    this.u8(Chunk.Utf16);
    this.typed(lens, lens.length);
    const b = Buffer.from(joined, 'utf16le');
    this.u32(b.length);
    this.raw(b);
  }

  /** Everything written, as a list of buffers (valid until the next write). */
  parts(): Buffer[] {
    this.flush();
    return this.out;
  }

  /** Everything written, joined. */
  override take(): Buffer {
    return Buffer.concat(this.parts());
  }

  override copy(): Buffer {
    return this.take();
  }

  override reset(): void {
    this.out.length = 0;
    this.flushed = 0;
    this.pos = 0;
  }
}

/** Thrown on any structural problem while reading (truncation, bad counts, bad tags). */
export class SnapshotFormatError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SnapshotFormatError';
  }
}

/** Reads what ChunkWriter wrote; every read is bounds-checked. */
export class ByteReader {
  pos = 0;
  constructor(private readonly buf: Buffer) {}

  private need(n: number): void {
    if (n < 0 || this.pos + n > this.buf.length) throw new SnapshotFormatError(`truncated data: need ${n} bytes at ${this.pos} of ${this.buf.length}`);
  }
  get done(): boolean {
    return this.pos === this.buf.length;
  }
  u8(): number {
    this.need(1);
    return this.buf[this.pos++];
  }
  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }
  f64(): number {
    this.need(8);
    const v = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }
  str(): string {
    const n = this.u32();
    this.need(n);
    const s = this.buf.toString('utf16le', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
  json<T>(): T {
    try {
      return parseJson<T>(this.str());
    } catch (e) {
      if (e instanceof SnapshotFormatError) throw e;
      throw new SnapshotFormatError('bad JSON in snapshot', { cause: e });
    }
  }

  /** A typed array of exactly the written length (a copy: the store grows and mutates it). */
  typed<T extends Typed>(ctor: TypedCtor<T>): T {
    const n = this.u32();
    const bytes = n * ctor.BYTES_PER_ELEMENT;
    this.need(bytes);
    const a = new ctor(n);
    new Uint8Array(a.buffer, 0, bytes).set(this.buf.subarray(this.pos, this.pos + bytes));
    this.pos += bytes;
    return a;
  }

  strings(): string[] {
    const count = this.u32();
    const out = new Array<string>(count);
    let k = 0;
    while (k < count) {
      const kind = this.u8();
      const lens = this.typed(Uint32Array);
      const size = this.u32();
      this.need(size);
      const start = this.pos;
      if (k + lens.length > count) throw new SnapshotFormatError('string chunk overruns its array');
      if (kind === Chunk.Utf8) {
        let p = start;
        for (let i = 0; i < lens.length; i++) {
          if (p + lens[i] > start + size) throw new SnapshotFormatError('string chunk overruns its bytes');
          out[k++] = this.buf.toString('utf8', p, (p += lens[i]));
        }
      } else if (kind === Chunk.Ascii || kind === Chunk.Utf16) {
        const text = this.buf.toString(kind === Chunk.Ascii ? 'latin1' : 'utf16le', start, start + size);
        let p = 0;
        for (let i = 0; i < lens.length; i++) {
          if (p + lens[i] > text.length) throw new SnapshotFormatError('string chunk overruns its text');
          out[k++] = text.slice(p, (p += lens[i]));
        }
      } else throw new SnapshotFormatError(`unknown string chunk kind ${kind}`);
      this.pos = start + size;
    }
    return out;
  }
}
