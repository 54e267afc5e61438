/**
 * Phrase queries over positions (issue 24): exact and sloppy `match_phrase` (SloppyPhraseMatcher's
 * match lengths and weights, repeated terms, the position gap between values), `match_phrase_prefix`
 * (expansions, a prefix alone), phrases through `multi_match` and `query_string`, BM25 over the
 * phrase frequency with idf summed over the terms, and the same answers from `_source` when a
 * segment has no positions.
 */
import { shardWith, search, ids } from '../engineFixture';
import type { ShardQueryResult, ShardStore } from '../../../../../actors/shard/engine';
import { TextColumn } from '../../../../../actors/shard/engine/index/columns';
import { exactFreq, sloppyFreq } from '../../../../../actors/shard/engine/query/phrase';

const DOCS = {
  1: { t: 'the quick brown fox' },
  2: { t: 'quick fox brown' },
  3: { t: ['quick', 'brown'] },
  4: { t: 'brown quick quick brown' },
  5: { t: 'quick the brown', k: 'quick brown' },
};
const MAPPING = { properties: { t: { type: 'text' }, k: { type: 'keyword' } } };
const store = shardWith(DOCS, MAPPING);
const run = (query: unknown, s: ShardStore = store) => search(s, { query });
const scores = (r: ShardQueryResult) => Object.fromEntries(r.hits.map((h) => [h._id, h.score]));
const f = Math.fround;
const u = (...a: number[]) => Uint32Array.from(a);

describe('phrase matchers', () => {
  it('exact: counts start positions where every term lines up', () => {
    expect(exactFreq([u(0, 5, 9), u(1, 6, 7)], [0, 1])).toBe(2);
    expect(exactFreq([u(3), u(3)], [0, 1])).toBe(0);
  });
  it('sloppy: match lengths within slop, each 1 / (1 + length)', () => {
    expect(sloppyFreq([u(0), u(2)], [0, 1], 1)).toBe(f(1 / 2)); // one word between: length 1
    expect(sloppyFreq([u(1), u(0)], [0, 1], 2)).toBe(f(1 / 3)); // reversed: length 2
    expect(sloppyFreq([u(1), u(0)], [0, 1], 1)).toBe(0);
  });
  it('sloppy: a repeated term needs two occurrences', () => {
    expect(sloppyFreq([u(0), u(0)], [0, 1], 1, Int32Array.of(0, 0))).toBe(0);
    expect(sloppyFreq([u(0, 1), u(0, 1)], [0, 1], 0, Int32Array.of(0, 0))).toBeGreaterThan(0);
  });
});

describe('match_phrase', () => {
  it('matches the terms in order and adjacent', () => {
    expect(ids(run({ match_phrase: { t: 'quick brown' } }))).toEqual(['1', '4']);
    expect(ids(run({ match_phrase: { t: 'brown quick' } }))).toEqual(['4']);
  });
  it('scores BM25 of the phrase frequency with the terms idfs summed (LegacyBM25: boost 2.2)', () => {
    // 5 docs, both terms in all: idf = ln(1 + 0.5 / 5.5) each; doc 1 has 4 tokens, avgdl 16/5
    const idf = f(Math.log(1 + 0.5 / 5.5));
    const weight = f(f(2.2) * f(idf + idf));
    const norm = 1.2 * (0.25 + (0.75 * 4) / 3.2);
    expect(scores(run({ match_phrase: { t: 'quick brown' } }))['1']!).toBeCloseTo(weight / (1 + norm), 6);
  });
  it('slop lets terms move apart, or swap with slop 2', () => {
    expect(ids(run({ match_phrase: { t: { query: 'quick brown', slop: 1 } } }))).toEqual(['1', '4', '2', '5']);
    const s2 = scores(run({ match_phrase: { t: { query: 'quick brown', slop: 2 } } }));
    expect(s2['4']!).toBeGreaterThan(s2['1']!); // doc 4: the exact match and the swapped one (1 + 1/3)
  });
  it('values of a multi-valued field stand 100 positions apart', () => {
    expect(ids(run({ match_phrase: { t: { query: 'quick brown', slop: 99 } } }))).not.toContain('3');
    expect(ids(run({ match_phrase: { t: { query: 'quick brown', slop: 100 } } }))).toContain('3');
  });
  it('one term is a term query; a keyword field matches the whole value', () => {
    expect(ids(run({ match_phrase: { t: 'fox' } })).sort()).toEqual(['1', '2']);
    expect(ids(run({ match_phrase: { k: 'quick brown' } }))).toEqual(['5']);
  });
  it('a missing term matches nothing; no terms follow zero_terms_query', () => {
    expect(ids(run({ match_phrase: { t: 'quick zebra' } }))).toEqual([]);
    expect(ids(run({ match_phrase: { t: { query: '', zero_terms_query: 'all' } } })).length).toBe(5);
  });
});

describe('match_phrase_prefix', () => {
  it('expands the last term', () => {
    expect(ids(run({ match_phrase_prefix: { t: 'quick br' } }))).toEqual(['1', '4']);
    expect(ids(run({ match_phrase_prefix: { t: 'quick f' } }))).toEqual(['2']);
  });
  it('a prefix alone is a should of its expansions; max_expansions bounds them in term order', () => {
    expect(ids(run({ match_phrase_prefix: { t: 'qu' } })).sort()).toEqual(['1', '2', '3', '4', '5']);
    expect(ids(run({ match_phrase_prefix: { t: { query: 'b', max_expansions: 1 } } })).sort()).toEqual(['1', '2', '3', '4', '5']);
    expect(ids(run({ match_phrase_prefix: { t: 'zz' } }))).toEqual([]);
  });
});

describe('phrases through multi_match and query_string', () => {
  it('multi_match type phrase and phrase_prefix', () => {
    expect(ids(run({ multi_match: { query: 'quick brown', fields: ['t', 'k'], type: 'phrase' } })).sort()).toEqual(['1', '4', '5']);
    expect(ids(run({ multi_match: { query: 'quick fo', fields: ['t'], type: 'phrase_prefix' } }))).toEqual(['2']);
  });
  it('query_string quoted phrases with ~slop', () => {
    expect(ids(run({ query_string: { query: '"quick brown"', default_field: 't' } }))).toEqual(['1', '4']);
    expect(ids(run({ query_string: { query: '"quick brown"~1', default_field: 't' } })).sort()).toEqual(['1', '2', '4', '5']);
  });
});

describe('segments without positions', () => {
  it('answer from _source what positions answer', () => {
    const legacy = shardWith(DOCS, MAPPING);
    (legacy.activeBuffer().column('t') as TextColumn).hasPositions = false;
    for (const q of [
      { match_phrase: { t: 'quick brown' } },
      { match_phrase: { t: { query: 'quick brown', slop: 100 } } },
      { match_phrase_prefix: { t: 'quick br' } },
    ]) {
      expect(run(q, legacy).hits).toEqual(run(q).hits);
    }
  });
});
