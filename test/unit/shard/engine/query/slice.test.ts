import { EsError } from '../../../../../actors/wire/esErrors';
import { bitMix, docRange, floorMod, javaStringHashCode, type LocalSlice } from '../../../../../actors/shard/engine';
import { sliceFilter } from '../../../../../actors/shard/engine/query/slice';
import { by, ids, leafOf, search, shardWith } from '../engineFixture';

const docs: Record<string, unknown> = {};
for (let i = 0; i < 40; i++) docs[`doc-${i}`] = i % 7 === 0 ? { other: 1 } : { ts: 1_600_000_000_000 + i * 7919, n: i };
const store = shardWith(docs, { properties: { ts: { type: 'date' }, n: { type: 'long' }, k: { type: 'keyword' } } }, { maxResultWindow: 10000, maxSlicesPerScroll: 8 });

const sliced = (slice: LocalSlice, extra = {}) => ids(search(store, { slice, sort: [by('_doc')], ...extra }));
const all = ids(search(store, { sort: [by('_doc')] }));

function error(slice: LocalSlice): EsError {
  try {
    sliced(slice);
  } catch (e) {
    return e as EsError;
  }
  throw new Error('expected an error');
}

describe.each([
  ['scroll by _id hash', { mode: 'scroll' } as const],
  ['scroll by _id hash (field _id)', { mode: 'scroll', field: '_id' } as const],
  ['pit by doc-id ranges', { mode: 'pit' } as const],
  ['scroll by a numeric field', { mode: 'scroll', field: 'ts' } as const],
  ['pit by a numeric field', { mode: 'pit', field: 'n' } as const],
])('slicing: %s', (_what, base) => {
  it.each([2, 3, 7])('makes %i disjoint slices whose union is the unsliced set', (max) => {
    const parts = Array.from({ length: max }, (_, id) => sliced({ ...base, id, max }));
    const union = parts.flat();
    expect(new Set(union).size).toBe(union.length);
    expect(union.sort()).toEqual([...all].sort());
  });
});

describe('slice membership', () => {
  it('puts a doc in slice floorMod(String.hashCode(_id), max) for scrolls', () => {
    const expected = all.filter((id) => floorMod(javaStringHashCode(id), 3) === 1);
    expect(sliced({ mode: 'scroll', id: 1, max: 3 })).toEqual(expected);
  });

  it('splits PIT slices into contiguous doc-id ranges over maxDoc', () => {
    expect([0, 1, 2].map((i) => docRange(10, i, 3))).toEqual([[0, 4], [4, 7], [7, 10]]);
    expect(search(store, { slice: { mode: 'pit', id: 0, max: 3 }, sort: [by('_doc')] }).hits.map((h) => h.doc)).toEqual(Array.from({ length: 14 }, (_, i) => i));
  });

  it('puts a doc in slice floorMod(BitMixer.mix(first value), max); docs without the field in slice 0', () => {
    const withTs = Object.entries(docs).filter(([, d]) => (d as { ts?: number }).ts !== undefined);
    const expected1 = withTs.filter(([, d]) => floorMod(bitMix((d as { ts: number }).ts), 4) === 1).map(([id]) => id);
    expect(sliced({ mode: 'scroll', field: 'ts', id: 1, max: 4 })).toEqual(expected1);
    expect(sliced({ mode: 'scroll', field: 'ts', id: 0, max: 4 })).toEqual(expect.arrayContaining(['doc-0', 'doc-7', 'doc-14']));
  });

  it('treats max 1 as the whole shard', () => {
    expect(sliced({ mode: 'scroll', id: 0, max: 1 })).toEqual(all);
  });

  it('applies the slice to totals and keeps search_after working inside it', () => {
    const slice = { mode: 'scroll', id: 0, max: 2 } as const;
    const members = sliced(slice);
    expect(search(store, { slice }).totalHits).toBe(members.length);
    const first = search(store, { slice, sort: [by('_doc')], size: 3 });
    const next = ids(search(store, { slice, sort: [by('_doc')], size: 100, searchAfter: first.hits[2].sort }));
    expect([...ids(first), ...next]).toEqual(members);
  });

  it('caches the filter per (searcher, slice): a repeated call reuses it', () => {
    const { store: leaf, s } = leafOf(store);
    const a = sliceFilter(leaf, s, { mode: 'scroll', id: 1, max: 5 });
    const b = sliceFilter(leaf, s, { mode: 'scroll', id: 1, max: 5 });
    expect(a?.bits).toBeDefined();
    expect(b?.bits).toBe(a?.bits);
  });
});

describe('slice errors', () => {
  it.each([
    ['too many slices', { mode: 'scroll', id: 0, max: 9 }, 'The number of slices [9] is too large. It must be less than [8]. This limit can be set by changing the [index.max_slices_per_scroll] index level setting.'],
    ['too many slices in the request (checked with requestMax)', { mode: 'scroll', id: 0, max: 2, requestMax: 20 }, 'The number of slices [20] is too large. It must be less than [8]. This limit can be set by changing the [index.max_slices_per_scroll] index level setting.'],
    ['an unmapped field', { mode: 'scroll', id: 0, max: 2, field: 'nope' }, 'field nope not found'],
    ['a non-numeric field', { mode: 'scroll', id: 0, max: 2, field: 'k' }, 'cannot load numeric doc values on k'],
    ['_id with a PIT', { mode: 'pit', id: 0, max: 2, field: '_id' }, 'cannot slice on [_id] when using [point-in-time]'],
  ] as const)('rejects %s with a 400', (_what, slice, reason) => {
    const e = error(slice as LocalSlice);
    expect([e.type, e.status, e.message]).toEqual(['illegal_argument_exception', 400, reason]);
  });

  it('accepts exactly max_slices_per_scroll', () => {
    expect(() => sliced({ mode: 'scroll', id: 0, max: 8 })).not.toThrow();
  });

  it('checks the request\'s max on a shard that takes part whole (max 1)', () => {
    expect(error({ mode: 'scroll', id: 0, max: 1, requestMax: 9 }).message).toMatch(/^The number of slices \[9\] is too large/);
    expect(error({ mode: 'scroll', id: 0, max: 1, field: 'nope', requestMax: 2 }).message).toBe('field nope not found');
  });

  it('does not limit the slices of a point in time (ES 8 checks scrolls only)', () => {
    expect(() => sliced({ mode: 'pit', id: 0, max: 9 })).not.toThrow();
  });
});
