/**
 * Issue 24, queries over term positions through the official client: ES's search/230_interval_query
 * ported case by case; match_phrase (slop), match_phrase_prefix, span queries; the same queries
 * through PIT, scroll, sliced scroll and search_after (segments on disk: segmentQueries.test.ts).
 */
import { startTestNode, type TestNode } from '../../support/node';
import { failure } from './helpers';

let t: TestNode;

const CORPUS = [
  'Some like it hot, some like it cold',
  'Its cold outside, theres no kind of atmosphere',
  'Baby its cold there outside',
  'Outside it is cold and wet',
  'the big bad wolf',
  'the big wolf',
];

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'test', mappings: { properties: { text: { type: 'text', analyzer: 'standard' } } } });
  await t.es.bulk({ refresh: true, operations: CORPUS.flatMap((text, i) => [{ index: { _index: 'test', _id: String(i + 1) } }, { text }]) });
});
afterAll(async () => {
  await t?.stop();
});

type Rule = Record<string, unknown>;
const total = async (rule: Rule, index = 'test') => {
  const r = await t.es.search({ index, query: { intervals: { text: rule } } as never });
  return (r.hits.total as { value: number }).value;
};
const idsOf = (r: { hits: { hits: Array<{ _id?: string | null }> } }) => r.hits.hits.map((h) => h._id ?? '');
const cold = { match: { query: 'cold' } };
const outside = { match: { query: 'outside' } };

describe('search/230_interval_query.yml', () => {
  it.each<[string, Rule, number]>([
    ['ordered matching', { match: { query: 'cold outside', ordered: true } }, 2],
    ['default unordered matching', { match: { query: 'cold outside' } }, 3],
    ['explicit unordered matching', { match: { query: 'cold outside', ordered: false } }, 3],
    ['phrase matching', { match: { query: 'cold outside', ordered: true, max_gaps: 0 } }, 1],
    ['unordered max_gaps matching', { match: { query: 'cold outside', max_gaps: 1 } }, 2],
    ['ordered max_gaps matching', { match: { query: 'cold outside', max_gaps: 0, ordered: true } }, 1],
    ['ordered combination with disjunction', { all_of: { intervals: [{ any_of: { intervals: [cold, outside] } }, { match: { query: 'atmosphere' } }], ordered: true } }, 1],
    ['ordered combination with max_gaps', { all_of: { intervals: [cold, outside], max_gaps: 0, ordered: true } }, 1],
    ['ordered combination', { all_of: { intervals: [cold, outside], ordered: true } }, 2],
    ['unordered combination', { all_of: { intervals: [cold, outside], max_gaps: 1, ordered: false } }, 2],
    ['block combination', { all_of: { intervals: [cold, outside], ordered: true, max_gaps: 0 } }, 1],
    ['containing', { all_of: { intervals: [cold, outside], ordered: false, filter: { containing: { match: { query: 'is' } } } } }, 1],
    ['not containing', { all_of: { intervals: [cold, outside], ordered: false, filter: { not_containing: { match: { query: 'is' } } } } }, 2],
    ['contained_by', { match: { query: 'is', filter: { contained_by: { all_of: { intervals: [cold, outside], ordered: false } } } } }, 1],
    ['not_contained_by', { match: { query: 'it', filter: { not_contained_by: { all_of: { intervals: [cold, outside] } } } } }, 1],
    ['not_overlapping', { all_of: { intervals: [cold, outside], ordered: true, filter: { not_overlapping: { all_of: { intervals: [{ match: { query: 'baby' } }, { match: { query: 'there' } }], ordered: false } } } } }, 1],
    ['before', { match: { query: 'cold', filter: { before: outside } } }, 2],
    ['prefix', { all_of: { intervals: [cold, { prefix: { prefix: 'out' } }] } }, 3],
    ['wildcard', { all_of: { intervals: [cold, { wildcard: { pattern: 'out?ide' } }] } }, 3],
    ['fuzzy match', { all_of: { intervals: [{ fuzzy: { term: 'cald' } }, { prefix: { prefix: 'out' } }] } }, 3],
    ['regexp', { all_of: { intervals: [cold, { regexp: { pattern: 'ou.*ide' } }] } }, 3],
    ['range', { all_of: { intervals: [cold, { range: { gte: 'out', lte: 'ouu' } }] } }, 3],
  ])('%s', async (_name, rule, n) => {
    expect(await total(rule)).toBe(n);
  });

  it('overlapping', async () => {
    const r = await t.es.search({ index: 'test', query: { intervals: { text: { match: { query: 'cold outside', ordered: true, filter: { overlapping: { match: { query: 'baby there', ordered: false } } } } } } } as never });
    expect(idsOf(r)).toEqual(['3']);
  });
  it('after', async () => {
    const r = await t.es.search({ index: 'test', query: { intervals: { text: { match: { query: 'cold', filter: { after: outside } } } } } as never });
    expect(idsOf(r)).toEqual(['4']);
  });
  it('rewrite disjunctions', async () => {
    const rule = {
      all_of: {
        intervals: [{ match: { query: 'the' } }, { any_of: { intervals: [{ match: { query: 'big' } }, { match: { query: 'big bad' } }] } }, { match: { query: 'wolf' } }],
        max_gaps: 0, ordered: true,
      },
    };
    const r = await t.es.search({ index: 'test', query: { intervals: { text: rule } } as never });
    expect((r.hits.total as { value: number }).value).toBe(2);
    expect(idsOf(r)).toEqual(['6', '5']);
  });
  it('unknown rule and filter types are 400s', async () => {
    const e = await failure(t.es.search({ index: 'test', query: { intervals: { text: { foo: {} } } } as never }));
    expect(e.status).toBe(400);
    expect(e.body.error.reason).toMatch(/Unknown interval type \[foo\]/);
  });
});

