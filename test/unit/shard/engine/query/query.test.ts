import { EsError } from '../../../../../actors/wire/esErrors';
import { ids, search, shardWith } from '../engineFixture';

const MAPPING = {
  properties: {
    title: { type: 'text' },
    tag: { type: 'keyword' },
    n: { type: 'long' },
    price: { type: 'double' },
    on: { type: 'date' },
    ok: { type: 'boolean' },
    user: { properties: { name: { type: 'keyword' }, age: { type: 'integer' } } },
  },
};

const DOCS = {
  1: { title: 'The quick brown fox', tag: 'animal', n: 1, price: 9.5, on: '2021-03-01T10:00:00Z', ok: true, user: { name: 'ann', age: 30 } },
  2: { title: 'A lazy brown dog sleeps', tag: 'animal', n: 2, price: 20, on: '2021-03-01T23:59:59Z', ok: false },
  3: { title: 'Quick quick quick', tag: 'speed', n: 3, on: '2021-03-02T00:00:00Z', user: { name: 'bob' } },
  4: { title: 'Nothing here', tag: ['misc', 'animal'], n: 4, price: 1, ok: true },
};

const store = shardWith(DOCS, MAPPING);
const q = (query: unknown, extra = {}) => search(store, { query, ...extra });
const matchIds = (query: unknown) => ids(q(query)).sort();

function error(query: unknown): EsError {
  try {
    q(query);
  } catch (e) {
    return e as EsError;
  }
  throw new Error('expected an error');
}

describe('match_all / match_none / ids / exists', () => {
  it('scores match_all 1.0 (times boost)', () => {
    expect(q({ match_all: {} }).hits.map((h) => h.score)).toEqual([1, 1, 1, 1]);
    expect(q({ match_all: { boost: 2.5 } }).maxScore).toBe(2.5);
  });

  it('matches nothing with match_none', () => {
    expect(q({ match_none: {} }).totalHits).toBe(0);
  });

  it('treats an absent query as match_all', () => {
    expect(search(store).totalHits).toBe(4);
  });

  it('finds docs by _id with ids, term and terms on _id', () => {
    expect(matchIds({ ids: { values: ['2', '4', 'nope'] } })).toEqual(['2', '4']);
    expect(matchIds({ term: { _id: '3' } })).toEqual(['3']);
    expect(matchIds({ terms: { _id: ['1', '3'] } })).toEqual(['1', '3']);
  });

  it.each([
    ['price', ['1', '2', '4']],
    ['ok', ['1', '2', '4']],
    ['user', ['1', '3']],
    ['user.age', ['1']],
    ['missing_field', []],
  ])('exists on %s', (field, expected) => {
    expect(matchIds({ exists: { field } })).toEqual(expected);
  });
});

describe('term / terms', () => {
  it.each([
    ['a keyword value', { term: { tag: 'animal' } }, ['1', '2', '4']],
    ['a keyword value in another case (exact)', { term: { tag: 'Animal' } }, []],
    ['a keyword value case-insensitively', { term: { tag: { value: 'ANIMAL', case_insensitive: true } } }, ['1', '2', '4']],
    ['an indexed token of a text field', { term: { title: 'quick' } }, ['1', '3']],
    ['an unanalysed value on a text field', { term: { title: 'Quick' } }, []],
    ['a long', { term: { n: 3 } }, ['3']],
    ['a long given as a string', { term: { n: '2' } }, ['2']],
    ['a long with a decimal part', { term: { n: 2.5 } }, []],
    ['a double', { term: { price: 9.5 } }, ['1']],
    ['a boolean', { term: { ok: true } }, ['1', '4']],
    ['a boolean string', { term: { ok: 'false' } }, ['2']],
    ['a date: the whole span its text denotes', { term: { on: '2021-03-01' } }, ['1', '2']],
    ['an object leaf', { term: { 'user.name': 'bob' } }, ['3']],
    ['an unmapped field', { term: { nope: 'x' } }, []],
    ['terms on keywords', { terms: { tag: ['speed', 'misc'] } }, ['3', '4']],
    ['terms on longs', { terms: { n: [1, '4', 99] } }, ['1', '4']],
  ])('matches %s', (_what, query, expected) => {
    expect(matchIds(query)).toEqual(expected);
  });

  it('scores a keyword term with BM25 (same score for every match, norms omitted)', () => {
    const scores = q({ term: { tag: 'speed' } }).hits.map((h) => h.score);
    // idf = ln(1 + (4 - 1 + 0.5) / 1.5); tf part = 1 / (1 + k1 * (0.25 + 0.75 * 1 / avgdl)), avgdl = 5/4
    const idf = Math.log(1 + 3.5 / 1.5);
    const norm = 1.2 * (0.25 + (0.75 * 1) / 1.25);
    expect(scores[0]).toBeCloseTo((2.2 * idf) / (1 + norm), 5); // ES's LegacyBM25Similarity: boost * (1 + k1)
  });

  it('scores numeric terms as constant 1.0 times boost', () => {
    expect(q({ term: { n: { value: 3, boost: 2 } } }).maxScore).toBe(2);
  });

  it('fails a numeric term with a non-number like ES (query_shard_exception)', () => {
    const e = error({ term: { n: 'abc' } });
    expect([e.type, e.status, e.message]).toEqual(['query_shard_exception', 400, 'failed to create query: For input string: "abc"']);
  });
});

