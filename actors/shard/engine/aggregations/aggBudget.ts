import { EsError } from '../../../wire/esErrors';
import { UNLIMITED_BUDGET, type SearchBudget } from '../../../wire/circuitBreaker';
import type { AggPartial, PartialMap } from './aggPartials';

/**
 * The limits of one request's aggregations on a shard: `search.max_buckets`, counted as buckets
 * are created (ES's MultiBucketConsumer), and the memory buckets and values take as they grow,
 * reserved on the request breaker (ES's `<agg [name]>` reservations).
 *
 * Two counts. While collecting, only top-level aggregations count, and a `terms` counts a new
 * bucket only while it has at most `shard_size` of them: those buckets will all be returned, so
 * the count is a lower bound of the final one and a 2,000,000-bucket `terms` fails at bucket
 * 65,537 instead of after building two million. Nested buckets cannot be counted that early (a
 * parent bucket cut by `shard_size` takes its sub-buckets with it); when the shard builds its
 * partial, every bucket it returns is counted, as ES counts in `buildAggregations`.
 */

/**
 * Heap of a live bucket (map entry, key id, counter), measured on V8 (Node 20: ≈ 121 B without
 * sub-aggregations, 337 B with one metric, 593 B with three); its key's characters come on top.
 */
export const BUCKET_BYTES = 128;

/** Heap of a bucket's sub-aggregators: their group and one collector each (nested bucket aggregations add their own buckets). */
export function subsBytes(subs: number): number {
  return subs ? 96 + 128 * subs : 0;
}
/** Heap of a built bucket partial (the object and its array slot). */
export const BUCKET_PARTIAL_BYTES = 96;
/** Heap a collected metric value costs (a double in a growing array). */
export const VALUE_BYTES = 9;
/** Reservations are made in steps of at least this many bytes (one breaker call per step). */
const STEP = 64 * 1024;

/**
 * ES 8's `too_many_buckets_exception` (400 since 8.8; `max_buckets` beside the reason). Since 7.16 the
 * reason no longer gives the count, which is only where counting stopped.
 */
export function tooManyBuckets(max: number): EsError {
  return new EsError('too_many_buckets_exception', 400,
    `Trying to create too many buckets. Must be less than or equal to: [${max}] but this number of buckets was exceeded. ` +
      'This limit can be set by changing the [search.max_buckets] cluster level setting.',
    { meta: { max_buckets: max } });
}

/** CompositeAggregator's own check of `size` against `search.max_buckets` (it still names the size). */
export function compositeTooLarge(max: number, size: number): EsError {
  return new EsError('too_many_buckets_exception', 400,
    `Trying to create too many buckets. Must be less than or equal to: [${max}] but was [${size}]. ` +
      'This limit can be set by changing the [search.max_buckets] cluster level setting.',
    { meta: { max_buckets: max } });
}

/** A memory meter of one aggregation: bytes add up and are reserved a step at a time. */
export interface AggMeter {
  add(bytes: number): void;
}

export class AggBudget {
  private counted = 0;
  private calls = 0;

  constructor(private readonly budget: SearchBudget = UNLIMITED_BUDGET) {}

  get maxBuckets(): number {
    return this.budget.maxBuckets;
  }

  /** Counts buckets that will be returned (MultiBucketConsumer.accept); the parent breaker is asked every 1,024 calls. */
  consume(n: number): void {
    this.counted += n;
    if (this.counted > this.budget.maxBuckets) throw tooManyBuckets(this.budget.maxBuckets);
    if ((++this.calls & 0x3ff) === 0) this.budget.reserve(0, 'allocated_buckets');
  }

  /** A meter for aggregation `name` (label `<agg [name]>`). */
  meter(name: string): AggMeter {
    const label = `<agg [${name}]>`;
    let pending = 0;
    return {
      add: (bytes) => {
        pending += bytes;
        if (pending >= STEP) {
          this.budget.reserve(pending, label);
          pending = 0;
        }
      },
    };
  }

  /** Reserves at once (a partial about to be built). */
  reserve(bytes: number, name: string): void {
    this.budget.reserve(bytes, `<agg [${name}]>`);
  }

  /** Counts every bucket of a shard's partial, nested ones included, against `search.max_buckets`. */
  checkPartial(map: PartialMap): void {
    const n = countBuckets(map);
    if (n > this.budget.maxBuckets) throw tooManyBuckets(this.budget.maxBuckets);
  }
}

/** Buckets in a partial tree: every `buckets` entry of every aggregation, at every level. */
export function countBuckets(map: PartialMap): number {
  let n = 0;
  for (const p of Object.values(map) as AggPartial[]) {
    const buckets = (p as { buckets?: Array<{ subs?: PartialMap }> }).buckets;
    if (!Array.isArray(buckets)) continue;
    n += buckets.length;
    for (const b of buckets) if (b.subs) n += countBuckets(b.subs);
  }
  return n;
}
