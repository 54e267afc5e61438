/**
 * The top-k scoring path (topScore.ts, flatPlan/flatRun/flatTwo.ts) against the
 * exhaustive path (every match scored) on random corpora: same hits, order, scores, max_score and
 * totals, whatever the query shape, window, total tracking, deletes, pinned searchers, slices,
 * post_filter and min_score.
 */
import { IndexMapping, ShardStore } from '../../../../../actors/shard/engine';
import type { LocalSlice, SearcherRef, ShardQueryRequest, SortSpec } from '../../../../../actors/shard/engine';
import { compileQuery } from '../../../../../actors/shard/engine/query/query';
import { planTopScore, runTopScore } from '../../../../../actors/shard/engine/query/topScore';
import { filterLeads, rarestRequired } from '../../../../../actors/shard/engine/query/flatPlan';
import { leafOf } from '../engineFixture';
import { rng } from '../../../../support/rng';

const MAPPING = { properties: { title: { type: 'text' }, body: { type: 'text' }, tag: { type: 'keyword' }, n: { type: 'long' } } };
// few words, skewed: many ties, long and short posting lists, repeated terms (tf > 1)
const WORDS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'zz'];

interface Corpus {
  store: ShardStore;
  /** Searchers taken along the way (older ones pinned before later writes and deletes). */
  searchers: SearcherRef[];
  ids: string[];
}

function corpus(seed: number, deletes = true): Corpus {
  const r = rng(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  const word = () => WORDS[Math.min(WORDS.length - 1, Math.floor(WORDS.length * r() * r()))];
  const text = (max: number) => Array.from({ length: 1 + Math.floor(r() * max) }, word).join(' ');
  const store = new ShardStore({ index: 'idx', shardId: 0, mapping: new IndexMapping(MAPPING), settings: () => ({ maxResultWindow: 10000, maxSlicesPerScroll: 1024 }) });
  const n = 200 + Math.floor(r() * 2500);
  const searchers: SearcherRef[] = [];
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const roll = r();
    if (deletes && roll < 0.06 && ids.length) store.write({ op: 'delete', id: pick(ids) });
    else {
      // updates re-index an existing id (the old doc is deleted)
      const id = deletes && roll < 0.12 && ids.length ? pick(ids) : `d${i}`;
      if (id === `d${i}`) ids.push(id);
      const src: Record<string, unknown> = { n: Math.floor(r() * 50) };
      if (r() < 0.9) src.title = text(r() < 0.2 ? 30 : 6);
      if (r() < 0.5) src.body = text(12);
      if (r() < 0.7) src.tag = pick(['x', 'y', 'z']);
      const o = store.write({ op: 'index', id, source: JSON.stringify(src) });
      if (!o.ok) throw new Error(o.error.reason);
    }
    if (r() < 0.002 || i === n >> 1) {
      store.refresh();
      searchers.push(store.acquireSearcher());
    }
  }
  store.refresh();
  searchers.push(store.acquireSearcher());
  return { store, searchers, ids };
}

/** A random query of the shapes the top-k path takes, and of some it leaves to the exhaustive path. */
function query(r: () => number, depth = 0): unknown {
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  const words = (k: number) => Array.from({ length: k }, () => pick(WORDS)).join(' ');
  const field = () => (r() < 0.8 ? 'title' : 'body');
  const boost = () => (r() < 0.2 ? { boost: pick([0, 0.5, 2, 3.7]) } : {});
  const match = () => {
    const k = pick([1, 1, 2, 2, 3, 3, 4, 5]);
    const o: Record<string, unknown> = { query: words(k), ...boost() };
    if (r() < 0.3) o.operator = 'and';
    else if (r() < 0.4) o.minimum_should_match = pick(['2', '-1', '60%', '1<-1', '3']);
    return { match: { [field()]: o } };
  };
  const term = () => ({ match: { [field()]: { query: pick(WORDS), ...boost() } } });
  const leaf = () => {
    const x = r();
    if (x < 0.45) return term(); // single terms keep a bool flat; multi-term matches in should do not
    if (x < 0.75 || depth > 1) return match();
    if (x < 0.8) return { term: { tag: pick(['x', 'y', 'z']) } };
    if (x < 0.87) return { range: { n: { gte: Math.floor(r() * 30), ...boost() } } };
    if (x < 0.92) return { constant_score: { filter: match(), ...boost() } };
    if (x < 0.96) return { match_all: boost() };
    return query(r, depth + 1);
  };
  if (r() < 0.45) return match();
  const clauses = (max: number) => Array.from({ length: Math.floor(r() * (max + 1)) }, leaf);
  const b: Record<string, unknown> = { must: clauses(2), should: clauses(3), filter: clauses(1), must_not: r() < 0.3 ? clauses(1) : [], ...boost() };
  if (r() < 0.25) b.minimum_should_match = pick([1, 2, '50%', -1]);
  return { bool: b };
}

