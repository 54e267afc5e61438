import { copyFileSync, existsSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  openSegment, runSteps, SegmentCache, verifySegment, writeSegment, writeSegmentSteps, type DiskSegment, type LeafData,
} from '../../../../../actors/shard/engine/segments';
import type { TextView } from '../../../../../actors/shard/engine/index/columnViews';
import { expectSameColumns, expectSameDocs } from './sameLeaf';
import { newStore, randomStore, storeLeaf, tempDir } from './segmentFixture';

let tmp: ReturnType<typeof tempDir>;
beforeAll(() => (tmp = tempDir()));
afterAll(() => tmp.cleanup());

const docsOf = (leaf: LeafData): Array<[LeafData, number]> => Array.from({ length: leaf.maxDoc }, (_, d) => [leaf, d]);

describe('segment written from the buffer', () => {
  const store = randomStore(1, 2600);
  const leaf = storeLeaf(store, { positions: ['body'] });
  let seg: DiskSegment;
  beforeAll(() => {
    writeSegment(tmp.dir, 'flush1', { leaves: [{ leaf }] });
    seg = openSegment(join(tmp.dir, 'flush1.seg'), new SegmentCache({ maxBytes: 64 << 20 }));
  });
  afterAll(() => seg.close());

  it('keeps ids, seqNos, versions, routings and sources of every doc', () => {
    expectSameDocs(seg, docsOf(leaf));
  });

  it('reads every column as the buffer does: values, dictionaries, postings, impacts, positions, stats over prefixes', () => {
    expectSameColumns(seg, leaf, leaf.maxDoc);
  });

  it('keeps the tombstones and finds them by id', () => {
    const want = [...leaf.tombstones()].sort((a, b) => a.seqNo - b.seqNo);
    expect(want.length).toBeGreaterThan(10);
    expect([...seg.tombstones()].sort((a, b) => a.seqNo - b.seqNo)).toEqual(want);
    for (const t of want) {
      expect(seg.tombstoneOf(t.id)).toEqual({ seqNo: t.seqNo, version: t.version });
      expect(seg.mayContainId(t.id)).toBe(true);
    }
    expect(seg.tombstoneOf('never')).toBeUndefined();
  });

  it('describes itself in a JSON-serialisable meta', () => {
    const m = seg.meta;
    expect(JSON.parse(JSON.stringify(m))).toEqual(m);
    expect(m).toMatchObject({ name: 'flush1', version: 1, maxDoc: leaf.maxDoc, tombstones: [...leaf.tombstones()].length });
    expect(m.minSeqNo).toBe(0);
    const title = store.activeBuffer().column('title') as TextView;
    // the buffer keeps positions of every text field (issue 24), so every text field has them on disk
    expect(m.fields.title).toEqual({ type: 'text', kind: 'text', ...title.stats(leaf.maxDoc), terms: expect.any(Number), positions: true });
    expect(m.fields.body.positions).toBe(true);
    expect(m.sourceBytes).toBe(store.sourceBytes());
    expect(verifySegment(join(tmp.dir, 'flush1.seg')).sizeBytes).toBe(m.sizeBytes);
  });

  it('answers sources of consecutive docs with one read each run', () => {
    const docs = Array.from({ length: 1000 }, (_, i) => i + 100);
    const srcs = seg.sourcesOf(docs);
    srcs.forEach((b, i) => expect(Buffer.from(b).toString('utf8')).toBe(store.activeBuffer().source(docs[i])));
    expect(new Set(srcs.map((b) => b.buffer)).size).toBe(1);
  });

  it('answers mayContainId with about 1% false positives on ids never written', () => {
    let fp = 0;
    for (let i = 0; i < 10000; i++) if (seg.mayContainId(`absent-${i}`)) fp++;
    expect(fp).toBeLessThan(300);
  });
});

