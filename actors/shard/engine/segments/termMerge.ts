/**
 * The terms of one field across the source leaves of a write, in code point order (= UTF-8 byte
 * order), each with where it occurs. A leaf's terms are cut into runs of at most RUN terms, each
 * sorted in its own slice of time (a buffer's dictionary is in insertion order; a disk segment's
 * is sorted already and stays one run), then all runs are merged through a heap.
 */
import { compareStrings } from '../base/bits';
import type { KeywordView, PositionList, PostingRef, TextView } from '../index/columnViews';
import { Slicer, type Steps } from './steps';
import { MinHeap } from '../../../wire/heap';

const RUN = 16384;

/** A field's terms in one leaf, with how to read a term's postings by key. */
export interface TermSource {
  terms: string[];
  keys: Int32Array;
  ref(key: number): PostingRef | undefined;
  /** Positions of a term (only called when the field is written with positions). */
  pos?(key: number): PositionList | undefined;
}

/** Disk text views list terms by ordinal without reading postings (see reader's DiskTextView). */
export interface OrdinalTerms {
  forEachTermOrd(fn: (term: string, ord: number) => void): void;
  postingsAt(ord: number): PostingRef | undefined;
  positionsAt?(ord: number): PositionList | undefined;
}

const isOrdinalTerms = (c: object): c is OrdinalTerms => typeof (c as Partial<OrdinalTerms>).postingsAt === 'function';

export function keywordSource(col: KeywordView): TermSource {
  const terms: string[] = [];
  const keys: number[] = [];
  col.forEachTerm((t, o) => {
    terms.push(t);
    keys.push(o);
  });
  return { terms, keys: Int32Array.from(keys), ref: (o) => col.postingsOf(o) };
}

export function textSource(col: TextView): TermSource {
  const terms: string[] = [];
  const keys: number[] = [];
  if (isOrdinalTerms(col)) {
    col.forEachTermOrd((t, o) => {
      terms.push(t);
      keys.push(o);
    });
    return { terms, keys: Int32Array.from(keys), ref: (o) => col.postingsAt(o), pos: (o) => col.positionsAt?.(o) };
  }
  const refs: PostingRef[] = [];
  col.forEachTerm((t, r) => {
    keys.push(terms.length);
    terms.push(t);
    refs.push(r);
  });
  return { terms, keys: Int32Array.from(keys), ref: (i) => refs[i], pos: (i) => col.positions?.(terms[i]) };
}

/** A sorted run of one source: entries [at, end) of `order` (indexes into the source's terms). */
interface Run {
  src: number;
  order: Uint32Array;
  at: number;
}

/** One merged term: its text and, per source leaf, the key it has there (-1 = absent). */
export interface TermGroup {
  term: string;
  keys: Int32Array;
}

/**
 * Calls onGroup for every distinct term of the sources in code point order (the group object is
 * reused); onGroup returns the work it did (postings written), for time slicing.
 */
export function* mergeTerms(sources: Array<TermSource | undefined>, sl: Slicer, onGroup: (g: TermGroup) => number): Steps<void> {
  const runs: Run[] = [];
  for (let s = 0; s < sources.length; s++) {
    const src = sources[s];
    if (!src) continue;
    const { terms } = src;
    if (isSorted(terms)) {
      runs.push({ src: s, order: identity(terms.length), at: 0 });
      continue;
    }
    for (let from = 0; from < terms.length; from += RUN) {
      const order = identity(Math.min(RUN, terms.length - from)).map((i) => i + from);
      order.sort((a, b) => compareStrings(terms[a], terms[b]));
      runs.push({ src: s, order, at: 0 });
      if (sl.dueNow()) {
        yield;
        sl.reset();
      }
    }
  }
  const termOf = (r: Run) => sources[r.src]!.terms[r.order[r.at]];
  const heap = new MinHeap<Run>((a, b) => compareStrings(termOf(a), termOf(b)));
  for (const r of runs) if (r.order.length > 0) heap.push(r);
  const group: TermGroup = { term: '', keys: new Int32Array(sources.length).fill(-1) };
  while (heap.size > 0) {
    const first = heap.peek()!;
    const term = termOf(first);
    group.term = term;
    group.keys.fill(-1);
    while (heap.size > 0 && termOf(heap.peek()!) === term) {
      const r = heap.peek()!;
      group.keys[r.src] = sources[r.src]!.keys[r.order[r.at]];
      r.at++;
      if (r.at < r.order.length) heap.replaceTop(r);
      else heap.pop();
    }
    if (sl.due(1 + onGroup(group))) {
      yield;
      sl.reset();
    }
  }
}

function isSorted(terms: string[]): boolean {
  for (let i = 1; i < terms.length; i++) if (compareStrings(terms[i - 1], terms[i]) >= 0) return false;
  return true;
}

function identity(n: number): Uint32Array {
  const a = new Uint32Array(n);
  for (let i = 0; i < n; i++) a[i] = i;
  return a;
}
