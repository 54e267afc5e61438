/**
 * Issue 4: scroll (search-paging.md §9, §11, §12; §15 items 6, 8–12; seed-vs-ES choices of §14:
 * a continuation without `scroll` releases the context, scroll ids carry the position so a re-sent
 * id returns the same page again). Lifecycle facts: test/int/search/lifecycleFacts.test.ts.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { bulkIndex, eventually, raw, searchStats } from './helpers';
import { rng } from '../../support/rng';

let t: TestNode;
interface Doc {
  n: number;
  grp: string;
}
const GROUPS = ['ant', 'bee', 'cat', 'doe'];
const r = rng(21);
const N = 2500;
const docs: Doc[] = Array.from({ length: N }, (_, i) => ({ n: i + 1, grp: GROUPS[Math.floor(r() * GROUPS.length)] }));
const small = docs.slice(0, 30);
const mappings = { properties: { n: { type: 'long' }, grp: { type: 'keyword' } } };

type Page = { status: number; json: any };
const startScroll = (index: string, body: Record<string, unknown>, scroll = '1m'): Promise<Page> => raw(t, 'POST', `/${index}/_search?scroll=${scroll}`, body);
/** `scroll: null` sends a continuation without `scroll`. */
const nextPage = (scrollId: string, scroll: string | null = '1m'): Promise<Page> =>
  raw(t, 'POST', '/_search/scroll', { scroll_id: scrollId, ...(scroll === null ? {} : { scroll }) });
const clear = (body?: unknown, path = '/_search/scroll') => raw(t, 'DELETE', path, body);
const idsOf = (p: Page): string[] => p.json.hits.hits.map((h: { _id: string }) => h._id);

async function openScrollId(index: string, size = 5): Promise<string> {
  const p = await startScroll(index, { size });
  if (p.status !== 200) throw new Error(`${p.status} ${JSON.stringify(p.json)}`);
  return p.json._scroll_id;
}

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'sc', settings: { number_of_shards: 2 }, mappings: mappings as never });
  await bulkIndex(t, 'sc', docs, (d) => String(d.n));
  for (const index of ['one', 'late']) {
    await t.es.indices.create({ index, settings: { number_of_shards: 1 }, mappings: mappings as never });
    await bulkIndex(t, index, small, (d) => String(d.n));
  }
}, 120_000);
afterAll(async () => {
  await t?.stop();
});