describe('match', () => {
  it.each([
    ['any analysed term by default', { match: { title: 'QUICK dog' } }, ['1', '2', '3']],
    ['all terms with operator and', { match: { title: { query: 'brown dog', operator: 'and' } } }, ['2']],
    ['minimum_should_match as a count', { match: { title: { query: 'quick brown dog', minimum_should_match: 2 } } }, ['1', '2']],
    ['minimum_should_match as a percentage', { match: { title: { query: 'quick brown dog', minimum_should_match: '67%' } } }, ['1', '2']],
    ['minimum_should_match percentage rounding down', { match: { title: { query: 'quick brown dog', minimum_should_match: '66%' } } }, ['1', '2', '3']],
    ['minimum_should_match negative', { match: { title: { query: 'quick brown dog', minimum_should_match: -1 } } }, ['1', '2']],
    ['a keyword field as a term', { match: { tag: 'speed' } }, ['3']],
    ['a numeric field as a term', { match: { n: '4' } }, ['4']],
    ['nothing for a query without tokens', { match: { title: '!!!' } }, []],
    ['all for zero_terms_query all', { match: { title: { query: '...', zero_terms_query: 'all' } } }, ['1', '2', '3', '4']],
    ['nothing for a bad number when lenient', { match: { n: { query: 'x', lenient: true } } }, []],
  ])('matches %s', (_what, query, expected) => {
    expect(matchIds(query)).toEqual(expected);
  });

  it('ranks by BM25: higher tf and shorter fields first', () => {
    expect(ids(q({ match: { title: 'quick' } }))).toEqual(['3', '1']);
    expect(ids(q({ match: { title: 'brown' } }))).toEqual(['1', '2']); // 4 tokens beat 5
  });

  it('ranks a rarer term above a common one', () => {
    const s = shardWith({ a: { t: 'common rare' }, b: { t: 'common other' }, c: { t: 'common more' } });
    const r = search(s, { query: { match: { t: 'common rare' } } });
    expect(ids(r)[0]).toBe('a');
    expect(r.hits[0].score! > r.hits[1].score! * 2).toBe(true);
  });

  it("gives ES's score for one term in a one-doc index", () => {
    const s = shardWith({ a: { t: 'hello' } });
    expect(search(s, { query: { match: { t: 'hello' } } }).hits[0].score).toBe(0.2876821); // idf * (k1 + 1) * 1 / (1 + k1)
  });
});

describe('range', () => {
  const now = Date.UTC(2021, 2, 2, 12, 0, 0);
  it.each([
    ['gte/lte on longs', { range: { n: { gte: 2, lte: 3 } } }, ['2', '3']],
    ['gt/lt on longs', { range: { n: { gt: 1, lt: 4 } } }, ['2', '3']],
    ['decimal bounds on longs', { range: { n: { gt: 1.5, lte: 3.5 } } }, ['2', '3']],
    ['doubles', { range: { price: { lt: 10 } } }, ['1', '4']],
    ['date strings (lte rounds the day up)', { range: { on: { gte: '2021-03-01', lte: '2021-03-01' } } }, ['1', '2']],
    ['dates with gt on a day (rounded up: after the whole day)', { range: { on: { gt: '2021-03-01' } } }, ['3']],
    ['dates with a format', { range: { on: { gte: '01/03/2021', lt: '02/03/2021', format: 'dd/MM/yyyy' } } }, ['1', '2']],
    ['date math from now with rounding', { range: { on: { gte: 'now-1d/d', lt: 'now/d' } } }, ['1', '2']],
    ['date math on an anchor date', { range: { on: { gte: '2021-02-28||+1d', lt: '2021-03-01||+1d/d' } } }, ['1', '2']],
    ['epoch millis bounds on dates', { range: { on: { lt: Date.UTC(2021, 2, 1, 12) } } }, ['1']],
    ['keyword strings', { range: { tag: { gte: 'b', lt: 'n' } } }, ['4']],
    ['legacy from/to', { range: { n: { from: 2, to: 3, include_upper: false } } }, ['2']],
    ['an unmapped field', { range: { nope: { gte: 1 } } }, []],
  ])('matches %s', (_what, query, expected) => {
    expect(ids(search(store, { query, nowMillis: now })).sort()).toEqual(expected);
  });

  it('scores range as constant 1.0 times boost', () => {
    expect(q({ range: { n: { gte: 1, boost: 3 } } }).hits.map((h) => h.score)).toEqual([3, 3, 3, 3]);
  });

  it('fails a bad date like ES', () => {
    const e = error({ range: { on: { gte: 'yesterday' } } });
    expect(e.type).toBe('query_shard_exception');
    expect(e.message).toContain('failed to parse date field [yesterday] with format [strict_date_optional_time||epoch_millis]');
  });
});

