import { IndexMapping, ShardStore } from '../../../../actors/shard/engine';
import type { ShardQueryRequest, ShardQueryResult, SortSpec } from '../../../../actors/shard/engine';

/** A shard with the given mapping and docs (id -> source object or raw JSON), refreshed. */
export function shardWith(docs: Record<string, unknown>, mappings: Record<string, unknown> = {}, settings = { maxResultWindow: 10000, maxSlicesPerScroll: 1024 }): ShardStore {
  const store = new ShardStore({ index: 'idx', shardId: 0, mapping: new IndexMapping(mappings), settings: () => settings });
  for (const [id, src] of Object.entries(docs)) {
    const o = store.write({ op: 'index', id, source: typeof src === 'string' ? src : JSON.stringify(src) });
    if (!o.ok) throw new Error(`${id}: ${o.error.reason}`);
  }
  store.refresh();
  return store;
}

/** Runs a query phase on the current searcher. */
export function search(store: ShardStore, req: Partial<ShardQueryRequest> = {}): ShardQueryResult {
  return store.query(store.acquireSearcher(), { from: 0, size: 100, trackTotalHits: true, shardIndex: 0, ...req });
}

export const ids = (r: ShardQueryResult) => r.hits.map((h) => h._id);
export const sorts = (r: ShardQueryResult) => r.hits.map((h) => h.sort);

/** `{f: order}` / `{f: {...}}` shorthand for a SortSpec. */
export const by = (field: string, order: 'asc' | 'desc' = field === '_score' ? 'desc' : 'asc', extra: Partial<SortSpec> = {}): SortSpec => ({ field, order, ...extra });

/** The one segment of an unflushed store, as query-side code sees it, with the searcher bounded to it. */
export function leafOf(store: ShardStore, s = store.acquireSearcher()) {
  const leaves = store.leavesFor(s);
  if (leaves.length !== 1) throw new Error(`the store has ${leaves.length} segments`);
  return { store: leaves[0].leaf, s: leaves[0].s, now: 0 };
}
