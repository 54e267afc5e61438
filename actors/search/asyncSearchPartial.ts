import { reduceAggs, reduceTotal, renderAggs, type SearchRequest } from '../shard/engine';
import type { QueryPageHead } from '../shard/pageCodec';
import type { Progress } from '../contexts/asyncSearches';

/**
 * Partial results of a running async search (ES AsyncSearchTask's listener on partial reduces): every
 * `batched_reduce_size` shard answers (ES's async default 5) the totals and aggregations of the shards
 * answered so far are reduced, and a GET while the search runs shows them (`num_reduce_phases`,
 * `hits.total`, `aggregations`; no hits: those are fetched at the end, as in ES).
 */

/** ES RestSubmitAsyncSearchAction's default `batched_reduce_size`. */
export const ASYNC_BATCHED_REDUCE_SIZE = 5;

/** What a partial reduce leaves for a GET to show (JSON, it travels in the owner node's replies). */
export interface PartialResult {
  reduces: number;
  total?: { value: number; relation: 'eq' | 'gte' };
  aggregations?: Record<string, unknown>;
}

/** The coordinator's `onShard` for an async search: counts shards, reduces every `batch` answers into `progress.partial`. */
export function partialReducer(sr: SearchRequest, batch: number, progress: Progress & { partial?: PartialResult }, maxBuckets: number) {
  const heads: QueryPageHead[] = [];
  return (ok: boolean, total: number, head?: QueryPageHead): void => {
    progress.total = total;
    if (ok) progress.successful++;
    else progress.failed++;
    if (!ok || !head) return;
    heads.push(head);
    // the last answer is the final reduce, not a partial one
    if (heads.length % batch !== 0 || progress.successful + progress.failed >= total) return;
    try {
      const shardResults = heads.map((h, i) => ({ shardIndex: i, result: { ...h, hits: [] } }));
      const t = reduceTotal(shardResults, sr.trackTotalHits);
      const aggregations = sr.aggs ? renderAggs(reduceAggs(heads.map((h) => h.aggs), sr.aggs), sr.aggs, sr.typedKeys ?? false, maxBuckets) : undefined;
      progress.partial = { reduces: (progress.partial?.reduces ?? 0) + 1, ...(t ? { total: t } : {}), ...(aggregations ? { aggregations } : {}) };
    } catch {
      // a partial reduce that fails (the bucket limit) leaves the previous one; the final reduce answers
    }
  };
}

/** ES's response while a search runs: the shards answered so far, and the last partial reduce if any. */
export function runningResponse(progress: (Progress & { partial?: PartialResult }) | undefined, startedAt: number): string {
  const p = progress ?? { total: 0, successful: 0, failed: 0 };
  const partial = p.partial;
  return `"response":${JSON.stringify({
    took: Date.now() - startedAt, timed_out: false, terminated_early: false, num_reduce_phases: partial?.reduces ?? 0,
    _shards: { total: p.total, successful: p.successful, skipped: 0, failed: p.failed },
    hits: { total: partial?.total ?? { value: 0, relation: 'gte' }, max_score: null, hits: [] },
    ...(partial?.aggregations ? { aggregations: partial.aggregations } : {}),
  })}`;
}
