/**
 * The query phase's side of aggregations (AggHooks): `filter`/`filters` queries and `top_hits`
 * hits, evaluated on the segment being collected. A shard of several segments binds the hooks to
 * each segment in turn (queryLeaves), so one set of aggregators serves them all.
 */
import type { AggHooks, HitRef } from '../aggregations/aggTypes';
import type { SortSpec } from '../types';
import type { StoreView } from '../index/storeView';
import { filterSource, parseSourceBody } from '../request/sourceFilter';
import { evaluate } from './evaluate';
import { compileQuery } from './query';
import { resolveSort, type SortKey } from './sort';
import type { QueryContext } from './qnode';
import { childIndex, type ChildIndex } from './nested';

/** For each parent doc p, its nested docs are [first[p], first[p + 1]) (children are in parent order). */
const firsts = new WeakMap<ChildIndex, Int32Array>();
function firstChildren(ci: ChildIndex, maxDoc: number): Int32Array {
  let f = firsts.get(ci);
  if (f) return f;
  f = new Int32Array(maxDoc + 1);
  let c = 0;
  for (let p = 0; p <= maxDoc; p++) {
    while (c < ci.parent.length && ci.parent[c] < p) c++;
    f[p] = c;
  }
  firsts.set(ci, f);
  return f;
}

/** The segment the hooks read now. */
export interface AggSegment {
  store: StoreView;
  ctx: QueryContext;
  scoreOf: (doc: number) => number;
  shardIndex: number;
}

/** Hooks to hand to createAggregators, and `bind` to point them at a segment before it is collected. */
export function aggHooks(): { hooks: AggHooks; bind(seg: AggSegment): void } {
  let cur: AggSegment | undefined;
  const hooks: AggHooks = {
    filter(query) {
      let seen: AggSegment | undefined;
      let bits: ReturnType<typeof evaluate>['bits'] = null;
      return (doc) => {
        if (seen !== cur) {
          seen = cur;
          const ctx = { ...cur!.ctx, named: [], compile: undefined };
          bits = evaluate(compileQuery(query, ctx), ctx, false).bits;
        }
        return bits === null || bits.has(doc);
      };
    },
    hit(doc, sort) {
      const seg = cur!;
      const keys = sort ? sortKeys(seg, sort) : null;
      const { store } = seg;
      const ref: HitRef = {
        index: store.index,
        id: store.idOf(doc),
        score: seg.scoreOf(doc),
        order: store.docId(doc),
        ...(keys ? { sort: keys.map((k) => k.value(doc)) } : {}),
        source: (filter) => {
          const raw = store.source(doc);
          return filter === undefined ? raw : filterSource(raw, parseSourceBody(filter));
        },
      };
      return ref;
    },
    nested(path) {
      const seg = cur!;
      const def = seg.store.mapping.objectAt(path);
      if (!def?.nested) return undefined;
      const ci = childIndex(seg.ctx, path);
      const first = firstChildren(ci, seg.ctx.s.maxDoc);
      return {
        reader: ci.buf,
        childrenOf: (p) => (p + 1 < first.length ? [first[p], first[p + 1]] : [0, 0]),
        parentOf: (c) => ci.parent[c],
      };
    },
  };
  const resolved = new WeakMap<AggSegment, Map<string, SortKey[] | null>>();
  const sortKeys = (seg: AggSegment, sort: SortSpec[]): SortKey[] | null => {
    let bySort = resolved.get(seg);
    if (!bySort) resolved.set(seg, (bySort = new Map()));
    const key = JSON.stringify(sort);
    if (!bySort.has(key)) bySort.set(key, resolveSort(sort, { store: seg.store, shardIndex: seg.shardIndex, scoreOf: seg.scoreOf }));
    return bySort.get(key)!;
  };
  return { hooks, bind: (seg) => void (cur = seg) };
}

/** Whether some aggregation needs the main query's scores (top_hits). */
export function aggsNeedScores(aggs: unknown): boolean {
  return aggs !== undefined && JSON.stringify(aggs).includes('"top_hits"');
}
