/**
 * Issue 10 items 10 and 20: the terms aggregation's include/exclude (Lucene regexps matched by an
 * automaton, value lists, partitions), terms on `_index`, and unmapped fields with `value_type` +
 * `missing`. Expected buckets come from ES's YAML test `search.aggregation/20_terms.yml`.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { failure, raw } from './helpers';

let t: TestNode;

const MAPPINGS = {
  properties: {
    str: { type: 'keyword' }, boolean: { type: 'boolean' }, integer: { type: 'long' }, double: { type: 'double' },
    number: { type: 'long' }, date: { type: 'date' }, long_kw: { type: 'keyword' },
  },
};

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'test_1', settings: { number_of_shards: 1 }, mappings: MAPPINGS as never });
  await t.es.indices.create({ index: 'test_2', settings: { number_of_shards: 2 }, mappings: { properties: { number: { type: 'double' } } } });
  const docs = [
    { str: 'abc', integer: 1234, date: '2016-05-03', boolean: true },
    { str: 'abc', integer: 5678, date: '2014-09-01', boolean: false },
    { str: 'bcd', integer: 1234, date: '2016-05-03', boolean: true },
  ];
  for (const [i, d] of docs.entries()) await t.es.index({ index: 'test_1', id: String(i + 1), document: d });
  await t.es.index({ index: 'test_1', id: 'long', document: { long_kw: `${'a'.repeat(27)}` } });
  for (const [i, n] of [100.0, 10.0, 14.6].entries()) await t.es.index({ index: 'test_2', id: String(i + 1), document: { number: n } });
  await t.es.indices.refresh();
});
afterAll(async () => {
  await t?.stop();
});

const terms = async (index: string, body: Record<string, unknown>) => {
  const r = await t.es.search({ index, size: 0, aggs: { t: { terms: body } } as never });
  return (r.aggregations as Record<string, { buckets: Array<Record<string, unknown>> }>).t.buckets;
};

describe('terms on _index', () => {
  it('gives one bucket per index, counting its documents', async () => {
    expect(await terms('test_1,test_2', { field: '_index' })).toEqual([
      { key: 'test_1', doc_count: 4 },
      { key: 'test_2', doc_count: 3 },
    ]);
  });

  it('filters index names with include', async () => {
    expect(await terms('test_*', { field: '_index', include: '.*_2' })).toEqual([{ key: 'test_2', doc_count: 3 }]);
  });
});

describe('include/exclude on dates (20_terms.yml "Date test")', () => {
  it('includes the listed dates, parsed with the field\'s format', async () => {
    expect(await terms('test_1', { field: 'date', include: ['2016-05-03'] })).toEqual([
      { key: 1462233600000, key_as_string: '2016-05-03T00:00:00.000Z', doc_count: 2 },
    ]);
  });

  it('excludes the listed dates', async () => {
    expect(await terms('test_1', { field: 'date', exclude: ['2016-05-03'] })).toEqual([
      { key: 1409529600000, key_as_string: '2014-09-01T00:00:00.000Z', doc_count: 1 },
    ]);
  });

  it('selects longs and booleans by value', async () => {
    expect(await terms('test_1', { field: 'integer', include: ['5678'] })).toEqual([{ key: 5678, doc_count: 1 }]);
    expect(await terms('test_1', { field: 'boolean', exclude: ['true'] })).toEqual([{ key: 0, key_as_string: 'false', doc_count: 1 }]);
  });

  it('refuses a regexp on a numeric field with ES\'s 400', async () => {
    const r = await failure(t.es.search({ index: 'test_1', size: 0, aggs: { t: { terms: { field: 'integer', include: '12.*' } } } }));
    expect(r.status).toBe(400);
    expect(r.body.error.root_cause[0].reason).toBe(
      'Aggregation [t] cannot support regular expression style include/exclude settings as they can only be applied to string fields. ' +
        'Use an array of numeric values for include/exclude clauses used to filter numeric fields',
    );
  });
});

describe('partitions (20_terms.yml "Partitioned string/integer test")', () => {
  it.each([[0, ['bcd']], [1, ['abc']]] as const)('puts strings of partition %i of 2 where ES does', async (partition, keys) => {
    const b = await terms('test_1', { field: 'str', include: { partition, num_partitions: 2 } });
    expect(b.map((x) => x.key)).toEqual(keys);
  });

  it.each([[0, [5678]], [1, [1234]]] as const)('puts longs of partition %i of 2 where ES does', async (partition, keys) => {
    const b = await terms('test_1', { field: 'integer', include: { partition, num_partitions: 2 } });
    expect(b.map((x) => x.key)).toEqual(keys);
  });

  it.each([
    [{ partition: 2, num_partitions: 2 }, 'Partition must be >=0 and < numPartition which is 2'],
    [{ num_partitions: 2 }, 'Missing [partition] parameter for partition-based include'],
  ])('refuses include %j with a 400', async (include, reason) => {
    const r = await raw(t, 'POST', '/test_1/_search', { size: 0, aggs: { t: { terms: { field: 'str', include } } } });
    expect(r.status).toBe(400);
    expect(r.json.error.type).toBe('x_content_parse_exception');
    expect(r.json.error.reason).toMatch(/^\[\d+:\d+\] \[terms\] failed to parse field \[include\]$/);
    expect(r.json.error.caused_by).toMatchObject({ type: 'illegal_argument_exception', reason });
  });

  it('refuses an exclude with a partition-based include', async () => {
    const r = await raw(t, 'POST', '/test_1/_search', { size: 0, aggs: { t: { terms: { field: 'str', include: { partition: 0, num_partitions: 2 }, exclude: ['abc'] } } } });
    expect(r.status).toBe(400);
    expect(r.json.error.reason).toMatch(/failed to parse field \[exclude\]$/);
    expect(r.json.error.caused_by.reason).toBe('Cannot specify any excludes when using a partition-based include');
  });
});

describe('unmapped fields with value_type and missing (20_terms.yml "Unmapped …")', () => {
  it.each([
    ['string', 'abc', { key: 'abc', doc_count: 4 }],
    ['boolean', true, { key: 1, key_as_string: 'true', doc_count: 4 }],
    ['date', '2016-05-11', { key: 1462924800000, key_as_string: '2016-05-11T00:00:00.000Z', doc_count: 4 }],
    ['long', 3, { key: 3, doc_count: 4 }],
    ['double', 3.5, { key: 3.5, doc_count: 4 }],
  ])('keys a %s missing value as ES does', async (valueType, missing, bucket) => {
    expect(await terms('test_1', { field: `unmapped_${valueType}`, value_type: valueType, missing })).toEqual([bucket]);
  });

  it('names the typed key after the hinted type', async () => {
    const r = await raw(t, 'POST', '/test_1/_search?typed_keys=true', { size: 0, aggs: { t: { terms: { field: 'nope', value_type: 'long', missing: 3 } } } });
    expect(Object.keys(r.json.aggregations)).toEqual(['lterms#t']);
  });
});

describe('regexp include/exclude (Lucene syntax, linear time)', () => {
  it('answers "(a+)+b" over a long keyword at once', async () => {
    const t0 = Date.now();
    expect(await terms('test_1', { field: 'long_kw', include: '(a+)+b' })).toEqual([]);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(await terms('test_1', { field: 'long_kw', include: '(a+)+' })).toEqual([{ key: 'a'.repeat(27), doc_count: 1 }]);
  });

  it('uses Lucene operators: complement, intersection, any string, intervals', async () => {
    expect((await terms('test_1', { field: 'str', include: '~(abc)' })).map((b) => b.key)).toEqual(['bcd']);
    expect((await terms('test_1', { field: 'str', include: '@&.*c', exclude: 'a@' })).map((b) => b.key)).toEqual([]);
    expect((await terms('test_1', { field: 'str', include: '[a-c]{3}' })).map((b) => b.key)).toEqual(['abc']);
  });

  it.each([
    ['(', 'unexpected end-of-string'],
    ['[z-a]', 'invalid range: from (122) cannot be > to (97)'],
  ])('refuses the invalid pattern %j with ES\'s 400', async (include, reason) => {
    const r = await raw(t, 'POST', '/test_1/_search', { size: 0, aggs: { t: { terms: { field: 'str', include } } } });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ type: 'x_content_parse_exception', caused_by: { type: 'illegal_argument_exception', reason } });
    expect(r.json.error.reason).toMatch(/\[terms\] failed to parse field \[include\]$/);
  });

  it('refuses a pattern too complex to determinize with a 400, not a stall', async () => {
    const r = await raw(t, 'POST', '/test_1/_search', { size: 0, aggs: { t: { terms: { field: 'str', include: '(a|b)*a(a|b){20}' } } } });
    expect(r.status).toBe(400);
    expect(r.json.error.root_cause[0].type).toBe('too_complex_to_determinize_exception');
  });

  it('refuses a number as include with ObjectParser\'s 400', async () => {
    const r = await raw(t, 'POST', '/test_1/_search', { size: 0, aggs: { t: { terms: { field: 'str', include: 5 } } } });
    expect(r.status).toBe(400);
    expect(r.json.error.reason).toMatch(/\[terms\] include doesn't support values of type: VALUE_NUMBER$/);
  });
});
