/**
 * Issue 3: point in time (search-paging.md §8, §4 `_shard_doc`, §11, §12; §15 items 4–7). Lifecycle
 * facts are pinned in test/int/search/lifecycleFacts.test.ts.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { bulkIndex, eventually, raw, searchStats } from './helpers';
import { rng } from '../../support/rng';

let t: TestNode;
interface Doc {
  n: number;
  grp: string;
}
const GROUPS = ['ant', 'bee', 'cat'];
const r = rng(5);
const docs: Doc[] = Array.from({ length: 240 }, (_, i) => ({ n: i + 1, grp: GROUPS[Math.floor(r() * GROUPS.length)] }));
const mappings = { properties: { n: { type: 'long' }, grp: { type: 'keyword' } } };
const TWO_32 = 2 ** 32;

async function openPit(index: string, keepAlive = '1m'): Promise<string> {
  const res = await raw(t, 'POST', `/${index}/_pit?keep_alive=${keepAlive}`);
  if (res.status !== 200) throw new Error(`open pit: ${res.status} ${res.text}`);
  return res.json.id;
}
const closePit = (id: string) => raw(t, 'DELETE', '/_pit', { id });
const pitSearch = (body: Record<string, unknown>) => raw(t, 'POST', '/_search', body);

/** Walks a PIT to the end with search_after; returns every hit and every pit_id seen. */
async function walkPit(id: string, sort: unknown[], size: number, between?: (page: number) => Promise<unknown>) {
  const hits: Array<{ _id: string; _index: string; sort: number[]; _source: Doc }> = [];
  const pitIds: Array<string | undefined> = [];
  let after: unknown[] | undefined;
  let pit = id;
  for (let page = 0; page < 1000; page++) {
    const [res] = await Promise.all([
      pitSearch({ pit: { id: pit, keep_alive: '1m' }, size, sort, ...(after ? { search_after: after } : {}) }),
      between?.(page),
    ]);
    if (res.status !== 200) throw new Error(`page ${page}: ${res.status} ${res.text}`);
    pitIds.push(res.json.pit_id);
    pit = res.json.pit_id ?? pit;
    const h = res.json.hits.hits;
    if (!h.length) break;
    hits.push(...h);
    after = h[h.length - 1].sort;
  }
  return { hits, pitIds };
}

beforeAll(async () => {
  t = await startTestNode();
  for (const [index, shards] of [['pit3', 3], ['pit1', 1], ['sd3', 3], ['churn', 3]] as const) {
    await t.es.indices.create({ index, settings: { number_of_shards: shards }, mappings: mappings as never });
    await bulkIndex(t, index, docs, (d) => String(d.n));
  }
});
afterAll(async () => {
  await t?.stop();
});