function request(r: () => number, q: unknown, s: SearcherRef): Partial<ShardQueryRequest> {
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  const req: Partial<ShardQueryRequest> = {
    query: q,
    from: r() < 0.2 ? Math.floor(r() * 15) : 0,
    size: pick([0, 1, 3, 10, 10, 10, 25]),
    trackTotalHits: pick<boolean | number>([10000, 10000, 0, 1, 7, 50, 300, false, true, -1]),
  };
  if (r() < 0.15) req.minScore = pick([0, 0.3, 1, 2.5]);
  if (r() < 0.15) req.postFilter = pick([{ term: { tag: 'x' } }, { range: { n: { lt: 20 } } }, { match: { body: 'a' } }]);
  if (r() < 0.15) {
    const max = pick([2, 3]);
    const slice: LocalSlice = { id: Math.floor(r() * max), max, mode: r() < 0.5 ? 'scroll' : 'pit' };
    req.slice = slice;
  }
  return req;
}

const run = (store: ShardStore, s: SearcherRef, req: Partial<ShardQueryRequest>, exhaustive: boolean) =>
  store.query(s, { from: 0, size: 10, trackTotalHits: 10000, shardIndex: 0, ...req } as ShardQueryRequest, { exhaustive });

describe('top-k scoring', () => {
  it('returns what scoring every match returns, on random corpora and queries', () => {
    let compared = 0, topK = 0;
    for (let c = 0; c < 24; c++) {
      // every third corpus without deletes or updates: totals may then come from doc freqs
      const { store, searchers } = corpus(1000 + c, c % 3 !== 0);
      const r = rng(7 + c);
      for (let i = 0; i < 60; i++) {
        const s = searchers[Math.floor(r() * searchers.length)];
        const q = query(r);
        const req = request(r, q, s);
        const ctx = leafOf(store, s);
        if (planTopScore(compileQuery(q, ctx), ctx) && req.trackTotalHits !== true) topK++;
        const fast = run(store, s, req, false);
        const full = run(store, s, req, true);
        expect({ q, req, r: fast }).toEqual({ q, req, r: full });
        compared++;
      }
    }
    expect(compared).toBe(24 * 60);
    // a large share went through the top-k path (else this test would compare a path with itself)
    expect(topK).toBeGreaterThan(compared * 0.4);
  });

  it('keeps ties in doc order across windows', () => {
    // the same short text everywhere: one score, the top k are the first docs
    const docs = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`t${i}`, { title: i % 3 ? 'p q' : 'p' }]));
    const store = new ShardStore({ index: 'idx', shardId: 0, mapping: new IndexMapping(MAPPING), settings: () => ({ maxResultWindow: 10000, maxSlicesPerScroll: 1024 }) });
    for (const [id, src] of Object.entries(docs)) store.write({ op: 'index', id, source: JSON.stringify(src) });
    store.refresh();
    const s = store.acquireSearcher();
    for (const query of [{ match: { title: 'p' } }, { match: { title: 'p q' } }, { match: { title: { query: 'p q', operator: 'and' } } }]) {
      for (const trackTotalHits of [10000, 10, false]) {
        const req = { query, size: 20, trackTotalHits };
        expect(run(store, s, req, false)).toEqual(run(store, s, req, true));
      }
    }
  });

  it('lets a filter far rarer than the postings lead, with the same results', () => {
    const { store, searchers } = corpus(91);
    const r = rng(5);
    for (const s of searchers) {
      const ctx = leafOf(store, s);
      for (const query of [
        { bool: { must: [{ match: { title: 'a b' } }], filter: [{ range: { n: { gte: 48 } } }] } },
        { bool: { must: [{ match: { title: 'a b c' } }], filter: [{ range: { n: { lt: 1 } } }, { term: { tag: 'x' } }] } },
        { bool: { should: [{ match: { title: 'a' } }, { match: { body: 'b' } }], filter: { range: { n: { gte: 48 } } }, minimum_should_match: 1 } },
      ]) {
        const plan = planTopScore(compileQuery(query, ctx), ctx)!;
        expect(filterLeads(plan.flat, rarestRequired(plan.flat))).toBe(true);
        for (let i = 0; i < 4; i++) {
          const req = request(r, query, s);
          expect({ query, req, r: run(store, s, req, false) }).toEqual({ query, req, r: run(store, s, req, true) });
        }
      }
    }
  });

  it('takes a total from doc freqs only when every doc of a clause matches', () => {
    const { store, searchers } = corpus(33, false);
    const s = searchers[searchers.length - 1];
    for (const query of [
      { match: { title: 'a' } },
      { match: { title: 'a zz' } },
      { match: { title: { query: 'a zz', minimum_should_match: 2 } } },
      { match: { title: { query: 'a b zz', operator: 'and' } } },
      { bool: { must: [{ match: { title: 'a' } }], should: [{ match: { title: 'zz' } }] } },
      { bool: { must: [{ match: { title: 'zz' } }], should: [{ match: { title: 'a' } }] } },
      { bool: { must: [{ match: { title: 'a' } }, { match: { title: 'zz' } }] } },
    ]) {
      for (const trackTotalHits of [0, 5, 50, 500, 10000]) {
        const req = { query, size: 5, trackTotalHits };
        expect({ query, trackTotalHits, r: run(store, s, req, false) }).toEqual({ query, trackTotalHits, r: run(store, s, req, true) });
      }
    }
  });

  it('pages search_after on _score the same way', () => {
    const { store, searchers } = corpus(77);
    const s = searchers[searchers.length - 1];
    const sort: SortSpec[] = [{ field: '_score', order: 'desc' }, { field: 'n', order: 'asc' }];
    const query = { match: { title: 'a b c' } };
    let after: ShardQueryRequest['searchAfter'];
    for (let page = 0; page < 5; page++) {
      const req = { query, sort, size: 7, ...(after ? { searchAfter: after } : {}) };
      const fast = run(store, s, req, false);
      expect(fast).toEqual(run(store, s, req, true));
      after = fast.hits[fast.hits.length - 1]?.sort;
      if (!after) break;
    }
  });
});

