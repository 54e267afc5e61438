import { createAggregators, parseAggs, reduceAggs, renderAggs } from '../../../../../actors/shard/engine/aggregations/aggs';
import { EsError } from '../../../../../actors/wire/esErrors';
import type { DocValuesReader, FieldType } from '../../../../../actors/shard/engine/types';
import { stringify, parseJson } from '../../../../../actors/wire/json';
import { rng } from '../../../../support/rng';

type Doc = Record<string, unknown>;

function reader(mapping: Record<string, FieldType>, docs: Doc[]): DocValuesReader {
  return {
    fieldType: (f) => mapping[f],
    values: (f, doc) => {
      const v = docs[doc]?.[f];
      if (v === undefined || v === null) return [];
      return (Array.isArray(v) ? v : [v]) as Array<number | bigint | string | boolean>;
    },
  };
}

const MAPPING: Record<string, FieldType> = { tag: 'keyword', n: 'long', price: 'double', ts: 'date', body: 'text', ok: 'boolean' };
const day = (d: string) => Date.parse(`${d}T00:00:00Z`);

/** Shard partials through JSON (as over NATS), reduced and rendered. */
function run(aggs: unknown, shards: Doc[][]): Record<string, any> {
  parseAggs(aggs);
  const partials = shards.map((docs) => {
    const a = createAggregators(aggs, reader(MAPPING, docs));
    docs.forEach((_, i) => a.collect(i));
    return parseJson(stringify(a.partial()));
  });
  return renderAggs(reduceAggs(partials, aggs), aggs, false) as Record<string, any>;
}

function fail(f: () => unknown): EsError {
  try {
    f();
  } catch (e) {
    return e as EsError;
  }
  throw new Error('expected failure');
}

