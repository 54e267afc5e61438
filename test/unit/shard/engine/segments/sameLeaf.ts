/** Deep comparison of a disk segment with the in-memory buffer it must read like. */
import type { ColumnView, KeywordView, NumericView, TextView } from '../../../../../actors/shard/engine/index/columnViews';
import { impactsOf } from '../../../../../actors/shard/engine/index/impacts';
import type { DiskSegment, LeafData } from '../../../../../actors/shard/engine/segments';
import { plain, termsOf } from './segmentFixture';

/** Prefix lengths at which stats(maxDoc) are compared. */
const prefixes = (n: number) => [...new Set([0, 1, 7, 500, 1023, 1024, 1025, 2047, 2048, 3000, n - 1, n, n + 5])].filter((m) => m >= 0);

/** Columns of `disk` equal the reference columns (docs [0, maxDoc) of both). */
export function expectSameColumns(disk: DiskSegment, ref: { column(path: string): ColumnView | undefined; fieldPaths(): string[] }, maxDoc: number): void {
  const paths = ref.fieldPaths().filter((p) => hasAny(ref.column(p)!, maxDoc)).sort();
  expect(disk.fieldPaths().sort()).toEqual(paths);
  for (const p of paths) {
    const a = disk.column(p)!, b = ref.column(p)!;
    expect([p, a.kind]).toEqual([p, b.kind]);
    if (a.kind === 'numeric') sameNumeric(p, a, b as NumericView, maxDoc);
    else if (a.kind === 'keyword') sameKeyword(p, a, b as KeywordView, maxDoc);
    else sameText(p, a, b as TextView, maxDoc);
  }
}

function hasAny(c: ColumnView, maxDoc: number): boolean {
  for (let d = 0; d < maxDoc; d++) {
    if (c.kind === 'numeric' ? c.has(d) : c.kind === 'keyword' ? d < c.ords.length && c.ords[d] >= 0 : c.has(d)) return true;
  }
  return false;
}

function sameNumeric(p: string, a: NumericView, b: NumericView, maxDoc: number): void {
  expect([p, a.type]).toEqual([p, b.type]);
  const got: unknown[] = [], want: unknown[] = [];
  for (let d = 0; d < maxDoc; d++) {
    got.push([d, a.has(d), a.isMulti(d), a.numVals(d), a.natural(d), a.exactOf(d), a.multiOf(d) ?? null, a.has(d) ? a.hi[d] : null, a.lo && a.has(d) ? a.lo[d] : null]);
    want.push([d, b.has(d), b.isMulti(d), b.numVals(d), b.natural(d), b.exactOf(d), b.multiOf(d) ?? null, b.has(d) ? b.hi[d] : null, b.lo && b.has(d) ? b.lo[d] : null]);
  }
  expect([p, got]).toEqual([p, want]);
  if (b.hasExact) expect(a.hasExact).toBe(true);
}

function sameKeyword(p: string, a: KeywordView, b: KeywordView, maxDoc: number): void {
  const terms = termsOf(b).filter((t) => plain(b.postingsOf(b.ordOf(t)), maxDoc).docs.length > 0);
  expect([p, termsOf(a)]).toEqual([p, terms]);
  expect(a.numTerms).toBe(terms.length);
  terms.forEach((t, i) => {
    expect([p, t, a.ordOf(t)]).toEqual([p, t, i]); // the dictionary is sorted
    expect(a.termOf(i)).toBe(t);
    expect([p, t, plain(a.postingsOf(i))]).toEqual([p, t, plain(b.postingsOf(b.ordOf(t)), maxDoc)]);
  });
  expect(a.ordOf('no such term')).toBe(-1);
  const got: unknown[] = [], want: unknown[] = [];
  for (let d = 0; d < maxDoc; d++) {
    const bo = d < b.ords.length ? b.ords[d] : -1;
    got.push([d, a.values(d), a.ords[d] >= 0 ? a.termOf(a.ords[d]) : null, a.multiOrds(d)?.map((o) => a.termOf(o)) ?? null]);
    want.push([d, b.values(d), bo >= 0 ? b.termOf(bo) : null, b.multiOrds(d)?.map((o) => b.termOf(o)) ?? null]);
  }
  expect([p, got]).toEqual([p, want]);
  for (const m of prefixes(maxDoc)) expect([p, m, a.stats(m)]).toEqual([p, m, b.stats(Math.min(m, maxDoc))]);
}

