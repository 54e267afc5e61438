/**
 * What a shard of several segments does after merging their top hits, where the result depends on
 * the whole shard rather than each segment: `collapse` keeps one hit per group across segments,
 * and `rescore` rescores the shard's top window (not each segment's), as ES does over its leaves.
 */
import type { SearcherRef, ShardHit, ShardQueryRequest } from '../types';
import { floatValue } from '../index/analysis';
import { rescoreDepth, rescoreHits, rescoreLeafScores } from '../query/rescore';
import type { TermStatistics } from '../query/termStats';
import type { MergedHit } from '../query/reduce';
import type { StoreView } from '../index/storeView';

/** The request each segment runs: no rescore (the shard applies it), deep enough for its window. */
export function leafRequest(req: ShardQueryRequest, leaves: number, maxWindow: number): ShardQueryRequest {
  if (!req.rescore?.length || leaves <= 1) return req;
  const k = Math.max(0, req.from ?? 0) + Math.max(0, req.size ?? 10);
  const { rescore: _r, ...rest } = req;
  return { ...rest, from: 0, size: rescoreDepth(req, k, maxWindow) };
}

/** Collapse value of a hit (what its `fields` carry for the collapse field). */
function groupOf(h: ShardHit, field: string): string {
  if (!h.fields) return 'null';
  return JSON.stringify((JSON.parse(h.fields) as Record<string, unknown[]>)[field]?.[0] ?? null);
}

/**
 * The shard's page from the merged hits of every segment (all of them, in order): collapsed to one
 * hit per group, rescored over the shard's window, then `[from, from + size)`.
 */
export function finishLeafHits(
  merged: MergedHit[], localDoc: (h: MergedHit) => number, leaves: ReadonlyArray<{ leaf: StoreView; s: SearcherRef }>, req: ShardQueryRequest, stats: TermStatistics,
): { hits: ShardHit[]; maxScore?: number | null } {
  const from = Math.max(0, req.from ?? 0);
  const k = from + Math.max(0, req.size ?? 10);
  let hits = merged;
  if (req.collapse) {
    const seen = new Set<string>();
    hits = hits.filter((h) => {
      const g = groupOf(h, req.collapse!.field);
      if (seen.has(g)) return false;
      seen.add(g);
      return true;
    });
  }
  let maxScore: number | null | undefined;
  if (req.rescore?.length) {
    const now = req.nowMillis ?? Date.now();
    const r = rescoreHits(req.rescore, hits, (h) => h.score ?? 0, (query, window) => {
      const out: Array<number | undefined> = new Array(window.length);
      const bySeg = new Map<number, number[]>();
      window.forEach((h, i) => {
        let list = bySeg.get(h.shardIndex);
        if (!list) bySeg.set(h.shardIndex, (list = []));
        list.push(i);
      });
      for (const [seg, idx] of bySeg) {
        const { leaf, s } = leaves[seg];
        const scores = rescoreLeafScores(leaf, s, stats, now, query, idx.map((i) => localDoc(window[i])));
        idx.forEach((i, j) => (out[i] = scores[j]));
      }
      return out;
    }, (a, b) => a.doc - b.doc);
    hits = r.hits.slice(0, k).map((h) => ({ ...h, score: floatValue(r.scores.get(h)!) }));
    maxScore = hits.length ? hits[0].score : null;
  }
  return { hits: hits.slice(from, k).map(({ shardIndex: _s, ...h }) => h), ...(maxScore !== undefined ? { maxScore } : {}) };
}
