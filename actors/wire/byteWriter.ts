/**
 * A growable byte buffer for hand-assembled binary frames and JSON bodies (shard page replies,
 * search responses): strings are written straight into it, never concatenated first.
 *
 * @example
 * const w = new ByteWriter(1024);
 * w.ascii('{"took":'); w.ascii(String(3)); w.utf8(source); w.ascii('}');
 * res.end(w.take());
 */
const encoder = new TextEncoder();

export class ByteWriter {
  buf: Buffer;
  pos = 0;

  constructor(size = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(Math.max(64, size));
  }

  /** Room for `n` more bytes. */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  u8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }

  u32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32LE(v, this.pos);
    this.pos += 4;
  }

  i32(v: number): void {
    this.ensure(4);
    this.buf.writeInt32LE(v, this.pos);
    this.pos += 4;
  }

  f64(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }

  i64(v: bigint): void {
    this.ensure(8);
    this.buf.writeBigInt64LE(v, this.pos);
    this.pos += 8;
  }

  /** Reserves a u32 to fill in later with {@link setU32}; returns its position. */
  reserveU32(): number {
    this.ensure(4);
    const at = this.pos;
    this.pos += 4;
    return at;
  }

  setU32(at: number, v: number): void {
    this.buf.writeUInt32LE(v, at);
  }

  /** A string known to hold only code units < 0x80 (JSON punctuation, numbers, escaped text). */
  ascii(s: string): void {
    const n = s.length;
    this.ensure(n);
    if (n < 24) {
      // Short strings: a JS loop beats the native call's fixed cost.
      const b = this.buf;
      let p = this.pos;
      for (let i = 0; i < n; i++) b[p++] = s.charCodeAt(i);
      this.pos = p;
    } else this.pos += this.buf.write(s, this.pos, n, 'latin1');
  }

  /** Any string, UTF-8 encoded; returns the number of bytes written. */
  utf8(s: string): number {
    const n = s.length;
    if (this.buf.length - this.pos >= n * 3) {
      const w = this.buf.write(s, this.pos, 'utf8');
      this.pos += w;
      return w;
    }
    // Short of the worst case (3 bytes per unit): encode what fits, grow only if it did not all fit.
    const start = this.pos;
    this.ensure(n);
    for (let done = 0; ; ) {
      const r = encoder.encodeInto(done ? s.slice(done) : s, this.buf.subarray(this.pos));
      done += r.read;
      this.pos += r.written;
      if (done >= n) return this.pos - start;
      this.ensure(Math.max(3 * (n - done), 16));
    }
  }

  /** A safe integer's decimal digits (no string made). */
  int(v: number): void {
    if (v < 0) {
      this.u8(0x2d);
      v = -v;
    }
    if (v < 10) return this.u8(48 + v);
    if (v <= 0x3fffffff) return this.small(v);
    // Past a small integer: the high part, then the low 8 digits zero-padded, both in small-integer math.
    const hi = Math.floor(v / 1e8);
    const lo = v - hi * 1e8;
    if (hi <= 0x3fffffff) this.small(hi);
    else this.ascii(String(hi));
    this.ensure(8);
    const b = this.buf;
    let x = lo | 0;
    for (let p = this.pos + 7; p >= this.pos; p--) {
      const q = (x / 10) | 0;
      b[p] = 48 + x - q * 10;
      x = q;
    }
    this.pos += 8;
  }

  /** Decimal digits of 0 < v < 2^30 (small-integer arithmetic). */
  private small(v: number): void {
    let digits = 1;
    for (let x = v; x >= 10; x = (x / 10) | 0) digits++;
    this.ensure(digits);
    const b = this.buf;
    let p = this.pos + digits;
    this.pos = p;
    for (let x = v | 0; x > 0; ) {
      const q = (x / 10) | 0;
      b[--p] = 48 + x - q * 10;
      x = q;
    }
  }

  /** Copies `src[start, end)`. */
  bytes(src: Buffer, start = 0, end = src.length): void {
    const n = end - start;
    this.ensure(n);
    if (n < 16) {
      const b = this.buf;
      let p = this.pos;
      for (let i = start; i < end; i++) b[p++] = src[i];
      this.pos = p;
    } else this.pos += src.copy(this.buf, this.pos, start, end);
  }

  /** The bytes written so far, in a buffer of their own (the writer can be reused). */
  copy(): Buffer {
    const out = Buffer.allocUnsafe(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    return out;
  }

  /** The bytes written so far as a view of the writer's buffer (the writer must not be reused). */
  take(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  reset(): void {
    this.pos = 0;
  }
}