describe('composite', () => {
  const shards: Doc[][] = [
    [{ tag: 'b', n: 3 }, { tag: 'a', n: 1 }, { tag: ['a', 'c'], n: 7 }],
    [{ tag: 'a', n: 1 }, { n: 2 }, { tag: 'b', n: 13 }],
  ];

  it('buckets by the tuple of source values, in source order, with after_key', () => {
    const out = run({ c: { composite: { sources: [{ t: { terms: { field: 'tag' } } }, { h: { histogram: { field: 'n', interval: 5 } } }] } } }, shards);
    expect(out.c).toEqual({
      after_key: { t: 'c', h: 5 },
      buckets: [
        { key: { t: 'a', h: 0 }, doc_count: 2 },
        { key: { t: 'a', h: 5 }, doc_count: 1 },
        { key: { t: 'b', h: 0 }, doc_count: 1 },
        { key: { t: 'b', h: 10 }, doc_count: 1 },
        { key: { t: 'c', h: 5 }, doc_count: 1 },
      ],
    });
  });

  it('pages with after and size, descending and with missing buckets', () => {
    const aggs = (after?: object) => ({
      c: { composite: { size: 2, sources: [{ t: { terms: { field: 'tag', order: 'desc', missing_bucket: true } } }], ...(after ? { after } : {}) } },
    });
    const p1 = run(aggs(), shards).c;
    expect(p1.buckets).toEqual([{ key: { t: 'c' }, doc_count: 1 }, { key: { t: 'b' }, doc_count: 2 }]);
    const p2 = run(aggs(p1.after_key), shards).c;
    expect(p2.buckets).toEqual([{ key: { t: 'a' }, doc_count: 3 }, { key: { t: null }, doc_count: 1 }]);
    const p3 = run(aggs(p2.after_key), shards).c;
    expect(p3).toEqual({ buckets: [] });
  });

  it('keys date_histogram sources by epoch millis, or by the format given', () => {
    const docs = [[{ ts: '2024-01-01T10:00:00Z' }, { ts: '2024-01-02T11:00:00Z' }], [{ ts: '2024-01-01T23:00:00Z' }]];
    const out = run({ c: { composite: { sources: [{ d: { date_histogram: { field: 'ts', calendar_interval: 'day' } } }] } } }, docs);
    expect(out.c.buckets).toEqual([{ key: { d: day('2024-01-01') }, doc_count: 2 }, { key: { d: day('2024-01-02') }, doc_count: 1 }]);
    const fmt = run({ c: { composite: { sources: [{ d: { date_histogram: { field: 'ts', fixed_interval: '1d', format: 'yyyy-MM-dd' } } }] } } }, docs);
    expect(fmt.c.buckets.map((b: { key: { d: string } }) => b.key.d)).toEqual(['2024-01-01', '2024-01-02']);
    expect(fmt.c.after_key).toEqual({ d: '2024-01-02' });
    const next = run({ c: { composite: { after: { d: '2024-01-01' }, sources: [{ d: { date_histogram: { field: 'ts', fixed_interval: '1d', format: 'yyyy-MM-dd' } } }] } } }, docs);
    expect(next.c.buckets.map((b: { key: { d: string } }) => b.key.d)).toEqual(['2024-01-02']);
  });

  it('runs sub-aggregations per bucket', () => {
    const out = run({ c: { composite: { sources: [{ t: { terms: { field: 'tag' } } }] }, aggs: { s: { sum: { field: 'n' } } } } }, shards);
    expect(out.c.buckets.map((b: { key: { t: string }; s: { value: number } }) => [b.key.t, b.s.value])).toEqual([['a', 9], ['b', 16], ['c', 7]]);
  });

  it('visits every bucket exactly once across pages, over any split into shards (property)', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const r = rng(seed);
      const nShards = 1 + Math.floor(r() * 5);
      const size = 1 + Math.floor(r() * 7);
      const docs: Doc[] = Array.from({ length: 60 + Math.floor(r() * 200) }, () => ({
        tag: r() < 0.1 ? undefined : `k${Math.floor(r() * 12)}`,
        n: r() < 0.1 ? undefined : Math.floor(r() * 40),
      }));
      const split: Doc[][] = Array.from({ length: nShards }, () => []);
      for (const d of docs) split[Math.floor(r() * nShards)].push(d);
      const nMissingBucket = r() < 0.5;
      const sources = [
        { t: { terms: { field: 'tag', missing_bucket: true, order: r() < 0.5 ? 'asc' : 'desc' } } },
        { h: { histogram: { field: 'n', interval: 3, missing_bucket: nMissingBucket } } },
      ];
      // Expected: every (tag, bucket) pair with its count, computed directly.
      const want = new Map<string, number>();
      for (const d of docs) {
        if (d.n === undefined && !nMissingBucket) continue;
        const k = JSON.stringify([d.tag ?? null, d.n === undefined ? null : Math.floor((d.n as number) / 3) * 3]);
        want.set(k, (want.get(k) ?? 0) + 1);
      }
      const seen = new Map<string, number>();
      let after: object | undefined;
      for (let page = 0; page < 1000; page++) {
        const out = run({ c: { composite: { size, sources, ...(after ? { after } : {}) } } }, split).c;
        if (!out.buckets.length) break;
        expect(out.buckets.length).toBeLessThanOrEqual(size);
        for (const b of out.buckets) {
          const k = JSON.stringify([b.key.t, b.key.h]);
          expect([seed, k, seen.has(k)]).toEqual([seed, k, false]);
          seen.set(k, b.doc_count);
        }
        after = out.after_key;
      }
      expect([seed, [...seen].sort()]).toEqual([seed, [...want].sort()]);
    }
  });

  it("refuses bad requests with ES's errors", () => {
    expect(fail(() => parseAggs({ c: { composite: { size: 3 } } })).message).toBe('Required [sources]');
    expect(fail(() => parseAggs({ c: { composite: { sources: [{ a: { terms: { field: 'x' } } }, { a: { terms: { field: 'y' } } }] } } })).message).toBe(
      'Composite source names must be unique, found duplicates: [a]',
    );
    expect(fail(() => parseAggs({ c: { composite: { sources: [{ a: { terms: { field: 'x' } } }], after: { a: 1, b: 2 } } } })).message).toBe(
      '[after] has 2 value(s) but [sources] has 1',
    );
    expect(fail(() => parseAggs({ c: { composite: { sources: [{ a: { terms: { field: 'x' } } }], after: { b: 2 } } } })).message).toBe('Missing value for [after.a]');
    const size0 = fail(() => parseAggs({ c: { composite: { size: 0, sources: [{ a: { terms: { field: 'x' } } }] } } }));
    expect([size0.type, size0.message, size0.extra.causedBy?.message]).toEqual(['x_content_parse_exception', '[1:1] [composite] failed to parse field [size]', '[size] must be greater than 0. Found [0] in [c]']);
    expect(fail(() => parseAggs({ t: { terms: { field: 'tag' }, aggs: { c: { composite: { sources: [{ a: { terms: { field: 'x' } } }] } } } } })).message).toBe(
      '[composite] aggregation cannot be used with a parent aggregation of type: [TermsAggregatorFactory]',
    );
    expect(fail(() => parseAggs({ c: { composite: { sources: [{ a: { geotile_grid: { field: 'x' } } }] } } })).status).toBe(400);
    const tooMany = fail(() => run({ c: { composite: { size: 1_000_000_000, sources: [{ t: { terms: { field: 'tag' } } }] } } }, [[{ tag: 'a' }]]));
    expect([tooMany.type, tooMany.message]).toEqual([
      'too_many_buckets_exception',
      'Trying to create too many buckets. Must be less than or equal to: [65536] but was [1000000000]. This limit can be set by changing the [search.max_buckets] cluster level setting.',
    ]);
    expect(fail(() => parseAggs({ c: { composite: { sources: [] } } })).message).toBe('Composite [sources] cannot be null or empty');
  });
});

