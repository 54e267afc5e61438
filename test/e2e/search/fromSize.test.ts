/**
 * Issue 2: from/size paging, the result window (index.max_result_window) and track_total_hits
 * (search-paging.md §5, §6; §15 items 1 and 2).
 */
import { startTestNode, type TestNode } from '../../support/node';
import { bulkIndex, raw } from './helpers';
import { rng } from '../../support/rng';

let t: TestNode;
interface Doc {
  n: number;
  grp: string;
  odd: boolean;
}
const GROUPS = ['ant', 'bee', 'cat', 'doe'];
const r = rng(7);
const small: Doc[] = Array.from({ length: 250 }, (_, i) => ({ n: i + 1, grp: GROUPS[Math.floor(r() * GROUPS.length)], odd: (i + 1) % 2 === 1 }));
const BIG = 10_050;
const big: Doc[] = Array.from({ length: BIG }, (_, i) => ({ n: i + 1, grp: GROUPS[i % 4], odd: (i + 1) % 2 === 1 }));

const bigMappings = { properties: { n: { type: 'long' }, grp: { type: 'keyword' }, odd: { type: 'boolean' } } };

beforeAll(async () => {
  t = await startTestNode();
  for (const [index, shards] of [['fs1', 1], ['fs3', 3]] as const) {
    await t.es.indices.create({ index, settings: { number_of_shards: shards }, mappings: bigMappings as never });
    await bulkIndex(t, index, small, (d) => String(d.n));
  }
  await t.es.indices.create({ index: 'big', settings: { number_of_shards: 2 }, mappings: bigMappings as never });
  await bulkIndex(t, 'big', big, (d) => String(d.n));
}, 240_000);
afterAll(async () => {
  await t?.stop();
});

// grp asc, then n desc: every key unique thanks to n.
const fullOrder = (docs: Doc[]) =>
  [...docs].sort((a, b) => (a.grp < b.grp ? -1 : a.grp > b.grp ? 1 : b.n - a.n)).map((d) => String(d.n));
const SORT = [{ grp: 'asc' }, { n: 'desc' }];

const windowReason = (limit: number, was: number) =>
  `Result window is too large, from + size must be less than or equal to: [${limit}] but was [${was}]. See the scroll api for a more efficient way to request large data sets. This limit can be set by changing the [index.max_result_window] index level setting.`;

describe('from/size pages', () => {
  for (const index of ['fs1', 'fs3']) {
    for (const [from, size] of [[0, 10], [7, 13], [100, 50], [240, 20], [250, 5], [0, 250]]) {
      it(`returns the slice [${from}, ${from + size}) of the full sorted list on ${index}`, async () => {
        const res = await t.es.search({ index, from, size, sort: SORT as never });
        expect(res.hits.hits.map((h) => h._id)).toEqual(fullOrder(small).slice(from, from + size));
        expect(res.hits.total).toEqual({ value: small.length, relation: 'eq' });
      });
    }
  }

  it('returns ten hits when size is not given', async () => {
    const res = await t.es.search({ index: 'fs3', sort: SORT as never });
    expect(res.hits.hits.map((h) => h._id)).toEqual(fullOrder(small).slice(0, 10));
  });

  it('walks the whole index without gaps or repeats in consecutive from/size pages', async () => {
    const seen: string[] = [];
    for (let from = 0; from < small.length; from += 33) {
      const res = await t.es.search({ index: 'fs3', from, size: 33, sort: SORT as never });
      seen.push(...res.hits.hits.map((h) => h._id!));
    }
    expect(seen).toEqual(fullOrder(small));
  });

  it('takes from and size from the URL over the body', async () => {
    const res = await raw(t, 'POST', '/fs1/_search?from=3&size=4', { from: 50, size: 50, sort: SORT });
    expect(res.status).toBe(200);
    expect(res.json.hits.hits.map((h: { _id: string }) => h._id)).toEqual(fullOrder(small).slice(3, 7));
  });

  it('rejects a negative from without search_after with 400', async () => {
    const res = await raw(t, 'POST', '/fs1/_search', { from: -1 });
    expect(res.status).toBe(400);
    expect(res.json.error.type).toBe('illegal_argument_exception');
    expect(res.json.error.reason).toBe('[from] parameter cannot be negative but was [-1]');
  });

  it('rejects a negative size with 400', async () => {
    const res = await raw(t, 'POST', '/fs1/_search', { size: -1 });
    expect(res.status).toBe(400);
    expect(res.json.error.reason).toBe('[size] parameter cannot be negative, found [-1]');
  });
});

