/**
 * Aggregation paging (issue 13 item 7): `composite` with `after_key` over a multi-shard index
 * visits every bucket exactly once (official v8 and v9 clients), plus `percentiles` and
 * `cardinality` as tools send them. Expected buckets are computed here from the indexed docs.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { bulkIndex, raw } from './helpers';
import { rng } from '../../support/rng';

let t: TestNode;
const r = rng(13);
const DAY = 86_400_000;
const T0 = Date.parse('2024-03-01T00:00:00Z');
const docs = Array.from({ length: 3000 }, (_, i) => ({
  id: String(i),
  host: r() < 0.05 ? undefined : `h${Math.floor(r() * 37)}`,
  ts: new Date(T0 + Math.floor(r() * 20 * DAY)).toISOString(),
  bytes: Math.floor(r() * 10_000),
  user: `u${Math.floor(r() * 900)}`,
}));

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({
    index: 'weblogs',
    settings: { number_of_shards: 5, number_of_replicas: 0 },
    mappings: { properties: { host: { type: 'keyword' }, ts: { type: 'date' }, bytes: { type: 'long' }, user: { type: 'keyword' } } },
  });
  await bulkIndex(t, 'weblogs', docs.map((d) => Object.fromEntries(Object.entries(d).filter(([, v]) => v !== undefined)) as typeof docs[number]));
});
afterAll(async () => {
  await t?.stop();
});

type Bucket = { key: Record<string, string | number | null>; doc_count: number; total?: { value: number } };

it('pages a composite aggregation over 5 shards with after_key, every bucket exactly once (v8)', async () => {
  const want = new Map<string, { count: number; bytes: number }>();
  for (const d of docs) {
    const k = JSON.stringify([d.host ?? null, Math.floor((Date.parse(d.ts) - 0) / DAY) * DAY]);
    const e = want.get(k) ?? { count: 0, bytes: 0 };
    e.count++;
    e.bytes += d.bytes;
    want.set(k, e);
  }
  const seen = new Map<string, { count: number; bytes: number }>();
  let after: Record<string, string | number | null> | undefined;
  let pages = 0;
  for (;;) {
    const res = await t.es.search({
      index: 'weblogs',
      size: 0,
      aggs: {
        c: {
          composite: {
            size: 17,
            sources: [{ host: { terms: { field: 'host', missing_bucket: true } } }, { day: { date_histogram: { field: 'ts', calendar_interval: '1d' } } }],
            ...(after ? { after } : {}),
          },
          aggs: { total: { sum: { field: 'bytes' } } },
        },
      },
    });
    const agg = res.aggregations!.c as { buckets: Bucket[]; after_key?: Record<string, string | number | null> };
    if (!agg.buckets.length) {
      expect(agg.after_key).toBeUndefined();
      break;
    }
    pages++;
    expect(agg.buckets.length).toBeLessThanOrEqual(17);
    for (const b of agg.buckets) {
      const k = JSON.stringify([b.key.host, b.key.day]);
      expect([k, seen.has(k)]).toEqual([k, false]);
      seen.set(k, { count: b.doc_count, bytes: b.total!.value });
    }
    expect(agg.after_key).toEqual(agg.buckets[agg.buckets.length - 1].key);
    after = agg.after_key;
  }
  expect(pages).toBe(Math.ceil(want.size / 17));
  expect(new Map([...seen].sort())).toEqual(new Map([...want].sort()));
});

it('pages descending by a numeric histogram with the v9 client, in key order', async () => {
  const keys: number[] = [];
  let after: Record<string, unknown> | undefined;
  for (;;) {
    const res = await t.es9.search({
      index: 'weblogs',
      size: 0,
      aggs: { c: { composite: { size: 7, sources: [{ b: { histogram: { field: 'bytes', interval: 500, order: 'desc' } } }], ...(after ? { after } : {}) } } },
    } as never);
    const agg = (res.aggregations as Record<string, { buckets: Array<{ key: { b: number }; doc_count: number }>; after_key?: Record<string, unknown> }>).c;
    if (!agg.buckets.length) break;
    keys.push(...agg.buckets.map((b) => b.key.b));
    after = agg.after_key;
  }
  const want = [...new Set(docs.map((d) => Math.floor(d.bytes / 500) * 500))].sort((a, b) => b - a);
  expect(keys).toEqual(want);
});

it("answers percentiles with ES's keys and values within the data's range", async () => {
  const res = await t.es.search({ index: 'weblogs', size: 0, aggs: { p: { percentiles: { field: 'bytes', percents: [50, 95] } } } });
  const values = (res.aggregations!.p as { values: Record<string, number> }).values;
  expect(Object.keys(values)).toEqual(['50.0', '95.0']);
  const sorted = docs.map((d) => d.bytes).sort((a, b) => a - b);
  // exact below the digest threshold: the interpolated rank of ES's TDigest
  const at = (q: number) => {
    const idx = q * sorted.length - 0.5;
    const i = Math.floor(idx);
    return sorted[i] + (idx - i) * (sorted[i + 1] - sorted[i]);
  };
  expect(values['50.0']).toBeCloseTo(at(0.5), 6);
  expect(values['95.0']).toBeCloseTo(at(0.95), 6);
});

it('answers cardinality exactly below the precision threshold, as typed keys with the v9 client', async () => {
  const res = await t.es9.search({ index: 'weblogs', size: 0, typed_keys: true, aggs: { users: { cardinality: { field: 'user' } }, hosts: { cardinality: { field: 'host' } } } });
  const aggs = res.aggregations as Record<string, { value: number }>;
  expect(aggs['cardinality#users'].value).toBe(new Set(docs.map((d) => d.user)).size);
  expect(aggs['cardinality#hosts'].value).toBe(new Set(docs.filter((d) => d.host).map((d) => d.host)).size);
});

it('answers a search on a wildcard that matches no index, with a percentiles aggregation, with 200 and no hits', async () => {
  const res = await raw(t, 'POST', '/nothing-matches-*/_search', { size: 0, aggs: { p: { percentiles: { field: 'bytes' } } } });
  expect(res.status).toBe(200);
  expect(res.json.hits.hits).toEqual([]);
  expect(res.json.hits.total).toEqual({ value: 0, relation: 'eq' });
  expect(res.json._shards.total).toBe(0);
});

it('refuses a composite under another bucket aggregation', async () => {
  const res = await raw(t, 'POST', '/weblogs/_search', { size: 0, aggs: { t: { terms: { field: 'host' }, aggs: { c: { composite: { sources: [{ a: { terms: { field: 'user' } } }] } } } } } });
  expect(res.status).toBe(400);
  expect(res.json.error.reason).toBe('[composite] aggregation cannot be used with a parent aggregation of type: [TermsAggregatorFactory]');
});