describe('opening and searching', () => {
  it('opens a PIT with an id and the shards header', async () => {
    const res = await raw(t, 'POST', '/pit3/_pit?keep_alive=1m');
    expect(res.status).toBe(200);
    expect(typeof res.json.id).toBe('string');
    expect(res.json.id).toMatch(/^[A-Za-z0-9_-]+=*$/);
    expect(res.json._shards).toEqual({ total: 3, successful: 3, skipped: 0, failed: 0 });
    await closePit(res.json.id);
  });

  it('opens a PIT through the official client and pages with it', async () => {
    const { id } = await t.es.openPointInTime({ index: 'pit1', keep_alive: '1m' });
    const page = await t.es.search({ pit: { id, keep_alive: '1m' }, sort: [{ n: 'asc' }] as never, size: 3 });
    expect(page.pit_id).toBeDefined();
    expect(page.hits.hits.map((h) => h._id)).toEqual(['1', '2', '3']);
    const closed = await t.es.closePointInTime({ id });
    expect(closed).toEqual({ succeeded: true, num_freed: 1 });
  });

  it('rejects opening a PIT without keep_alive with 400', async () => {
    const res = await raw(t, 'POST', '/pit3/_pit');
    expect(res.status).toBe(400);
    expect(res.json.error.type).toBe('action_request_validation_exception');
    expect(res.json.error.reason).toBe('Validation Failed: 1: [keep_alive] is not specified;');
  });

  it('answers opening a PIT on an unknown index with 404 index_not_found_exception', async () => {
    const res = await raw(t, 'POST', '/nope/_pit?keep_alive=1m');
    expect(res.status).toBe(404);
    expect(res.json.error.type).toBe('index_not_found_exception');
  });

  it('rejects a PIT search with an index in the path with 400', async () => {
    const id = await openPit('pit1');
    const res = await raw(t, 'POST', '/pit1/_search', { pit: { id } });
    expect(res.status).toBe(400);
    expect(res.json.error.type).toBe('action_request_validation_exception');
    expect(res.json.error.reason).toBe('Validation Failed: 1: [indices] cannot be used with point in time. Do not specify any index with point in time.;');
    await closePit(id);
  });

  it('rejects routing on a PIT search with 400', async () => {
    const id = await openPit('pit1');
    const res = await raw(t, 'POST', '/_search?routing=x', { pit: { id } });
    expect(res.status).toBe(400);
    expect(res.json.error.reason).toContain('[routing] cannot be used with point in time');
    await closePit(id);
  });

  it('rejects an undecodable PIT id with 400 invalid id', async () => {
    const res = await pitSearch({ pit: { id: 'xyz' } });
    expect(res.status).toBe(400);
    expect(res.json.error.root_cause[0]).toMatchObject({ type: 'illegal_argument_exception', reason: 'invalid id: [xyz]' });
  });

  it('puts pit_id in every PIT response, sorted or not', async () => {
    const id = await openPit('pit3');
    const plain = await pitSearch({ pit: { id }, size: 2 });
    const sorted = await pitSearch({ pit: { id, keep_alive: '1m' }, size: 2, sort: [{ n: 'asc' }] });
    const empty = await pitSearch({ pit: { id }, size: 0 });
    for (const res of [plain, sorted, empty]) {
      expect(res.status).toBe(200);
      expect(typeof res.json.pit_id).toBe('string');
    }
    expect(Object.keys(sorted.json)[0]).toBe('pit_id');
    await closePit(id);
  });

  it('applies the result window to PIT searches', async () => {
    const id = await openPit('pit1');
    const res = await pitSearch({ pit: { id }, from: 9995, size: 10 });
    expect(res.status).toBe(400);
    expect(res.json.error.root_cause[0].reason).toMatch(/^Result window is too large, from \+ size must be less than or equal to: \[10000\] but was \[10005\]/);
    await closePit(id);
  });

  it('omits hits.total on the export path (track_total_hits false, _shard_doc sort)', async () => {
    const id = await openPit('pit3');
    const res = await pitSearch({ pit: { id }, size: 5, track_total_hits: false, sort: ['_shard_doc'] });
    expect(res.status).toBe(200);
    expect(res.json.hits).not.toHaveProperty('total');
    expect(res.json.hits.hits).toHaveLength(5);
    await closePit(id);
  });
});

