import { createAggregators, reduceAggs, renderAggs } from '../../../../../actors/shard/engine/aggregations/aggs';
import { countBuckets } from '../../../../../actors/shard/engine/aggregations/aggBudget';
import { EsError } from '../../../../../actors/wire/esErrors';
import { circuitBreakingException, type SearchBudget } from '../../../../../actors/wire/circuitBreaker';
import type { DocValuesReader, FieldType } from '../../../../../actors/shard/engine/types';

/** Doc i has keyword `k` = "k<i mod distinct>", long `n` = i, date `ts` = i hours. */
function reader(distinct: number): DocValuesReader {
  const types: Record<string, FieldType> = { k: 'keyword', n: 'long', ts: 'date' };
  return {
    fieldType: (f) => types[f],
    values: (f, doc) => (f === 'k' ? [`k${doc % distinct}`] : f === 'n' ? [doc] : f === 'ts' ? [doc * 3_600_000] : []),
  };
}

/** A budget that records reservations and trips past `limit` bytes (ES's request breaker, in small). */
function budget(maxBuckets = 65_536, limit = Infinity): SearchBudget & { reserved: number; labels: Set<string> } {
  const b = {
    reserved: 0,
    labels: new Set<string>(),
    maxBuckets,
    reserve(bytes: number, label: string) {
      if (b.reserved + bytes > limit) throw circuitBreakingException(`[request] Data too large, data for [${label}]`, b.reserved + bytes, limit, 'TRANSIENT');
      b.reserved += bytes;
      b.labels.add(label);
    },
  };
  return b;
}

/** Collects docs 0..n-1; returns the error and how many docs were collected when it came. */
function collect(aggs: unknown, n: number, distinct: number, bud: SearchBudget): { error?: EsError; collected: number; partial?: unknown } {
  let i = 0;
  try {
    const a = createAggregators(aggs, reader(distinct), bud);
    for (; i < n; i++) a.collect(i);
    return { collected: i, partial: a.partial() };
  } catch (e) {
    return { error: e as EsError, collected: i };
  }
}

describe('search.max_buckets on the shard', () => {
  it('fails a 2,000,000-bucket terms aggregation at bucket 65,537, not after building them all', () => {
    const r = collect({ t: { terms: { field: 'k', size: 2_000_000 } } }, 2_000_000, 2_000_000, budget());
    expect(r.collected).toBe(65_536); // the 65,537th distinct value is the one that failed
    expect([r.error?.type, r.error?.status, r.error?.message, r.error?.extra.meta]).toEqual([
      'too_many_buckets_exception', 400,
      'Trying to create too many buckets. Must be less than or equal to: [65536] but this number of buckets was exceeded. This limit can be set by changing the [search.max_buckets] cluster level setting.',
      { max_buckets: 65_536 },
    ]);
  });

  it('counts only the buckets a terms returns (shard_size), so a small terms over many values passes', () => {
    const bud = budget(100);
    const r = collect({ t: { terms: { field: 'k', size: 10 } } }, 50_000, 50_000, bud);
    expect(r.error).toBeUndefined();
    expect(countBuckets(r.partial as never)).toBe(25); // shard_size = 10 * 1.5 + 10
    // the 50,000 live buckets were paid for on the request breaker as they grew
    expect(bud.reserved).toBeGreaterThan(50_000 * 150);
    expect(bud.labels).toEqual(new Set(['<agg [t]>']));
  });

  it('follows the setting it is given (dynamic search.max_buckets)', () => {
    const r = collect({ h: { date_histogram: { field: 'ts', fixed_interval: '1h' } } }, 1_000, 1_000, budget(500));
    expect([r.error?.type, r.collected]).toEqual(['too_many_buckets_exception', 500]);
  });

  it('counts nested buckets when the shard builds its partial, as ES counts in buildAggregations', () => {
    // 20 parent buckets x 25 children (shard_size of size 10) = 520 buckets; nested ones are not counted while collecting
    const aggs = { p: { terms: { field: 'k', size: 20 }, aggs: { c: { terms: { field: 'n', size: 10 } } } } };
    expect(collect(aggs, 2_000, 20, budget(520)).error).toBeUndefined();
    const r = collect(aggs, 2_000, 20, budget(519));
    expect([r.error?.type, r.collected]).toEqual(['too_many_buckets_exception', 2_000]);
  });

  it("keeps composite's own check of its size, which names the size", () => {
    const r = collect({ c: { composite: { size: 101, sources: [{ k: { terms: { field: 'k' } } }] } } }, 1, 1, budget(100));
    expect(r.error?.message).toBe(
      'Trying to create too many buckets. Must be less than or equal to: [100] but was [101]. This limit can be set by changing the [search.max_buckets] cluster level setting.',
    );
  });

  it('renders with the limit it is given', () => {
    const aggs = { t: { terms: { field: 'k', size: 50 } } };
    const r = collect(aggs, 100, 100, budget());
    expect(() => renderAggs(reduceAggs([r.partial], aggs), aggs, false, 49)).toThrow('Must be less than or equal to: [49] but this number of buckets was exceeded');
    expect((renderAggs(reduceAggs([r.partial], aggs), aggs, false, 50).t as { buckets: unknown[] }).buckets).toHaveLength(50);
  });
});

describe('aggregation memory on the request breaker', () => {
  it('trips while buckets grow, before the aggregation holds what it would need', () => {
    const r = collect({ t: { terms: { field: 'k' } } }, 1_000_000, 1_000_000, budget(65_536, 20 * 1024 * 1024));
    expect(r.error?.type).toBe('circuit_breaking_exception');
    expect(r.error?.status).toBe(429);
    expect(r.collected).toBeLessThan(170_000); // about 20mb of ~135-byte buckets
  });

  it('reserves the values a percentiles keeps', () => {
    const bud = budget();
    collect({ p: { percentiles: { field: 'n' } } }, 100_000, 1, bud);
    expect(bud.reserved).toBeGreaterThanOrEqual(800_000);
  });
});
