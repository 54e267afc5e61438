/**
 * Issue 3: search_after without a PIT (search-paging.md §7, §4; §15 items 3 and 14): walks,
 * strictly-after semantics, validation, and exact round-trips of longs, sentinels and nanos.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { bulkIndex, digits, parseExact, raw } from './helpers';
import { rng } from '../../support/rng';

let t: TestNode;
interface Doc {
  n: number;
  grp: string;
}
const GROUPS = ['ant', 'bee', 'cat', 'doe', 'eel'];
const r = rng(11);
const docs: Doc[] = Array.from({ length: 300 }, (_, i) => ({ n: i + 1, grp: GROUPS[Math.floor(r() * GROUPS.length)] }));
const full = [...docs].sort((a, b) => (a.grp < b.grp ? -1 : a.grp > b.grp ? 1 : a.n - b.n));
const SORT = [{ grp: 'asc' }, { n: 'asc' }];

// Longs beyond 2^53 (they differ only in digits a double cannot hold) and docs without the field.
const BIG_VALUES = ['9007199254740993', '9007199254740995', '9007199254740997', '-9007199254740993', '9223372036854775806', '9007199254740994'];
const bigDocs = [...BIG_VALUES.map((v, i) => ({ id: i + 1, big: v })), { id: 7 }, { id: 8 }];

// The same field as `date` in one index and `date_nanos` in another.
const msDocs = [
  { id: 1, ts: '2024-01-01T00:00:00.001Z' },
  { id: 3, ts: '2024-01-01T00:00:00.003Z' },
  { id: 5, ts: '2024-01-01T00:00:00.005Z' },
  { id: 7, ts: '2024-01-01T00:00:01.000Z' },
];
const nsDocs = [
  { id: 2, ts: '2024-01-01T00:00:00.001000001Z' },
  { id: 4, ts: '2024-01-01T00:00:00.003000000Z' },
  { id: 6, ts: '2024-01-01T00:00:00.004999999Z' },
  { id: 8, ts: '2024-01-01T00:00:00.999999999Z' },
  { id: 9, ts: '2024-01-01T00:00:00.000000001Z' },
];
/** Epoch nanos of an ISO instant with up to 9 fraction digits. */
function nanosOf(iso: string): bigint {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(iso)!;
  const secs = BigInt(Date.parse(`${m[1]}Z`)) / 1000n;
  return secs * 1_000_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'));
}

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'sa3', settings: { number_of_shards: 3 }, mappings: { properties: { n: { type: 'long' }, grp: { type: 'keyword' } } } });
  await bulkIndex(t, 'sa3', docs, (d) => String(d.n));
  await t.es.indices.create({ index: 'longs', settings: { number_of_shards: 1 }, mappings: { properties: { id: { type: 'long' }, big: { type: 'long' } } } });
  // Written as text so the digits never pass through a JS number.
  const bulk = bigDocs
    .map((d) => `{"index":{"_index":"longs","_id":"${d.id}"}}\n${'big' in d ? `{"id":${d.id},"big":${d.big}}` : `{"id":${d.id}}`}\n`)
    .join('');
  const b = await raw(t, 'POST', '/_bulk?refresh=true', bulk);
  expect(b.json.errors).toBe(false);
  await t.es.indices.create({ index: 'ev_ms', mappings: { properties: { id: { type: 'long' }, ts: { type: 'date' } } } });
  await t.es.indices.create({ index: 'ev_ns', mappings: { properties: { id: { type: 'long' }, ts: { type: 'date_nanos' } } } });
  await bulkIndex(t, 'ev_ms', msDocs);
  await bulkIndex(t, 'ev_ns', nsDocs);
});
afterAll(async () => {
  await t?.stop();
});

/** A search whose hits keep exact sort values (LosslessNumber). */
async function exact(path: string, body: unknown) {
  const res = await raw(t, 'POST', path, body);
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  const j = parseExact(res.text);
  return { text: res.text, hits: j.hits.hits as Array<{ _id: string; sort: unknown[] }> };
}

