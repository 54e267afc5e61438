/**
 * The segment file format: one immutable file per segment, `<name>.seg`.
 *
 * ```
 * header   16 B   "ESSEGMNT" magic, u32 format version, u32 0
 * sections ...    each starts 8-byte aligned (zero padding): typed arrays in little-endian
 *                 (Float64/Int32/Uint32/Uint16/Uint8/BigUint64), byte strings, posting regions
 * footer   JSON   { meta, sections: [[name, offset, length, crc32, dtype?], ...] }
 * trailer  32 B   f64 footer offset, u32 footer length, u32 footer crc32,
 *                 u32 crc32 of every byte before the footer, u32 version, "ESSEGEND"
 * ```
 *
 * Whole sections (per-doc arrays, dictionaries, term directories) are read at once into the cache
 * and checked against their CRC32 on every load. Posting and position regions and `_source` bytes
 * are read piecewise (a term, a run of docs), so they are covered by the file CRC only:
 * {@link verifySegment} (reader.ts) checks every byte, for a copied or restored segment.
 */
import type { FieldType } from '../types';

export const MAGIC = 'ESSEGMNT';
export const TRAILER_MAGIC = 'ESSEGEND';
export const FORMAT_VERSION = 1;
export const HEADER_BYTES = 16;
export const TRAILER_BYTES = 32;
/** Docs per checkpoint of the cumulative field statistics (as index/columns.ts's Cumulative). */
export const CUM_BLOCK = 1024;

/** Element types a section may hold. */
export const DType = { U8: 'u8', U16: 'u16', I32: 'i32', U32: 'u32', F64: 'f64', U64: 'u64', Bytes: 'bytes' } as const;
export type DType = (typeof DType)[keyof typeof DType];

/** One section of the file: bytes [offset, offset + length), their CRC32, the element type. */
export interface SectionEntry {
  offset: number;
  length: number;
  crc: number;
  dtype: DType;
}

/** The column kinds of the format, as columnViews.ts names them. */
export type ColumnKind = 'numeric' | 'keyword' | 'text';

/** What a segment says about one field (JSON; the lead stores it in commit points). */
export interface SegmentFieldMeta {
  type: FieldType;
  kind: ColumnKind;
  /** Docs with a value (text: with at least one token, as FieldStats counts them). */
  docCount: number;
  /** text: sum of field lengths; keyword: sum of distinct values per doc; numeric: number of values. */
  sumTotalTermFreq: number;
  /** Distinct terms (keyword, text). */
  terms?: number;
  /** Positions are stored (text). */
  positions?: boolean;
}

/** A written segment, JSON-serialisable. */
export interface SegmentMeta {
  name: string;
  /** Format version of the file. */
  version: number;
  maxDoc: number;
  /** seqNo of doc 0 and of the last doc (-1 when the segment holds only tombstones). */
  minSeqNo: number;
  maxSeqNo: number;
  /** Bytes of the file. */
  sizeBytes: number;
  /** UTF-8 bytes of every `_source`. */
  sourceBytes: number;
  /** Delete ops recorded (ids with no live doc). */
  tombstones: number;
  fields: Record<string, SegmentFieldMeta>;
}

/** The footer: everything needed to open a segment without reading its sections. */
export interface Footer {
  meta: SegmentMeta;
  /** [name, offset, length, crc32, dtype] */
  sections: Array<[string, number, number, number, DType]>;
  /** Field paths in section-name order: field i's sections are named `f<i>.<part>`. */
  fields: string[];
  /** String tables (by their offsets section) stored as UTF-16LE: they hold text UTF-8 cannot carry (lone surrogates). */
  utf16?: string[];
  /** Hash functions of the bloom filter. */
  bloomK: number;
}

/** Thrown when a file is not a complete, intact segment. */
export class SegmentFormatError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SegmentFormatError';
  }
}

/** Bytes per element of a dtype. */
export function dtypeSize(t: DType): number {
  switch (t) {
    case 'u8': case 'bytes': return 1;
    case 'u16': return 2;
    case 'i32': case 'u32': return 4;
    default: return 8;
  }
}

/** A typed array of `dtype` over `buf` (the whole buffer, aligned at 0). */
export function viewOf(dtype: DType, buf: ArrayBuffer, byteOffset = 0, byteLength = buf.byteLength - byteOffset): ArrayBufferView {
  const n = byteLength / dtypeSize(dtype);
  switch (dtype) {
    case 'u8': case 'bytes': return new Uint8Array(buf, byteOffset, byteLength);
    case 'u16': return new Uint16Array(buf, byteOffset, n);
    case 'i32': return new Int32Array(buf, byteOffset, n);
    case 'u32': return new Uint32Array(buf, byteOffset, n);
    case 'f64': return new Float64Array(buf, byteOffset, n);
    case 'u64': return new BigUint64Array(buf, byteOffset, n);
  }
}

/** `n` rounded up to a multiple of 8. */
export const align8 = (n: number): number => (n + 7) & ~7;

/** Section names (field i's sections are `f<i>.<part>`). */
export const Sec = {
  seqNos: 'seqNos',
  versions: 'versions',
  idOffs: 'ids.offs',
  idBytes: 'ids.bytes',
  idHash: 'ids.hash',
  bloom: 'bloom',
  srcOffs: 'src.offs',
  src: 'src',
  routingDocs: 'routing.docs',
  routingOffs: 'routing.offs',
  routingBytes: 'routing.bytes',
  tombOffs: 'tomb.offs',
  tombBytes: 'tomb.bytes',
  tombHash: 'tomb.hash',
  tombSeqNos: 'tomb.seqNos',
  tombVersions: 'tomb.versions',
  field: (i: number, part: string) => `f${i}.${part}`,
} as const;
