import { shardWith, search, ids, by } from '../engineFixture';
import { javaHashMapOrder } from '../../../../../actors/shard/engine/query/matchedQueries';

const store = shardWith({
  1: { field: 1, tag: 'A', group: 1, sort: 10, title: 'quick brown fox', day: '2017-01-01T00:00:00Z', f: 1.5, obj: { a: 'x', b: 2 } },
  2: { field: [1, 2], tag: 'B', group: 1, sort: 6, title: 'lazy dog' },
  3: { field: 3, tag: 'A', group: 25, sort: 24, title: 'brown dog', extra: 'unmapped?' },
  4: { tag: ['C', 'A'], sort: 36, title: 'quick', l: '12' },
}, {
  dynamic: 'false',
  properties: {
    field: { type: 'integer' }, tag: { type: 'keyword' }, group: { type: 'integer' }, sort: { type: 'integer' },
    title: { type: 'text', fields: { raw: { type: 'keyword' } } }, day: { type: 'date' }, f: { type: 'float' }, l: { type: 'long' },
    obj: { properties: { a: { type: 'keyword' }, b: { type: 'integer' } } },
  },
});

const fieldsOf = (r: ReturnType<typeof search>, id: string) => {
  const h = r.hits.find((x) => x._id === id)!;
  return h.fields === undefined ? undefined : JSON.parse(h.fields);
};

describe('matched_queries (search/410_named_queries.yml)', () => {
  const query = {
    bool: {
      should: [
        { match: { field: { query: 1, _name: 'match_field_1' } } },
        { match: { field: { query: 2, _name: 'match_field_2', boost: 10 } } },
      ],
    },
  };
  it('lists the named clauses each hit matches', () => {
    const r = search(store, { query });
    expect(r.hits.map((h) => [h._id, h.tail])).toEqual([
      ['2', '"matched_queries":["match_field_1","match_field_2"]'],
      ['1', '"matched_queries":["match_field_1"]'],
    ]);
  });
  it('with include_named_queries_score, maps each name to its clause score', () => {
    const r = search(store, { query, namedQueriesScore: true });
    expect(JSON.parse(`{${r.hits[0].tail!}}`)).toEqual({ matched_queries: { match_field_1: 1, match_field_2: 10 } });
  });
  it('counts names of the post_filter and of any nesting depth', () => {
    const r = search(store, {
      query: { bool: { filter: [{ term: { tag: { value: 'A', _name: 't' } } }] } },
      postFilter: { bool: { must: [{ range: { sort: { gte: 20, _name: 'r' } } }] } },
    });
    // "t" (116) falls in bucket 0 and "r" (114) in bucket 2 of the 4-slot table
    expect(r.hits.map((h) => [h._id, h.tail])).toEqual([['3', '"matched_queries":["t","r"]'], ['4', '"matched_queries":["t","r"]']]);
  });
  it('orders names as a Java HashMap iterates them', () => {
    // "b" (98) lands in bucket 2 and "a" (97) in bucket 1 of a 4-slot table
    expect(javaHashMapOrder(['b', 'a'])).toEqual(['a', 'b']);
  });
});

describe('docvalue_fields', () => {
  it('returns doc values: numbers, sorted keywords, dates in the field format', () => {
    const r = search(store, { query: { ids: { values: ['1', '4'] } }, docvalueFields: [{ field: 'field' }, { field: 'tag' }, { field: 'day' }] });
    expect(fieldsOf(r, '1')).toEqual({ field: [1], tag: ['A'], day: ['2017-01-01T00:00:00.000Z'] });
    expect(fieldsOf(r, '4')).toEqual({ tag: ['A', 'C'] });
  });
  it('applies a format: epoch_millis for dates, a decimal pattern for numbers', () => {
    const r = search(store, { query: { ids: { values: ['1'] } }, docvalueFields: [{ field: 'day', format: 'epoch_millis' }, { field: 'field', format: '#.0' }] });
    expect(fieldsOf(r, '1')).toEqual({ day: ['1483228800000'], field: ['1.0'] });
  });
  it('expands patterns and refuses text fields', () => {
    expect(fieldsOf(search(store, { query: { ids: { values: ['1'] } }, docvalueFields: [{ field: 'obj.*' }] }), '1')).toEqual({ 'obj.a': ['x'], 'obj.b': [2] });
    expect(() => search(store, { docvalueFields: [{ field: 'title' }] })).toThrow(/Text fields are not optimised/);
  });
});

