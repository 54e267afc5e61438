/**
 * The `intervals` query (issue 24): ES's search/230_interval_query.yml case by case on its corpus,
 * Lucene's iterators on small streams, scoring by saturation, and the refusals.
 */
import { shardWith, search, ids } from '../engineFixture';
import { parseQuery } from '../../../../../actors/shard/engine/request/queryDsl';
import { blockIvs, orIvs, orderedIvs, unorderedIvs, type Iv } from '../../../../../actors/shard/engine/query/intervalIterators';

const store = shardWith({
  1: { text: 'Some like it hot, some like it cold' },
  2: { text: 'Its cold outside, theres no kind of atmosphere' },
  3: { text: 'Baby its cold there outside' },
  4: { text: 'Outside it is cold and wet' },
  5: { text: 'the big bad wolf' },
  6: { text: 'the big wolf' },
}, { properties: { text: { type: 'text', analyzer: 'standard' }, k: { type: 'keyword' }, n: { type: 'long' } } });

const run = (rule: Record<string, unknown>) => search(store, { query: parseQuery({ intervals: { text: rule } }) });
const total = (rule: Record<string, unknown>) => run(rule).totalHits;
const cold = { match: { query: 'cold' } };
const outside = { match: { query: 'outside' } };

describe('search/230_interval_query.yml', () => {
  it('ordered matching', () => expect(total({ match: { query: 'cold outside', ordered: true } })).toBe(2));
  it('default and explicit unordered matching', () => {
    expect(total({ match: { query: 'cold outside' } })).toBe(3);
    expect(total({ match: { query: 'cold outside', ordered: false } })).toBe(3);
  });
  it('phrase matching (ordered, max_gaps 0)', () => expect(total({ match: { query: 'cold outside', ordered: true, max_gaps: 0 } })).toBe(1));
  it('unordered max_gaps', () => expect(total({ match: { query: 'cold outside', max_gaps: 1 } })).toBe(2));
  it('ordered combination with disjunction', () => {
    expect(total({ all_of: { intervals: [{ any_of: { intervals: [cold, outside] } }, { match: { query: 'atmosphere' } }], ordered: true } })).toBe(1);
  });
  it('ordered combination, with max_gaps, unordered, block', () => {
    expect(total({ all_of: { intervals: [cold, outside], max_gaps: 0, ordered: true } })).toBe(1);
    expect(total({ all_of: { intervals: [cold, outside], ordered: true } })).toBe(2);
    expect(total({ all_of: { intervals: [cold, outside], max_gaps: 1, ordered: false } })).toBe(2);
  });
  it('containing and not containing', () => {
    const both = { intervals: [cold, outside], ordered: false };
    expect(total({ all_of: { ...both, filter: { containing: { match: { query: 'is' } } } } })).toBe(1);
    expect(total({ all_of: { ...both, filter: { not_containing: { match: { query: 'is' } } } } })).toBe(2);
  });
  it('contained_by and not_contained_by', () => {
    expect(total({ match: { query: 'is', filter: { contained_by: { all_of: { intervals: [cold, outside], ordered: false } } } } })).toBe(1);
    expect(total({ match: { query: 'it', filter: { not_contained_by: { all_of: { intervals: [cold, outside] } } } } })).toBe(1);
  });
  it('not_overlapping and overlapping', () => {
    expect(total({ all_of: { intervals: [cold, outside], ordered: true, filter: { not_overlapping: { all_of: { intervals: [{ match: { query: 'baby' } }, { match: { query: 'there' } }], ordered: false } } } } })).toBe(1);
    const r = run({ match: { query: 'cold outside', ordered: true, filter: { overlapping: { match: { query: 'baby there', ordered: false } } } } });
    expect(ids(r)).toEqual(['3']);
  });
  it('before and after', () => {
    expect(total({ match: { query: 'cold', filter: { before: outside } } })).toBe(2);
    expect(ids(run({ match: { query: 'cold', filter: { after: outside } } }))).toEqual(['4']);
  });
  it('prefix, wildcard, fuzzy, regexp, range', () => {
    expect(total({ all_of: { intervals: [cold, { prefix: { prefix: 'out' } }] } })).toBe(3);
    expect(total({ all_of: { intervals: [cold, { wildcard: { pattern: 'out?ide' } }] } })).toBe(3);
    expect(total({ all_of: { intervals: [{ fuzzy: { term: 'cald' } }, { prefix: { prefix: 'out' } }] } })).toBe(3);
    expect(total({ all_of: { intervals: [cold, { regexp: { pattern: 'ou.*ide' } }] } })).toBe(3);
    expect(total({ all_of: { intervals: [cold, { range: { gte: 'out', lte: 'ouu' } }] } })).toBe(3);
  });
  it('rewrites disjunctions inside a phrase', () => {
    const r = run({
      all_of: {
        intervals: [{ match: { query: 'the' } }, { any_of: { intervals: [{ match: { query: 'big' } }, { match: { query: 'big bad' } }] } }, { match: { query: 'wolf' } }],
        max_gaps: 0, ordered: true,
      },
    });
    expect(ids(r)).toEqual(['6', '5']);
  });
});

