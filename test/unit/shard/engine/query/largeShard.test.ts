import { IndexMapping, ShardStore, type SearcherRef, type SortSpec, type SortValue } from '../../../../../actors/shard/engine';
import { by } from '../engineFixture';

// Above the size where numeric sorts walk a cached sorted doc order: its results must equal a
// brute-force sort of the same docs, for every cursor, deletion state and old searcher.
const N = 25_000;
const store = new ShardStore({
  index: 'big', shardId: 0, settings: () => ({ maxResultWindow: 100_000, maxSlicesPerScroll: 1024 }),
  mapping: new IndexMapping({ properties: { n: { type: 'long' }, d: { type: 'double' }, ns: { type: 'date_nanos' }, g: { type: 'keyword' } } }),
});
let seed = 7;
const rnd = (m: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % m);
for (let i = 0; i < N; i++) {
  const doc: Record<string, unknown> = { g: i % 4 === 0 ? 'even4' : 'other' };
  if (rnd(10) !== 0) doc.n = rnd(10) === 0 ? [rnd(500), rnd(500)] : rnd(500);
  if (rnd(3) !== 0) doc.d = rnd(1000) / 7 - 50;
  if (rnd(5) !== 0) doc.ns = `2020-01-01T00:00:00.${String(rnd(1000)).padStart(3, '0')}${String(rnd(1000)).padStart(3, '0')}${rnd(10)}Z`;
  store.write({ op: 'index', id: `id${i}`, source: JSON.stringify(doc) });
}
store.refresh();
const old = store.acquireSearcher();
for (let i = 0; i < N; i += 3) store.write({ op: 'delete', id: `id${i}` });
for (let i = 0; i < 500; i++) store.write({ op: 'index', id: `new${i}`, source: JSON.stringify({ n: rnd(500), g: 'even4' }) });
store.refresh();
const cur = store.acquireSearcher();
const leaf = () => store.activeBuffer();

const LONG_MAX = 2n ** 63n - 1n;
const LONG_MIN = -(2n ** 63n);

/** Brute force: every visible matching doc, keyed with values(), sorted, ties by doc id. */
function oracle(s: SearcherRef, spec: SortSpec, filter: (d: number) => boolean): Array<{ doc: number; key: bigint | number }> {
  const rows: Array<{ doc: number; key: bigint | number }> = [];
  const missingHigh = spec.missing === '_first' ? spec.order === 'desc' : spec.order === 'asc';
  for (let d = 0; d < s.maxDoc; d++) {
    if (!leaf().visible(s, d) || !filter(d)) continue;
    const vals = leaf().values(spec.field, d) as Array<number | bigint>;
    let key: bigint | number;
    if (!vals.length) key = spec.field === 'd' ? (missingHigh ? Infinity : -Infinity) : missingHigh ? LONG_MAX : LONG_MIN;
    else {
      const sorted = [...vals].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      key = (spec.mode ?? (spec.order === 'desc' ? 'max' : 'min')) === 'max' ? sorted[sorted.length - 1] : sorted[0];
    }
    rows.push({ doc: leaf().docId(d), key });
  }
  const sign = spec.order === 'desc' ? -1 : 1;
  return rows.sort((a, b) => (a.key < b.key ? -sign : a.key > b.key ? sign : a.doc - b.doc));
}

const asKey = (v: SortValue) => (typeof v === 'bigint' ? v : Number(v));

describe.each([
  ['long asc', by('n')],
  ['long desc', by('n', 'desc')],
  ['long asc, missing first', by('n', 'asc', { missing: '_first' })],
  ['long desc, mode min', by('n', 'desc', { mode: 'min' })],
  ['double asc', by('d')],
  ['double desc', by('d', 'desc')],
  ['date_nanos asc', by('ns')],
  ['date_nanos desc', by('ns', 'desc')],
])('a 25k-doc shard sorted by %s', (_what, spec) => {
  const cases: Array<[string, SearcherRef, unknown, (d: number) => boolean]> = [
    ['match_all, current searcher', cur, undefined, () => true],
    ['match_all, old searcher (deletes invisible)', old, undefined, () => true],
    ['a 25% filter', cur, { term: { g: 'even4' } }, (d) => leaf().values('g', d)[0] === 'even4'],
  ];
  it.each(cases)('pages like a brute-force sort: %s', (_label, s, query, filter) => {
    const expected = oracle(s, spec, filter);
    for (const cursor of [-1, 0, 1, 777, Math.floor(expected.length / 2), expected.length - 5]) {
      const after = cursor < 0 ? undefined : [expected[cursor].key] as SortValue[];
      // strictly after the key: skip every doc whose key equals the cursor's
      const rest = after ? expected.filter((r) => (spec.order === 'desc' ? r.key < asKey(after[0]) : r.key > asKey(after[0]))) : expected;
      const r = store.query(s, { query, sort: [spec], searchAfter: after, from: 0, size: 25, trackTotalHits: true, shardIndex: 0 });
      expect(r.hits.map((h) => h.doc)).toEqual(rest.slice(0, 25).map((x) => x.doc));
      expect(r.hits.map((h) => asKey(h.sort![0]))).toEqual(rest.slice(0, 25).map((x) => x.key));
      expect(r.totalHits).toBe(expected.length);
    }
  });
});

it('pages a whole PIT with a _shard_doc tiebreaker over heavy ties without gaps or duplicates', () => {
  const seen = new Set<number>();
  let dups = 0;
  let after: SortValue[] | undefined;
  for (;;) {
    const r = store.query(old, { sort: [by('n'), by('_shard_doc')], searchAfter: after, from: 0, size: 1000, trackTotalHits: false, shardIndex: 1 });
    if (!r.hits.length) break;
    for (const h of r.hits) {
      if (seen.has(h.doc)) dups++;
      seen.add(h.doc);
    }
    after = r.hits[r.hits.length - 1].sort;
  }
  expect([seen.size, dups]).toEqual([N, 0]);
});

/** Pages through everything with search_after and returns the doc order. */
function pageAll(s: SearcherRef, sort: SortSpec[], size: number): number[] {
  const out: number[] = [];
  let after: SortValue[] | undefined;
  for (;;) {
    const r = store.query(s, { sort, searchAfter: after, from: 0, size, trackTotalHits: false, shardIndex: 0 });
    if (!r.hits.length) return out;
    out.push(...r.hits.map((h) => h.doc));
    after = r.hits[r.hits.length - 1].sort;
  }
}

it.each([
  ['long desc + _shard_doc (exact order, cursor inside tie runs)', [by('n', 'desc'), by('_shard_doc')]],
  ['long asc + _doc', [by('n'), by('_doc')]],
  ['long asc + keyword desc + _doc (tie runs re-sorted)', [by('n'), by('g', 'desc'), by('_doc')]],
])('pages a whole searcher sorted by %s in brute-force order', (_what, sort) => {
  const primary = oracle(old, sort[0], () => true);
  const gDesc = sort.length === 3;
  const pos = new Map(primary.map((x, i) => [x, i]));
  const expected = [...primary].sort((a, b) => {
    if (a.key !== b.key) return pos.get(a)! - pos.get(b)!;
    if (gDesc) {
      const ga = String(leaf().values('g', leaf().localDoc(a.doc))[0]), gb = String(leaf().values('g', leaf().localDoc(b.doc))[0]);
      if (ga !== gb) return ga < gb ? 1 : -1;
    }
    return a.doc - b.doc;
  }).map((x) => x.doc);
  expect(pageAll(old, sort, 997)).toEqual(expected);
});