describe('fields', () => {
  it('reads values from _source through the mapping: coerced numbers, formatted dates, multi-fields', () => {
    const r = search(store, { query: { ids: { values: ['1', '4'] } }, fields: [{ field: 'title*' }, { field: 'day', format: 'yyyy/MM/dd' }, { field: 'l' }] });
    expect(fieldsOf(r, '1')).toEqual({ title: ['quick brown fox'], 'title.raw': ['quick brown fox'], day: ['2017/01/01'] });
    expect(fieldsOf(r, '4')).toEqual({ title: ['quick'], 'title.raw': ['quick'], l: [12] });
  });
  it('returns unmapped source values only with include_unmapped', () => {
    expect(fieldsOf(search(store, { query: { ids: { values: ['3'] } }, fields: [{ field: 'extra' }] }), '3')).toBeUndefined();
    expect(fieldsOf(search(store, { query: { ids: { values: ['3'] } }, fields: [{ field: 'extra', include_unmapped: true }] }), '3')).toEqual({ extra: ['unmapped?'] });
  });
});

describe('collapse', () => {
  it('keeps the best hit of each group, groups ranked by it, with the value in fields', () => {
    const r = search(store, { sort: [by('sort', 'desc')], collapse: { field: 'group' } });
    expect(ids(r)).toEqual(['4', '3', '1']);
    expect(r.hits.map((h) => h.fields)).toEqual(['{"group":[null]}', '{"group":[25]}', '{"group":[1]}']);
    expect(r.totalHits).toBe(4); // the total counts documents, not groups
  });
  it('refuses text and unmapped fields with ES texts', () => {
    expect(() => search(store, { collapse: { field: 'title' } })).toThrow('unknown type for collapse field `title`, only keywords and numbers are accepted');
    expect(() => search(store, { collapse: { field: 'nope' } })).toThrow('no mapping found for `nope` in order to collapse on');
  });
  it('refuses a multi-valued group value', () => {
    expect(() => search(store, { collapse: { field: 'field' } })).toThrow(/the collapse field must be single valued/);
  });
});

describe('rescore', () => {
  const rescore = (scoreMode: 'total' | 'multiply' | 'avg' | 'max' | 'min', windowSize = 10) => [{
    windowSize, query: { match: { title: 'dog' } }, queryWeight: 1, rescoreQueryWeight: 2, scoreMode,
  }];
  it('re-sorts the window by the combined score', () => {
    const r = search(store, { query: { match: { title: 'brown quick' } }, rescore: rescore('total') });
    expect(ids(r)[0]).toBe('3'); // "brown dog" gains the rescore query's score
    expect(r.maxScore).toBe(r.hits[0].score);
  });
  it('leaves hits past the window in their order after it', () => {
    const plain = ids(search(store, { query: { match: { title: 'brown quick dog' } } }));
    const r = search(store, { query: { match: { title: 'brown quick dog' } }, rescore: rescore('multiply', 1) });
    expect(ids(r)).toEqual(plain);
  });
  it('combines with score_mode max and min', () => {
    const a = search(store, { query: { match_all: {} }, rescore: rescore('max') });
    const b = search(store, { query: { match_all: {} }, rescore: rescore('min') });
    for (const h of a.hits) expect(h.score).toBeGreaterThanOrEqual(1);
    for (const h of b.hits) expect(h.score).toBeLessThanOrEqual(1);
  });
  it('refuses a window over index.max_rescore_window', () => {
    expect(() => search(store, { rescore: rescore('total', 10_001) })).toThrow(/Rescore window \[10001\] is too large/);
  });
});
