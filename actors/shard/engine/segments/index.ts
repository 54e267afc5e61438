/**
 * Immutable segments on disk: the file format (format.ts), the writer (writer.ts), the reader
 * (reader.ts) over a bounded off-heap cache (cache.ts); the merge policy (mergePolicy.ts) and merges
 * in worker threads (mergeScheduler.ts, throttle.ts).
 *
 * Points of the contract worth knowing:
 * - `writeSegmentSteps` yields `undefined` (pause) or a Promise (an fsync on the libuv pool): drive
 *   it with `runSteps` (or call `writeSegmentAsync`); `writeSegment` is the synchronous form.
 * - `SegmentCache.evictSegment(key)` takes `DiskSegment.cacheKey` (path + body CRC), so segments of
 *   different shards sharing one cache never collide.
 * - `SegmentMeta.minSeqNo/maxSeqNo` cover the docs and the tombstones (-1 when there are none);
 *   `fields[path]` also says `terms` and `positions`; the footer's copy of `sizeBytes` is 0, the
 *   writer's return value and `DiskSegment.meta` carry the file size.
 * - `mayContainId` and the id lookups cover tombstone ids too; a write keeps the latest tombstone
 *   per id of those its predicate keeps.
 * - `MergeSpec.tombstones` is `{ minSeqNo, dropIds }` (it crosses threads), not a predicate.
 */
export { SegmentCache, ENTRY_OVERHEAD } from './cache';
export { FORMAT_VERSION, SegmentFormatError } from './format';
export { keepFromBits, bitsFromKeep, planLeaves } from './leaf';
export { DiskSegment, openSegment, verifySegment } from './reader';
export { DiskPostings } from './diskTerms';
export { runSteps, runStepsSync } from './steps';
export { writeSegment, writeSegmentAsync, writeSegmentSteps, segmentFile, tmpFile } from './writer';
export { DEFAULT_MERGE_POLICY, findForcedDeletesMerges, findForcedMerges, findMerges } from './mergePolicy';
export { MergeScheduler } from './mergeScheduler';
export { executeMerge } from './mergeTask';
export { THROTTLE } from './throttle';

export type { CacheEntry, Loaded, SegmentCacheStats } from './cache';
export type { SegmentFieldMeta, SegmentMeta, ColumnKind } from './format';
export type { LeafData, TombstoneRec, WriteInput } from './leaf';
export type { Steps } from './steps';
export type { WriteOptions } from './writer';
export type { MergeCandidate, MergePolicySettings } from './mergePolicy';
export type { MergeResult, MergeSchedulerOptions, MergeStats } from './mergeScheduler';
export type { MergeOutcome, MergeSpec } from './mergeTask';