describe('top-k skipping', () => {
  // 20,000 docs of two to five words out of 28 (the bench corpus): each word in about 12 % of them
  const r = rng(42);
  const words = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu amber cobalt'.split(' ');
  const store = new ShardStore({ index: 'idx', shardId: 0, mapping: new IndexMapping(MAPPING), settings: () => ({ maxResultWindow: 10000, maxSlicesPerScroll: 1024 }) });
  for (let i = 0; i < 20_000; i++) {
    const title = Array.from({ length: 2 + Math.floor(r() * 4) }, () => words[Math.floor(r() * words.length)]).join(' ');
    store.write({ op: 'index', id: String(i), source: JSON.stringify({ title }) });
  }
  store.refresh();
  const s = store.acquireSearcher();

  it.each([
    ['one term', { match: { title: 'alpha' } }],
    ['two terms', { match: { title: 'alpha bravo' } }],
    ['three terms', { match: { title: 'alpha bravo charlie' } }],
    ['bool must of a match', { bool: { must: [{ match: { title: 'alpha bravo' } }] } }],
    ['should of two terms, filter', { bool: { should: [{ match: { title: 'alpha' } }, { match: { title: 'bravo' } }], filter: [{ match: { title: 'charlie' } }], minimum_should_match: 1 } }],
  ])('scores far fewer docs than match (%s) once the total passes its threshold', (_name, query) => {
    const ctx = leafOf(store, s);
    const matches = store.query(s, { query, from: 0, size: 0, trackTotalHits: true, shardIndex: 0 }).totalHits!;
    const plan = planTopScore(compileQuery(query, ctx), ctx)!;
    const r = runTopScore(plan, { k: 10, countUpTo: 10, range: [0, ctx.s.maxDoc], whole: true, allowed: null, visible: null });
    expect(r.scored).toBeLessThan(matches / 4);
    const full = store.query(s, { query, from: 0, size: 10, trackTotalHits: 10, shardIndex: 0 }, { exhaustive: true });
    expect(r.docs.map((d) => ctx.store.idOf(d))).toEqual(full.hits.map((h) => h._id));
    expect(r.totalRelation).toBe(full.totalRelation);
  });
});
