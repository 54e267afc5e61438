/**
 * The collection statistics BM25 reads (Lucene's CollectionStatistics and TermStatistics), for a
 * whole shard searcher: every segment it spans, counting the documents it sees. Queries compile
 * per segment but score with these shard-wide figures, so a document scores the same whatever
 * segment it sits in, before and after merges, and on every copy of the shard.
 */
import type { FieldStats } from '../index/analysis';
import { docFreq } from '../index/columnViews';
import type { StoreView } from '../index/storeView';
import type { SearcherRef } from '../types';

export interface TermStatistics {
  /** Docs with the (text or keyword) field, and the sum of its term counts. */
  field(path: string): FieldStats;
  /** Docs holding `term` in field `path`. */
  docFreq(path: string, term: string): number;
  /** A boolean field as the terms "T"/"F": its field statistics and the docs holding `value`. */
  booleanTerm(path: string, value: boolean): { df: number; stats: FieldStats };
}

const EMPTY: FieldStats = { docCount: 0, sumTotalTermFreq: 0 };

/** The statistics of one segment seen by a searcher (its docs < maxDoc, deleted ones included). */
export function segmentTermStats(store: StoreView, s: SearcherRef): TermStatistics {
  const n = s.maxDoc;
  return {
    field(path) {
      const col = store.column(path);
      return col?.kind === 'text' || col?.kind === 'keyword' ? col.stats(n) : EMPTY;
    },
    docFreq(path, term) {
      const col = store.column(path);
      if (col?.kind === 'text') return docFreq(col.postings(term), n);
      if (col?.kind === 'keyword') {
        const o = col.ordOf(term);
        return o < 0 ? 0 : docFreq(col.postingsOf(o), n);
      }
      return 0;
    },
    booleanTerm(path, value) {
      const col = store.column(path);
      if (col?.kind !== 'numeric') return { df: 0, stats: EMPTY };
      let docCount = 0, sum = 0, df = 0;
      const want = value ? 1 : 0;
      for (let d = 0; d < n; d++) {
        if (!col.has(d)) continue;
        docCount++;
        if (col.isMulti(d)) {
          const vals = new Set(col.numVals(d).map((v) => v.hi));
          sum += vals.size;
          if (vals.has(want)) df++;
        } else {
          sum++;
          if (col.hi[d] === want) df++;
        }
      }
      return { df, stats: { docCount, sumTotalTermFreq: sum } };
    },
  };
}
