/**
 * Issue 24, queries through the official client: Elasticsearch's YAML REST tests
 * search/310_match_bool_prefix, 610_function_score, 40_indices_boost, 410_named_queries,
 * 60_query_string, 170_terms_query and the collapse cases of 110_field_collapsing, ported case by
 * case; plus rescore and the q= parameter over every field.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { failure } from './helpers';

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'bp', mappings: { properties: { my_field1: { type: 'text' }, my_field2: { type: 'text' } } } });
  const bp = [
    { my_field1: 'brown fox jump', my_field2: 'xylophone' },
    { my_field1: 'brown emu jump', my_field2: 'xylophone' },
    { my_field1: 'jumparound', my_field2: 'emu' },
    { my_field1: 'dog', my_field2: 'brown fox jump lazy' },
  ];
  await t.es.bulk({ refresh: true, operations: bp.flatMap((d, i) => [{ index: { _index: 'bp', _id: String(i + 1) } }, d]) });
});
afterAll(async () => {
  await t?.stop();
});

const idsOf = (r: { hits: { hits: Array<{ _id?: string | null }> } }) => r.hits.hits.map((h) => h._id);

describe('search/310_match_bool_prefix.yml', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ['scoring complete term', { match_bool_prefix: { my_field1: 'brown fox jump' } }, ['1', '2', '3']],
    ['scoring partial term', { match_bool_prefix: { my_field1: 'brown fox ju' } }, ['1', '2', '3']],
    ['minimum should match', { match_bool_prefix: { my_field1: { query: 'brown fox jump', minimum_should_match: 3 } } }, ['1']],
    ['analyzer', { match_bool_prefix: { my_field1: { query: 'BROWN dog', analyzer: 'whitespace' } } }, ['4']],
    ['operator', { match_bool_prefix: { my_field1: { query: 'brown fox jump', operator: 'AND' } } }, ['1']],
    ['multi_match single field complete term', { multi_match: { query: 'brown fox jump', type: 'bool_prefix', fields: ['my_field1'] } }, ['1', '2', '3']],
    ['multi_match single field partial term', { multi_match: { query: 'brown fox ju', type: 'bool_prefix', fields: ['my_field1'] } }, ['1', '2', '3']],
    ['multi_match multiple fields complete term', { multi_match: { query: 'brown fox jump lazy', type: 'bool_prefix', fields: ['my_field1', 'my_field2'] } }, ['4', '1', '2']],
    ['multi_match multiple fields partial term', { multi_match: { query: 'brown fox jump laz', type: 'bool_prefix', fields: ['my_field1', 'my_field2'] } }, ['4', '1', '2']],
    ['multi_match multiple fields with analyzer', { multi_match: { query: 'BROWN FOX JUMP dog', type: 'bool_prefix', fields: ['my_field1', 'my_field2'], analyzer: 'whitespace' } }, ['4']],
    ['multi_match multiple fields with minimum_should_match', { multi_match: { query: 'brown fox jump la', type: 'bool_prefix', fields: ['my_field1', 'my_field2'], minimum_should_match: 4 } }, ['4']],
    ['multi_match multiple fields with fuzziness', { multi_match: { query: 'dob nomatch', type: 'bool_prefix', fields: ['my_field1', 'my_field2'], fuzziness: 1 } }, ['4']],
  ])('%s', async (_name, query, expected) => {
    const r = await t.es.search({ index: 'bp', query: query as never, rest_total_hits_as_int: true });
    expect(idsOf(r)).toEqual(expected);
    expect(r.hits.total).toBe(expected.length);
  });

  it('fuzziness: fuzzy non-last terms, fuzzy_rewrite accepted', async () => {
    const r = await t.es.search({
      index: 'bp',
      query: { match_bool_prefix: { my_field2: { query: 'xylophoen foo', fuzziness: 1, prefix_length: 1, max_expansions: 10, fuzzy_transpositions: true, fuzzy_rewrite: 'constant_score' } } },
    });
    expect(r.hits.hits.map((h) => (h._source as { my_field2: string }).my_field2)).toEqual(['xylophone', 'xylophone']);
  });

  it('multi_match multiple fields with boost', async () => {
    const r = await t.es.search({ index: 'bp', query: { multi_match: { query: 'brown emu', type: 'bool_prefix', fields: ['my_field1', 'my_field2^10'], fuzziness: 1 } } });
    expect(idsOf(r)[0]).toBe('3');
  });

  it('multi_match multiple fields with slop throws exception', async () => {
    const e = await failure(t.es.search({ index: 'bp', query: { multi_match: { query: 'brown', type: 'bool_prefix', fields: ['my_field1', 'my_field2'], slop: 1 } } }));
    expect(e.status).toBe(400);
    expect(e.body.error.root_cause[0].reason).toBe('[slop] not allowed for type [bool_prefix]');
  });
});

describe('search/610_function_score.yml', () => {
  beforeAll(async () => {
    await t.es.indices.create({ index: 'fs', mappings: { properties: { text: { type: 'text' } } } });
    await t.es.index({ index: 'fs', id: '1', document: { text: 'foo bar', uuid: 1234 } });
    await t.es.index({ index: 'fs', id: '2', document: { text: 'high bar', uuid: 5678 } });
    await t.es.index({ index: 'fs', id: '3', document: { text: 'raise bar', uuid: 9012 } });
    await t.es.index({ index: 'fs', id: '3', document: { text: 'raise hands', uuid: 3456 } });
    await t.es.indices.refresh({ index: 'fs' });
  });

  it('Random: random_score on _seq_no and on a numeric field; on _id refused', async () => {
    for (const field of ['_seq_no', 'uuid']) {
      const r = await t.es.search({ index: 'fs', size: 10, query: { function_score: { query: { match: { text: 'bar' } }, random_score: { seed: 10, field } } } as never });
      expect(r.hits.hits).toHaveLength(2);
      expect((r.hits.total as { value: number }).value).toBe(2);
    }
    const e = await failure(t.es.search({ index: 'fs', size: 10, query: { function_score: { query: { match: { text: 'bar' } }, random_score: { seed: 10, field: '_id' } } } as never }));
    expect(JSON.stringify(e.body)).toMatch(/Fielddata access on the _id field is disallowed/);
  });

  it('weight with score_mode and boost_mode, and function parse errors with ES texts', async () => {
    const plain = await t.es.search({ index: 'fs', query: { match: { text: 'bar' } } });
    const r = await t.es.search({ index: 'fs', query: { function_score: { query: { match: { text: 'bar' } }, functions: [{ weight: 2 }, { filter: { match: { text: 'high' } }, weight: 3 }], score_mode: 'sum' } } });
    const s = (res: typeof r, id: string) => res.hits.hits.find((h) => h._id === id)!._score!;
    expect(s(r, '2')).toBeCloseTo(5 * s(plain, '2'), 5);
    expect(s(r, '1')).toBeCloseTo(2 * s(plain, '1'), 5);
    const e = await failure(t.es.search({ index: 'fs', query: { function_score: { weight: 2, random_score: {} } } as never }));
    expect(e.body.error.root_cause[0].reason).toBe('failed to parse [function_score] query. already found function [weight], now encountering [random_score]. use [functions] array if you want to define several functions.');
  });
});

describe('search/40_indices_boost.yml', () => {
  beforeAll(async () => {
    for (const index of ['test_1', 'test_2']) {
      await t.es.indices.create({ index });
      await t.es.indices.putAlias({ index, name: index.replace('test', 'alias') });
      await t.es.index({ index, id: '1', document: { foo: 'bar' } });
    }
    await t.es.indices.refresh({ index: ['test_1', 'test_2'] });
  });
  const order = async (boost: Array<Record<string, number>>, extra: Record<string, unknown> = {}) =>
    (await t.es.search({ index: 'test_*', indices_boost: boost, ...extra })).hits.hits.map((h) => h._index);
  it.each<[string, Array<Record<string, number>>, string[]]>([
    ['Basic indices boost', [{ test_1: 2.0 }, { test_2: 1.0 }], ['test_1', 'test_2']],
    ['Basic indices boost, reversed', [{ test_1: 1.0 }, { test_2: 2.0 }], ['test_2', 'test_1']],
    ['Indices boost with alias', [{ alias_1: 2.0 }], ['test_1', 'test_2']],
    ['Indices boost with alias 2', [{ alias_2: 2.0 }], ['test_2', 'test_1']],
    ['Indices boost with wildcard', [{ '*_1': 2.0 }], ['test_1', 'test_2']],
    ['Indices boost with wildcard 2', [{ '*_2': 2.0 }], ['test_2', 'test_1']],
    ['Indices boost multiple match: the first entry wins', [{ '*_1': 3.0 }, { alias_1: 1.0 }, { test_2: 2.0 }], ['test_1', 'test_2']],
    ['Indices boost multiple match 2', [{ '*_1': 1.0 }, { test_2: 2.0 }, { alias_1: 3.0 }], ['test_2', 'test_1']],
  ])('%s', async (_n, boost, expected) => {
    expect(await order(boost)).toEqual(expected);
  });
  it('Indices boost for nonexistent index/alias: 404, ignored with ignore_unavailable', async () => {
    const e = await failure(t.es.search({ index: 'test_*', indices_boost: [{ nonexistent: 2.0 }, { test_1: 1.0 }, { test_2: 2.0 }] }));
    expect(e.status).toBe(404);
    expect(e.body.error.reason).toBe('no such index [nonexistent]');
    expect(await order([{ nonexistent: 2.0 }, { test_1: 1.0 }, { test_2: 2.0 }], { ignore_unavailable: true })).toEqual(['test_2', 'test_1']);
  });
  it('every page of a scroll keeps the boosts', async () => {
    const first = await t.es.search({ index: 'test_*', scroll: '1m', size: 1, indices_boost: [{ test_1: 3.0 }, { test_2: 2.0 }] });
    const second = await t.es.scroll({ scroll_id: first._scroll_id!, scroll: '1m' });
    expect([first.hits.hits[0]._index, second.hits.hits[0]._index]).toEqual(['test_1', 'test_2']);
    expect(second.hits.hits[0]._score).toBeCloseTo((first.hits.hits[0]._score! * 2) / 3, 5); // test_2's boost, not 1
    await t.es.clearScroll({ scroll_id: second._scroll_id! });
  });
});

describe('search/410_named_queries.yml', () => {
  beforeAll(async () => {
    await t.es.bulk({ refresh: true, operations: [{ index: { _index: 'nq', _id: '1' } }, { field: 1 }, { index: { _index: 'nq', _id: '2' } }, { field: [1, 2] }] });
  });
  const query = { bool: { should: [{ match: { field: { query: 1, _name: 'match_field_1' } } }, { match: { field: { query: 2, _name: 'match_field_2', boost: 10 } } }] } };
  it('named_queries', async () => {
    const r = await t.es.search({ index: 'nq', query });
    expect(r.hits.hits.map((h) => h.matched_queries)).toEqual([['match_field_1', 'match_field_2'], ['match_field_1']]);
  });
  it('named_queries_with_score', async () => {
    const r = await t.es.search({ index: 'nq', query, include_named_queries_score: true });
    expect(r.hits.hits.map((h) => h.matched_queries)).toEqual([{ match_field_1: 1, match_field_2: 10 }, { match_field_1: 1 }]);
  });
});

describe('search/60_query_string.yml and q= over every field', () => {
  beforeAll(async () => {
    await t.es.indices.create({ index: 'qs', mappings: { properties: { number: { type: 'integer' } } } });
    await t.es.index({ index: 'qs', id: '1', document: { field: 'foo bar' }, refresh: true });
  });
  it.each<[Record<string, string>, number]>([
    [{ q: 'bar', df: 'field' }, 1],
    [{ q: 'field:foo field:xyz' }, 1],
    [{ q: 'field:foo field:xyz', default_operator: 'AND' }, 0],
    [{ q: 'field:BA*' }, 1],
    [{ q: 'number:foo', lenient: 'true' }, 0],
    [{ q: 'foo' }, 1],
  ])('%j', async (params, total) => {
    const r = await t.es.search({ index: 'qs', rest_total_hits_as_int: true, ...params } as never);
    expect(r.hits.total).toBe(total);
  });
  it('q= without df over several indices of different mappings is never a shard failure', async () => {
    const r = await t.es.search({ index: 'qs,bp,fs', q: 'bar' });
    expect(r._shards.failed).toBe(0);
    expect(r.hits.hits.map((h) => `${h._index}/${h._id}`).sort()).toEqual(['fs/1', 'fs/2', 'qs/1']);
  });
  it('a query_string that does not parse is a 400 with ES text', async () => {
    const e = await failure(t.es.search({ index: 'qs', query: { query_string: { query: 'field:(foo' } } }));
    expect(e.status).toBe(400);
    expect(JSON.stringify(e.body)).toContain('Failed to parse query [field:(foo]');
  });
});

describe('search/170_terms_query.yml', () => {
  beforeAll(async () => {
    await t.es.indices.create({
      index: 'tq',
      settings: { number_of_shards: 1, 'index.max_terms_count': 2 },
      mappings: { properties: { user: { type: 'keyword' }, followers: { type: 'keyword' } } },
    });
    const docs = { u1: ['u2', 'u3'], u2: ['u1', 'u3', 'u4'], u3: ['u1'], u4: ['u3'] };
    await t.es.bulk({ refresh: true, operations: Object.entries(docs).flatMap(([u, f]) => [{ index: { _index: 'tq', _id: u } }, { user: u, followers: f }]) });
  });
  it('Terms Query with No.of terms exceeding index.max_terms_count should FAIL, lookups included', async () => {
    expect((await t.es.search({ index: 'tq', rest_total_hits_as_int: true, query: { terms: { user: ['u1', 'u2'] } } })).hits.total).toBe(2);
    expect((await failure(t.es.search({ index: 'tq', query: { terms: { user: ['u1', 'u2', 'u3'] } } }))).status).toBe(400);
    const lookup = (id: string) => ({ terms: { user: { index: 'tq', id, path: 'followers' } } });
    expect((await t.es.search({ index: 'tq', rest_total_hits_as_int: true, query: lookup('u1') })).hits.total).toBe(2);
    expect((await failure(t.es.search({ index: 'tq', query: lookup('u2') }))).status).toBe(400);
  });
  it('a lookup of a missing document matches nothing; of a missing index is a 404', async () => {
    expect((await t.es.search({ index: 'tq', rest_total_hits_as_int: true, query: { terms: { user: { index: 'tq', id: 'nobody', path: 'followers' } } } })).hits.total).toBe(0);
    expect((await failure(t.es.search({ index: 'tq', query: { terms: { user: { index: 'nope', id: 'u1', path: 'followers' } } } }))).status).toBe(404);
  });
});

describe('search/110_field_collapsing.yml', () => {
  beforeAll(async () => {
    await t.es.indices.create({ index: 'fc', mappings: { properties: { numeric_group: { type: 'integer' }, tag: { type: 'keyword' } } } });
    const docs: Array<[number, number, string, number]> = [[1, 1, 'A', 10], [2, 1, 'B', 6], [3, 1, 'A', 24], [4, 25, 'B', 10], [5, 25, 'A', 5], [6, 3, 'B', 36]];
    for (const [id, g, tag, sort] of docs) {
      await t.es.index({ index: 'fc', id: String(id), version_type: 'external', version: id * 11, document: { numeric_group: g, tag, sort } });
    }
    await t.es.indices.refresh({ index: 'fc' });
  });
  const collapse = (body: Record<string, unknown>) => t.es.search({ index: 'fc', rest_total_hits_as_int: true, sort: [{ sort: 'desc' }], ...body } as never);

  it('field collapsing', async () => {
    const r = await collapse({ collapse: { field: 'numeric_group' } });
    expect(r.hits.total).toBe(6);
    expect(r.hits.hits.map((h) => [h._id, h.fields?.numeric_group, h.sort])).toEqual([['6', [3], [36]], ['3', [1], [24]], ['4', [25], [10]]]);
    for (const h of r.hits.hits) expect(h.inner_hits).toBeUndefined();
  });
  it('field collapsing and from', async () => {
    const r = await collapse({ from: 2, collapse: { field: 'numeric_group' } });
    expect(r.hits.hits.map((h) => h._id)).toEqual(['4']);
  });
  it('field collapsing, inner_hits, and fields', async () => {
    const r = await collapse({ collapse: { field: 'numeric_group', inner_hits: { name: 'sub_hits', size: 2, sort: [{ sort: 'asc' }], fields: ['tag'] } } });
    const inner = r.hits.hits.map((h) => (h.inner_hits!.sub_hits.hits.hits).map((x) => [x._id, x.fields?.tag]));
    expect(inner).toEqual([[['6', ['B']]], [['2', ['B']], ['1', ['A']]], [['5', ['A']], ['4', ['B']]]]);
    expect(r.hits.hits.map((h) => h.inner_hits!.sub_hits.hits.total)).toEqual([1, 3, 2]);
  });
  it('field collapsing and multiple inner_hits, and version', async () => {
    const r = await collapse({
      version: true,
      collapse: { field: 'numeric_group', inner_hits: [{ name: 'sub_hits_asc', size: 2, sort: [{ sort: 'asc' }], version: true }, { name: 'sub_hits_desc', size: 1, sort: [{ sort: 'desc' }] }] },
    });
    expect(r.hits.hits.map((h) => h._version)).toEqual([66, 33, 44]);
    expect(r.hits.hits.map((h) => h.inner_hits!.sub_hits_desc.hits.hits[0]._id)).toEqual(['6', '3', '4']);
    expect(r.hits.hits[1].inner_hits!.sub_hits_asc.hits.hits.map((x) => x._version)).toEqual([22, 11]);
  });
  it('field collapsing and scroll, search_after with another sort, rescore: 400s with ES texts', async () => {
    const scroll = await failure(t.es.search({ index: 'fc', scroll: '1s', collapse: { field: 'numeric_group' } }));
    expect(JSON.stringify(scroll.body)).toContain('cannot use `collapse` in a scroll context');
    const after = await failure(collapse({ collapse: { field: 'numeric_group' }, search_after: [6] }));
    expect(JSON.stringify(after.body)).toContain('Cannot use [collapse] in conjunction with [search_after] unless the search is sorted on the same field. Multiple sort fields are not allowed.');
    const rescore = await failure(t.es.search({ index: 'fc', collapse: { field: 'numeric_group' }, rescore: { window_size: 20, query: { rescore_query: { match_all: {} }, query_weight: 1, rescore_query_weight: 2 } } }));
    expect(JSON.stringify(rescore.body)).toContain('cannot use `collapse` in conjunction with `rescore`');
  });
  it('no hits and inner_hits max_score null', async () => {
    const r = await collapse({ size: 0, collapse: { field: 'numeric_group', inner_hits: { name: 'sub_hits', size: 1 } } });
    expect(r.hits.max_score).toBeNull();
  });
  it('collapses across shards: one hit per group', async () => {
    await t.es.indices.create({ index: 'fc3', settings: { number_of_shards: 3 }, mappings: { properties: { g: { type: 'keyword' } } } });
    await t.es.bulk({ refresh: true, operations: Array.from({ length: 30 }, (_, i) => [{ index: { _index: 'fc3', _id: String(i) } }, { g: `g${i % 4}`, n: i }]).flat() });
    const r = await t.es.search({ index: 'fc3', sort: [{ n: 'desc' }], collapse: { field: 'g' }, size: 10 });
    expect(r.hits.hits.map((h) => h.fields?.g[0])).toEqual(['g1', 'g0', 'g3', 'g2']);
  });
});

describe('rescore', () => {
  it('rescores the window with the rescore query and weights', async () => {
    const r = await t.es.search({
      index: 'bp',
      query: { match: { my_field1: 'jump' } },
      rescore: { window_size: 10, query: { rescore_query: { match: { my_field2: 'lazy' } }, rescore_query_weight: 5 } },
    });
    expect(idsOf(r)).toEqual(['1', '2']);
    const s = await t.es.search({
      index: 'bp',
      query: { match: { my_field1: 'jump' } },
      rescore: { window_size: 10, query: { rescore_query: { match: { my_field1: 'emu' } }, rescore_query_weight: 5 } },
    });
    expect(idsOf(s)).toEqual(['2', '1']);
  });
  it('with a sort is a 400, as ES', async () => {
    const e = await failure(t.es.search({ index: 'bp', sort: ['_doc'], rescore: { query: { rescore_query: { match_all: {} } } } }));
    expect(e.body.error.root_cause[0].reason).toContain('Cannot use [sort] option in conjunction with [rescore].');
  });
});