describe('walking with search_after', () => {
  it('visits every document exactly once, in sort order, with a unique tiebreaker', async () => {
    const seen: string[] = [];
    let after: unknown[] | undefined;
    for (;;) {
      const res = await t.es.search({ index: 'sa3', size: 17, sort: SORT as never, ...(after ? { search_after: after as never } : {}) });
      if (!res.hits.hits.length) break;
      seen.push(...res.hits.hits.map((h) => h._id!));
      after = res.hits.hits[res.hits.hits.length - 1].sort;
    }
    expect(seen).toEqual(full.map((d) => String(d.n)));
  });

  it('returns each hit with its full sort key', async () => {
    const res = await t.es.search({ index: 'sa3', size: 5, sort: SORT as never });
    expect(res.hits.hits.map((h) => h.sort)).toEqual(full.slice(0, 5).map((d) => [d.grp, d.n]));
  });

  it('is strictly after: a document whose full key equals search_after is skipped', async () => {
    const pivot = full[100];
    const res = await t.es.search({ index: 'sa3', size: 3, sort: SORT as never, search_after: [pivot.grp, pivot.n] });
    expect(res.hits.hits.map((h) => h._id)).toEqual(full.slice(101, 104).map((d) => String(d.n)));
  });

  it('skips every tie of search_after when the sort has no tiebreaker', async () => {
    const res = await t.es.search({ index: 'sa3', size: 1000, sort: [{ grp: 'asc' }] as never, search_after: ['bee'] });
    const ids = res.hits.hits.map((h) => h._id).sort();
    expect(ids).toEqual(docs.filter((d) => d.grp > 'bee').map((d) => String(d.n)).sort());
  });

  it('walks descending sorts too', async () => {
    const desc = [...docs].sort((a, b) => b.n - a.n).map((d) => String(d.n));
    const seen: string[] = [];
    let after: unknown[] | undefined;
    do {
      const res = await t.es.search({ index: 'sa3', size: 64, sort: [{ n: 'desc' }] as never, ...(after ? { search_after: after as never } : {}) });
      seen.push(...res.hits.hits.map((h) => h._id!));
      after = res.hits.hits.length ? res.hits.hits[res.hits.hits.length - 1].sort : undefined;
    } while (after);
    expect(seen).toEqual(desc);
  });
});

describe('search_after validation', () => {
  it('accepts from 0 with search_after', async () => {
    const res = await t.es.search({ index: 'sa3', from: 0, size: 2, sort: SORT as never, search_after: [full[0].grp, full[0].n] });
    expect(res.hits.hits.map((h) => h._id)).toEqual([String(full[1].n), String(full[2].n)]);
  });

  it('accepts from -1 with search_after (seed)', async () => {
    const res = await raw(t, 'POST', '/sa3/_search', { from: -1, size: 2, sort: SORT, search_after: [full[0].grp, full[0].n] });
    expect(res.status).toBe(200);
    expect(res.json.hits.hits.map((h: { _id: string }) => h._id)).toEqual([String(full[1].n), String(full[2].n)]);
  });

  it('rejects from 5 with search_after with 400 action_request_validation_exception', async () => {
    const res = await raw(t, 'POST', '/sa3/_search', { from: 5, size: 2, sort: SORT, search_after: ['ant', 1] });
    expect(res.status).toBe(400);
    const shape = { type: 'action_request_validation_exception', reason: 'Validation Failed: 1: [from] parameter must be set to 0 when [search_after] is used;' };
    expect(res.json).toEqual({ error: { root_cause: [shape], ...shape }, status: 400 });
  });

  it('rejects search_after with fewer values than the sort with 400', async () => {
    const res = await raw(t, 'POST', '/sa3/_search', { sort: SORT, search_after: ['ant'] });
    expect(res.status).toBe(400);
    expect(res.json.error.type).toBe('search_phase_execution_exception');
    expect(res.json.error.root_cause[0]).toMatchObject({ reason: 'search_after has 1 value(s) but sort has 2.' });
  });

  it('rejects search_after with more values than the sort with 400', async () => {
    const res = await raw(t, 'POST', '/sa3/_search', { sort: SORT, search_after: ['ant', 1, 2] });
    expect(res.status).toBe(400);
    expect(res.json.error.root_cause[0].reason).toBe('search_after has 3 value(s) but sort has 2.');
  });

  it('rejects search_after without a sort with 400', async () => {
    const res = await raw(t, 'POST', '/sa3/_search', { search_after: [1] });
    expect(res.status).toBe(400);
    expect(res.json.error.root_cause[0].reason).toBe('Sort must contain at least one field.');
  });

  it('rejects a search_after value of the wrong type with 400', async () => {
    const res = await raw(t, 'POST', '/sa3/_search', { sort: [{ n: 'asc' }], search_after: ['abc'] });
    expect(res.status).toBe(400);
    expect(res.json.error.root_cause[0].reason).toBe('Failed to parse search_after value for field [n].');
  });

  it('rejects _shard_doc without a point in time with 400 validation', async () => {
    const res = await raw(t, 'POST', '/sa3/_search', { sort: [{ _shard_doc: 'asc' }] });
    expect(res.status).toBe(400);
    expect(res.json.error.type).toBe('action_request_validation_exception');
    expect(res.json.error.reason).toBe('Validation Failed: 1: [_shard_doc] sort field cannot be used without [point in time];');
  });
});