describe('percentiles', () => {
  // ES's search.aggregation/180_percentiles_tdigest_metric.yml values
  const docs: Doc[][] = [[{ n: 1, price: 1.0 }, { n: 101, price: 101.0 }], [{ n: 51, price: 51.0 }, { n: 151, price: 151.0 }]];

  it("gives ES's TDigest figures on small sets, keyed by Java-printed percents", () => {
    const out = run({ p: { percentiles: { field: 'n' } }, q: { percentiles: { field: 'price', tdigest: { compression: 200 } } } }, docs);
    const want = { '1.0': 1, '5.0': 1, '25.0': 26, '50.0': 76, '75.0': 126, '95.0': 151, '99.0': 151 };
    expect(out.p).toEqual({ values: want });
    expect(out.q).toEqual({ values: want });
  });

  it('interpolates as ES on a filtered set, and answers non-keyed and explicit percents', () => {
    const out = run({ p: { percentiles: { field: 'n', percents: [1, 25, 50, 75, 99] } } }, [[{ n: 51 }, { n: 151 }], [{ n: 101 }]]);
    expect(out.p.values).toEqual({ '1.0': 51, '25.0': 63.5, '50.0': 101, '75.0': 138.5, '99.0': 151 });
    const nk = run({ p: { percentiles: { field: 'n', percents: [5, 25, 50], keyed: false } } }, docs);
    expect(nk.p.values).toEqual([{ key: 5, value: 1 }, { key: 25, value: 26 }, { key: 50, value: 76 }]);
  });

  it('answers null values without data, and uses missing', () => {
    expect(run({ p: { percentiles: { field: 'nope', percents: [50] } } }, docs).p).toEqual({ values: { '50.0': null } });
    expect(run({ p: { percentiles: { field: 'nope', missing: 1, percents: [50] } } }, docs).p).toEqual({ values: { '50.0': 1 } });
    expect(renderAggs(reduceAggs([], { p: { percentiles: { field: 'n', percents: [50] } } }), { p: { percentiles: { field: 'n', percents: [50] } } }, false)).toEqual({ p: { values: { '50.0': null } } });
  });

  it('estimates large sets within a small error', () => {
    const big: Doc[][] = [[], [], []];
    for (let i = 0; i < 30_000; i++) big[i % 3].push({ n: i });
    const out = run({ p: { percentiles: { field: 'n', percents: [50, 99] } } }, big);
    expect(Math.abs(out.p.values['50.0'] - 15_000)).toBeLessThan(150);
    expect(Math.abs(out.p.values['99.0'] - 29_700)).toBeLessThan(150);
  });

  it("refuses bad params and keyword fields with ES's texts", () => {
    expect(fail(() => parseAggs({ p: { percentiles: { field: 'n', tdigest: { compression: -1 } } } })).message).toMatch(/\[compression\] must be greater than or equal to 0. Found \[-1.0\]/);
    for (const percents of [[], null, ['foo']]) expect(fail(() => parseAggs({ p: { percentiles: { field: 'n', percents } } })).status).toBe(400);
    expect(fail(() => run({ p: { percentiles: { field: 'tag' } } }, docs)).message).toBe('Field [tag] of type [keyword] is not supported for aggregation [percentiles]');
    expect(fail(() => parseAggs({ p: { percentiles: { field: 'n' }, aggs: { x: { max: { field: 'n' } } } } })).status).toBe(500);
  });
});

describe('cardinality', () => {
  it('counts distinct values exactly below precision_threshold, across shards', () => {
    const shards: Doc[][] = [[{ tag: 'a', n: 1 }, { tag: ['b', 'a'], n: 2 }], [{ tag: 'c', n: 1 }, { tag: 'a' }, {}]];
    expect(run({ t: { cardinality: { field: 'tag' } }, n: { cardinality: { field: 'n' } }, m: { cardinality: { field: 'nope' } } }, shards)).toEqual({
      t: { value: 3 },
      n: { value: 2 },
      m: { value: 0 },
    });
  });

  it('is exact up to the threshold and close beyond it', () => {
    const shards: Doc[][] = [[], []];
    for (let i = 0; i < 3000; i++) shards[i % 2].push({ tag: `v${i % 2500}` });
    expect(run({ t: { cardinality: { field: 'tag', precision_threshold: 3000 } } }, shards).t.value).toBe(2500);
    const many: Doc[][] = [[], [], []];
    for (let i = 0; i < 60_000; i++) many[i % 3].push({ n: i });
    const est = run({ t: { cardinality: { field: 'n', precision_threshold: 100 } } }, many).t.value;
    expect(Math.abs(est - 60_000) / 60_000).toBeLessThan(0.03);
  });

  it('refuses text fields and a negative threshold', () => {
    expect(fail(() => run({ t: { cardinality: { field: 'body' } } }, [[{ body: 'x' }]])).message).toMatch(/^Text fields are not optimised/);
    expect(fail(() => parseAggs({ t: { cardinality: { field: 'n', precision_threshold: -1 } } })).message).toBe('[precisionThreshold] must be greater than or equal to 0. Found [-1] in [t]');
  });
});
