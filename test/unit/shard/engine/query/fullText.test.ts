import { shardWith, search, ids } from '../engineFixture';
import type { ShardQueryResult } from '../../../../../actors/shard/engine';

// The corpus of ES's search/310_match_bool_prefix.yml, plus a keyword and a number.
const store = shardWith({
  1: { my_field1: 'brown fox jump', my_field2: 'xylophone', tag: 'A', n: 1 },
  2: { my_field1: 'brown emu jump', my_field2: 'xylophone', tag: 'B', n: 2 },
  3: { my_field1: 'jumparound', my_field2: 'emu', tag: 'A', n: 3 },
  4: { my_field1: 'dog', my_field2: 'brown fox jump lazy', tag: 'C', n: 4 },
}, { properties: { my_field1: { type: 'text' }, my_field2: { type: 'text' }, tag: { type: 'keyword' }, n: { type: 'integer' } } });

const run = (query: unknown) => search(store, { query });
const scoreOf = (r: ShardQueryResult, id: string) => r.hits.find((h) => h._id === id)?.score ?? 0;
const f = Math.fround;

describe('match_bool_prefix (search/310_match_bool_prefix.yml)', () => {
  it('scores complete terms and matches the last one as a prefix', () => {
    expect(ids(run({ match_bool_prefix: { my_field1: 'brown fox jump' } }))).toEqual(['1', '2', '3']);
  });
  it('matches a partial last term', () => {
    expect(ids(run({ match_bool_prefix: { my_field1: 'brown fox ju' } }))).toEqual(['1', '2', '3']);
  });
  it('applies minimum_should_match over all the clauses', () => {
    expect(ids(run({ match_bool_prefix: { my_field1: { query: 'brown fox jump', minimum_should_match: 3 } } }))).toEqual(['1']);
  });
  it('uses the named analyzer (whitespace keeps case)', () => {
    expect(ids(run({ match_bool_prefix: { my_field1: { query: 'BROWN dog', analyzer: 'whitespace' } } }))).toEqual(['4']);
  });
  it('requires every clause with operator and', () => {
    expect(ids(run({ match_bool_prefix: { my_field1: { query: 'brown fox jump', operator: 'AND' } } }))).toEqual(['1']);
  });
  it('expands the non-last terms by fuzziness', () => {
    expect(ids(run({ match_bool_prefix: { my_field2: { query: 'xylophoen foo', fuzziness: 1, prefix_length: 1, max_expansions: 10 } } })).sort()).toEqual(['1', '2']);
  });
  it('the prefix clause scores its boost (constant), as a constant-score prefix query', () => {
    expect(scoreOf(run({ match_bool_prefix: { my_field1: 'jumpar' } }), '3')).toBe(1);
  });
});

describe('multi_match', () => {
  const per = (field: string, text: string) => run({ match: { [field]: text } });
  it('best_fields scores the best field (dis_max, tie_breaker 0)', () => {
    const r = run({ multi_match: { query: 'brown fox', fields: ['my_field1', 'my_field2'] } });
    for (const id of ['1', '2', '4']) {
      expect(scoreOf(r, id)).toBe(Math.max(scoreOf(per('my_field1', 'brown fox'), id), scoreOf(per('my_field2', 'brown fox'), id)));
    }
  });
  it('best_fields adds tie_breaker times the other fields', () => {
    const r = run({ multi_match: { query: 'brown', fields: ['my_field1', 'my_field2'], tie_breaker: 0.5 } });
    const a = scoreOf(per('my_field1', 'brown'), '4');
    const b = scoreOf(per('my_field2', 'brown'), '4');
    expect(f(scoreOf(r, '4'))).toBe(f(Math.max(a, b) + Math.min(a, b) * f(0.5)));
  });
  it('most_fields sums the fields', () => {
    const r = run({ multi_match: { query: 'brown', fields: ['my_field1', 'my_field2'], type: 'most_fields' } });
    expect(f(scoreOf(r, '4'))).toBe(f(scoreOf(per('my_field1', 'brown'), '4') + scoreOf(per('my_field2', 'brown'), '4')));
  });
  it('applies field boosts (^)', () => {
    const plain = run({ multi_match: { query: 'emu', fields: ['my_field2'] } });
    const boosted = run({ multi_match: { query: 'emu', fields: ['my_field2^3'] } });
    expect(scoreOf(boosted, '3')).toBeCloseTo(3 * scoreOf(plain, '3'), 5);
  });
  it('expands field patterns, and * searches every field leniently (numbers, keywords)', () => {
    expect(ids(run({ multi_match: { query: 'xylophone', fields: ['my_*'] } })).sort()).toEqual(['1', '2']);
    expect(ids(run({ multi_match: { query: 'A', fields: ['*'] } })).sort()).toEqual(['1', '3']);
    expect(ids(run({ multi_match: { query: '3', fields: ['*'] } }))).toEqual(['3']);
  });
  it('bool_prefix sums the fields (search/310_match_bool_prefix.yml)', () => {
    expect(ids(run({ multi_match: { query: 'brown fox jump laz', type: 'bool_prefix', fields: ['my_field1', 'my_field2'] } }))).toEqual(['4', '1', '2']);
    expect(ids(run({ multi_match: { query: 'brown fox jump la', type: 'bool_prefix', fields: ['my_field1', 'my_field2'], minimum_should_match: 4 } }))).toEqual(['4']);
    expect(ids(run({ multi_match: { query: 'dob nomatch', type: 'bool_prefix', fields: ['my_field1', 'my_field2'], fuzziness: 1 } }))).toEqual(['4']);
    expect(ids(run({ multi_match: { query: 'brown emu', type: 'bool_prefix', fields: ['my_field1', 'my_field2^10'], fuzziness: 1 } }))[0]).toBe('3');
  });
  it('cross_fields matches each term in any field of the group', () => {
    expect(ids(run({ multi_match: { query: 'dog lazy', type: 'cross_fields', fields: ['my_field1', 'my_field2'], operator: 'and' } }))).toEqual(['4']);
    expect(run({ multi_match: { query: 'dog emu', type: 'cross_fields', fields: ['my_field1', 'my_field2'], operator: 'and' } }).hits).toEqual([]);
  });
  it('cross_fields blends doc freqs: one term scores the same in either field of a doc', () => {
    const r = run({ multi_match: { query: 'emu', type: 'cross_fields', fields: ['my_field1', 'my_field2'] } });
    expect(ids(r).sort()).toEqual(['2', '3']);
  });
});

