import { EsError } from '../../../../../actors/wire/esErrors';
import type { SortSpec, SortValue } from '../../../../../actors/shard/engine';
import { by, ids, search, shardWith, sorts } from '../engineFixture';

const MAPPING = {
  properties: {
    n: { type: 'long' }, d: { type: 'double' }, f: { type: 'float' }, k: { type: 'keyword' }, t: { type: 'text' },
    on: { type: 'date' }, ns: { type: 'date_nanos' }, b: { type: 'boolean' }, big: { type: 'long' },
  },
};
const DOCS = {
  a: { n: 5, d: 2.5, f: 1.1, k: 'pear', on: '2021-02-11T08:30:04.828Z', ns: '2019-10-21T08:30:04.828733001Z', b: true, big: '9223372036854775806' },
  b: { n: [1, 9], d: -1, k: ['apple', 'zoo'], on: '2021-02-11', ns: '2019-10-21T08:30:04.828733000Z', b: false, big: '9223372036854775805' },
  c: { n: 5, k: 'Banana', on: '1970-01-01T00:00:01Z', t: 'text only' },
  d: { d: 7, f: 0.5 },
};
const store = shardWith(DOCS, MAPPING);
const sorted = (...sort: SortSpec[]) => search(store, { sort });

function error(req: Parameters<typeof search>[1]): EsError {
  try {
    search(store, req);
  } catch (e) {
    return e as EsError;
  }
  throw new Error('expected an error');
}

