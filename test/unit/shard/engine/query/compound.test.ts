import { shardWith, search, ids, by } from '../engineFixture';
import type { ShardQueryResult } from '../../../../../actors/shard/engine';

const store = shardWith({
  1: { text: 'foo bar', popularity: 4, price: 10, day: '2024-01-01' },
  2: { text: 'high bar', popularity: 16, price: 20, day: '2024-01-11' },
  3: { text: 'raise bar', popularity: 1, day: '2024-02-01' },
  4: { text: 'raise hands', popularity: 9, price: 40, day: '2023-12-01' },
}, { properties: { text: { type: 'text' }, popularity: { type: 'integer' }, price: { type: 'double' }, day: { type: 'date' } } });

const f = Math.fround;
const run = (query: unknown, extra = {}) => search(store, { query, ...extra });
const scoreOf = (r: ShardQueryResult, id: string) => f(r.hits.find((h) => h._id === id)?.score ?? NaN);
const bar = { match: { text: 'bar' } };
const base = run(bar);

describe('dis_max', () => {
  it('scores the best clause plus tie_breaker times the others', () => {
    const a = run({ match: { text: 'raise' } });
    const b = run({ match: { text: 'bar' } });
    const r = run({ dis_max: { queries: [{ match: { text: 'raise' } }, { match: { text: 'bar' } }], tie_breaker: 0.3 } });
    expect(ids(r).sort()).toEqual(['1', '2', '3', '4']);
    const x = scoreOf(a, '3'), y = scoreOf(b, '3');
    expect(scoreOf(r, '3')).toBe(f(Math.max(x, y) + Math.min(x, y) * f(0.3)));
  });
  it('with one clause is that clause, boosted', () => {
    expect(scoreOf(run({ dis_max: { queries: [bar], boost: 2 } }), '1')).toBe(f(2 * scoreOf(base, '1')));
  });
});

describe('boosting', () => {
  it('multiplies the score of docs matching the negative query by negative_boost', () => {
    const r = run({ boosting: { positive: bar, negative: { match: { text: 'high' } }, negative_boost: 0.25 } });
    expect(scoreOf(r, '2')).toBe(f(scoreOf(base, '2') * f(0.25)));
    expect(scoreOf(r, '1')).toBe(scoreOf(base, '1'));
  });
});

describe('function_score', () => {
  it('weight multiplies the query score (boost_mode multiply)', () => {
    expect(scoreOf(run({ function_score: { query: bar, weight: 3 } }), '1')).toBe(f(3 * scoreOf(base, '1')));
  });
  it('boost_mode replace, sum, avg, max, min combine query score and function', () => {
    const q = scoreOf(base, '1');
    const fn = (mode: string) => scoreOf(run({ function_score: { query: bar, weight: 3, boost_mode: mode } }), '1');
    expect(fn('replace')).toBe(3);
    expect(fn('sum')).toBe(f(q + 3));
    expect(fn('avg')).toBe(f((q + 3) / 2));
    expect(fn('max')).toBe(3);
    expect(fn('min')).toBe(q);
  });
  it('field_value_factor applies factor then modifier', () => {
    const r = run({ function_score: { query: bar, field_value_factor: { field: 'popularity', factor: 1.5, modifier: 'sqrt' }, boost_mode: 'replace' } });
    expect(scoreOf(r, '2')).toBe(f(Math.sqrt(16 * 1.5)));
    expect(scoreOf(r, '1')).toBe(f(Math.sqrt(4 * 1.5)));
  });
  it('field_value_factor with missing uses it; without it a doc lacking the field fails', () => {
    const r = run({ function_score: { query: bar, field_value_factor: { field: 'price', missing: 1 }, boost_mode: 'replace' } });
    expect(scoreOf(r, '3')).toBe(1);
    expect(() => run({ function_score: { query: bar, field_value_factor: { field: 'price' }, boost_mode: 'replace' } })).toThrow('Missing value for field [price]');
  });
  it('score_mode combines several filtered functions (sum, avg by weight, first, max, min, multiply)', () => {
    const functions = [
      { filter: { match: { text: 'high' } }, weight: 2 },
      { filter: { match: { text: 'bar' } }, weight: 5 },
    ];
    const fn = (mode: string, id = '2') => scoreOf(run({ function_score: { query: bar, functions, score_mode: mode, boost_mode: 'replace' } }), id);
    expect(fn('sum')).toBe(7);
    expect(fn('avg')).toBe(f(7 / 7)); // weighted: (2 + 5) / (2 + 5)
    expect(fn('first')).toBe(2);
    expect(fn('max')).toBe(5);
    expect(fn('min')).toBe(2);
    expect(fn('multiply')).toBe(10);
    expect(fn('sum', '1')).toBe(5); // only the second filter matches doc 1
  });
  it('max_boost caps the function score; min_score drops low-scoring docs', () => {
    expect(scoreOf(run({ function_score: { query: bar, weight: 10, max_boost: 2, boost_mode: 'replace' } }), '1')).toBe(2);
    const r = run({ function_score: { query: bar, field_value_factor: { field: 'popularity' }, boost_mode: 'replace', min_score: 4 } });
    expect(ids(r).sort()).toEqual(['1', '2']);
  });
  it('boost applies to the query score before the functions (as ES passes it to the sub-query)', () => {
    expect(scoreOf(run({ function_score: { query: bar, weight: 3, boost: 2 } }), '1')).toBe(f(f(2 * scoreOf(base, '1')) * 3));
    expect(scoreOf(run({ function_score: { query: bar, weight: 3, boost: 2, boost_mode: 'replace' } }), '1')).toBe(3);
  });
  it('gauss, exp and linear decay from the origin on numbers', () => {
    const decay = (kind: string) => run({ function_score: { query: bar, [kind]: { price: { origin: 10, scale: 10, decay: 0.5 } }, boost_mode: 'replace' } });
    expect(scoreOf(decay('gauss'), '1')).toBe(1);
    expect(scoreOf(decay('gauss'), '2')).toBe(f(0.5)); // one scale away: the decay
    expect(scoreOf(decay('exp'), '2')).toBe(f(0.5));
    expect(scoreOf(decay('linear'), '2')).toBe(f(0.5));
    expect(scoreOf(decay('linear'), '3')).toBe(1); // no value: 1
  });
  it('decays dates with a time scale and offset', () => {
    const r = run({ function_score: { query: bar, gauss: { day: { origin: '2024-01-01', scale: '10d', offset: '0d' } }, boost_mode: 'replace' } });
    expect(scoreOf(r, '1')).toBe(1);
    expect(scoreOf(r, '2')).toBe(f(0.5));
  });
  it('random_score with a seed is repeatable and in [0, 1)', () => {
    const q = { function_score: { query: bar, random_score: { seed: 10, field: '_seq_no' } } };
    const a = run(q), b = run(q);
    expect(a.hits.map((h) => h.score)).toEqual(b.hits.map((h) => h.score));
    for (const h of a.hits) expect(h.score! >= 0 && h.score! < 1).toBe(true);
  });
  it('random_score on _id is refused as ES refuses fielddata on _id', () => {
    expect(() => run({ function_score: { query: bar, random_score: { seed: 10, field: '_id' } } })).toThrow(/Fielddata access on the _id field is disallowed/);
  });
  it('sorts by field still match the function_score query set', () => {
    expect(ids(run({ function_score: { query: bar, weight: 2 } }, { sort: [by('popularity', 'desc')] }))).toEqual(['2', '1', '3']);
  });
});