describe('scrolling through 2,500 documents', () => {
  it('returns every document once in pages of 1000, a constant exact total and an empty last page', async () => {
    const first = await startScroll('sc', { size: 1000 });
    expect(first.status).toBe(200);
    expect(typeof first.json._scroll_id).toBe('string');
    expect(Object.keys(first.json)[0]).toBe('_scroll_id');
    const sizes = [first.json.hits.hits.length];
    const totals = [first.json.hits.total];
    const seen = idsOf(first);
    let id = first.json._scroll_id;
    for (;;) {
      const p = await nextPage(id);
      expect(p.status).toBe(200);
      expect(p.json.took).toBeGreaterThanOrEqual(1);
      sizes.push(p.json.hits.hits.length);
      totals.push(p.json.hits.total);
      seen.push(...idsOf(p));
      id = p.json._scroll_id;
      if (!p.json.hits.hits.length) break;
    }
    expect(sizes).toEqual([1000, 1000, 500, 0]);
    expect(totals.every((x) => x.value === N && x.relation === 'eq')).toBe(true);
    expect(seen.length).toBe(N);
    expect(new Set(seen).size).toBe(N);
    await clear({ scroll_id: id });
  });

  it('returns aggregations on the first page only', async () => {
    const first = await startScroll('sc', { size: 1000, aggs: { grps: { terms: { field: 'grp' } } } });
    const counts = GROUPS.map((g) => ({ key: g, doc_count: docs.filter((d) => d.grp === g).length })).sort((a, b) => b.doc_count - a.doc_count || (a.key < b.key ? -1 : 1));
    const later = [];
    let id = first.json._scroll_id;
    for (let p = await nextPage(id); p.json.hits.hits.length; p = await nextPage(id)) {
      later.push(p.json.aggregations);
      id = p.json._scroll_id;
    }
    await clear({ scroll_id: id });
    expect(later).toEqual([undefined, undefined]);
    expect(first.json.aggregations.grps.buckets).toEqual(counts);
  });

  it('yields every document once through es.helpers.scrollDocuments', async () => {
    const seen: number[] = [];
    for await (const doc of t.es.helpers.scrollDocuments<Doc>({ index: 'sc', size: 1000, scroll: '1m', query: { match_all: {} } })) seen.push(doc.n);
    expect(seen.sort((a, b) => a - b)).toEqual(docs.map((d) => d.n));
  });

  it('yields pages with the exact total through es.helpers.scrollSearch', async () => {
    const sizes: number[] = [];
    const seen = new Set<string>();
    for await (const page of t.es.helpers.scrollSearch<Doc>({ index: 'sc', size: 1000, scroll: '1m', sort: ['_doc'] })) {
      expect(page.body.hits.total).toEqual({ value: N, relation: 'eq' });
      sizes.push(page.documents.length);
      for (const h of page.body.hits.hits) seen.add(h._id!);
    }
    expect(sizes).toEqual([1000, 1000, 500]);
    expect(seen.size).toBe(N);
  });

  it('keeps the requested sort across pages and shows only its sort values', async () => {
    const first = await startScroll('sc', { size: 700, sort: [{ n: 'desc' }] });
    const seen = idsOf(first);
    expect(first.json.hits.hits[0].sort).toEqual([N]);
    let id = first.json._scroll_id;
    for (let p = await nextPage(id); p.json.hits.hits.length; p = await nextPage(id)) {
      seen.push(...idsOf(p));
      expect(p.json.hits.hits.every((h: { sort: unknown[] }) => h.sort.length === 1)).toBe(true);
      id = p.json._scroll_id;
    }
    expect(seen).toEqual(docs.map((d) => String(d.n)).reverse());
    await clear({ scroll_id: id });
  });

  it('walks a 2-shard index by _doc shard after shard: every doc once, each sort value a doc id, pages full', async () => {
    let p = await startScroll('sc', { size: 300, sort: ['_doc'] });
    const seen: string[] = [];
    const sorts: number[] = [];
    let pages = 0;
    while (p.json.hits.hits.length) {
      pages++;
      for (const h of p.json.hits.hits as Array<{ _id: string; sort: number[] }>) {
        seen.push(h._id);
        expect(h.sort).toHaveLength(1);
        sorts.push(h.sort[0]);
      }
      p = await nextPage(p.json._scroll_id);
    }
    expect(new Set(seen).size).toBe(N);
    expect(seen.sort()).toEqual(docs.map((d) => String(d.n)).sort());
    expect(pages).toBe(Math.ceil(N / 300)); // every page but the last is full, across the shard boundary
    expect(Math.max(...sorts)).toBeLessThan(N); // per-shard doc ids, not (shard << 32) | doc
    await clear({ scroll_id: p.json._scroll_id });
  });

  it('returns the same batch again when the same scroll id is re-sent', async () => {
    const first = await startScroll('sc', { size: 100, sort: ['_doc'] });
    const second = await nextPage(first.json._scroll_id);
    const again = await nextPage(first.json._scroll_id);
    expect(again.status).toBe(200);
    expect(idsOf(again)).toEqual(idsOf(second));
    const third = await nextPage(second.json._scroll_id);
    expect(idsOf(third).some((x) => idsOf(second).includes(x))).toBe(false);
    await clear({ scroll_id: third.json._scroll_id });
  });

  it('accepts scroll_id and scroll as URL parameters and in the deprecated path form', async () => {
    const first = await startScroll('one', { size: 10, sort: [{ n: 'asc' }] });
    const viaQuery = await raw(t, 'GET', `/_search/scroll?scroll=1m&scroll_id=${encodeURIComponent(first.json._scroll_id)}`);
    expect(viaQuery.status).toBe(200);
    expect(idsOf(viaQuery)).toEqual(small.slice(10, 20).map((d) => String(d.n)));
    const viaPath = await raw(t, 'GET', `/_search/scroll/${encodeURIComponent(viaQuery.json._scroll_id)}?scroll=1m`);
    expect(viaPath.status).toBe(200);
    expect(idsOf(viaPath)).toEqual(small.slice(20, 30).map((d) => String(d.n)));
    await clear({ scroll_id: viaPath.json._scroll_id });
  });

  it('renders the scroll total as an integer with rest_total_hits_as_int', async () => {
    const first = await raw(t, 'POST', '/one/_search?scroll=1m&rest_total_hits_as_int=true', { size: 5 });
    expect(first.json.hits.total).toBe(small.length);
    const next = await raw(t, 'POST', '/_search/scroll?rest_total_hits_as_int=true', { scroll: '1m', scroll_id: first.json._scroll_id });
    expect(next.json.hits.total).toBe(small.length);
    await clear({ scroll_id: next.json._scroll_id });
  });

  it('never shows documents written after the first page', async () => {
    const first = await startScroll('late', { size: 10, sort: [{ n: 'asc' }] });
    await bulkIndex(t, 'late', Array.from({ length: 10 }, (_, i) => ({ n: 1000 + i, grp: 'ant' })), (d) => String(d.n));
    await raw(t, 'DELETE', '/late/_doc/25?refresh=true');
    const seen = idsOf(first);
    let id = first.json._scroll_id;
    for (let p = await nextPage(id); p.json.hits.hits.length; p = await nextPage(id)) {
      seen.push(...idsOf(p));
      expect(p.json.hits.total.value).toBe(small.length);
      id = p.json._scroll_id;
    }
    expect(seen).toEqual(small.map((d) => String(d.n)));
    await clear({ scroll_id: id });
  });

  it('keeps an exhausted scroll open until it is cleared', async () => {
    const first = await startScroll('one', { size: 50 });
    const empty = await nextPage(first.json._scroll_id);
    expect(empty.json.hits.hits).toEqual([]);
    const res = await clear({ scroll_id: empty.json._scroll_id });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ succeeded: true, num_freed: 1 });
  });
});

