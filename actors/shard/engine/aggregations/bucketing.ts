import { EsError } from '../../../wire/esErrors';
import type { BucketPartial, PartialMap, TermKey } from './aggPartials';
import type { Aggregators } from './aggTypes';

/** Keyed buckets with sub-aggregations, shared by the bucket aggregations (terms, histograms). */

export const keyId = (k: TermKey) => `${typeof k === 'string' ? 's' : 'n'}${String(k)}`;

interface LiveBucket {
  key: TermKey;
  count: number;
  subs: Aggregators;
}

/** Collects docs into keyed buckets, each with its own sub-aggregators. */
export function bucketing(keysOf: (doc: number) => TermKey[], subs: () => Aggregators): { collect(doc: number): void; buckets(): BucketPartial[] } {
  const map = new Map<string, LiveBucket>();
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
        if (!b) map.set(id, (b = { key: k, count: 0, subs: subs() }));
        b.count++;
        b.subs.collect(doc);
      }
    },
    buckets: () => [...map.values()].map((b) => ({ key: b.key, count: b.count, subs: b.subs.partial() })),
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

/** `search.max_buckets` default. */
export const MAX_BUCKETS = 65_536;

/** ES's error when a response would hold more than `search.max_buckets` buckets. */
export function tooManyBuckets(n: number, max = MAX_BUCKETS): EsError {
  return new EsError('too_many_buckets_exception', 400,
    `Trying to create too many buckets. Must be less than or equal to: [${max}] but was [${n}]. ` +
      'This limit can be set by changing the [search.max_buckets] cluster level setting.',
    { meta: { max_buckets: max } });
}