describe('sort keys and values', () => {
  it('orders by _score desc then doc id without sort values by default', () => {
    const r = search(store, { query: { match_all: {} } });
    expect([ids(r), r.hits[0].sort, r.hits[0].score]).toEqual([['a', 'b', 'c', 'd'], undefined, 1]);
  });

  it('treats sort [_score] (desc) as no sort, like ES', () => {
    expect(sorted(by('_score')).hits[0].sort).toBeUndefined();
    expect(sorts(sorted(by('_score', 'asc')))[0]).toEqual([1]);
  });

  it.each([
    ['long asc (min of multi-values)', by('n'), ['b', 'a', 'c', 'd'], [[1], [5], [5], [9223372036854775807n]]],
    ['long desc (max of multi-values)', by('n', 'desc'), ['b', 'a', 'c', 'd'], [[9], [5], [5], [-9223372036854775808n]]],
    ['double asc (missing as the string Infinity, like ES)', by('d'), ['b', 'a', 'd', 'c'], [[-1], [2.5], [7], ['Infinity']]],
    ['double desc', by('d', 'desc'), ['d', 'a', 'b', 'c'], [[7], [2.5], [-1], ['-Infinity']]],
    ['float asc (float precision printed like Java)', by('f'), ['d', 'a', 'b', 'c'], [[0.5], [1.1], ['Infinity'], ['Infinity']]],
    ['keyword asc (code point order)', by('k'), ['c', 'b', 'a', 'd'], [['Banana'], ['apple'], ['pear'], [null]]],
    ['keyword desc (max)', by('k', 'desc'), ['b', 'a', 'c', 'd'], [['zoo'], ['pear'], ['Banana'], [null]]],
    ['date asc as epoch millis', by('on'), ['c', 'b', 'a', 'd'], [[1000], [1613001600000], [1613032204828], [9223372036854775807n]]],
    ['boolean desc', by('b', 'desc'), ['a', 'b', 'c', 'd'], [[true], [false], [true], [true]]],
  ])('sorts by %s', (_what, spec, expectedIds, expectedSorts) => {
    const r = sorted(spec);
    expect([ids(r), sorts(r)]).toEqual([expectedIds, expectedSorts]);
  });

  it('sorts date_nanos exactly and prints epoch nanos as bigint', () => {
    const r = sorted(by('ns', 'desc', { missing: '_last' }));
    expect(ids(r).slice(0, 2)).toEqual(['a', 'b']);
    expect(sorts(r).slice(0, 2)).toEqual([[1571646604828733001n], [1571646604828733000n]]);
  });

  it('sorts longs beyond 2^53 exactly', () => {
    const r = sorted(by('big', 'desc'));
    expect(sorts(r).slice(0, 2)).toEqual([[9223372036854775806n], [9223372036854775805n]]);
  });

  it.each([
    ['_first asc', { missing: '_first' }, 'asc', ['d', 'b', 'a', 'c'], -9223372036854775808n],
    ['_first desc', { missing: '_first' }, 'desc', ['d', 'b', 'a', 'c'], 9223372036854775807n],
    ['a literal', { missing: 3 }, 'asc', ['b', 'd', 'a', 'c'], 3],
  ] as const)('places missing values %s', (_what, extra, order, expectedIds, missingValue) => {
    const r = sorted(by('n', order, extra as Partial<SortSpec>));
    expect(ids(r)).toEqual(expectedIds);
    expect(r.hits.find((h) => h._id === 'd')!.sort).toEqual([missingValue]);
  });

  it('places missing keywords first with _first, as null', () => {
    expect(sorts(sorted(by('k', 'asc', { missing: '_first' })))[0]).toEqual([null]);
  });

  it.each([
    ['sum', 'asc', ['a', 'c', 'b', 'd'], [[5], [5], [10]]],
    ['avg', 'desc', ['a', 'b', 'c', 'd'], [[5], [5], [5]]],
    ['median', 'asc', ['a', 'b', 'c', 'd'], [[5], [5], [5]]],
    ['max', 'asc', ['a', 'c', 'b', 'd'], [[5], [5], [9]]],
  ] as const)('reduces multi-values with mode %s', (mode, order, expectedIds, firstSorts) => {
    const r = sorted(by('n', order, { mode }));
    expect(ids(r)).toEqual(expectedIds);
    expect(sorts(r).slice(0, 3)).toEqual(firstSorts);
  });

  it.each([
    ['strict_date_optional_time', 'on', ['1970-01-01T00:00:01.000Z', '2021-02-11T00:00:00.000Z', '2021-02-11T08:30:04.828Z']],
    ['epoch_millis', 'on', ['1000', '1613001600000', '1613032204828']],
    ['epoch_second', 'on', ['1', '1613001600', '1613032204.828']],
    ['yyyy-MM-dd', 'on', ['1970-01-01', '2021-02-11', '2021-02-11']],
    ['strict_date_optional_time_nanos', 'ns', ['2019-10-21T08:30:04.828733Z', '2019-10-21T08:30:04.828733001Z']],
  ])('formats date sort values with %s', (format, field, expected) => {
    const r = sorted(by(field, 'asc', { format }));
    expect(sorts(r).slice(0, expected.length).map((s) => s![0])).toEqual(expected);
  });

  it('converts date to date_nanos with numeric_type so indices compare', () => {
    const r = sorted(by('on', 'asc', { numericType: 'date_nanos' }));
    expect(sorts(r).slice(0, 3)).toEqual([[1000000000], [1613001600000000000n], [1613032204828000000n]]);
  });

  it('converts date_nanos to millis with numeric_type date', () => {
    const r = sorted(by('ns', 'asc', { numericType: 'date' }));
    expect(sorts(r).slice(0, 2)).toEqual([[1571646604828], [1571646604828]]);
    expect(ids(r).slice(0, 2)).toEqual(['a', 'b']); // equal millis: doc id order
  });

  it('sorts an unmapped field with unmapped_type as all missing', () => {
    expect(sorts(sorted(by('nope', 'asc', { unmappedType: 'long' })))).toEqual(Array(4).fill([9223372036854775807n]));
    expect(sorts(sorted(by('nope', 'asc', { unmappedType: 'keyword' })))).toEqual(Array(4).fill([null]));
  });

  it('breaks ties with the next key, then by doc id', () => {
    const r = sorted(by('n'), by('k', 'desc'));
    expect(ids(r)).toEqual(['b', 'a', 'c', 'd']);
    expect(ids(sorted(by('b')))).toEqual(['b', 'a', 'c', 'd']);
  });

  it('returns null scores when sorting by a field unless track_scores', () => {
    expect([sorted(by('n')).hits[0].score, sorted(by('n')).maxScore]).toEqual([null, null]);
    const r = search(store, { sort: [by('n')], trackScores: true });
    expect([r.hits[0].score, r.maxScore]).toEqual([1, 1]);
  });
});

