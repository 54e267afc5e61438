/**
 * A StoreView over one disk segment, with the deletions (and mapping, settings) of the buffer it
 * was written from: what the shard engine's multi-segment search does per leaf, reduced to one
 * segment, so the engine's query phase can run over the reader in tests and in the bench.
 */
import type { IndexBuffer } from '../../../../../actors/shard/engine/index/indexBuffer';
import { SearchCaches } from '../../../../../actors/shard/engine/index/caches';
import type { StoreView } from '../../../../../actors/shard/engine/index/storeView';
import type { DiskSegment } from '../../../../../actors/shard/engine/segments';

export function diskStoreView(seg: DiskSegment, store: IndexBuffer): StoreView {
  return {
    index: store.index,
    shardId: store.shardId,
    mapping: store.mapping,
    settings: store.settings,
    caches: new SearchCaches(),
    idOf: (d) => seg.idOf(d),
    source: (d) => {
      const src = seg.sourceOf(d);
      return typeof src === 'string' ? src : Buffer.from(src).toString('utf8');
    },
    docId: (d) => seg.seqNoOf(d), // the shard's _doc order is the seqNo (store/leaf.ts)
    column: (p) => seg.column(p),
    deletedCount: (s) => store.deletedCount(s),
    visible: (s, d) => store.visible(s, d),
    lookup: (s, id) => store.lookup(s, id),
    fieldType: (f) => store.fieldType(f),
    values: (f, d) => {
      const c = seg.column(f);
      if (c?.kind === 'numeric') return c.natural(d);
      if (c?.kind === 'keyword') return c.values(d);
      return [];
    },
  };
}
