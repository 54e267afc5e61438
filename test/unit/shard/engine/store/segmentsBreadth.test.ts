/**
 * Issue 24's queries and options on a shard of several segments answer exactly as on one segment:
 * compound and full-text queries score with shard-wide statistics, named queries and fields are
 * per hit, collapse keeps one hit per group across segments, rescore rescores the shard's window.
 */
import { IndexMapping, ShardStore } from '../../../../../actors/shard/engine';
import type { ShardQueryRequest } from '../../../../../actors/shard/engine';
import { rng } from '../../../../support/rng';

const MAPPINGS = { properties: { title: { type: 'text' }, body: { type: 'text' }, tags: { type: 'keyword' }, n: { type: 'long' }, g: { type: 'keyword' } } };
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'fox', 'golf', 'hotel'];
const settings = () => ({ maxResultWindow: 10000, maxSlicesPerScroll: 1024 });
const newStore = () => new ShardStore({ index: 'idx', shardId: 0, mapping: new IndexMapping(MAPPINGS), settings });

function stores(seed: number, ops: number, flushEvery: number): { one: ShardStore; many: ShardStore } {
  const r = rng(seed);
  const one = newStore();
  const many = newStore();
  const pick = <T>(a: T[]) => a[Math.floor(r() * a.length)];
  const words = (n: number) => Array.from({ length: 1 + Math.floor(r() * n) }, () => pick(WORDS)).join(' ');
  const ids: string[] = [];
  for (let i = 0; i < ops; i++) {
    const x = r();
    let w;
    if (x < 0.1 && ids.length) w = { op: 'delete' as const, id: pick(ids) };
    else {
      const id = x < 0.35 && ids.length ? pick(ids) : `d${i}`;
      if (!ids.includes(id)) ids.push(id);
      w = { op: 'index' as const, id, source: JSON.stringify({ title: words(5), body: words(12), tags: pick(WORDS), n: Math.floor(r() * 40), g: `g${Math.floor(r() * 7)}` }) };
    }
    expect(many.write(w)).toEqual(one.write(w));
    if (r() < 1 / flushEvery) many.flush();
  }
  one.refresh();
  many.refresh();
  return { one, many };
}

const QUERIES: unknown[] = [
  { multi_match: { query: 'alpha bravo', fields: ['title', 'body^2'] } },
  { multi_match: { query: 'alpha bravo', fields: ['title', 'body'], type: 'most_fields', _name: 'mm' } },
  { multi_match: { query: 'charlie del', fields: ['title', 'body'], type: 'bool_prefix' } },
  { dis_max: { queries: [{ match: { title: 'echo' } }, { match: { body: { query: 'echo', _name: 'b' } } }], tie_breaker: 0.4 } },
  { function_score: { query: { match: { body: 'golf hotel' } }, functions: [{ filter: { term: { tags: 'fox' } }, weight: 3 }, { field_value_factor: { field: 'n', modifier: 'log1p' } }], score_mode: 'sum' } },
  { query_string: { query: 'title:(alpha OR bravo) -tags:golf', default_operator: 'or' } },
  { simple_query_string: { query: 'fox + (hotel | echo)', fields: ['title', 'body'] } },
  { combined_fields: { query: 'delta echo', fields: ['title', 'body'] } },
  { boosting: { positive: { match: { body: 'alpha' } }, negative: { term: { tags: 'alpha' } }, negative_boost: 0.2 } },
];

describe('issue 24 queries on a shard in several segments', () => {
  it.each([[11, 700, 60], [12, 1200, 200]])('answer as one segment (seed %i, %i ops, a flush every ~%i ops)', (seed, ops, flushEvery) => {
    const { one, many } = stores(seed, ops, flushEvery);
    expect(many.segmentNames().length).toBeGreaterThan(1);
    const s = one.acquireSearcher();
    const r = rng(seed * 7);
    for (let i = 0; i < 60; i++) {
      const query = QUERIES[i % QUERIES.length];
      const collapse = r() < 0.3;
      const req: ShardQueryRequest = {
        query, from: r() < 0.2 ? 3 : 0, size: [3, 10, 40][Math.floor(r() * 3)], trackTotalHits: true, shardIndex: 0,
        ...(collapse ? { collapse: { field: 'g' } } : {}),
        ...(!collapse && r() < 0.4 ? { rescore: [{ windowSize: 15, query: { match: { title: 'fox' } }, queryWeight: 0.7, rescoreQueryWeight: 1.5, scoreMode: 'total' as const }] } : {}),
        ...(r() < 0.3 ? { docvalueFields: [{ field: 'tags' }], fields: [{ field: 'title' }] } : {}),
      };
      expect({ i, r: many.query(s, req) }).toEqual({ i, r: one.query(s, req) });
    }
  });
});