describe('sort errors', () => {
  it.each([
    ['an unmapped field', [by('nope')], 'query_shard_exception', 'No mapping found for [nope] in order to sort on'],
    ['a text field', [by('t')], 'illegal_argument_exception',
      'Fielddata is disabled on [t] in [idx]. Text fields are not optimised for operations that require per-document field data like aggregations and sorting, so these operations are disabled by default. Please use a keyword field instead. Alternatively, set fielddata=true on [t] in order to load field data by uninverting the inverted index. Note that this can use significant memory.'],
    ['a keyword with mode sum', [by('k', 'asc', { mode: 'sum' })], 'query_shard_exception', 'we only support AVG, MEDIAN and SUM on number based fields'],
    ['a keyword with numeric_type', [by('k', 'asc', { numericType: 'long' })], 'query_shard_exception', '[numeric_type] option cannot be set on a non-numeric field, got keyword'],
  ])('rejects sorting on %s', (_what, sort, type, reason) => {
    const e = error({ sort });
    expect([e.type, e.status, e.message]).toEqual([type, 400, reason]);
  });
});

describe('search_after', () => {
  const page = (sort: SortSpec[], searchAfter?: SortValue[], size = 2) => search(store, { sort, searchAfter, size });

  it('is strictly after the full key: equal keys are skipped', () => {
    expect(ids(page([by('n')], [5]))).toEqual(['d']); // a and c (n=5) equal the cursor
    expect(ids(page([by('n')], [4]))).toEqual(['a', 'c']);
  });

  it('pages through ties without gaps or duplicates with a _shard_doc tiebreaker', () => {
    const sort = [by('n'), by('_shard_doc')];
    const seen: string[] = [];
    let after: SortValue[] | undefined;
    for (;;) {
      const r = search(store, { sort, searchAfter: after, size: 1 });
      if (!r.hits.length) break;
      seen.push(r.hits[0]._id);
      after = r.hits[0].sort;
    }
    expect(seen).toEqual(['b', 'a', 'c', 'd']);
  });

  it.each([
    ['a numeric string (missing sorts last)', [by('n')], ['1'], ['a', 'c', 'd']],
    ['a bigint', [by('big', 'desc')], [9223372036854775806n], ['b', 'c', 'd']],
    ['a missing sentinel', [by('n')], [9223372036854775807n], []],
    ['a missing double sentinel string', [by('d', 'desc')], ['-Infinity'], []],
    ['a double before the missing sentinel', [by('d', 'desc')], [-1], ['c']],
    ['a date string in the sort format', [by('on', 'asc', { format: 'yyyy-MM-dd' })], ['2021-02-10'], ['b', 'a', 'd']],
    ['a keyword', [by('k')], ['Banana'], ['b', 'a', 'd']],
    ['null for missing keywords (last)', [by('k')], [null], []],
    ['a date_nanos long', [by('ns')], [1571646604828733000n], ['a', 'c', 'd']],
    ['a _doc', [by('_doc')], [1], ['c', 'd']],
    ['a _doc desc', [by('_doc', 'desc')], [2], ['b', 'a']],
    ['a score', [by('_score', 'asc'), by('_doc')], [1, 1], ['c', 'd']],
  ])('accepts %s', (_what, sort, after, expected) => {
    expect(ids(page(sort, after, 10))).toEqual(expected);
  });

  it.each([
    ['no sort', { searchAfter: [1] }, 'Sort must contain at least one field.'],
    ['a length mismatch', { sort: [by('n')], searchAfter: [1, 2] }, 'search_after has 2 value(s) but sort has 1.'],
    ['an unparsable number', { sort: [by('n')], searchAfter: ['abc'] }, 'Failed to parse search_after value for field [n].'],
    ['null for a number', { sort: [by('d')], searchAfter: [null] }, 'Failed to parse search_after value for field [d].'],
  ])('rejects %s with illegal_argument_exception', (_what, req, reason) => {
    const e = error(req as Parameters<typeof search>[1]);
    expect([e.type, e.status, e.message]).toEqual(['illegal_argument_exception', 400, reason]);
  });

  it('rejects a date string that does not match the format with parse_exception', () => {
    const e = error({ sort: [by('on', 'asc', { format: 'yyyy-MM-dd' })], searchAfter: ['11/02/2021'] });
    expect([e.type, e.status]).toEqual(['parse_exception', 400]);
    expect(e.message).toContain('failed to parse date field [11/02/2021] with format [yyyy-MM-dd]');
  });
});

