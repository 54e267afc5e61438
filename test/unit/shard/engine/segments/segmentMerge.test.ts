import { join } from 'node:path';
import { keepFromBits, bitsFromKeep, openSegment, SegmentCache, writeSegment, type DiskSegment, type LeafData } from '../../../../../actors/shard/engine/segments';
import type { ShardStore } from '../../../../../actors/shard/engine';
import type { LoggedOp } from '../../../../../actors/shard/engine/types';
import { expectSameColumns, expectSameDocs } from './sameLeaf';
import { randomOps, storeLeaf, storeOf, tempDir } from './segmentFixture';
import { rng } from '../../../../support/rng';

let tmp: ReturnType<typeof tempDir>;
beforeAll(() => (tmp = tempDir()));
afterAll(() => tmp.cleanup());

/** Ops split into adjacent chunks, a store per chunk (a delete of an earlier chunk's id is a tombstone there). */
function chunks(ops: LoggedOp[], sizes: number[]): Array<{ ops: LoggedOp[]; store: ShardStore }> {
  const out: Array<{ ops: LoggedOp[]; store: ShardStore }> = [];
  let at = 0;
  for (const n of sizes) {
    const part = ops.slice(at, at + n);
    at += n;
    out.push({ ops: part, store: storeOf(part) });
  }
  return out;
}

/** The buffer a store would be if it had seen only the kept docs (same ops, same seqNos). */
function keptOnly(parts: Array<{ leaf: LeafData; keep: (d: number) => boolean }>): { store: ShardStore; docs: Array<[LeafData, number]> } {
  const ops: LoggedOp[] = [];
  const docs: Array<[LeafData, number]> = [];
  for (const { leaf, keep } of parts) {
    for (let d = 0; d < leaf.maxDoc; d++) {
      if (!keep(d)) continue;
      const src = leaf.sourceOf(d);
      const routing = leaf.routingOf(d);
      ops.push({
        op: 'index', id: leaf.idOf(d), seqNo: leaf.seqNoOf(d), version: leaf.versionOf(d),
        source: typeof src === 'string' ? src : Buffer.from(src).toString('utf8'), ...(routing !== undefined ? { routing } : {}),
      });
      docs.push([leaf, d]);
    }
  }
  return { store: storeOf(ops), docs };
}

const open = (name: string, cache: SegmentCache) => openSegment(join(tmp.dir, `${name}.seg`), cache);

describe('merging segments', () => {
  const cache = new SegmentCache({ maxBytes: 32 << 20 });
  const ops = randomOps(7, 6000, { updates: 0.2, deletes: 0.08 });
  const parts = chunks(ops, [1500, 2000, 1200, ops.length - 4700]);
  const segs: DiskSegment[] = [];
  beforeAll(() => {
    parts.slice(0, 3).forEach((p, i) => {
      writeSegment(tmp.dir, `in${i}`, { leaves: [{ leaf: storeLeaf(p.store, { positions: ['body'] }) }] });
      segs.push(open(`in${i}`, cache));
    });
  });
  afterAll(() => segs.forEach((s) => s.close()));

  it('of disk segments and a buffer, with dropped docs, reads as a buffer built from the kept docs only', () => {
    const r = rng(99);
    const leaves: LeafData[] = [...segs, storeLeaf(parts[3].store, { positions: ['body'] })];
    // drop docs updated or deleted within their own leaf, and a random third more; keep predicates go in as bitsets (as to a worker)
    const keeps = leaves.map((l, i) => {
      const store = parts[i].store;
      return keepFromBits(bitsFromKeep(l.maxDoc, (d) => store.activeBuffer().delSeq[d] === Infinity && r() < 0.66));
    });
    const meta = writeSegment(tmp.dir, 'merged', { leaves: leaves.map((leaf, i) => ({ leaf, keep: keeps[i] })) });
    const merged = open('merged', cache);
    const ref = keptOnly(leaves.map((leaf, i) => ({ leaf, keep: keeps[i] })));
    expect(merged.maxDoc).toBe(ref.docs.length);
    expect(meta.maxDoc).toBe(ref.docs.length);
    expectSameDocs(merged, ref.docs);
    expectSameColumns(merged, storeLeaf(ref.store, { positions: ['body'] }), ref.docs.length);
    expect(meta.minSeqNo).toBeLessThan(meta.maxSeqNo);
    merged.close();
  });

  it('keeps the latest tombstone per id that the predicate keeps', () => {
    const all = segs.flatMap((s) => [...s.tombstones()]);
    expect(all.length).toBeGreaterThan(20);
    const cut = all[Math.floor(all.length / 2)].seqNo;
    writeSegment(tmp.dir, 'tombs', { leaves: segs.map((leaf) => ({ leaf })), tombstones: (t) => t.seqNo >= cut });
    const m = open('tombs', cache);
    const latest = new Map<string, { seqNo: number; version: number }>();
    for (const t of all) if (t.seqNo >= cut && (latest.get(t.id)?.seqNo ?? -1) < t.seqNo) latest.set(t.id, { seqNo: t.seqNo, version: t.version });
    expect(m.meta.tombstones).toBe(latest.size);
    for (const [id, t] of latest) expect(m.tombstoneOf(id)).toEqual(t);
    for (const t of all) if (!latest.has(t.id)) expect(m.tombstoneOf(t.id)).toBeUndefined();
    m.close();
  });

  it('merges merged segments again (everything kept): same docs, same columns', () => {
    writeSegment(tmp.dir, 'ab', { leaves: [{ leaf: segs[0] }, { leaf: segs[1] }] });
    const ab = open('ab', cache);
    writeSegment(tmp.dir, 'abc', { leaves: [{ leaf: ab }, { leaf: segs[2] }] });
    const abc = open('abc', cache);
    const ref = keptOnly(segs.map((leaf) => ({ leaf, keep: () => true })));
    expectSameDocs(abc, ref.docs);
    expectSameColumns(abc, storeLeaf(ref.store, { positions: ['body'] }), ref.docs.length);
    ab.close();
    abc.close();
  });

  it('drops every doc: a segment of tombstones only, no fields', () => {
    const meta = writeSegment(tmp.dir, 'none', { leaves: segs.map((leaf) => ({ leaf, keep: () => false })) });
    expect(meta).toMatchObject({ maxDoc: 0, fields: {} });
  });
});
