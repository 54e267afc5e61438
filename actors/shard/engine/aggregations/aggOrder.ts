import type { AggSpec } from './aggTypes';
import type { AggPartial, BucketPartial, TermKey } from './aggPartials';
import { compareCodePoints } from '../base/sortValues';

/**
 * Bucket order of `terms` (`order: {_count|_key|<metric sub-agg>: asc|desc}` or an array of
 * those; default `_count desc`), with ES's `_key asc` tie-break (InternalOrder.CompoundOrder).
 */

/** Natural order of bucket keys: numbers (bigint-exact) before strings, strings by code point. */
export function compareKeys(a: TermKey, b: TermKey): number {
  if (typeof a === 'string' || typeof b === 'string') {
    if (typeof a === 'string' && typeof b === 'string') return compareCodePoints(a, b);
    return typeof a === 'string' ? 1 : -1;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The single value of a metric partial (for ordering by a sub-aggregation); null when empty. */
export function metricValue(p: AggPartial | undefined): number | null {
  if (!p) return null;
  switch (p.t) {
    case 'min':
    case 'max':
    case 'sum':
      return p.value;
    case 'avg':
      return p.count ? p.sum / p.count : null;
    case 'value_count':
      return p.count;
    default:
      return null;
  }
}

type Criterion = (a: BucketPartial, b: BucketPartial) => number;

export interface BucketOrder {
  compare: Criterion;
  /** Only `_count desc` has a meaningful doc_count_error_upper_bound. */
  byCountDesc: boolean;
  byKey: boolean;
}

/** Builds the comparator of a terms (or date_histogram) spec. */
export function orderComparator(spec: AggSpec): BucketOrder {
  const raw = spec.params.order;
  const defaults = spec.type === 'date_histogram' ? [{ _key: 'asc' }] : [{ _count: 'desc' }];
  const entries = (raw === undefined ? defaults : Array.isArray(raw) ? raw : [raw]).flatMap((o) => Object.entries(o as Record<string, string>));
  const criteria: Criterion[] = entries.map(([path, dir]) => {
    const sign = String(dir).toLowerCase() === 'desc' ? -1 : 1;
    if (path === '_count') return (a, b) => sign * (a.count - b.count);
    if (path === '_key' || path === '_term') return (a, b) => sign * compareKeys(a.key, b.key);
    const name = path.split(/[.[]/)[0];
    return (a, b) => {
      const x = metricValue(a.subs[name]);
      const y = metricValue(b.subs[name]);
      if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1; // empty metrics last
      return sign * (x - y);
    };
  });
  const [firstPath, firstDir] = entries[0] ?? ['_count', 'desc'];
  const byKey = firstPath === '_key' || firstPath === '_term';
  if (!entries.some(([p]) => p === '_key' || p === '_term')) criteria.push((a, b) => compareKeys(a.key, b.key));
  return {
    compare: (a, b) => {
      for (const c of criteria) {
        const r = c(a, b);
        if (r !== 0) return r;
      }
      return 0;
    },
    byCountDesc: firstPath === '_count' && String(firstDir).toLowerCase() === 'desc',
    byKey,
  };
}
