/**
 * Keyword and text columns: the merged, sorted dictionary with its postings (postingsWriter.ts),
 * then the per-doc sections:
 * - keyword: `ords` i32 per doc (sorted-dictionary ordinal of the smallest value, -1 = none),
 *   `m.docs` i32 + `m.start` u32 + `m.ords` i32 for docs with several values;
 * - text: `lens` u32 per doc (field length + 1, 0 = absent), written first (impacts need it);
 * - both: `cum.docs` and `cum.sum` f64, running sums every 1024 docs for stats over a prefix.
 */
import type { KeywordView, TextView } from '../index/columnViews';
import type { SegmentFileWriter } from './fileWriter';
import { Sec, type SegmentFieldMeta } from './format';
import type { LeafPlan } from './leaf';
import { cumulative, PostingsWriter } from './postingsWriter';
import { keywordSource, mergeTerms, textSource, type TermSource } from './termMerge';
import { pause, Slicer, type Steps } from './steps';

/** A written field: its meta, and whether its dictionary is UTF-16. */
export interface WrittenField {
  meta: SegmentFieldMeta;
  utf16: boolean;
}

export function* writeKeyword(
  w: SegmentFileWriter, field: number, cols: Array<KeywordView | undefined>, plans: LeafPlan[], maxDoc: number, sl: Slicer,
): Steps<WrittenField | undefined> {
  if (!plans.some((p, l) => cols[l] && anyKept(p, (d) => d < cols[l]!.ords.length && cols[l]!.ords[d] >= 0))) return undefined;
  const sources: Array<TermSource | undefined> = cols.map((c) => (c ? keywordSource(c) : undefined));
  const ordMaps = cols.map((c) => (c ? new Int32Array(c.numTerms).fill(-1) : undefined));
  const pw = new PostingsWriter(w, field, null, false);
  yield* mergeTerms(sources, sl, (g) => {
    pw.reset();
    for (let l = 0; l < plans.length; l++) {
      const k = g.keys[l];
      if (k >= 0) pw.append(sources[l]!.ref(k)!, plans[l], undefined);
    }
    const t = pw.finishTerm(g.term);
    if (t >= 0) for (let l = 0; l < plans.length; l++) if (g.keys[l] >= 0) ordMaps[l]![g.keys[l]] = t;
    return pw.size;
  });
  const utf16 = pw.finish();
  yield* pause(sl);
  const ords = new Int32Array(maxDoc).fill(-1);
  const mDocs: number[] = [];
  const mStart: number[] = [0];
  const mOrds: number[] = [];
  for (let l = 0; l < plans.length; l++) {
    const col = cols[l];
    if (!col) continue;
    const map = plans[l].map;
    const om = ordMaps[l]!;
    for (let d = 0; d < map.length; d++) {
      const nd = map[d];
      if (nd < 0 || d >= col.ords.length || col.ords[d] < 0) continue;
      const multi = col.multiOrds(d);
      if (multi) {
        const mapped = multi.map((o) => om[o]).sort((a, b) => a - b);
        ords[nd] = mapped[0];
        mDocs.push(nd);
        for (const o of mapped) mOrds.push(o);
        mStart.push(mOrds.length);
      } else ords[nd] = om[col.ords[d]];
      if (ords[nd] < 0) throw new Error(`field ${field}: doc ${d} has a value missing from the dictionary`);
      if (sl.due()) {
        yield;
        sl.reset();
      }
    }
  }
  const sec = (part: string) => Sec.field(field, part);
  yield* pause(sl);
  w.section(sec('ords'), 'i32', ords);
  if (mDocs.length) {
    w.section(sec('m.docs'), 'i32', Int32Array.from(mDocs));
    w.section(sec('m.start'), 'u32', Uint32Array.from(mStart));
    w.section(sec('m.ords'), 'i32', Int32Array.from(mOrds));
  }
  yield* pause(sl);
  const perDoc = new Uint32Array(maxDoc);
  for (let d = 0; d < maxDoc; d++) perDoc[d] = ords[d] >= 0 ? 1 : 0;
  for (let i = 0; i < mDocs.length; i++) perDoc[mDocs[i]] = mStart[i + 1] - mStart[i];
  const docs = cumulative(maxDoc, (d) => (ords[d] >= 0 ? 1 : 0));
  const sum = cumulative(maxDoc, (d) => perDoc[d]);
  w.section(sec('cum.docs'), 'f64', docs);
  w.section(sec('cum.sum'), 'f64', sum);
  yield* pause(sl);
  let docCount = 0, sumAll = 0;
  for (let d = 0; d < maxDoc; d++) {
    docCount += ords[d] >= 0 ? 1 : 0;
    sumAll += perDoc[d];
  }
  return { meta: { type: 'keyword', kind: 'keyword', docCount, sumTotalTermFreq: sumAll, terms: pw.count }, utf16 };
}

export function* writeText(
  w: SegmentFileWriter, field: number, cols: Array<TextView | undefined>, plans: LeafPlan[], maxDoc: number, sl: Slicer,
): Steps<WrittenField | undefined> {
  const lens = new Uint32Array(maxDoc);
  let present = false;
  for (let l = 0; l < plans.length; l++) {
    const col = cols[l];
    if (!col) continue;
    const map = plans[l].map;
    for (let d = 0; d < map.length; d++) {
      const nd = map[d];
      if (nd < 0 || !col.has(d)) continue;
      lens[nd] = col.lens[d];
      present = true;
      if (sl.due()) {
        yield;
        sl.reset();
      }
    }
  }
  if (!present) return undefined;
  const sec = (part: string) => Sec.field(field, part);
  yield* pause(sl);
  w.section(sec('lens'), 'u32', lens);
  yield* pause(sl);
  const sources: Array<TermSource | undefined> = cols.map((c) => (c ? textSource(c) : undefined));
  const positions = sources.every((s) => !s || s.terms.length === 0 || (s.pos !== undefined && s.pos(s.keys[0]) !== undefined))
    && sources.some((s) => s && s.terms.length > 0);
  const pw = new PostingsWriter(w, field, lens, positions);
  yield;
  sl.reset();
  yield* mergeTerms(sources, sl, (g) => {
    pw.reset();
    for (let l = 0; l < plans.length; l++) {
      const k = g.keys[l];
      if (k < 0) continue;
      const src = sources[l]!;
      const ref = src.ref(k);
      if (ref !== undefined) pw.append(ref, plans[l], positions ? src.pos!(k) : undefined);
    }
    pw.finishTerm(g.term);
    return pw.size;
  });
  const utf16 = pw.finish();
  yield* pause(sl);
  w.section(sec('cum.docs'), 'f64', cumulative(maxDoc, (d) => (lens[d] > 1 ? 1 : 0)));
  w.section(sec('cum.sum'), 'f64', cumulative(maxDoc, (d) => (lens[d] > 0 ? lens[d] - 1 : 0)));
  yield* pause(sl);
  let docCount = 0, sum = 0;
  for (let d = 0; d < maxDoc; d++) {
    if (lens[d] > 1) docCount++;
    if (lens[d] > 0) sum += lens[d] - 1;
  }
  return { meta: { type: 'text', kind: 'text', docCount, sumTotalTermFreq: sum, terms: pw.count, ...(positions ? { positions: true } : {}) }, utf16 };
}

function anyKept(p: LeafPlan, has: (d: number) => boolean): boolean {
  for (let d = 0; d < p.map.length; d++) if (p.map[d] >= 0 && has(d)) return true;
  return false;
}
