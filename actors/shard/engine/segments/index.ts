/**
 * Immutable segments on disk: the file format (format.ts), the writer (writer.ts), the reader
 * (reader.ts) over a bounded off-heap cache (cache.ts); merge policy and scheduler.
 */
export { SegmentCache, ENTRY_OVERHEAD } from './cache';
export { FORMAT_VERSION, SegmentFormatError } from './format';
export { keepFromBits, bitsFromKeep, planLeaves } from './leaf';
export { DiskSegment, openSegment, verifySegment } from './reader';
export { DiskPostings } from './diskTerms';
export { runSteps, runStepsSync } from './steps';
export { writeSegment, writeSegmentAsync, writeSegmentSteps, segmentFile, tmpFile } from './writer';

export type { CacheEntry, Loaded, SegmentCacheStats } from './cache';
export type { SegmentFieldMeta, SegmentMeta, ColumnKind } from './format';
export type { LeafData, TombstoneRec, WriteInput } from './leaf';
export type { Steps } from './steps';
export type { WriteOptions } from './writer';