describe('writer', () => {
  it('writes from a prefix of a buffer that keeps growing (docs past maxDoc are not part of it)', () => {
    const store = randomStore(2, 900);
    const leaf = storeLeaf(store, { maxDoc: 600 });
    writeSegment(tmp.dir, 'prefix', { leaves: [{ leaf }] });
    const seg = openSegment(join(tmp.dir, 'prefix.seg'), new SegmentCache({ maxBytes: 8 << 20 }));
    expectSameDocs(seg, docsOf(leaf));
    expectSameColumns(seg, leaf, 600);
    seg.close();
  });

  it('in steps yields often and produces the same file as the synchronous writer', async () => {
    const store = randomStore(3, 3000);
    const leaf = storeLeaf(store);
    const steps = writeSegmentSteps(tmp.dir, 'stepped', { leaves: [{ leaf }] }, { sliceMs: 1 });
    let yields = 0;
    const counting = (function* () {
      const r = yield* steps;
      return r;
    })();
    const meta = await runSteps((function* () {
      for (;;) {
        const r = counting.next();
        if (r.done) return r.value;
        yields++;
        yield r.value;
      }
    })());
    expect(yields).toBeGreaterThan(3);
    const sync = writeSegment(tmp.dir, 'unstepped', { leaves: [{ leaf }] });
    // the footer holds the name: the files differ by its length only
    expect({ ...meta, name: '', sizeBytes: meta.sizeBytes - 'stepped'.length }).toEqual({ ...sync, name: '', sizeBytes: sync.sizeBytes - 'unstepped'.length });
  });

  it('leaves no .tmp and no .seg when abandoned half way', () => {
    const store = randomStore(4, 3000);
    const steps = writeSegmentSteps(tmp.dir, 'abandoned', { leaves: [{ leaf: storeLeaf(store) }] }, { sliceMs: 0 });
    steps.next();
    steps.next();
    expect(existsSync(join(tmp.dir, 'abandoned.seg.tmp'))).toBe(true);
    steps.return(undefined as never);
    expect(readdirSync(tmp.dir).filter((f) => f.startsWith('abandoned'))).toEqual([]);
  });

  it('writes an empty segment (only tombstones)', () => {
    const s = newStore();
    s.write({ op: 'delete', id: 'x' });
    s.refresh();
    const meta = writeSegment(tmp.dir, 'empty', { leaves: [{ leaf: storeLeaf(s) }] });
    expect(meta).toMatchObject({ maxDoc: 0, tombstones: 1, minSeqNo: 0, maxSeqNo: 0, fields: {} });
    const seg = openSegment(join(tmp.dir, 'empty.seg'), new SegmentCache({ maxBytes: 1 << 20 }));
    expect(seg.tombstoneOf('x')).toEqual({ seqNo: 0, version: 1 });
    expect(seg.docsOfId('x')).toEqual([]);
    seg.close();
  });
});

describe('damaged files', () => {
  let good: string;
  beforeAll(() => {
    writeSegment(tmp.dir, 'good', { leaves: [{ leaf: storeLeaf(randomStore(9, 400)) }] });
    good = join(tmp.dir, 'good.seg');
  });

  it('refuses a truncated file (no trailer): the partial-write case', () => {
    const p = join(tmp.dir, 'trunc.seg');
    copyFileSync(good, p);
    truncateSync(p, 5000);
    expect(() => openSegment(p, new SegmentCache({ maxBytes: 1 << 20 }))).toThrow(/trailer|incomplete/);
    expect(() => verifySegment(p)).toThrow();
  });

  it('detects a flipped byte: on loading the section, and in verifySegment', () => {
    const p = join(tmp.dir, 'flip.seg');
    const bytes = readFileSync(good);
    bytes[200] ^= 0xff; // inside the seqNos section (just after the header)
    writeFileSync(p, bytes);
    const seg = openSegment(p, new SegmentCache({ maxBytes: 1 << 20 }));
    expect(() => seg.seqNos).toThrow(/checksum/);
    seg.close();
    expect(() => verifySegment(p)).toThrow(/checksum/);
  });
});

describe('text UTF-8 cannot carry', () => {
  it('keeps ids, keyword terms and routings with lone surrogates exactly (UTF-16 tables)', () => {
    const s = newStore();
    const docs: Array<[string, string]> = [['a\ud800', '{"tag":["x\\udc00","y","\\ud83d"]}'], ['b', '{"tag":"\\udc00z"}'], ['c\udfff', '{"tag":"y"}']];
    for (const [id, source] of docs) s.write({ op: 'index', id, source, routing: id });
    s.write({ op: 'delete', id: 'gone\ud801' });
    s.refresh();
    const leaf = storeLeaf(s);
    writeSegment(tmp.dir, 'surrogates', { leaves: [{ leaf }] });
    const seg = openSegment(join(tmp.dir, 'surrogates.seg'), new SegmentCache({ maxBytes: 1 << 20 }));
    expectSameDocs(seg, docsOf(leaf));
    expectSameColumns(seg, leaf, leaf.maxDoc);
    expect(seg.tombstoneOf('gone\ud801')).toMatchObject({ seqNo: 3 });
    expect(seg.docsOfId('a\ud800')).toEqual([0]);
    seg.close();
  });
});