describe('exact long sort values', () => {
  const asc = [...BIG_VALUES].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));

  /** Walks `longs` one hit per page, echoing each sort array exactly as received. */
  async function walk(order: 'asc' | 'desc') {
    const sorts: string[][] = [];
    let after: unknown[] | undefined;
    for (let i = 0; i < 20; i++) {
      const { hits } = await exact('/longs/_search', { size: 1, sort: [{ big: order }, { id: 'asc' }], ...(after ? { search_after: after } : {}) });
      if (!hits.length) break;
      sorts.push(hits[0].sort.map(digits));
      after = hits[0].sort;
    }
    return sorts;
  }

  it('emits longs beyond 2^53 with every digit in hits[].sort', async () => {
    const { text } = await exact('/longs/_search', { size: 1, sort: [{ big: 'asc' }, { id: 'asc' }], query: { term: { id: 1 } } });
    expect(text).toContain('"sort":[9007199254740993,1]');
  });

  it('walks ascending longs beyond 2^53 and the missing sentinel 9223372036854775807 by echoing sort values', async () => {
    const sorts = await walk('asc');
    const idOf = (v: string) => String(BIG_VALUES.indexOf(v) + 1);
    expect(sorts).toEqual([...asc.map((v) => [v, idOf(v)]), ['9223372036854775807', '7'], ['9223372036854775807', '8']]);
  });

  it('walks descending longs and the missing sentinel -9223372036854775808 by echoing sort values', async () => {
    const sorts = await walk('desc');
    const idOf = (v: string) => String(BIG_VALUES.indexOf(v) + 1);
    expect(sorts).toEqual([...[...asc].reverse().map((v) => [v, idOf(v)]), ['-9223372036854775808', '7'], ['-9223372036854775808', '8']]);
  });

  it('distinguishes longs a double would round together in search_after', async () => {
    // 9007199254740993 and 9007199254740994 are one double apart from 9007199254740992.
    const { hits } = await exact('/longs/_search', { size: 10, sort: [{ big: 'asc' }, { id: 'asc' }], search_after: [parseExact('9007199254740993'), parseExact('1')] });
    expect(hits.map((h) => h._id)).toEqual(['6', '2', '3', '5', '7', '8']);
  });

  it('returns the long itself as _source digits', async () => {
    const res = await raw(t, 'GET', '/longs/_doc/2');
    expect(res.text).toContain('"big":9007199254740995');
  });
});

describe('date and date_nanos sort values', () => {
  const all = [...msDocs, ...nsDocs].map((d) => ({ ...d, nanos: nanosOf(d.ts) })).sort((a, b) => (a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : a.id - b.id));

  it('emits epoch millis for a date field', async () => {
    const { hits } = await exact('/ev_ms/_search', { size: 10, sort: [{ ts: 'asc' }] });
    expect(hits.map((h) => digits(h.sort[0]))).toEqual(msDocs.map((d) => String(Date.parse(d.ts))));
  });

  it('emits epoch nanos for a date_nanos field', async () => {
    const { hits } = await exact('/ev_ns/_search', { size: 10, sort: [{ ts: 'asc' }, { id: 'asc' }] });
    const want = [...nsDocs].map((d) => nanosOf(d.ts)).sort((a, b) => (a < b ? -1 : 1)).map(String);
    expect(hits.map((h) => digits(h.sort[0]))).toEqual(want);
  });

  it('unifies date and date_nanos with numeric_type date_nanos and continues search_after across both indices', async () => {
    const sort = [{ ts: { order: 'asc', numeric_type: 'date_nanos' } }, { id: 'asc' }];
    const seen: Array<[string, string]> = [];
    let after: unknown[] | undefined;
    for (let i = 0; i < 10; i++) {
      const { hits } = await exact('/ev_ms,ev_ns/_search', { size: 2, sort, ...(after ? { search_after: after } : {}) });
      if (!hits.length) break;
      for (const h of hits) seen.push([h._id, digits(h.sort[0])]);
      after = hits[hits.length - 1].sort;
    }
    expect(seen).toEqual(all.map((d) => [String(d.id), String(d.nanos)]));
  });

  it('formats date sort values with format and reads search_after in that format', async () => {
    const sort = [{ ts: { order: 'asc', format: 'strict_date_optional_time' } }];
    const first = await raw(t, 'POST', '/ev_ms/_search', { size: 2, sort });
    expect(first.json.hits.hits.map((h: { sort: unknown[] }) => h.sort)).toEqual([[msDocs[0].ts], [msDocs[1].ts]]);
    const next = await raw(t, 'POST', '/ev_ms/_search', { size: 5, sort, search_after: [msDocs[1].ts] });
    expect(next.json.hits.hits.map((h: { _id: string }) => h._id)).toEqual(msDocs.slice(2).map((d) => String(d.id)));
  });
});