describe('continuation without scroll (seed)', () => {
  it('returns its batch without a _scroll_id and then the context is gone', async () => {
    const first = await startScroll('one', { size: 10, sort: [{ n: 'asc' }] });
    const last = await nextPage(first.json._scroll_id, null);
    expect(last.status).toBe(200);
    expect(idsOf(last)).toEqual(small.slice(10, 20).map((d) => String(d.n)));
    expect(last.json._scroll_id).toBeUndefined();
    const gone = await nextPage(first.json._scroll_id);
    expect(gone.status).toBe(404);
    expect(gone.json.error.root_cause[0].type).toBe('search_context_missing_exception');
    const cleared = await clear({ scroll_id: first.json._scroll_id });
    expect(cleared.status).toBe(404);
    expect(cleared.json).toEqual({ succeeded: true, num_freed: 0 });
  });
});

describe('clearing', () => {
  it('clears by a body string with 200 and num_freed equal to the shards', async () => {
    const id = await openScrollId('sc');
    const res = await clear({ scroll_id: id });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ succeeded: true, num_freed: 2 });
  });

  it('clears by a body array', async () => {
    const a = await openScrollId('sc');
    const b = await openScrollId('one');
    const res = await clear({ scroll_id: [a, b] });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ succeeded: true, num_freed: 3 });
  });

  it('clears by a comma list in the path', async () => {
    const a = await openScrollId('one');
    const b = await openScrollId('one');
    const res = await clear(undefined, `/_search/scroll/${a},${b}`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ succeeded: true, num_freed: 2 });
  });

  it('clears by the scroll_id query string parameter', async () => {
    const a = await openScrollId('one');
    const b = await openScrollId('sc');
    const res = await clear(undefined, `/_search/scroll?scroll_id=${encodeURIComponent(`${a},${b}`)}`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ succeeded: true, num_freed: 3 });
  });

  it('clears through the official client', async () => {
    const a = await openScrollId('one');
    expect(await t.es.clearScroll({ scroll_id: a })).toEqual({ succeeded: true, num_freed: 1 });
  });

  it('clears everything with _all, answering one acknowledging node', async () => {
    const a = await openScrollId('one');
    const b = await openScrollId('sc');
    const res = await clear(undefined, '/_search/scroll/_all');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ succeeded: true, num_freed: 1 });
    expect((await nextPage(a)).status).toBe(404);
    expect((await nextPage(b)).status).toBe(404);
    expect((await raw(t, 'GET', '/_scroll')).json.count).toBe(0);
  });

  it('answers clearing an already cleared scroll with 404 succeeded:true num_freed:0', async () => {
    const a = await openScrollId('one');
    await clear({ scroll_id: a });
    const res = await clear({ scroll_id: a });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ succeeded: true, num_freed: 0 });
  });

  it('answers a continuation with a cleared id with 404 search_context_missing_exception', async () => {
    const a = await openScrollId('one');
    await clear({ scroll_id: a });
    const res = await nextPage(a);
    expect(res.status).toBe(404);
    expect(res.json.status).toBe(404);
    expect(res.json.error.type).toBe('search_phase_execution_exception');
    expect(res.json.error.phase).toBe('query');
    expect(res.json.error.root_cause[0].type).toBe('search_context_missing_exception');
    expect(res.json.error.root_cause[0].reason).toMatch(/^No search context found for id \[.+\]/);
    expect(res.json.error.failed_shards[0]).toMatchObject({ shard: -1, index: null });
  });

  it('rejects a junk scroll id with 400 Cannot parse scroll id, on continue and on clear', async () => {
    for (const res of [await nextPage('junk'), await clear({ scroll_id: 'junk' })]) {
      expect(res.status).toBe(400);
      expect(res.json.error.root_cause[0]).toMatchObject({ type: 'illegal_argument_exception', reason: 'Cannot parse scroll id' });
    }
  });

  it('rejects a continuation without an id with 400 validation', async () => {
    const res = await raw(t, 'POST', '/_search/scroll', { scroll: '1m' });
    expect(res.status).toBe(400);
    expect(res.json.error.reason).toBe('Validation Failed: 1: scrollId is missing;');
  });

  it('rejects a clear without ids with 400 validation', async () => {
    const res = await clear({ scroll_id: [] });
    expect(res.status).toBe(400);
    expect(res.json.error.reason).toBe('Validation Failed: 1: no scroll ids specified;');
  });
});

