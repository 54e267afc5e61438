/**
 * A search over a shard searcher that spans several segments (Lucene's IndexSearcher over its
 * leaves): the query phase runs on each segment with shard-wide scoring statistics, the segments'
 * top hits are merged by the request's order (ties by doc id: segments hold adjacent doc id
 * ranges, so segment order is doc order), totals add up, and one set of aggregators collects
 * every segment's matches into one partial.
 */
import type { DocValuesReader, FieldType, SearcherRef, ShardQueryRequest, ShardQueryResult } from '../types';
import type { FieldStats } from '../index/analysis';
import { docFreq, type PostingRef } from '../index/columnViews';
import { executeCount, executeQuery, type QueryOptions } from '../query/search';
import type { TermStatistics } from '../query/termStats';
import { reduceHits } from '../query/reduce';
import { docRange } from '../query/slice';
import { createAggregators } from '../aggregations/aggs';
import { profiledAggregators } from '../aggregations/aggProfile';
import { searchProfile } from '../query/searchProfile';
import type { Leaf } from './leaf';
import { finishLeafHits, leafRequest } from './leafOptions';
import { aggHooks } from '../query/aggHooks';

/** A segment as one searcher sees it: its docs with seqNo <= the searcher's, its deletions up to it. */
export interface LeafSearcher {
  leaf: Leaf;
  /** `maxDoc`: the segment's docs the searcher may see; `seqNo`: the searcher's. */
  s: SearcherRef;
}

const EMPTY: FieldStats = { docCount: 0, sumTotalTermFreq: 0 };

/** Docs of a segment hidden from the searcher by deletions (all below its maxDoc). */
function hidden(ls: LeafSearcher): Int32Array {
  return ls.leaf.deletionsUpTo(ls.s.seqNo).docs;
}

function contains(ref: PostingRef | undefined, doc: number): boolean {
  if (ref === undefined) return false;
  if (typeof ref === 'number') return ref === doc;
  let lo = 0, hi = ref.len;
  while (lo < hi) {
    const m = (lo + hi) >>> 1;
    const d = ref.docs[m];
    if (d === doc) return true;
    if (d < doc) lo = m + 1;
    else hi = m;
  }
  return false;
}

function leafFieldStats({ leaf, s }: LeafSearcher, path: string, gone: Int32Array): FieldStats {
  const col = leaf.column(path);
  if (col?.kind !== 'text' && col?.kind !== 'keyword') return EMPTY;
  let { docCount, sumTotalTermFreq } = col.stats(s.maxDoc);
  for (const d of gone) {
    if (col.kind === 'text') {
      const len = d < col.lens.length ? col.lens[d] : 0;
      if (len > 1) docCount--;
      if (len > 0) sumTotalTermFreq -= len - 1;
    } else if (d < col.ords.length && col.ords[d] >= 0) {
      docCount--;
      sumTotalTermFreq -= col.multiOrds(d)?.length ?? 1;
    }
  }
  return { docCount, sumTotalTermFreq };
}

function leafDocFreq({ leaf, s }: LeafSearcher, path: string, term: string, gone: Int32Array): number {
  const col = leaf.column(path);
  let ref: PostingRef | undefined;
  if (col?.kind === 'text') ref = col.postings(term);
  else if (col?.kind === 'keyword') {
    const o = col.ordOf(term);
    ref = o < 0 ? undefined : col.postingsOf(o);
  }
  let n = docFreq(ref, s.maxDoc);
  if (n === 0) return 0;
  for (const d of gone) if (contains(ref, d)) n--;
  return n;
}

/**
 * BM25 statistics of a whole searcher: the documents it sees, over every segment. Counting only
 * visible documents (Lucene also counts deleted ones until a merge drops them) makes a score the
 * same on every copy and before and after merges.
 */
