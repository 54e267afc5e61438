/**
 * Span queries (issue 24): span_term scores as a term, span_near ordered/unordered with slop and
 * gaps, span_or, span_not (pre/post/dist), span_first, span_multi, span_containing/within,
 * field_masking_span, and ES's parse errors.
 */
import { shardWith, search, ids } from '../engineFixture';
import { parseQuery } from '../../../../../actors/shard/engine/request/queryDsl';
import { nearOrdered, nearUnordered, type Span } from '../../../../../actors/shard/engine/query/spans';

const store = shardWith({
  1: { t: 'the quick brown fox jumps' },
  2: { t: 'quick fox' },
  3: { t: 'fox quick brown' },
  4: { t: 'a b c d e f quick' },
  5: { t: 'brown the quick' },
}, { properties: { t: { type: 'text' }, k: { type: 'keyword' } } });

const run = (q: unknown) => search(store, { query: parseQuery(q) });
const st = (v: string) => ({ span_term: { t: v } });
const sp = (...p: number[]): Span[] => p.map((s) => ({ s, e: s + 1, w: 0 }));

describe('span matchers', () => {
  it('ordered near: clauses in order, the gaps within slop', () => {
    expect(nearOrdered([sp(0), sp(2)], 1)).toEqual([{ s: 0, e: 3, w: 1 }]);
    expect(nearOrdered([sp(0), sp(2)], 0)).toEqual([]);
    expect(nearOrdered([sp(2), sp(0)], 5)).toEqual([]);
    expect(nearOrdered([sp(0), { gap: 1 }, sp(2)], 0)).toEqual([{ s: 0, e: 3, w: 0 }]);
  });
  it('unordered near: either way round', () => {
    expect(nearUnordered([sp(2), sp(0)], 1)).toEqual([{ s: 0, e: 3, w: 1 }]);
  });
});

describe('span queries', () => {
  it('span_term scores as a term query', () => {
    const a = run(st('fox')), b = run({ term: { t: 'fox' } });
    expect(a.hits.map((h) => [h._id, h.score])).toEqual(b.hits.map((h) => [h._id, h.score]));
  });
  it('span_near ordered and unordered', () => {
    expect(ids(run({ span_near: { clauses: [st('quick'), st('fox')], slop: 1, in_order: true } })).sort()).toEqual(['1', '2']);
    expect(ids(run({ span_near: { clauses: [st('quick'), st('fox')], slop: 1, in_order: false } })).sort()).toEqual(['1', '2', '3']);
    expect(ids(run({ span_near: { clauses: [st('quick'), st('fox')], slop: 0 } }))).toEqual(['2']);
  });
  it('span_near with a span_gap', () => {
    expect(ids(run({ span_near: { clauses: [st('quick'), { span_gap: { t: 1 } }, st('fox')], slop: 0 } }))).toEqual(['1']);
  });
  it('span_or, span_not, span_first', () => {
    expect(ids(run({ span_or: { clauses: [st('jumps'), st('e')] } })).sort()).toEqual(['1', '4']);
    expect(ids(run({ span_not: { include: st('quick'), exclude: st('the'), pre: 1 } })).sort()).toEqual(['2', '3', '4']);
    expect(ids(run({ span_not: { include: st('quick'), exclude: st('the'), dist: 1 } })).sort()).toEqual(['2', '3', '4']);
    expect(ids(run({ span_not: { include: st('quick'), exclude: st('fox') } })).sort()).toEqual(['1', '2', '3', '4', '5']); // no overlap without pre/post
    expect(ids(run({ span_not: { include: st('quick'), exclude: st('fox'), post: 1 } })).sort()).toEqual(['1', '3', '4', '5']); // doc 2: fox right after quick
    expect(ids(run({ span_first: { match: st('quick'), end: 1 } })).sort()).toEqual(['2']);
    expect(ids(run({ span_first: { match: st('quick'), end: 2 } })).sort()).toEqual(['1', '2', '3']);
  });
  it('span_multi expands a multi-term query', () => {
    expect(ids(run({ span_near: { clauses: [{ span_multi: { match: { prefix: { t: 'qu' } } } }, st('brown')], slop: 0 } })).sort()).toEqual(['1', '3']);
    expect(ids(run({ span_multi: { match: { wildcard: { t: 'j*s' } } } }))).toEqual(['1']);
    expect(ids(run({ span_multi: { match: { fuzzy: { t: 'foz' } } } })).sort()).toEqual(['1', '2', '3']);
  });
  it('span_containing and span_within', () => {
    const big = { span_near: { clauses: [st('quick'), st('fox')], slop: 1, in_order: true } };
    expect(ids(run({ span_containing: { big, little: st('brown') } }))).toEqual(['1']);
    expect(ids(run({ span_within: { big, little: st('brown') } }))).toEqual(['1']);
  });
  it('field_masking_span lets a clause of another field join', () => {
    expect(ids(run({ span_near: { clauses: [st('quick'), { field_masking_span: { query: st('fox'), field: 't' } }], slop: 0 } }))).toEqual(['2']);
  });
  it('refusals', () => {
    expect(() => parseQuery({ span_near: { clauses: [] } })).toThrow('span_near must include [clauses]');
    expect(() => parseQuery({ span_near: { clauses: [{ term: { t: 'x' } }] } })).toThrow('span_near [clauses] must be of type span query');
    expect(() => parseQuery({ span_not: { include: st('a') } })).toThrow('span_not must have [exclude] span query clause');
    expect(() => parseQuery({ span_not: { include: st('a'), exclude: st('b'), dist: 1, pre: 1 } })).toThrow('span_not can either use [dist] or [pre] & [post] (or none)');
    expect(() => parseQuery({ span_first: { match: st('a') } })).toThrow('span_first must have [end] set for it');
    expect(() => parseQuery({ span_multi: { match: { term: { t: 'a' } } } })).toThrow('[span_multi] [match] must be of type multi term query');
    expect(() => parseQuery({ span_near: { clauses: [st('a'), { span_gap: { t: 1 } }], in_order: false } })).toThrow('Gaps can only be added to ordered near queries');
    expect(() => run({ span_near: { clauses: [st('a'), { span_term: { k: 'b' } }] } })).toThrow(/Clauses must have same field|indexed without position data/);
  });
});
