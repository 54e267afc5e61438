/**
 * One merge as a worker runs it: open the input segments, write the output from their kept docs
 * (keep sets as bitsets: they cross threads), close the inputs. Plain data in, plain data out.
 */
import { SegmentCache } from './cache';
import type { SegmentMeta } from './format';
import { keepFromBits, type TombstoneRec } from './leaf';
import { openSegment, type DiskSegment } from './reader';
import { writeSegment } from './writer';

/** A merge to run: inputs in seqNo order (adjacent segments), the output's directory and name. */
export interface MergeSpec {
  dir: string;
  name: string;
  /** Input segment files, each with the docs to keep (bit d set = keep doc d; absent = all). */
  inputs: Array<{ path: string; keep?: Uint8Array | Uint32Array | Int32Array }>;
  /** Tombstones to keep: those with seqNo >= minSeqNo and an id not in dropIds (default: all). */
  tombstones?: { minSeqNo?: number; dropIds?: string[] };
  /** A `_forcemerge` merge: not IO-throttled (as ES/Lucene). */
  forced?: boolean;
}

export interface MergeOutcome {
  meta: SegmentMeta;
  /** Docs of the inputs (deleted ones included) and their bytes, as ES counts merges. */
  inputDocs: number;
  inputBytes: number;
}

/** The keep predicate of a spec's tombstone rule (undefined: keep all). */
export function tombstoneFilter(t: MergeSpec['tombstones']): ((t: TombstoneRec) => boolean) | undefined {
  if (!t) return undefined;
  const drop = new Set(t.dropIds ?? []);
  const min = t.minSeqNo ?? -Infinity;
  return (x) => x.seqNo >= min && !drop.has(x.id);
}

/** Runs a merge in this thread. */
export function executeMerge(spec: MergeSpec, cache: SegmentCache, onWrite?: (bytes: number) => void): MergeOutcome {
  const open: DiskSegment[] = [];
  try {
    for (const i of spec.inputs) open.push(openSegment(i.path, cache));
    const leaves = open.map((leaf, k) => {
      const bits = spec.inputs[k].keep;
      return { leaf, ...(bits ? { keep: keepFromBits(bits) } : {}) };
    });
    const tombstones = tombstoneFilter(spec.tombstones);
    const meta = writeSegment(spec.dir, spec.name, { leaves, ...(tombstones ? { tombstones } : {}) }, { onWrite });
    return { meta, inputDocs: open.reduce((s, x) => s + x.maxDoc, 0), inputBytes: open.reduce((s, x) => s + x.meta.sizeBytes, 0) };
  } finally {
    for (const s of open) {
      cache.evictSegment(s.cacheKey);
      s.close();
    }
  }
}
