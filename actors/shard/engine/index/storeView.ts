/**
 * What the search side (search.ts, query.ts, sort.ts, slice.ts, evaluate.ts) reads of a shard's
 * store. ShardStore implements it; the search modules depend on this view, not on the store class,
 * so the store can call into them without an import circle.
 */
import type { DocValuesReader, SearcherRef } from '../types';
import type { IndexMapping } from './mapping';
import type { Column } from './columns';
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
  /** `_id` of each doc id. */
  readonly ids: readonly string[];
  readonly columns: ReadonlyMap<string, Column>;
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
