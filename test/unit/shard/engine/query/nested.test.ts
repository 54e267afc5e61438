/**
 * `nested` (issue 24): the mapping round trip, nested values kept out of the parent, the nested
 * query per object (not across objects), score modes, inner_hits, and ES's errors.
 */
import { shardWith, search, ids } from '../engineFixture';
import { parseQuery } from '../../../../../actors/shard/engine/request/queryDsl';

const MAPPING = {
  properties: {
    department: { type: 'keyword' },
    courses: { type: 'nested', properties: { name: { type: 'keyword' }, credits: { type: 'integer' } } },
    flat: { type: 'nested', include_in_parent: true, properties: { k: { type: 'keyword' } } },
    obj: { properties: { a: { type: 'keyword' } } },
  },
};
const store = shardWith({
  1: { department: 'compsci', courses: [{ name: 'OOP', credits: 3 }, { name: 'Theory', credits: 4 }], flat: { k: 'x' } },
  2: { department: 'math', courses: [{ name: 'Precalculus', credits: 1 }, { name: 'Linear Algebra', credits: 3 }] },
  3: { department: 'art', courses: { name: 'OOP', credits: 1 } },
}, MAPPING);
const run = (q: unknown) => search(store, { query: parseQuery(q) });

describe('nested', () => {
  it('renders as nested in the mapping', () => {
    expect(store.mapping.toJSON().properties).toMatchObject({ courses: { type: 'nested', properties: { name: { type: 'keyword' } } }, flat: { type: 'nested', include_in_parent: true } });
  });
  it('keeps nested values out of the parent, unless include_in_parent', () => {
    expect(ids(run({ term: { 'courses.name': 'OOP' } }))).toEqual([]);
    expect(ids(run({ term: { 'flat.k': 'x' } }))).toEqual(['1']);
  });
  it('matches within one object, not across objects', () => {
    const q = (name: string, credits: number) => ({ nested: { path: 'courses', query: { bool: { must: [{ term: { 'courses.name': name } }, { term: { 'courses.credits': credits } }] } } } });
    expect(ids(run(q('OOP', 3)))).toEqual(['1']);
    expect(ids(run(q('OOP', 4)))).toEqual([]); // OOP and 4 credits are in different objects of doc 1
    expect(ids(run(q('OOP', 1)))).toEqual(['3']);
  });
  it('score modes', () => {
    const q = (mode: string) => run({ nested: { path: 'courses', score_mode: mode, query: { function_score: { query: { match_all: {} }, field_value_factor: { field: 'courses.credits' }, boost_mode: 'replace' } } } });
    const s = (mode: string) => Object.fromEntries(q(mode).hits.map((h) => [h._id, h.score]));
    expect(s('avg')).toEqual({ 1: 3.5, 2: 2, 3: 1 });
    expect(s('max')).toEqual({ 1: 4, 2: 3, 3: 1 });
    expect(s('min')).toEqual({ 1: 3, 2: 1, 3: 1 });
    expect(s('sum')).toEqual({ 1: 7, 2: 4, 3: 1 });
    expect(s('none')).toEqual({ 1: 0, 2: 0, 3: 0 });
  });
  it('inner_hits: the matching objects with their offsets and sources', () => {
    const r = run({ nested: { path: 'courses', query: { range: { 'courses.credits': { gte: 3 } } }, inner_hits: {} } });
    expect(ids(r).sort()).toEqual(['1', '2']);
    const h1 = JSON.parse(`{${r.hits.find((h) => h._id === '1')!.tail}}`);
    expect(h1.inner_hits.courses.hits.total).toEqual({ value: 2, relation: 'eq' });
    expect(h1.inner_hits.courses.hits.hits.map((x: { _nested: unknown }) => x._nested)).toEqual([{ field: 'courses', offset: 0 }, { field: 'courses', offset: 1 }]);
    expect(h1.inner_hits.courses.hits.hits[0]._source).toEqual({ name: 'OOP', credits: 3 });
  });
  it('errors', () => {
    expect(() => run({ nested: { path: 'nope', query: { match_all: {} } } })).toThrow('[nested] failed to find nested object under path [nope]');
    expect(() => run({ nested: { path: 'obj', query: { match_all: {} } } })).toThrow('[nested] nested object under path [obj] is not of nested type');
    expect(ids(run({ nested: { path: 'nope', ignore_unmapped: true, query: { match_all: {} } } }))).toEqual([]);
    expect(() => parseQuery({ nested: { path: 'courses' } })).toThrow("[nested] requires 'query' field");
  });
});

describe('nested aggregations', () => {
  it('nested walks the nested docs, reverse_nested goes back to their parents', () => {
    const r = search(store, {
      size: 0,
      aggs: {
        c: {
          nested: { path: 'courses' },
          aggs: { names: { terms: { field: 'courses.name' }, aggs: { back: { reverse_nested: {}, aggs: { dep: { terms: { field: 'department' } } } } } }, credits: { sum: { field: 'courses.credits' } } },
        },
      },
    });
    const c = (r.aggs as Record<string, { count: number; subs: Record<string, { buckets?: Array<{ key: string; count: number; subs: Record<string, { count: number; subs: Record<string, { buckets: Array<{ key: string; count: number }> }> }> }>; value?: number }> }>).c;
    expect(c.count).toBe(5);
    expect(c.subs.credits.value).toBe(12);
    const oop = c.subs.names.buckets!.find((b) => b.key === 'OOP')!;
    expect(oop.count).toBe(2);
    expect(oop.subs.back.count).toBe(2);
    expect(oop.subs.back.subs.dep.buckets.map((b) => b.key).sort()).toEqual(['art', 'compsci']);
  });
});
