import { illegalArgument } from '../../../wire/esErrors';
import { parseJson } from '../../../wire/json';
import { compareSortArrays } from '../base/sortValues';
import type { SortSpec, SortValue } from '../types';
import type { TopHitsPartial } from './aggPartials';
import type { AggregationType, AggSpec, HitRef } from './aggTypes';

/**
 * `top_hits` (ES's TopHitsAggregator): the best hits of each bucket by the aggregation's `sort`
 * (default: score), `from`/`size` (3), with `_source` filtering; ranked on every segment as they
 * are collected, their sources read once per shard for the survivors.
 */

/** `index.max_inner_result_window` default. */
const MAX_INNER_WINDOW = 100;

type Hit = TopHitsPartial['hits'][number];

/** The aggregation's sort as SortSpecs (`"f"`, `{"f": "desc"}`, `{"f": {"order": …}}`), undefined for score order. */
function sortOf(s: AggSpec): SortSpec[] | undefined {
  const raw = s.params.sort;
  if (raw === undefined) return undefined;
  const list = Array.isArray(raw) ? raw : [raw];
  const specs = list.map((x): SortSpec => {
    if (typeof x === 'string') return { field: x, order: x === '_score' ? 'desc' : 'asc' };
    const [field, v] = Object.entries(x as Record<string, unknown>)[0];
    if (typeof v === 'string') return { field, order: v.toLowerCase() === 'desc' ? 'desc' : 'asc' };
    const o = v as Record<string, unknown>;
    return { field, order: String(o.order ?? (field === '_score' ? 'desc' : 'asc')).toLowerCase() === 'desc' ? 'desc' : 'asc', ...(o.missing !== undefined ? { missing: o.missing as SortSpec['missing'] } : {}) };
  });
  return specs.length === 1 && specs[0].field === '_score' && specs[0].order === 'desc' ? undefined : specs;
}

function comparator(sort: SortSpec[] | undefined): (a: { score: number; order: number; sort?: unknown[] }, b: { score: number; order: number; sort?: unknown[] }) => number {
  if (!sort) return (a, b) => b.score - a.score || a.order - b.order;
  return (a, b) => compareSortArrays((a.sort ?? []) as SortValue[], (b.sort ?? []) as SortValue[], sort) || a.order - b.order;
}

const window = (s: AggSpec) => ({ from: Number(s.params.from ?? 0), size: Number(s.params.size ?? 3) });

export const topHitsAgg: AggregationType = {
  params: [
    'from', 'size', 'sort', '_source', 'version', 'seq_no_primary_term', 'explain', 'track_scores', 'stored_fields',
    'docvalue_fields', 'fields', 'highlight', 'script_fields',
  ],
  metric: true,
  check(spec) {
    for (const k of ['highlight', 'script_fields', 'explain']) if (spec.params[k] !== undefined && spec.params[k] !== false) throw illegalArgument(`[${k}] in [top_hits] is not supported`);
    const { from, size } = window(spec);
    if (!Number.isInteger(from) || from < 0) throw illegalArgument(`[from] parameter cannot be negative but was [${spec.params.from}]`);
    if (!Number.isInteger(size) || size < 0) throw illegalArgument(`[size] parameter cannot be negative, found [${spec.params.size}]`);
  },
  factory(spec, ctx) {
    if (!ctx.hooks) throw illegalArgument('[top_hits] aggregation needs the query phase');
    const hooks = ctx.hooks;
    const { from, size } = window(spec);
    if (from + size > MAX_INNER_WINDOW) {
      throw illegalArgument(
        `Top hits result window is too large, the top hits aggregator [${spec.name}]'s from + size must be less than or equal to: [${MAX_INNER_WINDOW}] but was [${from + size}]. This limit can be set by changing the [index.max_inner_result_window] index level setting.`,
      );
    }
    const sort = sortOf(spec);
    const cmp = comparator(sort);
    const k = from + size;
    return () => {
      const top: HitRef[] = [];
      let total = 0;
      let maxScore = -Infinity;
      return {
        collect(doc) {
          total++;
          const h = hooks.hit(doc, sort);
          if (h.score > maxScore) maxScore = h.score;
          if (k === 0) return;
          if (top.length === k && cmp(h, top[k - 1]) >= 0) return;
          let i = top.length;
          while (i > 0 && cmp(h, top[i - 1]) < 0) i--;
          top.splice(i, 0, h);
          if (top.length > k) top.pop();
        },
        partial: (): TopHitsPartial => ({
          t: 'top_hits',
          total,
          maxScore: total && Number.isFinite(maxScore) ? maxScore : null,
          hits: top.map((h): Hit => {
            const src = h.source(spec.params._source);
            return { index: h.index, id: h.id, score: h.score, order: h.order, ...(h.sort ? { sort: h.sort as unknown[] } : {}), ...(src !== undefined ? { source: src } : {}) };
          }),
        }),
      };
    };
  },
  merge(a, b, s): TopHitsPartial {
    const x = a as TopHitsPartial;
    const y = b as TopHitsPartial;
    const { from, size } = window(s);
    const hits = [...x.hits, ...y.hits].sort(comparator(sortOf(s))).slice(0, from + size);
    const ms = [x.maxScore, y.maxScore].filter((m): m is number => m !== null).map(Number);
    return { t: 'top_hits', total: x.total + y.total, maxScore: ms.length ? Math.max(...ms) : null, hits };
  },
  render(s, partial) {
    const p = partial as TopHitsPartial | undefined;
    const { from } = window(s);
    const sorted = sortOf(s) !== undefined;
    const trackScores = s.params.track_scores === true;
    return {
      hits: {
        total: { value: p?.total ?? 0, relation: 'eq' },
        max_score: sorted && !trackScores ? null : p?.maxScore ?? null,
        hits: (p?.hits ?? []).slice(from).map((h) => ({
          _index: h.index,
          _id: h.id,
          _score: sorted && !trackScores ? null : Number(h.score),
          ...(h.source !== undefined ? { _source: parseJson(h.source) } : {}),
          ...(h.sort ? { sort: h.sort } : {}),
        })),
      },
    };
  },
};