function sameText(p: string, a: TextView, b: TextView, maxDoc: number): void {
  const terms = termsOf(b).filter((t) => plain(b.postings(t), maxDoc).docs.length > 0);
  expect([p, termsOf(a)]).toEqual([p, terms]);
  for (const t of terms) {
    const ra = a.postings(t)!, rb = b.postings(t)!;
    const pa = plain(ra), pb = plain(rb, maxDoc);
    expect([p, t, pa]).toEqual([p, t, pb]);
    if (pa.docs.length >= 8 && typeof ra === 'object' && typeof rb === 'object') {
      const ia = a.impacts(ra), ib = impactsOf(rb, b.lens);
      const blocks = Math.floor(pa.docs.length / 8);
      expect([p, t, ia.blocks]).toEqual([p, t, blocks]);
      const cut = (x: typeof ia) => ({
        off: Array.from(x.off.subarray(0, blocks + 1)), tf: Array.from(x.tf.subarray(0, x.off[blocks])), norm: Array.from(x.norm.subarray(0, x.off[blocks])),
        last: Array.from(x.last.subarray(0, blocks)),
      });
      expect([p, t, cut(ia)]).toEqual([p, t, cut(ib)]);
    }
    if (b.positions) {
      const qa = a.positions!(t), qb = b.positions(t);
      if (qb) {
        const n = pb.docs.length;
        expect([p, t, qa && Array.from(qa.starts), qa && Array.from(qa.pos)]).toEqual([p, t, Array.from(qb.starts.subarray(0, n + 1)), Array.from(qb.pos.subarray(0, qb.starts[n]))]);
      }
    }
  }
  expect(a.postings('no such term')).toBeUndefined();
  const got: number[] = [], want: number[] = [];
  for (let d = 0; d < maxDoc; d++) {
    got.push(a.has(d) ? a.lens[d] : 0);
    want.push(b.has(d) ? b.lens[d] : 0);
  }
  expect([p, got]).toEqual([p, want]);
  for (const m of prefixes(maxDoc)) expect([p, m, a.stats(m)]).toEqual([p, m, b.stats(Math.min(m, maxDoc))]);
}

/** Per-doc data of `disk` doc d equals that of `docs[d]` (a source leaf and its doc). */
export function expectSameDocs(disk: DiskSegment, docs: Array<[LeafData, number]>): void {
  expect(disk.maxDoc).toBe(docs.length);
  const got: unknown[] = [], want: unknown[] = [];
  const byId = new Map<string, number[]>();
  docs.forEach(([leaf, d], nd) => {
    const src = leaf.sourceOf(d);
    got.push([nd, disk.idOf(nd), disk.seqNoOf(nd), disk.versionOf(nd), disk.routingOf(nd) ?? null, disk.source(nd)]);
    want.push([nd, leaf.idOf(d), leaf.seqNoOf(d), leaf.versionOf(d), leaf.routingOf(d) ?? null, typeof src === 'string' ? src : Buffer.from(src).toString('utf8')]);
    const id = leaf.idOf(d);
    (byId.get(id) ?? byId.set(id, []).get(id)!).push(nd);
  });
  expect(got).toEqual(want);
  for (const [id, ds] of byId) {
    expect([id, disk.docsOfId(id)]).toEqual([id, ds]);
    expect(disk.mayContainId(id)).toBe(true);
  }
  expect(disk.docsOfId('never-written')).toEqual([]);
  expect(Array.from(disk.seqNos)).toEqual(docs.map(([l, d]) => l.seqNoOf(d)));
}