describe('result window', () => {
  it('rejects from + size = 10001 with 400 search_phase_execution_exception, root cause Result window is too large', async () => {
    const res = await raw(t, 'POST', '/fs1/_search', { from: 9991, size: 10 });
    expect(res.status).toBe(400);
    expect(res.json.status).toBe(400);
    expect(res.json.error.type).toBe('search_phase_execution_exception');
    expect(res.json.error.reason).toBe('all shards failed');
    expect(res.json.error.root_cause).toEqual([{ type: 'illegal_argument_exception', reason: windowReason(10000, 10001) }]);
    expect(res.json.error.caused_by).toMatchObject({ type: 'illegal_argument_exception', reason: windowReason(10000, 10001) });
    expect(res.json.error.phase).toBe('query');
    expect(res.json.error.grouped).toBe(true);
    expect(res.json.error.failed_shards[0]).toMatchObject({ shard: 0, index: 'fs1', reason: { type: 'illegal_argument_exception' } });
  });

  it('rejects an oversized window on every shard of a multi-shard index', async () => {
    const res = await raw(t, 'POST', '/fs3/_search', { from: 0, size: 10001 });
    expect(res.status).toBe(400);
    expect(res.json.error.root_cause).toEqual([{ type: 'illegal_argument_exception', reason: windowReason(10000, 10001) }]);
  });

  it('accepts from + size = 10000 and returns the matching slice', async () => {
    const res = await t.es.search({ index: 'big', from: 9990, size: 10, sort: [{ n: 'asc' }] as never });
    expect(res.hits.hits.map((h) => h._id)).toEqual(Array.from({ length: 10 }, (_, i) => String(9991 + i)));
  });

  it('applies the window to size alone when search_after is used', async () => {
    const res = await raw(t, 'POST', '/big/_search', { size: 10001, sort: [{ n: 'asc' }], search_after: [5] });
    expect(res.status).toBe(400);
    expect(res.json.error.root_cause[0].reason).toBe(windowReason(10000, 10001));
  });

  it('follows index.max_result_window updated with PUT _settings', async () => {
    const put = await raw(t, 'PUT', '/fs1/_settings', { index: { max_result_window: 50 } });
    expect(put.status).toBe(200);
    expect(put.json).toEqual({ acknowledged: true });
    const over = await raw(t, 'POST', '/fs1/_search', { from: 45, size: 10 });
    expect(over.status).toBe(400);
    expect(over.json.error.root_cause[0].reason).toBe(windowReason(50, 55));
    const ok = await t.es.search({ index: 'fs1', from: 40, size: 10, sort: SORT as never });
    expect(ok.hits.hits.map((h) => h._id)).toEqual(fullOrder(small).slice(40, 50));
    const s = await t.es.indices.getSettings({ index: 'fs1' });
    expect(String(s.fs1.settings!.index!.max_result_window)).toBe('50');
  });

  it('raises the limit above 10000 when index.max_result_window is raised', async () => {
    await t.es.indices.putSettings({ index: 'big', settings: { index: { max_result_window: 20000 } } });
    const res = await t.es.search({ index: 'big', from: 10040, size: 20, sort: [{ n: 'asc' }] as never });
    expect(res.hits.hits.map((h) => h._id)).toEqual(Array.from({ length: 10 }, (_, i) => String(10041 + i)));
    await t.es.indices.putSettings({ index: 'big', settings: { index: { max_result_window: 10000 } } });
  });
});

describe('track_total_hits', () => {
  it('caps the default total at 10000 with relation gte', async () => {
    const res = await raw(t, 'POST', '/big/_search', { size: 1 });
    expect(res.json.hits.total).toEqual({ value: 10000, relation: 'gte' });
  });

  it('counts exactly with track_total_hits true', async () => {
    const res = await t.es.search({ index: 'big', size: 1, track_total_hits: true });
    expect(res.hits.total).toEqual({ value: BIG, relation: 'eq' });
  });

  it('omits hits.total with track_total_hits false', async () => {
    const res = await raw(t, 'POST', '/big/_search', { size: 1, track_total_hits: false });
    expect(res.status).toBe(200);
    expect(res.json.hits).not.toHaveProperty('total');
    expect(res.json.hits.hits).toHaveLength(1);
  });

  it('counts exactly up to an integer bound, then reports the bound with gte', async () => {
    const res = await t.es.search({ index: 'big', size: 0, track_total_hits: 500 });
    expect(res.hits.total).toEqual({ value: 500, relation: 'gte' });
  });

  it('reports an exact eq total when the integer bound exceeds the matches', async () => {
    const res = await t.es.search({ index: 'big', size: 0, track_total_hits: 20000 });
    expect(res.hits.total).toEqual({ value: BIG, relation: 'eq' });
  });

  it('reports an exact eq total by default when fewer than 10000 documents match', async () => {
    const res = await t.es.search({ index: 'big', size: 0, query: { term: { grp: 'bee' } } });
    expect(res.hits.total).toEqual({ value: big.filter((d) => d.grp === 'bee').length, relation: 'eq' });
  });

  it('rejects track_total_hits below -1 with 400', async () => {
    const res = await raw(t, 'POST', '/big/_search', { track_total_hits: -5 });
    expect(res.status).toBe(400);
    expect(res.json.error.reason).toBe('[track_total_hits] parameter must be positive or equals to -1, got -5');
  });

  it('renders the total as an integer with rest_total_hits_as_int', async () => {
    const res = await raw(t, 'POST', '/fs1/_search?rest_total_hits_as_int=true', { size: 0 });
    expect(res.json.hits.total).toBe(small.length);
  });
});
