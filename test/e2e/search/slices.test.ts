/**
 * Issue 4: sliced scroll and sliced PIT (search-paging.md §10; §15 item 13; §14: slicing by Java
 * String.hashCode(_id) floorMod within a shard, after the shard step).
 */
import { startTestNode, type TestNode } from '../../support/node';
import { bulkIndex, floorMod, javaHashCode, raw } from './helpers';

let t: TestNode;
const docs = Array.from({ length: 400 }, (_, i) => ({ n: i + 1, code: `doc-${(i * 7919) % 1000}` }));
const mappings = { properties: { n: { type: 'long' }, code: { type: 'keyword' } } };
const ALL = docs.map((d) => d.code).sort();

beforeAll(async () => {
  t = await startTestNode();
  for (const [index, shards] of [['sl1', 1], ['sl2', 2], ['sl3', 3]] as const) {
    await t.es.indices.create({ index, settings: { number_of_shards: shards }, mappings: mappings as never });
    await bulkIndex(t, index, docs, (d) => d.code);
  }
});
afterAll(async () => {
  await t?.stop();
});

/** Every _id of one sliced scroll, read to the end and cleared. */
async function scrollSlice(index: string, slice: Record<string, unknown> | undefined): Promise<string[]> {
  let p = await raw(t, 'POST', `/${index}/_search?scroll=1m`, { size: 64, ...(slice ? { slice } : {}) });
  if (p.status !== 200 || !p.json?.hits) throw new Error(`${p.status} ${p.text.slice(0, 600)}`);
  const ids: string[] = [];
  while (p.json.hits.hits.length) {
    ids.push(...p.json.hits.hits.map((h: { _id: string }) => h._id));
    p = await raw(t, 'POST', '/_search/scroll', { scroll: '1m', scroll_id: p.json._scroll_id });
    if (p.status !== 200 || !p.json?.hits) throw new Error(`continuation: ${p.status} ${p.text.slice(0, 600)}`);
  }
  await raw(t, 'DELETE', '/_search/scroll', { scroll_id: p.json._scroll_id });
  return ids;
}

/** Every _id of one slice of a PIT, walked with search_after on _shard_doc. */
async function pitSlice(pit: string, slice: Record<string, unknown> | undefined): Promise<Array<{ id: string; shardDoc: number }>> {
  const out: Array<{ id: string; shardDoc: number }> = [];
  let after: unknown[] | undefined;
  for (;;) {
    const p = await raw(t, 'POST', '/_search', { pit: { id: pit }, size: 64, sort: ['_shard_doc'], ...(slice ? { slice } : {}), ...(after ? { search_after: after } : {}) });
    if (p.status !== 200) throw new Error(`${p.status} ${p.text}`);
    const hits = p.json.hits.hits;
    if (!hits.length) return out;
    out.push(...hits.map((h: { _id: string; sort: number[] }) => ({ id: h._id, shardDoc: h.sort[0] })));
    after = hits[hits.length - 1].sort;
  }
}

function expectPartition(parts: string[][]) {
  const flat = parts.flat();
  expect(flat.length).toBe(new Set(flat).size); // disjoint
  expect([...flat].sort()).toEqual(ALL); // union = unsliced
}

describe('sliced scroll', () => {
  it('reads the whole index when unsliced', async () => {
    expect((await scrollSlice('sl2', undefined)).sort()).toEqual(ALL);
  });

  for (const [index, max] of [['sl2', 2], ['sl2', 5], ['sl3', 2], ['sl1', 3]] as const) {
    it(`splits ${index} into ${max} disjoint slices whose union is the unsliced result`, async () => {
      const parts = [];
      for (let id = 0; id < max; id++) parts.push(await scrollSlice(index, { id, max }));
      expectPartition(parts);
      expect(parts.every((p) => p.length > 0)).toBe(true);
    });
  }

  it('puts a document in slice floorMod(String.hashCode(_id), max) on a single shard (seed)', async () => {
    const max = 3;
    for (let id = 0; id < max; id++) {
      const got = (await scrollSlice('sl1', { id, max })).sort();
      expect(got).toEqual(ALL.filter((x) => floorMod(javaHashCode(x), max) === id));
    }
  });

  it('assigns slices to shards first, then hashes _id within the shard (seed, max 5 on 2 shards)', async () => {
    // Where each doc lives: the high bits of its _shard_doc in a PIT.
    const pit = (await raw(t, 'POST', '/sl2/_pit?keep_alive=1m')).json.id;
    const shardOf = new Map((await pitSlice(pit, undefined)).map((h) => [h.id, Math.floor(h.shardDoc / 2 ** 32)]));
    await raw(t, 'DELETE', '/_pit', { id: pit });
    const S = 2;
    const max = 5;
    for (let id = 0; id < max; id++) {
      const shard = id % S;
      const n = Math.floor(max / S) + (max % S > shard ? 1 : 0);
      const local = Math.floor(id / S);
      const want = ALL.filter((x) => shardOf.get(x) === shard && (n === 1 || floorMod(javaHashCode(x), n) === local));
      expect((await scrollSlice('sl2', { id, max })).sort()).toEqual(want);
    }
  });

  it('opens one scroll per slice, each pinning one whole shard when max equals the shards', async () => {
    const listed = async () => (await raw(t, 'GET', '/_scroll')).json.scrolls as Array<{ id: string; shards: number; indices: string[] }>;
    const before = new Set((await listed()).map((s) => s.id));
    const a = await raw(t, 'POST', '/sl2/_search?scroll=1m', { size: 1, slice: { id: 0, max: 2 } });
    const b = await raw(t, 'POST', '/sl2/_search?scroll=1m', { size: 1, slice: { id: 1, max: 2 } });
    const mine = (await listed()).filter((s) => !before.has(s.id));
    expect(mine.map((s) => [s.indices, s.shards])).toEqual([[['sl2'], 1], [['sl2'], 1]]);
    await raw(t, 'DELETE', '/_search/scroll', { scroll_id: [a.json?._scroll_id, b.json?._scroll_id].filter(Boolean) });
  });
});

