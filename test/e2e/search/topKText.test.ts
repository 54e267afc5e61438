/**
 * Issue 14: top-k `match` / `bool` through the HTTP edge and the official client. The default
 * search (`track_total_hits` 10,000: shards skip what cannot enter the top k) returns the hits,
 * scores and max_score of the same search with `track_total_hits: true` (every match scored), on
 * three shards, with paging, post_filter, min_score, a PIT pinned before deletes, and sliced PITs.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { bulkIndex } from './helpers';
import { rng } from '../../support/rng';

let t: TestNode;
const WORDS = 'amber birch cedar dune ember fjord glade heath inlet juniper knoll loch moor'.split(' ');
const DOCS = 24_000;

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({
    index: 'words',
    settings: { number_of_shards: 3 },
    mappings: { properties: { title: { type: 'text' }, tag: { type: 'keyword' }, n: { type: 'long' } } },
  });
  const r = rng(14);
  const docs = Array.from({ length: DOCS }, (_, i) => ({
    id: i,
    n: Math.floor(r() * 1000),
    tag: `t${Math.floor(r() * 20)}`,
    title: Array.from({ length: 1 + Math.floor(r() * 6) }, () => WORDS[Math.floor(WORDS.length * r() * r())]).join(' '),
  }));
  await bulkIndex(t, 'words', docs, (d) => String(d.id));
}, 240_000);
afterAll(async () => {
  await t?.stop();
});

const QUERIES: Array<[string, object]> = [
  ['one frequent term', { match: { title: 'amber' } }],
  ['two terms', { match: { title: 'amber birch' } }],
  ['three terms, and', { match: { title: { query: 'amber birch cedar', operator: 'and' } } }],
  ['four terms, minimum_should_match', { match: { title: { query: 'amber birch cedar dune', minimum_should_match: '75%' } } }],
  ['bool must match, filter, must_not', { bool: { must: [{ match: { title: 'birch cedar' } }], filter: [{ range: { n: { gte: 100 } } }], must_not: [{ term: { tag: 't3' } }] } }],
  ['bool should of terms with a rare filter', { bool: { should: [{ match: { title: 'amber' } }, { match: { title: 'dune' } }], filter: [{ term: { tag: 't7' } }], minimum_should_match: 1 } }],
];

type Hits = Awaited<ReturnType<TestNode['es']['search']>>['hits'];
const shape = (h: Hits) => ({ max: h.max_score, hits: h.hits.map((x) => [x._id, x._score]) });

describe('top-k text search over HTTP', () => {
  it.each(QUERIES)('returns the exhaustive top 10 for %s', async (_name, query) => {
    const fast = await t.es.search({ index: 'words', query, size: 10 });
    const full = await t.es.search({ index: 'words', query, size: 10, track_total_hits: true });
    expect(shape(fast.hits)).toEqual(shape(full.hits));
    const total = (full.hits.total as { value: number }).value;
    expect(fast.hits.total).toEqual(total > 10_000 ? { value: 10_000, relation: 'gte' } : { value: total, relation: 'eq' });
  });

  it('reports a total above the default threshold as gte 10000', async () => {
    const res = await t.es.search({ index: 'words', query: { match: { title: 'amber' } }, size: 3 });
    expect(res.hits.total).toEqual({ value: 10_000, relation: 'gte' });
  });

  it('pages with from/size, post_filter, min_score and a small track_total_hits the same way', async () => {
    for (const extra of [{ from: 25, size: 15 }, { post_filter: { term: { tag: 't2' } } }, { min_score: 1.5 }, { track_total_hits: 100 }, { track_total_hits: false }]) {
      const query = { match: { title: 'birch dune' } };
      const fast = await t.es.search({ index: 'words', query, ...extra });
      const full = await t.es.search({ index: 'words', query, ...extra, track_total_hits: true });
      expect(shape(fast.hits)).toEqual(shape(full.hits));
    }
  });

  it('scores a PIT pinned before deletes as its searcher saw the index, sliced or not', async () => {
    const { id } = await t.es.openPointInTime({ index: 'words', keep_alive: '2m' });
    try {
      await t.es.deleteByQuery({ index: 'words', query: { match: { title: 'cedar' } }, refresh: true });
      const query = { match: { title: 'amber cedar' } };
      for (const slice of [undefined, { id: '0', max: 2 }, { id: '1', max: 2 }]) {
        const fast = await t.es.search({ pit: { id }, query, size: 10, ...(slice ? { slice } : {}) });
        const full = await t.es.search({ pit: { id }, query, size: 10, track_total_hits: true, ...(slice ? { slice } : {}) });
        expect(shape(fast.hits)).toEqual(shape(full.hits));
      }
      // the PIT still sees the deleted docs; a new search does not
      const pinned = await t.es.search({ pit: { id }, query: { match: { title: 'cedar' } }, size: 0, track_total_hits: true });
      const now = await t.es.search({ index: 'words', query: { match: { title: 'cedar' } }, size: 0, track_total_hits: true });
      expect((pinned.hits.total as { value: number }).value).toBeGreaterThan(0);
      expect(now.hits.total).toEqual({ value: 0, relation: 'eq' });
    } finally {
      await t.es.closePointInTime({ id });
    }
  });
});
