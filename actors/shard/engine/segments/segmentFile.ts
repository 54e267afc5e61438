/**
 * An open segment file: the footer's section table and positional reads (`fs.readSync` through
 * the page cache) into fresh off-heap ArrayBuffers, whole sections going through the
 * SegmentCache with their CRC32 checked on every load.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import type { CacheEntry, Loaded, SegmentCache } from './cache';
import {
  FORMAT_VERSION, HEADER_BYTES, MAGIC, SegmentFormatError, TRAILER_BYTES, TRAILER_MAGIC, viewOf, type Footer, type SectionEntry,
} from './format';

export class SegmentFile {
  private fd: number;
  readonly footer: Footer;
  readonly size: number;
  /** The cache's name for this file: path and body CRC (a rewritten file never hits old entries). */
  readonly cacheKey: string;
  private readonly sections = new Map<string, SectionEntry>();
  /** Called with a section's name when the cache lets it go (or could not retain it). */
  onEvict: (name: string) => void = () => undefined;

  constructor(readonly path: string, readonly cache: SegmentCache) {
    this.fd = openSync(path, 'r');
    try {
      this.size = fstatSync(this.fd).size;
      const { footer, bodyCrc } = this.readFooter();
      this.footer = footer;
      this.cacheKey = `${path}#${bodyCrc.toString(16)}`;
      for (const [name, offset, length, crc, dtype] of footer.sections) this.sections.set(name, { offset, length, crc, dtype });
    } catch (e) {
      closeSync(this.fd);
      throw e;
    }
  }

  private readFooter(): { footer: Footer; bodyCrc: number } {
    if (this.size < HEADER_BYTES + TRAILER_BYTES) throw new SegmentFormatError(`${this.path}: ${this.size} bytes is too short for a segment`);
    const head = Buffer.from(this.read(0, HEADER_BYTES));
    if (head.toString('latin1', 0, 8) !== MAGIC) throw new SegmentFormatError(`${this.path}: not a segment file`);
    const t = Buffer.from(this.read(this.size - TRAILER_BYTES, TRAILER_BYTES));
    if (t.toString('latin1', 24, 32) !== TRAILER_MAGIC) throw new SegmentFormatError(`${this.path}: no trailer (incomplete file)`);
    const version = t.readUInt32LE(20);
    if (version !== FORMAT_VERSION || head.readUInt32LE(8) !== version) throw new SegmentFormatError(`${this.path}: format version ${version}, expected ${FORMAT_VERSION}`);
    const at = t.readDoubleLE(0), len = t.readUInt32LE(8);
    if (!(at >= HEADER_BYTES && at + len + TRAILER_BYTES === this.size)) throw new SegmentFormatError(`${this.path}: footer out of place`);
    const json = Buffer.from(this.read(at, len));
    if (crc32(json) !== t.readUInt32LE(12)) throw new SegmentFormatError(`${this.path}: footer checksum mismatch`);
    try {
      return { footer: JSON.parse(json.toString('utf8')) as Footer, bodyCrc: t.readUInt32LE(16) };
    } catch (e) {
      throw new SegmentFormatError(`${this.path}: bad footer`, { cause: e });
    }
  }

  has(name: string): boolean {
    return this.sections.has(name);
  }

  entry(name: string): SectionEntry | undefined {
    return this.sections.get(name);
  }

  /** A whole section as a typed array, through the cache. */
  section<T extends ArrayBufferView>(name: string): CacheEntry<T> & { value: T } {
    const s = this.sections.get(name);
    if (!s) throw new SegmentFormatError(`${this.path}: no section ${name}`);
    const e = this.cache.get<T>(this.cacheKey, name, () => {
      const buf = this.read(s.offset, s.length);
      if (crc32(new Uint8Array(buf)) !== s.crc) throw new SegmentFormatError(`${this.path}: section ${name} checksum mismatch`);
      return { value: viewOf(s.dtype, buf) as T, bytes: s.length };
    });
    if (!e.live) this.onEvict(name);
    else if (!e.onEvict) e.onEvict = () => this.onEvict(name);
    return e;
  }

  /** A value read by key (a term's postings), through the cache. */
  cached<T>(key: string, load: () => Loaded<T>): T {
    return this.cache.get<T>(this.cacheKey, key, load).value;
  }

  /** Bytes [offset, offset + length) into a new ArrayBuffer (8-byte aligned, off the V8 heap). */
  read(offset: number, length: number): ArrayBuffer {
    const buf = new ArrayBuffer(length);
    this.readInto(new Uint8Array(buf), offset);
    return buf;
  }

  /** Fills `into` from the file at `offset`. */
  readInto(into: Uint8Array, offset: number): void {
    if (this.fd < 0) throw new SegmentFormatError(`${this.path}: segment is closed`);
    if (offset + into.length > this.size) throw new SegmentFormatError(`${this.path}: read past the end`);
    for (let done = 0; done < into.length; ) {
      const n = readSync(this.fd, into, done, into.length - done, offset + done);
      if (n === 0) throw new SegmentFormatError(`${this.path}: unexpected end of file`);
      done += n;
    }
  }

  close(): void {
    if (this.fd < 0) return;
    closeSync(this.fd);
    this.fd = -1;
  }
}