describe('sliced PIT', () => {
  for (const [index, max] of [['sl2', 2], ['sl2', 5], ['sl3', 2], ['sl1', 4]] as const) {
    it(`splits a PIT over ${index} into ${max} disjoint slices whose union is the unsliced result`, async () => {
      const pit = (await raw(t, 'POST', `/${index}/_pit?keep_alive=1m`)).json.id;
      const whole = (await pitSlice(pit, undefined)).map((h) => h.id);
      expect([...whole].sort()).toEqual(ALL);
      const parts = [];
      for (let id = 0; id < max; id++) parts.push((await pitSlice(pit, { id, max })).map((h) => h.id));
      expectPartition(parts);
      expect(parts.every((p) => p.length > 0)).toBe(true);
      expect((await raw(t, 'DELETE', '/_pit', { id: pit })).status).toBe(200);
    });
  }
});

describe('slice validation', () => {
  it('rejects id 2 with max 2 with 400: max must be greater than id', async () => {
    const res = await raw(t, 'POST', '/sl2/_search?scroll=1m', { slice: { id: 2, max: 2 } });
    expect(res.status).toBe(400);
    expect(res.json.error.type).toBe('x_content_parse_exception');
    expect(res.json.error.reason).toMatch(/^\[\d+:\d+\] \[slice\] failed to parse field \[max\]$/);
    expect(res.json.error.caused_by).toMatchObject({ type: 'illegal_argument_exception', reason: 'max must be greater than id' });
  });

  it('rejects max 1 with 400: max must be greater than 1', async () => {
    const res = await raw(t, 'POST', '/sl2/_search?scroll=1m', { slice: { id: 0, max: 1 } });
    expect(res.status).toBe(400);
    expect(res.json.error.type).toBe('x_content_parse_exception');
    expect(res.json.error.caused_by.reason).toBe('max must be greater than 1');
  });

  it('rejects a negative id with 400', async () => {
    const res = await raw(t, 'POST', '/sl2/_search?scroll=1m', { slice: { id: -1, max: 2 } });
    expect(res.status).toBe(400);
    expect(res.json.error.caused_by.reason).toBe('id must be greater than or equal to 0');
  });

  it('rejects max 1025 with 400 The number of slices is too large', async () => {
    const res = await raw(t, 'POST', '/sl1/_search?scroll=1m', { slice: { id: 0, max: 1025 } });
    expect(res.status).toBe(400);
    expect(res.json.error.root_cause[0]).toMatchObject({
      type: 'illegal_argument_exception',
      reason: 'The number of slices [1025] is too large. It must be less than [1024]. This limit can be set by changing the [index.max_slices_per_scroll] index level setting.',
    });
  });

  it('accepts max 1024', async () => {
    const res = await raw(t, 'POST', '/sl1/_search?scroll=1m', { size: 1, slice: { id: 0, max: 1024 } });
    expect(res.status).toBe(200);
    await raw(t, 'DELETE', '/_search/scroll', { scroll_id: res.json._scroll_id });
  });

  it('rejects a slice without scroll or pit with 400', async () => {
    const res = await raw(t, 'POST', '/sl2/_search', { slice: { id: 0, max: 2 } });
    expect(res.status).toBe(400);
    expect(res.json.error.reason).toContain('[slice] can only be used with [scroll] or [point-in-time] requests');
  });
});
