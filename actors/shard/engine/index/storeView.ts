/**
 * What the search side (search.ts, query.ts, sort.ts, slice.ts, evaluate.ts, aggregations) reads of
 * one segment of a shard (a "leaf", Lucene's LeafReader): the indexing buffer or an immutable
 * segment on disk. Doc ids are the segment's own; a searcher bounds them with `maxDoc` (the docs it
 * may see) and hides the deletions made up to its `seqNo`. The search modules depend on this view,
 * not on the store classes, so the store can call into them without an import circle.
 */
import type { DocValuesReader, SearcherRef } from '../types';
import type { IndexMapping } from './mapping';
import type { ColumnView } from './columnViews';
import type { SearchCaches } from './caches';

/** Index settings a shard consults at search time (read on every call, so they can change). */
export interface ShardSettings {
  maxResultWindow: number;
  maxSlicesPerScroll: number;
}

export interface StoreView extends DocValuesReader {
  readonly index: string;
  readonly shardId: number;
  readonly mapping: IndexMapping;
  readonly settings: () => ShardSettings;
  /** `_id` of a doc. */
  idOf(doc: number): string;
  /** The doc's id in the shard's doc order (stable across segments, merges and copies), for `_doc` / `_shard_doc`. */
  docId(doc: number): number;
  /** The column of a field path, if any doc of this segment has it. */
  column(path: string): ColumnView | undefined;
  /** Search-time caches (sorted doc orders, slice filters). */
  readonly caches: SearchCaches;
  /** Number of docs (< s.maxDoc) deleted as seen by s. */
  deletedCount(s: SearcherRef): number;
  /** Whether s sees doc (doc < s.maxDoc assumed). */
  visible(s: SearcherRef, doc: number): boolean;
  /** The doc of `id` that s sees, if any. */
  lookup(s: SearcherRef, id: string): number | undefined;
  /** Raw `_source` JSON text of a doc (the `fields` option reads values from it). */
  source(doc: number): string;
}