describe('scoring', () => {
  it('saturates the sloppy frequency: boost * f / (f + 1)', () => {
    // doc 6 "the big wolf": one interval of length 3 for a source of minimal extent 3 -> f = 1
    const r = search(store, { query: { intervals: { text: { match: { query: 'the big wolf', ordered: true }, boost: 2 } } } });
    expect(r.hits.find((h) => h._id === '6')!.score).toBe(1);
    // doc 5 "the big bad wolf": length 4 -> f = 1/2 -> 2 * 0.5 / 1.5
    expect(r.hits.find((h) => h._id === '5')!.score).toBe(0.6666667); // float32 2 * 0.5 / 1.5, printed as Java prints floats
  });
});

describe('Lucene iterators', () => {
  const ivs = (...ps: number[]): Iv[] => ps.map((p) => ({ s: p, e: p, g: 0 }));
  it('ordered keeps minimal intervals', () => {
    expect(orderedIvs([ivs(0, 2), ivs(3)]).map((i) => [i.s, i.e, i.g])).toEqual([[2, 3, 0]]);
  });
  it('unordered minimal intervals may come either way round', () => {
    expect(unorderedIvs([ivs(5), ivs(1, 7)]).map((i) => [i.s, i.e])).toEqual([[1, 5], [5, 7]]);
  });
  it('block needs adjacency', () => {
    expect(blockIvs([ivs(0, 4), ivs(1, 3)]).map((i) => [i.s, i.e])).toEqual([[0, 1]]);
  });
  it('a disjunction skips intervals containing the last one', () => {
    expect(orIvs([ivs(1), [{ s: 1, e: 2, g: 0 }]]).map((i) => [i.s, i.e])).toEqual([[1, 1]]);
  });
});

describe('refusals', () => {
  it('parse errors', () => {
    expect(() => parseQuery({ intervals: { text: { foo: { query: 'x' } } } })).toThrow(/Unknown interval type \[foo\]/);
    expect(() => parseQuery({ intervals: { text: { match: { query: 'x' }, prefix: { prefix: 'y' } } } })).toThrow('Only one interval rule can be specified, found [match] and [prefix]');
    expect(() => parseQuery({ intervals: { text: { boost: 2 } } })).toThrow('Missing intervals from interval query definition');
    expect(() => parseQuery({ intervals: { text: { match: { query: 'x', foo: 1 } } } })).toThrow(/\[match\] unknown field \[foo\]/);
    expect(() => parseQuery({ intervals: { text: { range: { gte: 'a' } } } })).toThrow('Either [lte] or [lt], one of them must be provided');
  });
  it('fields without positions', () => {
    expect(() => search(store, { query: { intervals: { k: { match: { query: 'x' } } } } })).toThrow(/Cannot create intervals over field \[k\] with no positions indexed/);
    expect(() => search(store, { query: { intervals: { n: { match: { query: 'x' } } } } })).toThrow(/Can only use interval queries on text fields - not on \[n\] which is of type \[long\]/);
    expect(search(store, { query: { intervals: { nope: { match: { query: 'x' } } } } }).totalHits).toBe(0);
  });
});