describe('_shard_doc and _doc', () => {
  it('encodes (shardIndex << 32) | doc, as bigint beyond 2^53', () => {
    expect(search(store, { sort: [by('_shard_doc')], shardIndex: 3 }).hits.map((h) => h.sort![0])).toEqual([0, 1, 2, 3].map((d) => 3 * 2 ** 32 + d));
    const big = search(store, { sort: [by('_shard_doc')], shardIndex: 2 ** 22 }).hits[1].sort![0];
    expect(big).toBe((2n ** 22n << 32n) | 1n);
  });

  it('skips every doc of this shard when the cursor is on a later shard', () => {
    expect(search(store, { sort: [by('_shard_doc')], shardIndex: 1, searchAfter: [2 * 2 ** 32] }).hits).toEqual([]);
    expect(search(store, { sort: [by('_shard_doc')], shardIndex: 1, searchAfter: [0] }).hits.length).toBe(4);
  });

  it('stops after size docs past the cursor in doc order', () => {
    expect(ids(search(store, { sort: [by('_doc')], searchAfter: [0], size: 2, trackTotalHits: false }))).toEqual(['b', 'c']);
  });
});

describe('totals and windows', () => {
  it.each([
    [true, 4, 'eq'], [false, null, 'eq'], [10, 4, 'eq'], [3, 3, 'gte'], [4, 4, 'eq'],
  ] as const)('reports track_total_hits %j as %j/%s', (track, value, relation) => {
    const r = search(store, { trackTotalHits: track });
    expect([r.totalHits, r.totalRelation]).toEqual([value, relation]);
  });

  it('ranks the best from + size hits and returns those ranked [from, from + size)', () => {
    expect(ids(search(store, { sort: [by('_doc')], from: 1, size: 2 }))).toEqual(['b', 'c']);
    expect(ids(search(store, { sort: [by('n')], from: 2, size: 5 }))).toEqual(['c', 'd']);
    expect(search(store, { query: { match_all: {} }, from: 3, size: 5 }).maxScore).toBe(1);
  });

  it('counts all matches regardless of search_after', () => {
    expect(search(store, { sort: [by('_doc')], searchAfter: [2] }).totalHits).toBe(4);
  });

  it.each([
    ['search', 9990, 11, 'Result window is too large, from + size must be less than or equal to: [10000] but was [10001]. See the scroll api for a more efficient way to request large data sets. This limit can be set by changing the [index.max_result_window] index level setting.'],
    ['scroll', 0, 10001, 'Batch size is too large, size must be less than or equal to: [10000] but was [10001]. Scroll batch sizes cost as much memory as result windows so they are controlled by the [index.max_result_window] index level setting.'],
  ] as const)('rejects a %s window over index.max_result_window', (checkWindow, from, size, reason) => {
    const e = error({ checkWindow, from, size });
    expect([e.type, e.status, e.message]).toEqual(['illegal_argument_exception', 400, reason]);
  });

  it('accepts a window of exactly max_result_window', () => {
    expect(search(store, { checkWindow: 'search', from: 9990, size: 10 }).totalHits).toBe(4);
  });
});
