/**
 * The per-doc sections of a segment: seqNos, versions, ids (string table + hash slots + bloom
 * filter), `_source` bytes with their offsets, routings (sparse), and the tombstones kept.
 */
import { Sec } from './format';
import type { SegmentFileWriter } from './fileWriter';
import { hasBulkSources, type LeafPlan, type TombstoneRec, type WriteInput } from './leaf';
import { pause, Slicer, type Steps } from './steps';
import { bloomAdd, bloomWords, buildHashSlots, hashString, SEED1, StringTableBuilder } from './strings';

/** What the per-doc part tells the footer and the meta. */
export interface DocsInfo {
  minSeqNo: number;
  maxSeqNo: number;
  sourceBytes: number;
  tombstones: number;
  /** String tables stored as UTF-16LE (by offsets section name). */
  utf16: string[];
}

/** Writes the per-doc sections of `maxDoc` docs. */
export function* writeDocs(w: SegmentFileWriter, plans: LeafPlan[], maxDoc: number, input: WriteInput, sl: Slicer): Steps<DocsInfo> {
  const seqNos = new Float64Array(maxDoc);
  const versions = new Float64Array(maxDoc);
  const ids = new StringTableBuilder();
  const hashes = new Uint32Array(maxDoc);
  const routingDocs: number[] = [];
  const routings = new StringTableBuilder();
  let bigVersion = false;
  const tombs = yield* keptTombstones(plans, input, sl);
  const bloom = new Uint32Array(bloomWords(maxDoc + tombs.length));
  let minSeqNo = Infinity, maxSeqNo = -Infinity;
  for (const p of plans) {
    const { leaf, map } = p;
    for (let d = 0; d < map.length; d++) {
      const nd = map[d];
      if (nd < 0) continue;
      const seqNo = (seqNos[nd] = leaf.seqNoOf(d));
      if (seqNo < minSeqNo) minSeqNo = seqNo;
      if (seqNo > maxSeqNo) maxSeqNo = seqNo;
      const v = leaf.versionOf(d);
      versions[nd] = v;
      if (!(v >= 0 && v <= 0xffffffff && Number.isInteger(v))) bigVersion = true;
      const id = leaf.idOf(d);
      ids.add(id);
      bloomAdd(bloom, id);
      hashes[nd] = hashString(id, SEED1);
      const r = leaf.routingOf(d);
      if (r !== undefined) {
        routingDocs.push(nd);
        routings.add(r);
      }
      if (sl.due()) {
        yield;
        sl.reset();
      }
    }
  }
  const utf16: string[] = [];
  yield* pause(sl);
  w.section(Sec.seqNos, 'f64', seqNos);
  if (bigVersion) w.section(Sec.versions, 'f64', versions);
  else w.section(Sec.versions, 'u32', Uint32Array.from(versions));
  yield* pause(sl);
  const idt = ids.finish();
  w.section(Sec.idOffs, 'u32', idt.offs);
  w.section(Sec.idBytes, 'bytes', idt.bytes);
  if (ids.utf16) utf16.push(Sec.idOffs);
  yield* pause(sl);
  w.section(Sec.idHash, 'i32', yield* buildHashSlots(hashes, maxDoc, sl));
  if (routingDocs.length > 0) {
    const rt = routings.finish();
    w.section(Sec.routingDocs, 'i32', Int32Array.from(routingDocs));
    w.section(Sec.routingOffs, 'u32', rt.offs);
    w.section(Sec.routingBytes, 'bytes', rt.bytes);
    if (routings.utf16) utf16.push(Sec.routingOffs);
  }
  yield;
  sl.reset();
  const sourceBytes = yield* writeSources(w, plans, maxDoc, sl);
  yield* pause(sl);
  for (const t of tombs) {
    if (sl.due()) {
      yield;
      sl.reset();
    }
    bloomAdd(bloom, t.id);
    if (t.seqNo < minSeqNo) minSeqNo = t.seqNo;
    if (t.seqNo > maxSeqNo) maxSeqNo = t.seqNo;
  }
  w.section(Sec.bloom, 'u32', bloom);
  if (tombs.length > 0) {
    const tt = new StringTableBuilder();
    const th = new Uint32Array(tombs.length);
    for (let i = 0; i < tombs.length; i++) {
      tt.add(tombs[i].id);
      th[i] = hashString(tombs[i].id, SEED1);
      if (sl.due()) {
        yield;
        sl.reset();
      }
    }
    const tb = tt.finish();
    w.section(Sec.tombOffs, 'u32', tb.offs);
    w.section(Sec.tombBytes, 'bytes', tb.bytes);
    if (tt.utf16) utf16.push(Sec.tombOffs);
    w.section(Sec.tombHash, 'i32', yield* buildHashSlots(th, tombs.length, sl));
    w.section(Sec.tombSeqNos, 'f64', Float64Array.from(tombs, (t) => t.seqNo));
    w.section(Sec.tombVersions, 'f64', Float64Array.from(tombs, (t) => t.version));
  }
  return {
    minSeqNo: minSeqNo === Infinity ? -1 : minSeqNo,
    maxSeqNo: maxSeqNo === -Infinity ? -1 : maxSeqNo,
    sourceBytes,
    tombstones: tombs.length,
    utf16,
  };
}

/** Streams every kept `_source` into the `src` section, then writes their offsets. */
function* writeSources(w: SegmentFileWriter, plans: LeafPlan[], maxDoc: number, sl: Slicer): Steps<number> {
  const offs = new Float64Array(maxDoc + 1);
  w.begin(Sec.src, 'bytes');
  const start = w.offset;
  for (const p of plans) {
    const { leaf, map } = p;
    if (hasBulkSources(leaf)) {
      // disk leaf: kept docs in batches, contiguous runs read at once
      const batch: number[] = [];
      const flush = () => {
        const srcs = leaf.sourcesOf(batch);
        for (let i = 0; i < batch.length; i++) {
          w.bytes(srcs[i]);
          offs[map[batch[i]] + 1] = w.offset - start;
        }
        batch.length = 0;
      };
      for (let d = 0; d < map.length; d++) {
        if (map[d] < 0) continue;
        batch.push(d);
        if (batch.length === 1024) {
          flush();
          if (sl.dueNow()) {
            yield;
            sl.reset();
          }
        }
      }
      if (batch.length) flush();
      continue;
    }
    for (let d = 0; d < map.length; d++) {
      const nd = map[d];
      if (nd < 0) continue;
      const s = leaf.sourceOf(d);
      if (typeof s === 'string') w.utf8(s);
      else w.bytes(s);
      offs[nd + 1] = w.offset - start;
      if (sl.due()) {
        yield;
        sl.reset();
      }
    }
  }
  const [, len] = w.end();
  yield* pause(sl);
  if (len <= 0xffffffff) w.section(Sec.srcOffs, 'u32', Uint32Array.from(offs));
  else w.section(Sec.srcOffs, 'f64', offs);
  return len;
}

/** The tombstones of every leaf the input keeps, the latest per id, in id order of first appearance. */
function* keptTombstones(plans: LeafPlan[], input: WriteInput, sl: Slicer): Steps<TombstoneRec[]> {
  const byId = new Map<string, TombstoneRec>();
  for (const p of plans) {
    for (const t of p.leaf.tombstones()) {
      if (sl.due()) {
        yield;
        sl.reset();
      }
      if (input.tombstones && !input.tombstones(t)) continue;
      const had = byId.get(t.id);
      if (!had || had.seqNo < t.seqNo) byId.set(t.id, { id: t.id, seqNo: t.seqNo, version: t.version });
    }
  }
  return [...byId.values()];
}
