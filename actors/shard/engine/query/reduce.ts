import { compareSortArrays } from '../base/sortValues';
import type { ShardHit, ShardQueryResult, SortSpec } from '../types';
import { MinHeap } from '../../../wire/heap';

/** One shard's answer with its position in the request (ties break on it, as ES does). */
export interface ShardResultRef {
  shardIndex: number;
  result: ShardQueryResult;
}

export interface ReduceHitsRequest {
  sort?: SortSpec[];
  /** Hits to skip in the merged list; -1 (seed: allowed with search_after) means 0. */
  from: number;
  size: number;
  /** true = exact, false = no total, k = exact up to k then `{value:k, relation:'gte'}`. */
  trackTotalHits: boolean | number;
}

export type MergedHit = ShardHit & { shardIndex: number };

export interface ReducedHits {
  total: { value: number; relation: 'eq' | 'gte' } | undefined;
  maxScore: number | null;
  hits: MergedHit[];
}

/**
 * Merges per-shard top hits into the page `[from, from+size)` like ES's `SearchPhaseController`:
 * a k-way merge over the shards' already-sorted lists by sort values (or score desc when unsorted),
 * ties broken by shard index then doc id.
 */
export function reduceHits(shardResults: ShardResultRef[], req: ReduceHitsRequest): ReducedHits {
  const from = Math.max(0, req.from);
  const cmp = hitComparator(req.sort);
  const heap = new MinHeap<Cursor>((x, y) => cmp(x.hit, x.shardIndex, y.hit, y.shardIndex));
  for (const { shardIndex, result } of shardResults) {
    if (result.hits.length > 0) heap.push({ shardIndex, hits: result.hits, i: 0, hit: result.hits[0] });
  }
  const hits: MergedHit[] = [];
  for (let n = 0; n < from + req.size && heap.size > 0; n++) {
    const c = heap.pop()!;
    if (n >= from) hits.push({ ...c.hit, shardIndex: c.shardIndex });
    if (++c.i < c.hits.length) {
      c.hit = c.hits[c.i];
      heap.push(c);
    }
  }
  return { total: reduceTotal(shardResults, req.trackTotalHits), maxScore: reduceMaxScore(shardResults), hits };
}

/** Sums shard totals; `gte` if any shard stopped counting; capped at the track_total_hits bound (spec §5). */
export function reduceTotal(shardResults: ShardResultRef[], trackTotalHits: boolean | number): ReducedHits['total'] {
  if (trackTotalHits === false || trackTotalHits === -1) return undefined;
  let value = 0;
  let relation: 'eq' | 'gte' = 'eq';
  for (const { result } of shardResults) {
    value += result.totalHits ?? 0;
    if (result.totalRelation === 'gte') relation = 'gte';
  }
  if (typeof trackTotalHits === 'number' && value > trackTotalHits) return { value: trackTotalHits, relation: 'gte' };
  return { value, relation };
}

function reduceMaxScore(shardResults: ShardResultRef[]): number | null {
  let max: number | null = null;
  for (const { result } of shardResults) {
    if (result.maxScore !== null && !Number.isNaN(result.maxScore) && (max === null || result.maxScore > max)) max = result.maxScore;
  }
  return max;
}

type HitCompare = (a: ShardHit, aShard: number, b: ShardHit, bShard: number) => number;

/** Total order used by the merge: sort keys (or score desc), then shard index, then doc. */
export function hitComparator(sort?: SortSpec[]): HitCompare {
  const primary = sort && sort.length > 0
    ? (a: ShardHit, b: ShardHit) => compareSortArrays(a.sort ?? [], b.sort ?? [], sort)
    : (a: ShardHit, b: ShardHit) => compareScoreDesc(a.score, b.score);
  return (a, aShard, b, bShard) => primary(a, b) || aShard - bShard || a.doc - b.doc;
}

function compareScoreDesc(a: number | null, b: number | null): number {
  const x = a ?? -Infinity;
  const y = b ?? -Infinity;
  return x > y ? -1 : x < y ? 1 : 0;
}

interface Cursor {
  shardIndex: number;
  hits: ShardHit[];
  i: number;
  hit: ShardHit;
}
