/**
 * Metadata of search hits as ES shows them: `_routing` on every hit of a document indexed with a
 * custom routing, `_version` with `version: true`, `_seq_no` and `_primary_term` with
 * `seq_no_primary_term: true` (body or query string), in ES's key order, on every page path:
 * one shard (sources inline), several shards (fetch phase), scroll pages, PIT, msearch.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { raw, type RawResponse } from './helpers';

let t: TestNode;
/** id -> routing of the docs of both indices (undefined: none). */
const ROUTED: Record<string, string | undefined> = { a: 'r1', b: undefined, c: 'r"2é', d: undefined, e: '7' };
const IDS = Object.keys(ROUTED);

/** GET of a doc: its `_version`, `_seq_no`, `_primary_term` (what a hit must show). */
async function meta(index: string, id: string) {
  const g = await raw(t, 'GET', `/${index}/_doc/${encodeURIComponent(id)}${ROUTED[id] ? `?routing=${encodeURIComponent(ROUTED[id]!)}` : ''}`);
  expect(g.json.found).toBe(true);
  return { _version: g.json._version, _seq_no: g.json._seq_no, _primary_term: g.json._primary_term };
}

type Hit = Record<string, unknown> & { _id: string };
const hitsOf = (r: RawResponse): Hit[] => {
  expect(r.status).toBe(200);
  return r.json.hits.hits;
};

beforeAll(async () => {
  t = await startTestNode();
  for (const [index, shards] of [['one', 1], ['three', 3]] as const) {
    await t.es.indices.create({ index, settings: { number_of_shards: shards }, mappings: { properties: { k: { type: 'long' } } } });
    for (const [i, id] of IDS.entries()) {
      await t.es.index({ index, id, document: { k: i }, ...(ROUTED[id] ? { routing: ROUTED[id] } : {}) });
    }
    // `b` and `c` again: their versions and sequence numbers move on
    await t.es.index({ index, id: 'b', document: { k: 1 } });
    await t.es.index({ index, id: 'c', document: { k: 2 }, routing: ROUTED.c });
    await t.es.index({ index, id: 'c', document: { k: 2 }, routing: ROUTED.c });
    await t.es.indices.refresh({ index });
  }
});
afterAll(async () => {
  await t?.stop();
});

describe.each(['one', 'three'])('hits of index %s', (index) => {
  it('carry `_routing` for the docs indexed with one, and nothing else by default', async () => {
    const hits = hitsOf(await raw(t, 'POST', `/${index}/_search`, { sort: [{ k: 'asc' }] }));
    expect(hits.map((h) => h._id)).toEqual(IDS);
    for (const h of hits) {
      expect(h._routing).toBe(ROUTED[h._id]);
      expect('_routing' in h).toBe(ROUTED[h._id] !== undefined);
      expect(h).not.toHaveProperty('_version');
      expect(h).not.toHaveProperty('_seq_no');
    }
  });

  it('carry `_version`, `_seq_no` and `_primary_term` when asked, equal to what GET shows, in ES key order', async () => {
    const r = await raw(t, 'POST', `/${index}/_search`, { sort: [{ k: 'asc' }], version: true, seq_no_primary_term: true });
    const hits = hitsOf(r);
    for (const h of hits) expect({ _version: h._version, _seq_no: h._seq_no, _primary_term: h._primary_term }).toEqual(await meta(index, h._id));
    expect(hits.find((h) => h._id === 'c')!._version).toBe(3);
    const order = ['_index', '_id', '_version', '_seq_no', '_primary_term', '_score', '_routing', '_source', 'sort'];
    for (const h of hits) expect(Object.keys(h)).toEqual(order.filter((k) => k in h));
    expect(r.text).toContain(`{"_index":"${index}","_id":"c","_version":3,"_seq_no":${hits[2]._seq_no},"_primary_term":1,"_score":null,"_routing":${JSON.stringify(ROUTED.c)},"_source":{"k":2},"sort":[2]}`);
  });

  it('take `version` and `seq_no_primary_term` from the query string as well, each on its own', async () => {
    const v = hitsOf(await raw(t, 'GET', `/${index}/_search?version=true&sort=k:asc`));
    expect(v.map((h) => [h._version, '_seq_no' in h])).toEqual(await Promise.all(IDS.map(async (id) => [(await meta(index, id))._version, false])));
    const s = hitsOf(await raw(t, 'GET', `/${index}/_search?seq_no_primary_term=true&sort=k:asc`));
    expect(s.map((h) => [h._seq_no, h._primary_term, '_version' in h])).toEqual(await Promise.all(IDS.map(async (id) => [(await meta(index, id))._seq_no, 1, false])));
    const off = hitsOf(await raw(t, 'POST', `/${index}/_search?version=false`, { seq_no_primary_term: false }));
    expect(off.some((h) => '_version' in h || '_seq_no' in h)).toBe(false);
  });

  it('keep them on every scroll page, with from/size pages and through the official clients', async () => {
    let r = await raw(t, 'POST', `/${index}/_search?scroll=1m`, { size: 2, sort: [{ k: 'asc' }], version: true, seq_no_primary_term: true });
    const seen: Hit[] = [];
    while (hitsOf(r).length) {
      seen.push(...hitsOf(r));
      r = await raw(t, 'POST', '/_search/scroll', { scroll_id: r.json._scroll_id, scroll: '1m' });
    }
    expect(seen.map((h) => [h._id, h._routing, h._version])).toEqual(await Promise.all(IDS.map(async (id) => [id, ROUTED[id], (await meta(index, id))._version])));
    const page2 = hitsOf(await raw(t, 'POST', `/${index}/_search`, { from: 2, size: 2, sort: [{ k: 'asc' }], seq_no_primary_term: true }));
    expect(page2.map((h) => [h._id, h._routing, h._primary_term])).toEqual([['c', ROUTED.c, 1], ['d', undefined, 1]]);
    const c8 = await t.es.search({ index, sort: [{ k: 'asc' }], version: true, seq_no_primary_term: true });
    expect(c8.hits.hits.map((h) => [h._id, h._routing, h._version, h._primary_term])).toEqual(seen.map((h) => [h._id, h._routing, h._version, 1]));
    const c9 = await t.es9.search({ index, sort: [{ k: 'asc' }], seq_no_primary_term: true });
    expect(c9.hits.hits.map((h) => h._seq_no)).toEqual(seen.map((h) => h._seq_no));
  });

  it('keep them in a PIT search and an msearch item', async () => {
    const pit = await t.es.openPointInTime({ index, keep_alive: '1m' });
    const r = hitsOf(await raw(t, 'POST', '/_search', { pit: { id: pit.id }, sort: [{ k: 'asc' }], version: true }));
    expect(r.map((h) => [h._id, h._routing, typeof h._version])).toEqual(IDS.map((id) => [id, ROUTED[id], 'number']));
    await t.es.closePointInTime({ id: pit.id });
    const m = await raw(t, 'POST', '/_msearch', `${JSON.stringify({ index })}\n${JSON.stringify({ sort: [{ k: 'asc' }], seq_no_primary_term: true, size: 1 })}\n`, { 'content-type': 'application/x-ndjson' });
    expect(m.json.responses[0].hits.hits[0]).toMatchObject({ _id: 'a', _routing: 'r1', _primary_term: 1 });
  });
});
