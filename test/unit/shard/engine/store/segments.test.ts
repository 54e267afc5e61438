/**
 * A shard split into several segments answers exactly as the same shard in one segment: random
 * histories of index/update/delete, flushed at random points in one store and never in the other,
 * then random queries, sorts, windows, search_after, slices, aggregations and gets on the current
 * and on older (pinned) searchers.
 */
import { IndexMapping, ShardStore } from '../../../../../actors/shard/engine';
import type { SearcherRef, ShardQueryRequest, SortSpec } from '../../../../../actors/shard/engine';
import { rng } from '../../../../support/rng';

const MAPPINGS = { properties: { title: { type: 'text' }, tags: { type: 'keyword' }, n: { type: 'long' }, on: { type: 'boolean' } } };
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'fox', 'golf', 'hotel'];
const settings = () => ({ maxResultWindow: 10000, maxSlicesPerScroll: 1024 });
const newStore = () => new ShardStore({ index: 'idx', shardId: 0, mapping: new IndexMapping(MAPPINGS), settings });

interface World {
  one: ShardStore;
  many: ShardStore;
  searchers: SearcherRef[];
  ids: string[];
}

function world(seed: number, ops: number, flushEvery: number): World {
  const r = rng(seed);
  const one = newStore();
  const many = newStore();
  const searchers: SearcherRef[] = [];
  const ids: string[] = [];
  const pick = <T>(a: T[]) => a[Math.floor(r() * a.length)];
  for (let i = 0; i < ops; i++) {
    const x = r();
    let w;
    if (x < 0.15 && ids.length) w = { op: 'delete' as const, id: pick(ids) };
    else {
      const id = x < 0.45 && ids.length ? pick(ids) : `d${i}`;
      if (!ids.includes(id)) ids.push(id);
      const title = Array.from({ length: 1 + Math.floor(r() * 6) }, () => pick(WORDS)).join(' ');
      const src: Record<string, unknown> = { title, tags: r() < 0.3 ? [pick(WORDS), pick(WORDS)] : pick(WORDS), on: r() < 0.5 };
      if (r() < 0.9) src.n = Math.floor(r() * 50) - 10;
      w = { op: 'index' as const, id, source: JSON.stringify(src) };
    }
    const a = one.write(w);
    const b = many.write(w);
    expect(b).toEqual(a);
    if (r() < 0.05) {
      one.refresh();
      many.refresh();
      searchers.push(one.acquireSearcher());
    }
    if (r() < 1 / flushEvery) many.flush();
  }
  one.refresh();
  many.refresh();
  searchers.push(one.acquireSearcher());
  return { one, many, searchers, ids };
}

const QUERIES: unknown[] = [
  undefined,
  { match: { title: 'alpha' } },
  { match: { title: 'alpha bravo' } },
  { match: { title: { query: 'alpha bravo charlie', operator: 'and' } } },
  { term: { tags: 'fox' } },
  { terms: { tags: ['golf', 'echo'] } },
  { range: { n: { gte: 0, lt: 20 } } },
  { term: { on: true } },
  { bool: { must: [{ match: { title: 'delta' } }], filter: [{ range: { n: { gte: 5 } } }], must_not: [{ term: { tags: 'hotel' } }] } },
  { bool: { should: [{ match: { title: 'echo' } }, { term: { tags: 'alpha' } }] } },
  { ids: { values: ['d1', 'd7', 'd20', 'nope'] } },
  { exists: { field: 'n' } },
  { prefix: { tags: 'g' } },
];
const SORTS: Array<SortSpec[] | undefined> = [
  undefined,
  [{ field: '_doc', order: 'asc' }],
  [{ field: '_shard_doc', order: 'desc' }],
  [{ field: 'n', order: 'asc' }, { field: '_shard_doc', order: 'asc' }],
  [{ field: 'tags', order: 'desc' }, { field: 'n', order: 'desc' }, { field: '_doc', order: 'asc' }],
  [{ field: '_score', order: 'desc' }, { field: '_shard_doc', order: 'asc' }],
];

describe('a shard in several segments', () => {
  it.each([
    [1, 600, 40],
    [2, 1500, 150],
    [3, 400, 5],
    [4, 2000, 700],
  ])('answers as one segment (seed %i, %i ops, a flush every ~%i ops)', (seed, ops, flushEvery) => {
    const { one, many, searchers, ids } = world(seed, ops, flushEvery);
    expect(many.segmentNames().length).toBeGreaterThan(0);
    const r = rng(seed * 31);
    for (let i = 0; i < 150; i++) {
      const s = searchers[Math.floor(r() * searchers.length)];
      const query = QUERIES[Math.floor(r() * QUERIES.length)];
      const sort = SORTS[Math.floor(r() * SORTS.length)];
      const req: ShardQueryRequest = {
        query, sort, from: r() < 0.2 ? 7 : 0, size: [0, 3, 10, 50, 500][Math.floor(r() * 5)],
        trackTotalHits: [true, 10, false][Math.floor(r() * 3)], shardIndex: 0,
        ...(r() < 0.3 ? { aggs: { t: { terms: { field: 'tags' } }, m: { max: { field: 'n' } } } } : {}),
        ...(r() < 0.2 ? { slice: r() < 0.5 ? { mode: 'pit' as const, id: 1, max: 3 } : { mode: 'scroll' as const, id: 0, max: 2 } } : {}),
      };
      const a = one.query(s, req);
      const b = many.query(s, req);
      expect({ i, req, r: b }).toEqual({ i, req, r: a });
      if (sort && a.hits.length) {
        const after = { ...req, from: 0, searchAfter: a.hits[a.hits.length - 1].sort };
        expect(many.query(s, after)).toEqual(one.query(s, after));
      }
      expect(many.count(s, query)).toBe(one.count(s, query));
    }
    for (const id of ids) expect(many.get(id)).toEqual(one.get(id));
    expect(many.stats()).toEqual(one.stats());
  });

  it('serves sources, versions and routings by doc id from any segment', () => {
    const { one, many } = world(9, 800, 60);
    const s = one.acquireSearcher();
    const hits = one.query(s, { from: 0, size: 10000, trackTotalHits: true, shardIndex: 0, sort: [{ field: '_doc', order: 'asc' }] }).hits;
    expect(hits.length).toBeGreaterThan(100);
    for (const h of hits) {
      expect(many.source(h.doc)).toBe(one.source(h.doc));
      expect(many.versionOf(h.doc)).toEqual(one.versionOf(h.doc));
    }
  });
});