describe('_shard_doc tiebreaker', () => {
  it('appends _shard_doc as the last sort value of each hit in sorted PIT searches', async () => {
    const id = await openPit('pit3');
    const res = await pitSearch({ pit: { id }, size: 20, sort: [{ grp: 'asc' }] });
    for (const h of res.json.hits.hits) {
      expect(h.sort).toHaveLength(2);
      expect(h.sort[0]).toBe(docs[Number(h._id) - 1].grp);
      expect(Number.isInteger(h.sort[1])).toBe(true);
    }
    await closePit(id);
  });

  it('adds no sort values to unsorted PIT searches', async () => {
    const id = await openPit('pit3');
    const res = await pitSearch({ pit: { id }, size: 5 });
    expect(res.json.hits.hits.every((h: { sort?: unknown }) => h.sort === undefined)).toBe(true);
    await closePit(id);
  });

  it('adds no tiebreaker when search_after has exactly as many values as the sort', async () => {
    const id = await openPit('pit3');
    const res = await pitSearch({ pit: { id }, size: 5, sort: [{ n: 'asc' }], search_after: [10] });
    expect(res.json.hits.hits.map((h: { _id: string }) => h._id)).toEqual(['11', '12', '13', '14', '15']);
    expect(res.json.hits.hits.every((h: { sort: unknown[] }) => h.sort.length === 1)).toBe(true);
    await closePit(id);
  });

  it('equals (shardIndex << 32) | doc: per shard, doc ids 0..k-1 in write order', async () => {
    const id = await openPit('sd3');
    const { hits } = await walkPit(id, [{ _shard_doc: 'asc' }], 50);
    expect(hits.map((h) => h._id).sort()).toEqual(docs.map((d) => String(d.n)).sort());
    const values = hits.map((h) => h.sort[h.sort.length - 1]);
    for (let i = 1; i < values.length; i++) expect(values[i]).toBeGreaterThan(values[i - 1]);
    const byShard = new Map<number, Array<{ doc: number; n: number }>>();
    for (const h of hits) {
      const v = h.sort[0];
      const shard = Math.floor(v / TWO_32);
      const doc = v - shard * TWO_32;
      byShard.set(shard, [...(byShard.get(shard) ?? []), { doc, n: Number(h._id) }]);
    }
    expect([...byShard.keys()].sort()).toEqual([0, 1, 2]);
    for (const list of byShard.values()) {
      expect(list.map((x) => x.doc)).toEqual(list.map((_, i) => i)); // dense doc ids from 0
      const ns = list.map((x) => x.n);
      expect(ns).toEqual([...ns].sort((a, b) => a - b)); // bulk wrote them in n order
    }
    await closePit(id);
  });

  it('equals the doc id, in write order, on a single-shard PIT', async () => {
    const id = await openPit('pit1');
    const res = await pitSearch({ pit: { id }, size: 30, sort: [{ n: 'asc' }] });
    expect(res.json.hits.hits.map((h: { sort: number[] }) => h.sort[1])).toEqual(Array.from({ length: 30 }, (_, i) => i));
    await closePit(id);
  });

  it('sorts by explicit _shard_doc desc in the reverse of asc', async () => {
    const id = await openPit('pit3');
    const asc = await walkPit(id, [{ _shard_doc: 'asc' }], 40);
    const desc = await walkPit(id, [{ _shard_doc: 'desc' }], 40);
    expect(desc.hits.map((h) => h._id)).toEqual(asc.hits.map((h) => h._id).reverse());
    expect(desc.hits.every((h) => h.sort.length === 1)).toBe(true);
    await closePit(id);
  });
});

describe('frozen view', () => {
  it('walks a 3-shard PIT by a low-cardinality field exactly once per document while others are added and deleted', async () => {
    // The expected set is fixed at open time: what the index holds now.
    const before = await t.es.search({ index: 'churn', size: 1000, _source: false });
    const atOpen = before.hits.hits.map((h) => h._id!).sort();
    const id = await openPit('churn');
    let next = 10_000;
    const pick = rng(3);
    const churn = async () => {
      const lines: string[] = [];
      for (let i = 0; i < 3; i++) {
        const n = next++;
        lines.push(JSON.stringify({ index: { _index: 'churn', _id: String(n) } }), JSON.stringify({ n, grp: GROUPS[n % 3] }));
        lines.push(JSON.stringify({ delete: { _index: 'churn', _id: String(1 + Math.floor(pick() * docs.length)) } }));
      }
      const res = await raw(t, 'POST', '/_bulk?refresh=true', `${lines.join('\n')}\n`);
      expect(res.status).toBe(200);
    };
    const { hits, pitIds } = await walkPit(id, [{ grp: 'asc' }], 7, churn);
    const ids = hits.map((h) => h._id);
    expect(ids.length).toBe(new Set(ids).size); // no duplicates
    expect([...ids].sort()).toEqual(atOpen); // nothing missing, nothing added
    const grps = hits.map((h) => h.sort[0] as unknown as string);
    expect(grps).toEqual([...grps].sort()); // still in sort order
    expect(pitIds.every((p) => typeof p === 'string')).toBe(true);
    await closePit(id);
  });

  it('hides documents written after open and keeps deleted ones visible', async () => {
    const id = await openPit('pit1');
    await raw(t, 'PUT', '/pit1/_doc/new-one?refresh=true', { n: 9999, grp: 'ant' });
    await raw(t, 'DELETE', '/pit1/_doc/1?refresh=true');
    const res = await pitSearch({ pit: { id }, size: 1000, track_total_hits: true });
    const ids = res.json.hits.hits.map((h: { _id: string }) => h._id);
    expect(ids).not.toContain('new-one');
    expect(ids).toContain('1');
    expect(res.json.hits.total).toEqual({ value: docs.length, relation: 'eq' });
    const live = await t.es.count({ index: 'pit1' });
    expect(live.count).toBe(docs.length); // one added, one deleted
    await closePit(id);
  });
});

