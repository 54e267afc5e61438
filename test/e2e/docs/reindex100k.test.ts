/**
 * Issue 13 "Must show": a reindex of 100,000 documents with `slices: auto` (a 3-shard source, so
 * three sliced scrolls run at once) copies every document exactly once. About 20 s on the 2-core
 * VM (loading the source included), hence its own suite.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { raw } from '../search/helpers';

let t: TestNode;
const N = 100_000;

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'big', settings: { number_of_shards: 3 }, mappings: { properties: { n: { type: 'long' }, g: { type: 'keyword' } } } });
  for (let i = 0; i < N; i += 5000) {
    const body = Array.from({ length: 5000 }, (_, j) => `{"index":{"_id":"d${i + j}"}}\n{"n":${i + j},"g":"g${(i + j) % 7}"}\n`).join('');
    const r = await raw(t, 'POST', '/big/_bulk', body);
    if (r.status !== 200 || r.json.errors) throw new Error(`load failed: ${r.text.slice(0, 300)}`);
  }
  await t.es.indices.refresh({ index: 'big' });
}, 240_000);
afterAll(async () => {
  await t?.stop();
});

it('copies 100,000 documents exactly once with slices=auto', async () => {
  const r = (await t.es.reindex({ source: { index: 'big' }, dest: { index: 'copy' }, slices: 'auto', refresh: true })) as Awaited<ReturnType<TestNode['es']['reindex']>> & { slices: Array<{ slice_id: number; created: number }> };
  // created, never updated: no document was written twice
  expect([r.total, r.created, r.updated, r.version_conflicts, r.failures]).toEqual([N, N, 0, 0, []]);
  expect(r.slices.map((s) => s.slice_id)).toEqual([0, 1, 2]);
  expect(r.slices.every((s) => s.created > N / 6)).toBe(true);
  // every id once, with its own source
  const seen = new Uint8Array(N);
  let page = await t.es.search<{ n: number; g: string }>({ index: 'copy', scroll: '1m', size: 5000, sort: ['_doc'] });
  while (page.hits.hits.length) {
    for (const h of page.hits.hits) {
      const n = h._source!.n;
      expect(h._id).toBe(`d${n}`);
      expect(h._source!.g).toBe(`g${n % 7}`);
      seen[n]++;
    }
    page = await t.es.scroll({ scroll_id: page._scroll_id!, scroll: '1m' });
  }
  await t.es.clearScroll({ scroll_id: page._scroll_id! });
  expect(seen.every((x) => x === 1)).toBe(true);
  // the reindex's own scrolls are gone
  expect((await raw(t, 'GET', '/_scroll')).json.count).toBe(0);
}, 240_000);