describe('keep-alive', () => {
  it('expires a scroll opened with scroll=1s', async () => {
    const listed = async () => new Set<string>((await raw(t, 'GET', '/_scroll')).json.scrolls.map((s: { id: string }) => s.id));
    const before = await listed();
    const id = (await startScroll('one', { size: 5 }, '1s')).json._scroll_id;
    const mine = [...(await listed())].filter((x) => !before.has(x));
    expect(mine).toHaveLength(1);
    // A continuation would count as a use and restart the idle timer: watch the listing instead.
    await eventually(async () => !(await listed()).has(mine[0]), 6000, 'the scroll to expire');
    const res = await nextPage(id);
    expect(res.status).toBe(404);
    expect(res.json.error.root_cause[0].type).toBe('search_context_missing_exception');
  });

  it('rejects scroll=2d on the first search with 400', async () => {
    const res = await startScroll('one', { size: 5 }, '2d');
    expect(res.status).toBe(400);
    expect(res.json.error.root_cause[0]).toEqual({
      type: 'illegal_argument_exception',
      reason: 'Keep alive for request (2d) is too large. It must be less than (1d). This limit can be set by changing the [search.max_keep_alive] cluster level setting.',
    });
  });

  it('rejects scroll=2d on a continuation with 400 and frees the scroll', async () => {
    const id = await openScrollId('one');
    const res = await nextPage(id, '2d');
    expect(res.status).toBe(400);
    expect(res.json.error.root_cause[0].reason).toMatch(/^Keep alive for request \(2d\) is too large/);
    expect((await nextPage(id)).status).toBe(404);
  });

  it('rejects a scroll time value without a unit with 400 parse_exception', async () => {
    const res = await startScroll('one', { size: 5 }, '5');
    expect(res.status).toBe(400);
    expect(res.json.error.root_cause[0]).toMatchObject({
      type: 'parse_exception',
      reason: 'failed to parse setting [scroll] with value [5] as a time value: unit is missing or unrecognized',
    });
  });
});

describe('validation', () => {
  const v = (...msgs: string[]) => `Validation Failed: ${msgs.map((m, i) => `${i + 1}: ${m};`).join('')}`;
  const cases: Array<[string, Record<string, unknown>, string, string[]]> = [
    ['size 0', { size: 0 }, '', ['[size] cannot be [0] in a scroll context']],
    ['from > 0', { from: 5 }, '', ['using [from] is not allowed in a scroll context']],
    ['search_after', { sort: [{ n: 'asc' }], search_after: [3] }, '', ['[search_after] cannot be used in a scroll context']],
    ['track_total_hits false', { track_total_hits: false }, '', ['disabling [track_total_hits] is not allowed in a scroll context']],
    ['track_total_hits 100', { track_total_hits: 100 }, '', ['disabling [track_total_hits] is not allowed in a scroll context']],
    ['rescore', { rescore: { window_size: 10, query: { rescore_query: { match_all: {} } } } }, '', ['using [rescore] is not allowed in a scroll context']],
    ['collapse', { collapse: { field: 'grp' } }, '', ['cannot use `collapse` in a scroll context']],
    ['request_cache=true', {}, '&request_cache=true', ['[request_cache] cannot be used in a scroll context']],
    [
      'several problems',
      { track_total_hits: false, from: 5, size: 0, rescore: { window_size: 10, query: { rescore_query: { match_all: {} } } } },
      '',
      ['disabling [track_total_hits] is not allowed in a scroll context', 'using [from] is not allowed in a scroll context', '[size] cannot be [0] in a scroll context', 'using [rescore] is not allowed in a scroll context'],
    ],
  ];
  for (const [name, body, query, msgs] of cases) {
    it(`rejects a scroll with ${name} with 400 and ES's numbered text`, async () => {
      const res = await raw(t, 'POST', `/one/_search?scroll=1m${query}`, body);
      expect(res.status).toBe(400);
      const shape = { type: 'action_request_validation_exception', reason: v(...msgs) };
      expect(res.json).toEqual({ error: { root_cause: [shape], ...shape }, status: 400 });
    });
  }

  it('rejects a scroll with a pit with 400', async () => {
    const pit = await raw(t, 'POST', '/one/_pit?keep_alive=1m');
    const res = await raw(t, 'POST', '/_search?scroll=1m', { pit: { id: pit.json.id } });
    expect(res.status).toBe(400);
    expect(res.json.error.type).toBe('action_request_validation_exception');
    expect(res.json.error.reason).toBe(v('using [point in time] is not allowed in a scroll context'));
    await raw(t, 'DELETE', '/_pit', { id: pit.json.id });
  });
});