describe('combined_fields', () => {
  it('matches terms across fields as one field', () => {
    expect(ids(run({ combined_fields: { query: 'dog lazy', fields: ['my_field1', 'my_field2'], operator: 'and' } }))).toEqual(['4']);
  });
  it('refuses non-text fields', () => {
    expect(() => run({ combined_fields: { query: 'x', fields: ['tag'] } })).toThrow('Field [tag] of type [keyword] does not support [combined_fields] queries');
  });
});

describe('fuzzy', () => {
  it('matches within the edit distance, AUTO by length', () => {
    expect(ids(run({ fuzzy: { my_field2: 'xylophoen' } })).sort()).toEqual(['1', '2']);
    expect(run({ fuzzy: { my_field2: { value: 'xylophoen', fuzziness: 0 } } }).hits).toEqual([]);
  });
  it('scores expansions below an exact match (boost 1 - edits/length)', () => {
    const exact = scoreOf(run({ match: { my_field2: 'emu' } }), '3');
    const fuzzy = scoreOf(run({ fuzzy: { my_field2: { value: 'emo', fuzziness: 1 } } }), '3');
    expect(fuzzy).toBeLessThan(exact);
  });
});

describe('query_string (Lucene classic syntax)', () => {
  const qs = (query: string, extra: Record<string, unknown> = {}) => ids(run({ query_string: { query, ...extra } })).sort();
  it.each<[string, Record<string, unknown>, string[]]>([
    ['brown AND fox', {}, ['1', '4']],
    ['brown OR dog', {}, ['1', '2', '4']],
    ['brown -fox', {}, ['2']],
    ['+brown +emu', {}, ['2']],
    ['brown NOT emu', { default_field: 'my_field1' }, ['1']],
    ['my_field1:(fox OR emu)', {}, ['1', '2']],
    ['my_field1:BRO*', {}, ['1', '2']],
    ['my_field1:ju?p', {}, ['1', '2']],
    ['tag:[A TO B]', {}, ['1', '2', '3']],
    ['n:>2', {}, ['3', '4']],
    ['n:<=2', {}, ['1', '2']],
    ['_exists_:tag', {}, ['1', '2', '3', '4']],
    ['xylofone~', {}, ['1', '2']],
    ['my_field1:/ju.*/', {}, ['1', '2', '3']],
    ['*:*', {}, ['1', '2', '3', '4']],
    ['brown fox', { default_operator: 'AND' }, ['1', '4']],
    ['brown fox dog', { minimum_should_match: 2 }, ['1', '4']],
  ])('%s %j', (query, extra, expected) => {
    expect(qs(query, extra)).toEqual(expected);
  });
  it('a purely negative query matches everything else', () => {
    expect(qs('-brown')).toEqual(['3']);
  });
  it('reports a query that does not parse as ES does', () => {
    expect(() => run({ query_string: { query: 'foo:(bar' } })).toThrow('Failed to parse query [foo:(bar]');
  });
  it('is not lenient on an explicit field list', () => {
    expect(() => run({ query_string: { query: 'n:foo', fields: ['n'] } })).toThrow(/For input string/);
    expect(qs('n:foo', { fields: ['n'], lenient: true })).toEqual([]);
  });
});

describe('simple_query_string', () => {
  const sq = (query: string, extra: Record<string, unknown> = {}) => ids(run({ simple_query_string: { query, ...extra } })).sort();
  it.each<[string, Record<string, unknown>, string[]]>([
    ['brown + fox', {}, ['1', '4']],
    ['dog | emu', {}, ['2', '3', '4']],
    ['brown -emu', { default_operator: 'and' }, ['1', '4']],
    ['jum*', { fields: ['my_field1'] }, ['1', '2', '3']],
    ['xylophon~1', {}, ['1', '2']],
    ['xylofone~1', {}, []],
    ['(dog | emu) + lazy', {}, ['4']],
  ])('%s %j', (query, extra, expected) => {
    expect(sq(query, extra)).toEqual(expected);
  });
  it('never fails on bad syntax', () => {
    expect(() => run({ simple_query_string: { query: '"unclosed ( + |' } })).not.toThrow();
  });
});
