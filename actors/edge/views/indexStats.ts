import { illegalArgument } from '../../wire/esErrors';
import type { IndexState } from '../../cluster';
import type { PagingServices } from '../../search';

/**
 * Index statistics under ES's keys (CommonStats): per shard copy, summed per index, per node and
 * for the cluster. Doc counts come from each shard actor's `stats` op (the refreshed view, as ES
 * counts); sizes are the bytes of stored `_source` (there is no Lucene index to measure).
 */

export interface ShardStat {
  index: string;
  uuid: string;
  n: number;
  docs: number;
  deleted: number;
  /** Docs ever indexed into the shard (index ops), and deletes (seqNos not spent on an index op). */
  indexTotal: number;
  deleteTotal: number;
  maxSeqNo: number;
  sizeBytes: number;
  /** No-op updates of the shard this node coordinated (ES counts them on the primary). */
  noopUpdates: number;
  /** Open search contexts (PIT, scroll) pinning this shard. */
  openContexts: number;
  scrollContexts: number;
  /** Segments on disk, their bytes and heap; the indexing buffer; segments kept only for pinned contexts. */
  segments: SegmentTotals;
  merges: { merges: number; docs: number; bytes: number };
}

export interface SegmentTotals {
  count: number;
  sizeBytes: number;
  memoryBytes: number;
  bufferBytes: number;
  pinnedCount: number;
  pinnedBytes: number;
}

const NO_SEGMENTS: SegmentTotals = { count: 0, sizeBytes: 0, memoryBytes: 0, bufferBytes: 0, pinnedCount: 0, pinnedBytes: 0 };

/** ES index-level metrics (`/_stats/<metric>`, `/_nodes/stats/indices/<metric>`). */
export const INDEX_METRICS = [
  'docs', 'store', 'indexing', 'get', 'search', 'merge', 'refresh', 'flush', 'warmer', 'query_cache', 'fielddata', 'completion',
  'segments', 'translog', 'request_cache', 'recovery', 'bulk', 'shard_stats', 'mappings', 'dense_vector', 'sparse_vector',
] as const;
export type IndexMetric = (typeof INDEX_METRICS)[number];

/** Response key of each metric (ES names `merge` `merges`). */
const KEY: Partial<Record<IndexMetric, string>> = { merge: 'merges' };

/** Parses a metric list (`_all`, comma list) with ES's error for unknown names. */
export function parseMetrics<T extends string>(given: string | undefined, known: readonly T[], uri: string): Set<T> {
  if (given === undefined || given === '_all' || given === '') return new Set(known);
  const out = new Set<T>();
  const bad: string[] = [];
  for (const m of given.split(',').map((x) => x.trim()).filter(Boolean)) {
    if (m === '_all') known.forEach((k) => out.add(k));
    else if ((known as readonly string[]).includes(m)) out.add(m as T);
    else bad.push(m);
  }
  if (bad.length) {
    throw illegalArgument(`request [${uri.split('?')[0]}] contains unrecognized metric${bad.length > 1 ? 's' : ''}: [${bad.join(', ')}]`);
  }
  return out;
}

/** Stats of every shard of `indices`, in index then shard order. */
export async function collectShardStats(s: PagingServices, indices: IndexState[]): Promise<ShardStat[]> {
  // Every open context of the cluster (the lifecycle log), whichever node owns it.
  const contexts = s.directory.open();
  const pinned = (uuid: string, n: number, kind?: 'scroll') =>
    contexts.filter((r) => (!kind || r.kind === kind) && r.pinned.some((p) => p.indexUuid === uuid && p.n === n)).length;
  const jobs = indices.flatMap((idx) =>
    idx.shards.map(async (sh, n): Promise<ShardStat> => {
      // This node's copy when it holds one, else any copy.
      const local = s.cluster.localCopy(idx.uuid, n);
      type Raw = { docs: number; deleted: number; maxDoc: number; maxSeqNo: number; indexTotal: number; sizeBytes: number; segments?: SegmentTotals; merges?: ShardStat['merges'] };
      const st: Raw = local
        ? {
          ...local.store.stats(), maxSeqNo: local.store.maxSeqNo(), indexTotal: local.store.indexTotal(), sizeBytes: local.store.sourceBytes(),
          segments: local.store.segmentStats(), merges: local.store.mergeStats,
        }
        : await s.shards.call<Raw>(sh.ref, 'stats', {}).catch(() => ({ docs: 0, deleted: 0, maxDoc: 0, maxSeqNo: -1, indexTotal: 0, sizeBytes: 0 }));
      const { maxSeqNo, indexTotal } = st;
      return {
        index: idx.name,
        uuid: idx.uuid,
        n,
        docs: st.docs,
        deleted: st.deleted,
        indexTotal,
        deleteTotal: Math.max(0, maxSeqNo + 1 - indexTotal),
        maxSeqNo,
        sizeBytes: st.sizeBytes,
        noopUpdates: s.noopUpdates?.get(`${idx.uuid}/${n}`) ?? 0,
        openContexts: pinned(idx.uuid, n),
        scrollContexts: pinned(idx.uuid, n, 'scroll'),
        segments: st.segments ?? NO_SEGMENTS,
        merges: st.merges ?? { merges: 0, docs: 0, bytes: 0 },
      };
    }),
  );
  return Promise.all(jobs);
}

