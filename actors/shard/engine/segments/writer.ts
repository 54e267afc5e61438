/**
 * The segment writer: `writeSegmentSteps` (a generator the main thread drives in slices of a few
 * milliseconds, see steps.ts) and `writeSegment` (synchronous, for workers). Both write
 * `<name>.seg.tmp`, fsync it, rename it to `<name>.seg` and fsync the directory: a crash at any
 * moment leaves no file or a complete one under the final name (a leftover .tmp is garbage).
 *
 * @example
 * // main thread: a flush that never holds the event loop more than a slice
 * const meta = await runSteps(writeSegmentSteps(dir, 'seg_7', { leaves: [{ leaf: buffer }] }));
 * // worker: all at once
 * const meta = writeSegment(dir, 'seg_8', { leaves: [{ leaf: a }, { leaf: b, keep }] });
 */
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { crashPoint, crashPointSync } from '../../../wire/crashPoint';
import type { KeywordView, NumericView, TextView } from '../index/columnViews';
import { SegmentFileWriter, publishAsync, publishSync } from './fileWriter';
import { BLOOM_K } from './strings';
import { FORMAT_VERSION, type ColumnKind, type Footer, type SegmentFieldMeta, type SegmentMeta } from './format';
import { planLeaves, type WriteInput } from './leaf';
import { Slicer, runSteps, runStepsSync, type Steps } from './steps';
import { writeDocs } from './writeDocs';
import { writeNumeric } from './writeNumeric';
import { writeKeyword, writeText } from './writeTerms';

export interface WriteOptions {
  /** Steps: pause after about this much work (ms); default 5. */
  sliceMs?: number;
  /** Called after every write with its byte count (merge IO throttling). */
  onWrite?: (bytes: number) => void;
}

/** Final and temporary file names of a segment. */
export const segmentFile = (dir: string, name: string): string => join(dir, `${name}.seg`);
export const tmpFile = (dir: string, name: string): string => join(dir, `${name}.seg.tmp`);

/**
 * Writes a segment in steps: yields `undefined` after every few ms of work and a Promise while
 * an fsync runs on the libuv pool. Drive it with {@link runSteps}. Abandoning the generator
 * (`return()`) or an error deletes the .tmp.
 */
export function writeSegmentSteps(dir: string, name: string, input: WriteInput, opts: WriteOptions = {}): Steps<SegmentMeta> {
  return writeCore(dir, name, input, opts, false);
}

/** Writes a segment synchronously (workers, tools). */
export function writeSegment(dir: string, name: string, input: WriteInput, opts: WriteOptions = {}): SegmentMeta {
  return runStepsSync(writeCore(dir, name, input, opts, true));
}

/** `writeSegmentSteps` driven on the main thread. */
export function writeSegmentAsync(dir: string, name: string, input: WriteInput, opts: WriteOptions = {}): Promise<SegmentMeta> {
  return runSteps(writeSegmentSteps(dir, name, input, opts));
}

function* writeCore(dir: string, name: string, input: WriteInput, opts: WriteOptions, sync: boolean): Steps<SegmentMeta> {
  const sl = new Slicer(sync ? Infinity : opts.sliceMs ?? 5);
  const tmp = tmpFile(dir, name);
  const w = new SegmentFileWriter(tmp, opts.onWrite);
  let published = false;
  try {
    const { plans, maxDoc } = planLeaves(input);
    yield;
    sl.reset();
    const docs = yield* writeDocs(w, plans, maxDoc, input, sl);
    // kill -9 tests (wire/crashPoint.ts): the .tmp holds the docs, not yet the fields
    if (sync) crashPointSync(isMainThread ? 'flush.tmp' : 'merge.tmp');
    else yield crashPoint(isMainThread ? 'flush.tmp' : 'merge.tmp');
    const utf16 = [...docs.utf16];
    const paths = unionPaths(input);
    const fields: Record<string, SegmentFieldMeta> = {};
    const order: string[] = [];
    for (const path of paths) {
      const cols = plans.map((p) => p.leaf.column(path));
      const kind = kindOf(path, cols.map((c) => c?.kind));
      const i = order.length;
      let meta: SegmentFieldMeta | undefined;
      if (kind === 'numeric') meta = yield* writeNumeric(w, i, cols as Array<NumericView | undefined>, plans, maxDoc, sl);
      else {
        const f = kind === 'keyword'
          ? yield* writeKeyword(w, i, cols as Array<KeywordView | undefined>, plans, maxDoc, sl)
          : yield* writeText(w, i, cols as Array<TextView | undefined>, plans, maxDoc, sl);
        if (f?.utf16) utf16.push(`f${i}.dict.offs`);
        meta = f?.meta;
      }
      if (!meta) continue;
      fields[path] = meta;
      order.push(path);
      yield;
      sl.reset();
    }
    const meta: SegmentMeta = {
      name, version: FORMAT_VERSION, maxDoc, minSeqNo: docs.minSeqNo, maxSeqNo: docs.maxSeqNo, sizeBytes: 0,
      sourceBytes: docs.sourceBytes, tombstones: docs.tombstones, fields,
    };
    // sizeBytes is known only once the footer is written: the footer's copy says 0, the reader fills it from the file size
    const footer: Footer = { meta, sections: w.sections, fields: order, ...(utf16.length ? { utf16 } : {}), bloomK: BLOOM_K };
    if (sync) {
      meta.sizeBytes = w.finishSync(footer);
      publishSync(tmp, segmentFile(dir, name));
    } else {
      yield w.finishAsync(footer).then((n) => void (meta.sizeBytes = n));
      yield publishAsync(tmp, segmentFile(dir, name));
    }
    published = true;
    return meta;
  } finally {
    if (!published) w.abort();
  }
}

/** Every field path of the leaves, in first-seen order. */
function unionPaths(input: WriteInput): string[] {
  const seen = new Set<string>();
  for (const { leaf } of input.leaves) for (const p of leaf.fieldPaths()) seen.add(p);
  return [...seen];
}

function kindOf(path: string, kinds: Array<ColumnKind | undefined>): ColumnKind {
  const set = new Set(kinds.filter((k) => k !== undefined));
  if (set.size !== 1) throw new Error(`field [${path}] has columns of kinds ${[...set].join(', ')} in the leaves of one write`);
  return [...set][0]!;
}
