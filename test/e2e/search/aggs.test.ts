/**
 * Issue 2: aggregations on a small corpus spread over three shards, each expected value computed
 * here from the generated documents.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { BOOK_MAPPINGS, books, type Book } from './corpus';
import { bulkIndex } from './helpers';

let t: TestNode;
const corpus = books(120, 99);

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'books', settings: { number_of_shards: 3 }, mappings: BOOK_MAPPINGS as never });
  await bulkIndex(t, 'books', corpus);
});
afterAll(async () => {
  await t?.stop();
});

async function aggs(aggregations: Record<string, unknown>, query?: unknown): Promise<any> {
  const r = await t.es.search({ index: 'books', size: 0, aggregations: aggregations as never, ...(query ? { query: query as never } : {}) });
  expect(r.hits.hits).toEqual([]);
  return r.aggregations;
}

const nums = (key: 'price' | 'year', docs: Book[] = corpus) => docs.map((b) => b[key]).filter((v): v is number => v !== undefined);

function termsBuckets(docs: Book[]) {
  const counts = new Map<string, number>();
  for (const b of docs) if (b.tag !== undefined) counts.set(b.tag, (counts.get(b.tag) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([key, doc_count]) => ({ key, doc_count }));
}

it('buckets a keyword with terms by descending count, then key', async () => {
  const a = await aggs({ tags: { terms: { field: 'tag' } } });
  expect(a.tags).toEqual({ doc_count_error_upper_bound: 0, sum_other_doc_count: 0, buckets: termsBuckets(corpus) });
});

it('limits terms buckets to size and counts the rest in sum_other_doc_count', async () => {
  const a = await aggs({ tags: { terms: { field: 'tag', size: 2 } } });
  const all = termsBuckets(corpus);
  expect(a.tags.buckets).toEqual(all.slice(0, 2));
  expect(a.tags.sum_other_doc_count).toBe(all.slice(2).reduce((s, b) => s + b.doc_count, 0));
});

it('aggregates only the documents matching the query', async () => {
  const q = { range: { price: { lt: 50 } } };
  const a = await aggs({ tags: { terms: { field: 'tag' } } }, q);
  expect(a.tags.buckets).toEqual(termsBuckets(corpus.filter((b) => b.price < 50)));
});

it('computes min and max of a double field', async () => {
  const a = await aggs({ lo: { min: { field: 'price' } }, hi: { max: { field: 'price' } } });
  expect(a.lo.value).toBe(Math.min(...nums('price')));
  expect(a.hi.value).toBe(Math.max(...nums('price')));
});

it('computes avg and sum of a double field', async () => {
  const a = await aggs({ mean: { avg: { field: 'price' } }, total: { sum: { field: 'price' } } });
  const p = nums('price');
  const sum = p.reduce((s, v) => s + v, 0);
  expect(a.total.value).toBeCloseTo(sum, 6);
  expect(a.mean.value).toBeCloseTo(sum / p.length, 6);
});

it('computes min, max, avg and sum of a long field that some documents lack', async () => {
  const a = await aggs({ lo: { min: { field: 'year' } }, hi: { max: { field: 'year' } }, mean: { avg: { field: 'year' } }, total: { sum: { field: 'year' } } });
  const y = nums('year');
  expect(a.lo.value).toBe(Math.min(...y));
  expect(a.hi.value).toBe(Math.max(...y));
  expect(a.total.value).toBe(y.reduce((s, v) => s + v, 0));
  expect(a.mean.value).toBeCloseTo(y.reduce((s, v) => s + v, 0) / y.length, 9);
});

it('counts field values with value_count', async () => {
  const a = await aggs({ years: { value_count: { field: 'year' } }, tags: { value_count: { field: 'tag' } } });
  expect(a.years.value).toBe(nums('year').length);
  expect(a.tags.value).toBe(corpus.filter((b) => b.tag !== undefined).length);
});

it('reports null for min and avg over no values', async () => {
  const a = await aggs({ lo: { min: { field: 'price' } }, mean: { avg: { field: 'price' } }, n: { value_count: { field: 'price' } } }, { ids: { values: ['nope'] } });
  expect(a.lo.value).toBeNull();
  expect(a.mean.value).toBeNull();
  expect(a.n.value).toBe(0);
});

it('buckets dates per calendar year with date_histogram, empty years included', async () => {
  const a = await aggs({ per_year: { date_histogram: { field: 'published', calendar_interval: 'year' } } });
  const years = corpus.filter((b) => b.published).map((b) => Number(b.published!.slice(0, 4)));
  const lo = Math.min(...years);
  const hi = Math.max(...years);
  const buckets = [];
  for (let y = lo; y <= hi; y++) {
    buckets.push({ key_as_string: `${y}-01-01T00:00:00.000Z`, key: Date.UTC(y, 0, 1), doc_count: years.filter((v) => v === y).length });
  }
  expect(a.per_year.buckets).toEqual(buckets);
});

it('buckets dates per calendar month with date_histogram and min_doc_count 1', async () => {
  const a = await aggs({ per_month: { date_histogram: { field: 'published', calendar_interval: 'month', min_doc_count: 1 } } });
  const counts = new Map<string, number>();
  for (const b of corpus) if (b.published) counts.set(b.published.slice(0, 7), (counts.get(b.published.slice(0, 7)) ?? 0) + 1);
  const buckets = [...counts.keys()].sort().map((ym) => ({
    key_as_string: `${ym}-01T00:00:00.000Z`,
    key: Date.parse(`${ym}-01T00:00:00Z`),
    doc_count: counts.get(ym),
  }));
  expect(a.per_month.buckets).toEqual(buckets);
});
