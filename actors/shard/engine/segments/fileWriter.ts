/**
 * Sequential writer of one segment file: a 1 MB buffer in front of `fs.writeSync`, sections that
 * start 8-byte aligned, a CRC32 per section and one over the whole body, and the crash-safe
 * finish (write `<name>.seg.tmp`, fsync, rename to `<name>.seg`, fsync the directory).
 */
import { closeSync, fsync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { crc32 } from 'node:zlib';
import { FORMAT_VERSION, HEADER_BYTES, MAGIC, TRAILER_BYTES, TRAILER_MAGIC, type DType, type Footer } from './format';

const BUF = 1 << 20;
/** Payloads at least this big skip the buffer (written from their own memory). */
const DIRECT = 1 << 16;

export class SegmentFileWriter {
  private readonly fd: number;
  private buf = Buffer.allocUnsafe(BUF);
  private pos = 0;
  /** File offset of buf[0]. */
  private base = 0;
  private crcFrom = 0;
  private bodyCrc = 0;
  private cur: { name: string; start: number; crc: number; dtype: DType } | undefined;
  readonly sections: Footer['sections'] = [];
  private closed = false;

  /**
   * @param tmpPath the file to create (truncated if present)
   * @param onWrite called after every write with its byte count (merge IO throttling)
   */
  constructor(readonly tmpPath: string, private readonly onWrite?: (bytes: number) => void) {
    this.fd = openSync(tmpPath, 'w');
    this.raw(Buffer.from(MAGIC, 'latin1'));
    this.u32(FORMAT_VERSION);
    this.u32(0);
    if (this.offset !== HEADER_BYTES) throw new Error('bad header size');
  }

  /** File offset of the next byte. */
  get offset(): number {
    return this.base + this.pos;
  }

  /** Starts a section at the next 8-byte boundary. */
  begin(name: string, dtype: DType): void {
    if (this.cur) throw new Error(`section ${this.cur.name} is still open`);
    this.pad8();
    this.crcFrom = this.pos;
    this.cur = { name, start: this.offset, crc: 0, dtype };
  }

  /** Ends the open section; returns its [offset, length]. */
  end(): [number, number] {
    const c = this.cur;
    if (!c) throw new Error('no open section');
    c.crc = crc32(this.buf.subarray(this.crcFrom, this.pos), c.crc);
    this.crcFrom = this.pos;
    this.cur = undefined;
    const len = this.offset - c.start;
    this.sections.push([c.name, c.start, len, c.crc, c.dtype]);
    return [c.start, len];
  }

  /** A whole section holding the first `n` elements of `a`. */
  section(name: string, dtype: DType, a: ArrayBufferView & { length: number; BYTES_PER_ELEMENT: number }, n = a.length): void {
    this.begin(name, dtype);
    this.typed(a, n);
    this.end();
  }

  /** The first `n` elements of a typed array. */
  typed(a: ArrayBufferView & { length: number; BYTES_PER_ELEMENT: number }, n = a.length): void {
    if (n > a.length) throw new RangeError(`typed array of ${a.length} has no ${n} elements`);
    this.bytes(new Uint8Array(a.buffer, a.byteOffset, n * a.BYTES_PER_ELEMENT));
  }

  bytes(b: Uint8Array): void {
    if (b.length >= DIRECT) {
      this.flush();
      this.track(b);
      this.writeAll(b);
      this.base += b.length;
      return;
    }
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  u32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32LE(v, this.pos);
    this.pos += 4;
  }

  /** A string as UTF-8; returns its byte length. */
  utf8(s: string): number {
    if (s.length * 3 > BUF) {
      const b = Buffer.from(s, 'utf8');
      this.bytes(b);
      return b.length;
    }
    this.ensure(s.length * 3);
    const n = this.buf.write(s, this.pos, 'utf8');
    this.pos += n;
    return n;
  }

  /** Zero bytes up to the next multiple of 8. */
  pad8(): void {
    const n = (8 - (this.offset & 7)) & 7;
    if (n === 0) return;
    this.ensure(n);
    this.buf.fill(0, this.pos, this.pos + n);
    this.pos += n;
  }

  /** Writes footer and trailer, fsyncs and closes the file (it is still the .tmp). */
  finishSync(footer: Footer): number {
    const size = this.writeFooter(footer);
    fsyncSync(this.fd);
    this.close();
    return size;
  }

  /** finishSync with the fsync on the libuv pool (the main thread keeps running). */
  async finishAsync(footer: Footer): Promise<number> {
    const size = this.writeFooter(footer);
    await new Promise<void>((res, rej) => fsync(this.fd, (e) => (e ? rej(e) : res())));
    this.close();
    return size;
  }

  /** Closes and deletes the .tmp (a failed or abandoned write). */
  abort(): void {
    this.close();
    try {
      unlinkSync(this.tmpPath);
    } catch {
      // already gone
    }
  }

  private writeFooter(footer: Footer): number {
    if (this.cur) throw new Error(`section ${this.cur.name} is still open`);
    this.pad8();
    this.flush();
    const bodyCrc = this.bodyCrc;
    const at = this.offset;
    const json = Buffer.from(JSON.stringify(footer), 'utf8');
    this.raw(json);
    const t = Buffer.alloc(TRAILER_BYTES);
    t.writeDoubleLE(at, 0);
    t.writeUInt32LE(json.length, 8);
    t.writeUInt32LE(crc32(json), 12);
    t.writeUInt32LE(bodyCrc, 16);
    t.writeUInt32LE(FORMAT_VERSION, 20);
    t.write(TRAILER_MAGIC, 24, 'latin1');
    this.ensure(TRAILER_BYTES);
    this.buf.set(t, this.pos);
    this.pos += TRAILER_BYTES;
    // footer and trailer are not part of the body CRC
    this.writeAll(this.buf.subarray(0, this.pos));
    this.base += this.pos;
    this.pos = 0;
    this.crcFrom = 0;
    return this.base;
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }

  private raw(b: Buffer): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    this.flush();
    if (n > this.buf.length) this.buf = Buffer.allocUnsafe(n);
  }

  /** Writes the buffer out, keeping the CRCs up to date. */
  private flush(): void {
    if (this.pos === 0) return;
    const b = this.buf.subarray(0, this.pos);
    this.bodyCrc = crc32(b, this.bodyCrc);
    if (this.cur) this.cur.crc = crc32(b.subarray(this.crcFrom), this.cur.crc);
    this.writeAll(b);
    this.base += this.pos;
    this.pos = 0;
    this.crcFrom = 0;
  }

  /** CRCs of a payload written around the buffer (the buffer is empty). */
  private track(b: Uint8Array): void {
    this.bodyCrc = crc32(b, this.bodyCrc);
    if (this.cur) this.cur.crc = crc32(b, this.cur.crc);
  }

  private writeAll(b: Uint8Array): void {
    for (let done = 0; done < b.length; ) {
      const n = writeSync(this.fd, b, done, b.length - done, this.base + done);
      done += n;
      this.onWrite?.(n);
    }
  }
}

/** Renames `<name>.seg.tmp` to `<name>.seg` and fsyncs the directory, so the rename is durable. */
export function publishSync(tmpPath: string, finalPath: string): void {
  renameSync(tmpPath, finalPath);
  syncDirSync(dirname(finalPath));
}

export function syncDirSync(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** publishSync with the directory fsync on the libuv pool. */
export async function publishAsync(tmpPath: string, finalPath: string): Promise<void> {
  renameSync(tmpPath, finalPath);
  const fd = openSync(dirname(finalPath), 'r');
  try {
    await new Promise<void>((res, rej) => fsync(fd, (e) => (e ? rej(e) : res())));
  } finally {
    closeSync(fd);
  }
}
