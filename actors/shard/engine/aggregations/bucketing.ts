import type { BucketPartial, PartialMap, TermKey } from './aggPartials';
import type { Aggregators } from './aggTypes';
import { BUCKET_BYTES, BUCKET_PARTIAL_BYTES, subsBytes, type AggBudget } from './aggBudget';

/** Keyed buckets with sub-aggregations, shared by the bucket aggregations (terms, histograms). */

export const keyId = (k: TermKey) => `${typeof k === 'string' ? 's' : 'n'}${String(k)}`;

interface LiveBucket {
  key: TermKey;
  count: number;
  subs: Aggregators;
}

/** How a bucketing aggregation accounts for its buckets (aggBudget.ts). */
export interface BucketLimits {
  budget: AggBudget;
  /** The aggregation's name (its breaker label). */
  name: string;
  /** Count new buckets against `search.max_buckets` while collecting (top level), up to `cap` of them. */
  count: boolean;
  /** Buckets beyond this many are not returned (terms' shard_size), so they are not counted. */
  cap?: number;
  /** How many sub-aggregations each bucket holds (their memory comes with the bucket). */
  subs: number;
}

/**
 * Collects docs into keyed buckets, each with its own sub-aggregators. Each new bucket's memory is
 * reserved as it is created; at the top level it also counts against `search.max_buckets`.
 */
export function bucketing(
  keysOf: (doc: number) => TermKey[], subs: () => Aggregators, limits: BucketLimits,
): { collect(doc: number): void; buckets(): BucketPartial[] } {
  const map = new Map<string, LiveBucket>();
  const meter = limits.budget.meter(limits.name);
  const cap = limits.count ? (limits.cap ?? Infinity) : 0;
  const perBucket = BUCKET_BYTES + subsBytes(limits.subs);
  return {
    collect(doc) {
      const keys = keysOf(doc);
      const seen = keys.length > 1 ? new Set<string>() : null;
      for (const k of keys) {
        const id = keyId(k);
        if (seen) {
          if (seen.has(id)) continue; // a doc counts once per bucket, however many values it has
          seen.add(id);
        }
        let b = map.get(id);
        if (!b) {
          if (map.size < cap) limits.budget.consume(1);
          meter.add(perBucket + id.length);
          map.set(id, (b = { key: k, count: 0, subs: subs() }));
        }
        b.count++;
        b.subs.collect(doc);
      }
    },
    buckets: () => {
      limits.budget.reserve(map.size * BUCKET_PARTIAL_BYTES, limits.name);
      return [...map.values()].map((b) => ({ key: b.key, count: b.count, subs: b.subs.partial() }));
    },
  };
}

/** Merges two bucket lists by key, summing counts (and errors) and reducing sub-aggregations. */
export function mergeBuckets(a: BucketPartial[], b: BucketPartial[], reduceSubs: (maps: PartialMap[]) => PartialMap): BucketPartial[] {
  const byKey = new Map<string, BucketPartial>();
  for (const x of [...a, ...b]) {
    const id = keyId(x.key);
    const prev = byKey.get(id);
    if (!prev) byKey.set(id, x);
    else {
      byKey.set(id, {
        key: prev.key,
        count: prev.count + x.count,
        subs: reduceSubs([prev.subs, x.subs]),
        ...(prev.err !== undefined || x.err !== undefined ? { err: (prev.err ?? 0) + (x.err ?? 0) } : {}),
      });
    }
  }
  return [...byKey.values()];
}