describe('bool', () => {
  it.each([
    ['must ∧ filter ∧ ¬must_not', { bool: { must: { match: { title: 'brown' } }, filter: [{ term: { tag: 'animal' } }], must_not: { term: { n: 2 } } } }, ['1']],
    ['should-only: at least one', { bool: { should: [{ term: { n: 1 } }, { term: { n: 3 } }] } }, ['1', '3']],
    ['should with must: optional', { bool: { must: { term: { tag: 'animal' } }, should: { term: { n: 99 } } } }, ['1', '2', '4']],
    ['should with minimum_should_match', { bool: { should: [{ term: { tag: 'animal' } }, { range: { n: { gte: 2 } } }, { term: { ok: true } }], minimum_should_match: 2 } }, ['1', '2', '4']],
    ['minimum_should_match above the clause count', { bool: { should: [{ term: { n: 1 } }], minimum_should_match: 2 } }, []],
    ['minimum_should_match without should clauses', { bool: { must: { term: { n: 1 } }, minimum_should_match: 1 } }, []],
    ['must_not only: everything else', { bool: { must_not: { term: { tag: 'animal' } } } }, ['3']],
    ['an empty bool: everything', { bool: {} }, ['1', '2', '3', '4']],
    ['constant_score', { constant_score: { filter: { term: { tag: 'speed' } } } }, ['3']],
  ])('matches %s', (_what, query, expected) => {
    expect(matchIds(query)).toEqual(expected);
  });

  it('scores filter and must_not clauses 0', () => {
    expect(q({ bool: { filter: { term: { tag: 'animal' } } } }).hits.map((h) => h.score)).toEqual([0, 0, 0]);
    expect(q({ bool: { must_not: { term: { tag: 'animal' } } } }).hits.map((h) => h.score)).toEqual([0]);
  });

  it('sums must and matching should scores, times the bool boost', () => {
    const single = q({ range: { n: { gte: 1, boost: 1.5 } } }).hits[0].score!;
    const r = q({ bool: { must: { range: { n: { gte: 1, boost: 1.5 } } }, should: { term: { n: 1 } }, boost: 2 } });
    expect(r.hits.find((h) => h._id === '1')!.score).toBe((single + 1) * 2);
    expect(r.hits.find((h) => h._id === '2')!.score).toBe(single * 2);
  });

  it('does not keep partial scores of a nested should bool that did not match', () => {
    const r = q({ bool: { should: [{ bool: { must: { term: { n: 1 } }, should: { term: { tag: 'animal' } } } }, { term: { n: 2 } }] } });
    const two = r.hits.find((h) => h._id === '2')!;
    expect(two.score).toBe(1); // only the numeric term; the nested bool's `animal` score must not leak
  });

  it('boosts constant_score', () => {
    expect(q({ constant_score: { filter: { match: { title: 'quick' } }, boost: 1.2 } }).hits.map((h) => h.score)).toEqual([1.2, 1.2]);
  });
});

describe('query errors', () => {
  it('rejects an unknown query name with parsing_exception', () => {
    const e = error({ wildcard_frobnicate: { f: 1 } });
    expect([e.type, e.status, e.message]).toEqual(['parsing_exception', 400, 'unknown query [wildcard_frobnicate]']);
  });

  it('rejects a term query on two fields', () => {
    expect(error({ term: { a: 1, b: 2 } }).message).toBe("[term] query doesn't support multiple fields, found [a] and [b]");
  });
});
