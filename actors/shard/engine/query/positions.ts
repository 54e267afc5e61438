/**
 * Term positions per doc, for phrase, span and interval queries: read from the segment's postings
 * (TextView.positions), or, for a segment written without them (a legacy snapshot image), derived
 * again from the doc's `_source` with the index analyzer, as the buffer would have recorded them.
 * Docs are asked for in ascending order (cursors only move forward).
 */
import { analyze, tokenPositions } from '../index/analysis';
import { postingList, type PositionList, type TextView } from '../index/columnViews';
import { lowerBound } from '../base/bits';
import type { QueryContext } from './qnode';
import { valuesAt } from './fetchFields';

const EMPTY = new Uint32Array(0);

/** One term's postings walked in doc order, with the positions of the current doc. */
export interface TermCursor {
  readonly term: string;
  /** Docs of the term below maxDoc, ascending. */
  readonly docs: Int32Array;
  readonly len: number;
  /** Positions of `doc` (ascending; empty when the term is not in the doc). */
  positionsOf(doc: number): Uint32Array;
  /** The indexed positions, aligned with `docs` (absent when they are derived from `_source`). */
  readonly indexed?: PositionList;
}

/** Positions of the terms of one text field of a segment. */
export class PositionReader {
  private fallbackDoc = -1;
  private fallback = new Map<string, number[]>();

  constructor(private readonly ctx: QueryContext, readonly col: TextView, readonly path: string) {}

  /** A cursor over `term`, or null when the segment has no such term (below maxDoc). */
  cursor(term: string): TermCursor | null {
    const ref = this.col.postings(term);
    if (ref === undefined) return null;
    const p = postingList(ref);
    const len = lowerBound(p.docs, p.len, this.ctx.s.maxDoc);
    if (len === 0) return null;
    const pl = this.col.positions?.(term);
    return pl ? indexedCursor(term, p.docs, len, pl) : this.sourceCursor(term, p.docs, len);
  }

  /** Positions recomputed from `_source` (segments without positions). */
  private sourceCursor(term: string, docs: Int32Array, len: number): TermCursor {
    return {
      term, docs, len,
      positionsOf: (doc) => {
        if (doc !== this.fallbackDoc) this.analyzeDoc(doc);
        const ps = this.fallback.get(term);
        return ps ? Uint32Array.from(ps) : EMPTY;
      },
    };
  }

  private analyzeDoc(doc: number): void {
    this.fallbackDoc = doc;
    this.fallback = new Map();
    const values = sourceValues(this.ctx, doc, this.path);
    const tokens: string[] = [];
    const ends: number[] = [];
    for (const v of values) {
      for (const t of analyze(String(v))) tokens.push(t);
      ends.push(tokens.length);
    }
    const pos = tokenPositions(tokens.length, ends);
    tokens.forEach((t, i) => {
      const l = this.fallback.get(t);
      if (l) l.push(pos[i]);
      else this.fallback.set(t, [pos[i]]);
    });
  }
}

function indexedCursor(term: string, docs: Int32Array, len: number, pl: PositionList): TermCursor {
  let i = 0;
  return {
    term, docs, len, indexed: pl,
    positionsOf(doc: number): Uint32Array {
      while (i < len && docs[i] < doc) i++;
      if (i >= len || docs[i] !== doc) return EMPTY;
      return pl.pos.subarray(pl.starts[i], pl.starts[i + 1]);
    },
  };
}

/** The values a text field indexed for a doc: at its path in `_source`, or at its parent's for a multi-field. */
function sourceValues(ctx: QueryContext, doc: number, path: string): unknown[] {
  let src: unknown;
  try {
    src = JSON.parse(ctx.store.source(doc));
  } catch {
    return [];
  }
  const own = valuesAt(src, path).filter((v) => v !== null && typeof v !== 'object');
  if (own.length) return own;
  const dot = path.lastIndexOf('.');
  const parent = dot > 0 ? ctx.store.mapping.field(path.slice(0, dot)) : undefined;
  return parent?.fields?.has(path.slice(dot + 1)) ? sourceValues(ctx, doc, path.slice(0, dot)) : [];
}