/** Summed shard stats, rendered as ES's CommonStats for the given metrics. */
export function commonStats(shards: ShardStat[], metrics: Set<IndexMetric>, extra: { search?: Record<string, number> } = {}): Record<string, unknown> {
  const sum = (f: (x: ShardStat) => number) => shards.reduce((a, x) => a + f(x), 0);
  // the store is the segment files (the buffer is on no disk yet: its source bytes count until it is flushed)
  const size = sum((x) => (x.segments.count ? x.segments.sizeBytes + x.segments.pinnedBytes : x.sizeBytes));
  const all: Record<IndexMetric, () => unknown> = {
    docs: () => ({ count: sum((x) => x.docs), deleted: sum((x) => x.deleted), total_size_in_bytes: size }),
    store: () => ({ size_in_bytes: size, total_data_set_size_in_bytes: size, reserved_in_bytes: 0 }),
    indexing: () => ({
      index_total: sum((x) => x.indexTotal), index_time_in_millis: 0, index_current: 0, index_failed: 0,
      delete_total: sum((x) => x.deleteTotal), delete_time_in_millis: 0, delete_current: 0,
      noop_update_total: sum((x) => x.noopUpdates), is_throttled: false, throttle_time_in_millis: 0, write_load: 0,
    }),
    get: () => ({ total: 0, time_in_millis: 0, exists_total: 0, exists_time_in_millis: 0, missing_total: 0, missing_time_in_millis: 0, current: 0 }),
    search: () =>
      extra.search ?? {
        open_contexts: sum((x) => x.openContexts), query_total: 0, query_time_in_millis: 0, query_current: 0, query_failure: 0,
        fetch_total: 0, fetch_time_in_millis: 0, fetch_current: 0, fetch_failure: 0,
        scroll_total: 0, scroll_time_in_millis: 0, scroll_current: sum((x) => x.scrollContexts),
        suggest_total: 0, suggest_time_in_millis: 0, suggest_current: 0,
      },
    merge: () => ({
      current: 0, current_docs: 0, current_size_in_bytes: 0, total: sum((x) => x.merges.merges), total_time_in_millis: 0,
      total_docs: sum((x) => x.merges.docs), total_size_in_bytes: sum((x) => x.merges.bytes),
      total_stopped_time_in_millis: 0, total_throttled_time_in_millis: 0, total_auto_throttle_in_bytes: 0,
    }),
    refresh: () => ({ total: 0, total_time_in_millis: 0, external_total: 0, external_total_time_in_millis: 0, listeners: 0 }),
    flush: () => ({ total: 0, periodic: 0, total_time_in_millis: 0, total_time_excluding_waiting_on_lock_in_millis: 0 }),
    warmer: () => ({ current: 0, total: 0, total_time_in_millis: 0 }),
    query_cache: () => ({ memory_size_in_bytes: 0, total_count: 0, hit_count: 0, miss_count: 0, cache_size: 0, cache_count: 0, evictions: 0 }),
    fielddata: () => ({ memory_size_in_bytes: 0, evictions: 0, global_ordinals: { build_time_in_millis: 0 } }),
    completion: () => ({ size_in_bytes: 0 }),
    segments: () => ({
      count: sum((x) => x.segments.count), memory_in_bytes: sum((x) => x.segments.memoryBytes), terms_memory_in_bytes: 0, stored_fields_memory_in_bytes: 0,
      term_vectors_memory_in_bytes: 0, norms_memory_in_bytes: 0, points_memory_in_bytes: 0, doc_values_memory_in_bytes: 0,
      index_writer_memory_in_bytes: sum((x) => x.segments.bufferBytes), version_map_memory_in_bytes: 0, fixed_bit_set_memory_in_bytes: 0,
      max_unsafe_auto_id_timestamp: -1, file_sizes: {},
      // ours: segments merged away that open contexts still read (ES keeps them too, uncounted)
      pinned_count: sum((x) => x.segments.pinnedCount), pinned_size_in_bytes: sum((x) => x.segments.pinnedBytes),
    }),
    translog: () => ({ operations: 0, size_in_bytes: 0, uncommitted_operations: 0, uncommitted_size_in_bytes: 0, earliest_last_modified_age: 0 }),
    request_cache: () => ({ memory_size_in_bytes: 0, evictions: 0, hit_count: 0, miss_count: 0 }),
    recovery: () => ({ current_as_source: 0, current_as_target: 0, throttle_time_in_millis: 0 }),
    bulk: () => ({ total_operations: 0, total_time_in_millis: 0, total_size_in_bytes: 0, avg_time_in_millis: 0, avg_size_in_bytes: 0 }),
    shard_stats: () => ({ total_count: shards.length }),
    mappings: () => ({ total_count: 0, total_estimated_overhead_in_bytes: 0 }),
    dense_vector: () => ({ value_count: 0 }),
    sparse_vector: () => ({ value_count: 0 }),
  };
  const out: Record<string, unknown> = {};
  for (const m of INDEX_METRICS) if (metrics.has(m)) out[KEY[m] ?? m] = all[m]();
  return out;
}