describe('closing and expiry', () => {
  it('closes a live PIT with 200 succeeded:true and num_freed equal to its shards', async () => {
    const id = await openPit('pit3');
    const res = await closePit(id);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ succeeded: true, num_freed: 3 });
  });

  it('answers closing it again with 404 succeeded:false num_freed:0', async () => {
    const id = await openPit('pit3');
    await closePit(id);
    const res = await closePit(id);
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ succeeded: false, num_freed: 0 });
  });

  it('answers a search with a closed PIT with 404 search_context_missing_exception', async () => {
    const id = await openPit('pit3');
    await closePit(id);
    const res = await pitSearch({ pit: { id }, size: 1 });
    expect(res.status).toBe(404);
    expect(res.json.status).toBe(404);
    expect(res.json.error.type).toBe('search_phase_execution_exception');
    expect(res.json.error.root_cause[0].type).toBe('search_context_missing_exception');
    expect(res.json.error.root_cause[0].reason).toMatch(/^No search context found for id \[.+\]/);
  });

  it('rejects DELETE _pit without a body with 400 parse_exception', async () => {
    const res = await raw(t, 'DELETE', '/_pit');
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ type: 'parse_exception', reason: 'request body or source parameter is required' });
  });

  it('expires a PIT opened with keep_alive 1s', async () => {
    const id = await openPit('pit1', '1s');
    // Searching would count as a use and restart the idle timer: watch the listing instead.
    await eventually(async () => !(await raw(t, 'GET', '/_pit')).json.pits.some((p: { id: string }) => p.id === id), 6000, 'the PIT to expire');
    const res = await pitSearch({ pit: { id }, size: 0 });
    expect(res.status).toBe(404);
    expect(res.json.error.root_cause[0].type).toBe('search_context_missing_exception');
  });
});

describe('keep-alive limit', () => {
  afterEach(async () => {
    await raw(t, 'PUT', '/_cluster/settings', { persistent: { 'search.max_keep_alive': null } });
  });

  it('rejects opening a PIT with keep_alive over search.max_keep_alive with 400', async () => {
    const put = await raw(t, 'PUT', '/_cluster/settings', { persistent: { 'search.max_keep_alive': '1m' } });
    expect(put.status).toBe(200);
    const res = await raw(t, 'POST', '/pit1/_pit?keep_alive=2m');
    expect(res.status).toBe(400);
    expect(res.json.error.root_cause[0]).toEqual({
      type: 'illegal_argument_exception',
      reason: 'Keep alive for request (2m) is too large. It must be less than (1m). This limit can be set by changing the [search.max_keep_alive] cluster level setting.',
    });
  });

  it('accepts a keep_alive equal to search.max_keep_alive', async () => {
    await raw(t, 'PUT', '/_cluster/settings', { persistent: { 'search.max_keep_alive': '1m' } });
    const id = await openPit('pit1', '1m');
    expect((await closePit(id)).status).toBe(200);
  });

  it('rejects pit.keep_alive over search.max_keep_alive on a search with 400', async () => {
    const id = await openPit('pit1', '30s');
    await raw(t, 'PUT', '/_cluster/settings', { persistent: { 'search.max_keep_alive': '1m' } });
    const res = await pitSearch({ pit: { id, keep_alive: '2m' }, size: 0 });
    expect(res.status).toBe(400);
    expect(res.json.error.root_cause[0].reason).toMatch(/^Keep alive for request \(2m\) is too large\. It must be less than \(1m\)\./);
    await closePit(id);
  });
});

describe('listing and stats', () => {
  it('lists an open PIT in GET /_pit and drops it once closed', async () => {
    const id = await openPit('pit3');
    const listed = await raw(t, 'GET', '/_pit');
    expect(listed.status).toBe(200);
    const entry = listed.json.pits.find((p: { id: string }) => p.id === id);
    expect(entry).toMatchObject({ indices: ['pit3'], shards: 3 });
    expect(listed.json.count).toBe(listed.json.pits.length);
    await closePit(id);
    const after = await raw(t, 'GET', '/_pit');
    expect(after.json.pits.find((p: { id: string }) => p.id === id)).toBeUndefined();
  });

  it('counts the shards of an open PIT in _nodes/stats open_contexts', async () => {
    const before = (await searchStats(t)).open_contexts;
    const id = await openPit('pit3');
    expect((await searchStats(t)).open_contexts).toBe(before + 3);
    await closePit(id);
    expect((await searchStats(t)).open_contexts).toBe(before);
  });
});