describe('open scroll limit, stats and listing', () => {
  beforeEach(async () => {
    await clear(undefined, '/_search/scroll/_all');
  });
  afterAll(async () => {
    await raw(t, 'PUT', '/_cluster/settings', { persistent: { 'search.max_open_scroll_context': null } });
    await clear(undefined, '/_search/scroll/_all');
  });

  it('answers the fourth scroll over search.max_open_scroll_context 3 with 429 too_many_scroll_contexts_exception', async () => {
    const put = await raw(t, 'PUT', '/_cluster/settings', { persistent: { 'search.max_open_scroll_context': 3 } });
    expect(put.status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await startScroll('one', { size: 1 })).status).toBe(200);
    const res = await startScroll('one', { size: 1 });
    expect(res.status).toBe(429);
    expect(res.json.status).toBe(429);
    expect(res.json.error.type).toBe('search_phase_execution_exception');
    expect(res.json.error.root_cause[0]).toEqual({
      type: 'too_many_scroll_contexts_exception',
      reason: 'Trying to create too many scroll contexts. Must be less than or equal to: [3]. This limit can be set by changing the [search.max_open_scroll_context] setting.',
    });
  });

  it('frees a slot under the limit when one scroll is cleared', async () => {
    await raw(t, 'PUT', '/_cluster/settings', { persistent: { 'search.max_open_scroll_context': 3 } });
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await startScroll('one', { size: 1 })).json._scroll_id);
    expect((await startScroll('one', { size: 1 })).status).toBe(429);
    expect((await clear({ scroll_id: ids[1] })).status).toBe(200);
    expect((await startScroll('one', { size: 1 })).status).toBe(200);
  });

  it('counts shard contexts toward the limit: a 2-shard scroll takes two slots', async () => {
    await raw(t, 'PUT', '/_cluster/settings', { persistent: { 'search.max_open_scroll_context': 3 } });
    expect((await startScroll('sc', { size: 1 })).status).toBe(200);
    expect((await startScroll('one', { size: 1 })).status).toBe(200);
    expect((await startScroll('one', { size: 1 })).status).toBe(429);
  });

  it('follows open scrolls in _nodes/stats scroll_current, open_contexts and scroll_total', async () => {
    const s0 = await searchStats(t);
    expect(s0.scroll_current).toBe(0);
    const id = await openScrollId('sc');
    const s1 = await searchStats(t);
    expect(s1.scroll_current).toBe(2);
    expect(s1.open_contexts).toBe(s0.open_contexts + 2);
    await clear({ scroll_id: id });
    const s2 = await searchStats(t);
    expect(s2.scroll_current).toBe(0);
    expect(s2.open_contexts).toBe(s0.open_contexts);
    expect(s2.scroll_total).toBe(s0.scroll_total + 2);
  });

  it('lists open scrolls in GET /_scroll and drops cleared ones', async () => {
    const a = await openScrollId('sc');
    const b = await openScrollId('one');
    const listed = await raw(t, 'GET', '/_scroll');
    expect(listed.status).toBe(200);
    expect(listed.json.count).toBe(2);
    const shape = listed.json.scrolls.map((s: { indices: string[]; shards: number }) => [s.indices, s.shards]).sort();
    expect(shape).toEqual([[['one'], 1], [['sc'], 2]]);
    await clear({ scroll_id: a });
    const after = await raw(t, 'GET', '/_scroll');
    expect(after.json.count).toBe(1);
    expect(after.json.scrolls[0].indices).toEqual(['one']);
    await clear({ scroll_id: b });
  });
});