describe('phrases and spans', () => {
  const search = (query: unknown) => t.es.search({ index: 'test', query: query as never });
  it('match_phrase, slop, match_phrase_prefix', async () => {
    expect(idsOf(await search({ match_phrase: { text: 'cold outside' } }))).toEqual(['2']);
    expect(idsOf(await search({ match_phrase: { text: { query: 'cold outside', slop: 1 } } })).sort()).toEqual(['2', '3']);
    expect(idsOf(await search({ match_phrase_prefix: { text: 'big ba' } }))).toEqual(['5']);
  });
  it('span_near and span_first', async () => {
    const near = { span_near: { clauses: [{ span_term: { text: 'big' } }, { span_term: { text: 'wolf' } }], slop: 1, in_order: true } };
    expect(idsOf(await search(near))).toEqual(['6', '5']);
    expect(idsOf(await search({ span_first: { match: { span_term: { text: 'outside' } }, end: 1 } }))).toEqual(['4']);
  });
});

describe('inside PIT, scroll, sliced scroll and search_after', () => {
  const query = { intervals: { text: { match: { query: 'cold outside' } } } };
  it('PIT with search_after pages through the same hits', async () => {
    const pit = await t.es.openPointInTime({ index: 'test', keep_alive: '1m' });
    const seen: string[] = [];
    let after: unknown[] | undefined;
    for (;;) {
      const r = await t.es.search({ pit: { id: pit.id }, size: 1, sort: [{ _score: 'desc' }, { _shard_doc: 'asc' }] as never, query: query as never, ...(after ? { search_after: after as never } : {}) });
      if (!r.hits.hits.length) break;
      seen.push(r.hits.hits[0]._id!);
      after = r.hits.hits[0].sort;
    }
    await t.es.closePointInTime({ id: pit.id });
    expect(seen.sort()).toEqual(['2', '3', '4']);
  });
  it('scroll and sliced scroll', async () => {
    let r = await t.es.search({ index: 'test', scroll: '1m', size: 1, query: { match_phrase: { text: { query: 'cold outside', slop: 5 } } } as never });
    const seen = idsOf(r);
    while (r.hits.hits.length) {
      r = await t.es.scroll({ scroll_id: r._scroll_id!, scroll: '1m' });
      seen.push(...idsOf(r));
    }
    expect(seen.sort()).toEqual(['2', '3', '4']);
    const sliced: string[] = [];
    for (const id of [0, 1]) {
      const s = await t.es.search({ index: 'test', scroll: '1m', size: 10, slice: { id: String(id), max: 2 }, query: query as never });
      sliced.push(...idsOf(s));
      await t.es.clearScroll({ scroll_id: s._scroll_id! });
    }
    expect(sliced.sort()).toEqual(['2', '3', '4']);
  });
});

describe('inside async search', () => {
  it('runs an intervals query and a phrase to completion', async () => {
    const r = await t.es.asyncSearch.submit({ index: 'test', wait_for_completion_timeout: '10s', query: { intervals: { text: { match: { query: 'cold outside', ordered: true } } } } as never });
    expect(r.is_running).toBe(false);
    expect((r.response.hits.total as { value: number }).value).toBe(2);
    const p = await t.es.asyncSearch.submit({ index: 'test', wait_for_completion_timeout: '10s', query: { match_phrase: { text: 'big wolf' } } });
    expect(p.response.hits.hits.map((h) => h._id)).toEqual(['6']);
  });
});
