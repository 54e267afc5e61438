/**
 * What a segment is written from (the in-memory buffer at flush, or disk segments being merged),
 * and the doc-id maps of a write: the kept docs of every source leaf, in leaf order then doc
 * order, numbered from 0.
 */
import type { ColumnView } from '../index/columnViews';

/** A delete op recorded in a leaf: an id with no live doc there. */
export interface TombstoneRec {
  id: string;
  seqNo: number;
  version: number;
}

/** What a segment is written from: the in-memory buffer at flush, or disk segments being merged. */
export interface LeafData {
  /** Docs [0, maxDoc). */
  readonly maxDoc: number;
  /** `_id`. */
  idOf(doc: number): string;
  /** The op's sequence number; ascending in doc order within a leaf. */
  seqNoOf(doc: number): number;
  versionOf(doc: number): number;
  routingOf(doc: number): string | undefined;
  /** Raw `_source` JSON (string in the buffer, UTF-8 bytes on disk). */
  sourceOf(doc: number): string | Uint8Array;
  /** Fields that have a column in this leaf. */
  fieldPaths(): string[];
  column(path: string): ColumnView | undefined;
  /** Delete ops recorded in this leaf (ids with no live doc). */
  tombstones(): Iterable<TombstoneRec>;
}

/** The leaves to write, each with the docs to keep (all when `keep` is absent), and the tombstones to keep. */
export interface WriteInput {
  leaves: Array<{ leaf: LeafData; keep?: (doc: number) => boolean }>;
  tombstones?: (t: TombstoneRec) => boolean;
}

/** One source leaf of a write: old doc -> new doc (-1 = dropped). */
export interface LeafPlan {
  leaf: LeafData;
  map: Int32Array;
  /** New doc of the leaf's first kept doc. */
  base: number;
  kept: number;
}

/** A LeafData that can hand out the bytes of several sources with one read (a disk segment). */
export interface BulkSources {
  sourcesOf(docs: ArrayLike<number>): Uint8Array[];
}

export const hasBulkSources = (l: LeafData): l is LeafData & BulkSources =>
  typeof (l as Partial<BulkSources>).sourcesOf === 'function';

/** Kept docs of every leaf, numbered in leaf order then doc order. */
export function planLeaves(input: WriteInput): { plans: LeafPlan[]; maxDoc: number } {
  let next = 0;
  const plans = input.leaves.map(({ leaf, keep }) => {
    const map = new Int32Array(leaf.maxDoc);
    const base = next;
    for (let d = 0; d < leaf.maxDoc; d++) map[d] = !keep || keep(d) ? next++ : -1;
    return { leaf, map, base, kept: next - base };
  });
  return { plans, maxDoc: next };
}

/**
 * A keep predicate from a bitset (bit d of the little-endian bit string set = keep doc d): the
 * form merges take across threads. A Uint32Array/Int32Array of words (base/bits.ts's Bitset) and
 * a Uint8Array of bytes are the same bit string on little-endian machines.
 */
export function keepFromBits(bits: Uint8Array | Uint32Array | Int32Array): (doc: number) => boolean {
  const b = new Uint8Array(bits.buffer, bits.byteOffset, bits.byteLength);
  return (d) => (d >>> 3) < b.length && (b[d >>> 3] & (1 << (d & 7))) !== 0;
}

/** The bitset of a keep predicate over [0, maxDoc). */
export function bitsFromKeep(maxDoc: number, keep: (doc: number) => boolean): Uint8Array {
  const b = new Uint8Array((maxDoc + 7) >>> 3);
  for (let d = 0; d < maxDoc; d++) if (keep(d)) b[d >>> 3] |= 1 << (d & 7);
  return b;
}

/** Calls fn(oldDoc, newDoc) for the kept docs of a plan, ascending. */
export function forEachKept(p: LeafPlan, fn: (doc: number, nd: number) => void): void {
  const m = p.map;
  for (let d = 0; d < m.length; d++) {
    const nd = m[d];
    if (nd >= 0) fn(d, nd);
  }
}