export function shardTermStats(leaves: readonly LeafSearcher[]): TermStatistics {
  let hiddenDocs: Int32Array[] | undefined;
  const gone = (i: number) => (hiddenDocs ??= leaves.map(hidden))[i];
  const fields = new Map<string, FieldStats>();
  const dfs = new Map<string, number>();
  return {
    field(path) {
      let f = fields.get(path);
      if (!f) {
        f = { docCount: 0, sumTotalTermFreq: 0 };
        leaves.forEach((ls, i) => {
          const x = leafFieldStats(ls, path, gone(i));
          f!.docCount += x.docCount;
          f!.sumTotalTermFreq += x.sumTotalTermFreq;
        });
        fields.set(path, f);
      }
      return f;
    },
    docFreq(path, term) {
      const key = `${path}\u0000${term}`;
      let n = dfs.get(key);
      if (n === undefined) {
        n = 0;
        leaves.forEach((ls, i) => (n! += leafDocFreq(ls, path, term, gone(i))));
        dfs.set(key, n);
      }
      return n;
    },
    booleanTerm(path, value) {
      let docCount = 0, sum = 0, df = 0;
      const want = value ? 1 : 0;
      for (const { leaf, s } of leaves) {
        const col = leaf.column(path);
        if (col?.kind !== 'numeric') continue;
        const deletes = leaf.deletedCount(s) > 0;
        for (let d = 0; d < s.maxDoc; d++) {
          if (!col.has(d) || (deletes && !leaf.visible(s, d))) continue;
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
      }
      return { df, stats: { docCount, sumTotalTermFreq: sum } };
    },
  };
}

/** Aggregations read the segment being collected: one reader that follows the search. */
class SegmentSwitch implements DocValuesReader {
  constructor(public leaf: Leaf) {}
  get index(): string {
    return this.leaf.index;
  }
  get mapping() {
    return this.leaf.mapping;
  }
  fieldType(field: string): FieldType | undefined {
    return this.leaf.fieldType(field);
  }
  values(field: string, doc: number) {
    return this.leaf.values(field, doc);
  }
}

function nonEmpty(all: readonly LeafSearcher[]): readonly LeafSearcher[] {
  const kept = all.filter((l) => l.s.maxDoc > 0);
  return kept.length ? kept : all.slice(0, 1);
}

/** Whether the sort walks doc order forward (then a page fills from the first segments). */
const docOrderAsc = (req: ShardQueryRequest) => {
  const p = req.sort?.[0];
  return !!p && (p.field === '_doc' || p.field === '_shard_doc') && p.order !== 'desc';
};

/**
 * The query phase over a searcher's segments: the same result as one segment holding all their
 * docs. Hits carry shard doc ids (`doc` = the doc's seqNo). `leaves` is never empty (the active
 * buffer is always one, so request errors are thrown even on an empty shard).
 */
export function queryLeaves(given: readonly LeafSearcher[], req: ShardQueryRequest, opts: QueryOptions = {}, seqNo = Infinity): ShardQueryResult {
  // Segments the searcher sees no doc of (the empty buffer after a flush) are left out: one segment
  // then answers alone, with no merge of per-segment pages. At least one stays, for request errors.
  const leaves = given.length > 1 && given.some((l) => l.s.maxDoc === 0) ? nonEmpty(given) : given;
  const from = Math.max(0, req.from ?? 0);
  const size = Math.max(0, req.size ?? 10);
  const k = from + size;
  const stats = opts.stats ?? shardTermStats(leaves);
  let slice = req.slice;
  // A PIT slice without a field is a range of shard doc ids (the searcher's [0, seqNo]).
  if (slice && slice.mode === 'pit' && slice.field === undefined && slice.max > 1) {
    slice = { ...slice, docIdRange: docRange(Math.max(0, Math.floor(seqNo) + 1), slice.id, slice.max) };
  }
  const reader = new SegmentSwitch(leaves[0]?.leaf as Leaf);
  const ah = aggHooks();
  const started = process.hrtime.bigint();
  const profiled = req.profile && req.aggs && !opts.collectAggs ? profiledAggregators(req.aggs, reader, opts.budget, ah.hooks, leaves.length) : null;
  const aggregators = profiled ?? (req.aggs && !opts.collectAggs ? createAggregators(req.aggs, reader, opts.budget, ah.hooks) : null);
  const profile = (r: ShardQueryResult): ShardQueryResult => {
    if (req.profile) r.profile = { searches: [searchProfile(req, Number(process.hrtime.bigint() - started))], aggregations: profiled?.profile() ?? [] };
    return r;
  };
  const fill = docOrderAsc(req);
  let got = 0;
  const results: Array<{ shardIndex: number; result: ShardQueryResult }> = [];
  // collapse and rescore apply to the shard's merged hits (leafOptions.ts)
  const leafReq = leafRequest(req, leaves.length, leaves[0]?.leaf.settings().maxResultWindow ?? 10_000);
  const depth = Math.max(k, leafReq.size ?? 0);
  const local = new Map<string, number>();
  leaves.forEach(({ leaf, s }, i) => {
    reader.leaf = leaf;
    // doc order: once the page is full, later segments only count
    const want = fill ? Math.max(0, k - got) : depth;
    // the window is checked once, on the first segment (in ES's order: after the query, sort and slice)
    const r = executeQuery(leaf, s, { ...leafReq, from: 0, size: want, checkWindow: i === 0 ? req.checkWindow : undefined, ...(slice ? { slice } : {}) }, {
      ...opts,
      stats,
      ...(aggregators ? { aggregate: (d: number) => aggregators.collect(d), aggBind: ah.bind } : {}),
    });
    for (const h of r.hits) {
      const d = leaf.docId(h.doc);
      if (leafReq !== req) local.set(`${i}:${d}`, h.doc);
      h.doc = d;
    }
    got += r.hits.length;
    results.push({ shardIndex: i, result: r });
  });
  if (results.length === 1) {
    // one segment: its page is the shard's (from applied here, as the merge would)
    const r = results[0].result;
    if (from > 0) r.hits = r.hits.slice(from);
    if (aggregators) r.aggs = aggregators.partial();
    return profile(r);
  }
  const whole = !!req.collapse || !!req.rescore?.length;
  const all = results.reduce((n, r) => n + r.result.hits.length, 0);
  const merged = reduceHits(results, { sort: req.sort, from: whole ? 0 : from, size: whole ? all : size, trackTotalHits: req.trackTotalHits });
  const page = whole
    ? finishLeafHits(merged.hits, (h) => local.get(`${h.shardIndex}:${h.doc}`)!, leaves, req, stats)
    : { hits: merged.hits.map(({ shardIndex: _s, ...h }) => h) };
  const out: ShardQueryResult = {
    totalHits: merged.total ? merged.total.value : null,
    totalRelation: merged.total?.relation ?? 'eq',
    maxScore: page.maxScore !== undefined ? page.maxScore : merged.maxScore,
    hits: page.hits,
  };
  if (aggregators) out.aggs = aggregators.partial();
  else if (opts.collectAggs && req.aggs) out.aggs = results[results.length - 1]?.result.aggs;
  return profile(out);
}

/** Docs matching `query` over a searcher's segments. */
export function countLeaves(leaves: readonly LeafSearcher[], query?: unknown): number {
  let n = 0;
  for (const { leaf, s } of leaves) n += executeCount(leaf, s, query);
  return n;
}
