/**
 * A segment of a shard as the shard store holds it: the active buffer, a frozen buffer being
 * written, or an immutable segment on disk with its deletions. Every kind orders its docs by the
 * seqNo that created them, and the segments of a shard hold adjacent seqNo ranges, so a doc's
 * seqNo is its id in the shard's doc order (`_doc`, `_shard_doc`) on every copy, before and after
 * merges.
 */
import type { IdEntry } from '../index/indexBuffer';
import type { StoreView } from '../index/storeView';

export interface Leaf extends StoreView {
  /** Segment name (`_0`, `_1`, …). */
  readonly name: string;
  /** Docs held, deleted ones included. */
  readonly maxDoc: number;
  /** seqNo of the first and last doc (NaN when empty). */
  readonly minSeqNo: number;
  readonly maxSeqNo: number;
  seqNoOf(doc: number): number;
  versionOf(doc: number): number;
  routingOf(doc: number): string | undefined;
  hasRouting(): boolean;
  /** Raw `_source` text. */
  source(doc: number): string;
  /** Docs with seqNo <= `seqNo` (a prefix). */
  maxDocAt(seqNo: number): number;
  /** The doc whose seqNo is `docId`, or -1. */
  localDoc(docId: number): number;
  /** What this segment knows of an `_id`. */
  entry(id: string): IdEntry | undefined;
  /** Marks a doc deleted by op `seqNo` (no-op when it already is). */
  markDeleted(doc: number, seqNo: number): void;
  /** Deletions with seqNo <= `seqNo`, in seqNo order. */
  deletionsUpTo(seqNo: number): { docs: Int32Array; seqNos: Float64Array };
  /** UTF-8 bytes of the sources held. */
  sourceBytes(): number;
}

/** First doc of `leaf` whose seqNo is >= `docId` (binary search). */
export function firstDocAtOrAfter(leaf: Leaf, docId: number): number {
  let lo = 0, hi = leaf.maxDoc;
  while (lo < hi) {
    const m = (lo + hi) >>> 1;
    if (leaf.seqNoOf(m) < docId) lo = m + 1;
    else hi = m;
  }
  return lo;
}
