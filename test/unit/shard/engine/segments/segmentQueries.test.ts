/**
 * The engine's query phase (match top-k with impacts, term/range filters, sorts, aggregations)
 * over a disk segment gives what it gives over the buffer the segment was written from. The
 * deletions stay the buffer's (the shard engine keeps them beside the segments).
 */
import { join } from 'node:path';
import type { ShardQueryRequest } from '../../../../../actors/shard/engine';
import type { IndexBuffer } from '../../../../../actors/shard/engine/index/indexBuffer';
import { executeQuery } from '../../../../../actors/shard/engine/query/search';
import { openSegment, SegmentCache, writeSegment, type DiskSegment } from '../../../../../actors/shard/engine/segments';
import { diskStoreView } from './diskStoreView';
import { randomStore, storeLeaf, tempDir } from './segmentFixture';

let tmp: ReturnType<typeof tempDir>;
let store: IndexBuffer;
let seg: DiskSegment;
beforeAll(() => {
  tmp = tempDir();
  const shard = randomStore(11, 4000, { updates: 0.15, deletes: 0.1 });
  store = shard.activeBuffer();
  writeSegment(tmp.dir, 's', { leaves: [{ leaf: storeLeaf(shard) }] });
  // a small cache: sections and postings come and go while queries run
  seg = openSegment(join(tmp.dir, 's.seg'), new SegmentCache({ maxBytes: 256 << 10 }));
});
afterAll(() => {
  seg.close();
  tmp.cleanup();
});

const req = (r: Partial<ShardQueryRequest>): ShardQueryRequest => ({ from: 0, size: 10, trackTotalHits: true, shardIndex: 0, ...r });

const cases: Array<[string, Partial<ShardQueryRequest>]> = [
  ['match top-10, no total (block-max scoring)', { query: { match: { title: 'alpha bravo zulu' } }, trackTotalHits: false }],
  ['match top-10 with totals', { query: { match: { title: { query: 'echo über', operator: 'or' } } } }],
  ['match all terms', { query: { match: { title: { query: 'alpha bravo', operator: 'and' } } }, size: 50 }],
  ['match on a long text field', { query: { match: { body: 'kilo lima ζήτα' } }, size: 20 }],
  ['term on a keyword', { query: { term: { tag: 'blue' } }, size: 100 }],
  ['terms on a keyword, astral', { query: { terms: { tag: ['\u{1F600}', 'be', 'b\u00e9'] } }, size: 100 }],
  ['prefix on a keyword', { query: { prefix: { tag: 'b' } }, size: 30 }],
  ['range on a long with bigints', { query: { range: { n: { gte: 0 } } }, sort: [{ field: 'n', order: 'desc' }], size: 30 }],
  ['sort on a date', { sort: [{ field: 'ts', order: 'asc' }], size: 40 }],
  ['sort on date_nanos with multi values', { sort: [{ field: 'ns', order: 'desc', mode: 'max' }], size: 40 }],
  ['sort on a keyword', { sort: [{ field: 'tag', order: 'asc' }], size: 40 }],
  ['bool with exists and filter', { query: { bool: { must: [{ match: { title: 'delta' } }], filter: [{ exists: { field: 'body' } }], must_not: [{ term: { b: true } }] } } }],
  ['terms and stats aggregations', { size: 0, aggs: { tags: { terms: { field: 'tag', size: 20 } }, avg_d: { avg: { field: 'd' } }, max_n: { max: { field: 'n' } } } }],
  ['_doc order scroll page', { sort: [{ field: '_doc', order: 'asc' }], size: 1000 }],
  // positions (issue 24): the buffer's written to disk and read back
  ['match_phrase', { query: { match_phrase: { body: 'alpha bravo' } }, size: 20 }],
  ['sloppy match_phrase over values 100 apart', { query: { match_phrase: { body: { query: 'kilo alpha', slop: 120 } } }, size: 20 }],
  ['match_phrase_prefix', { query: { match_phrase_prefix: { title: 'echo f' } }, size: 20 }],
];

describe('queries over a disk segment', () => {
  it.each(cases)('%s: same hits, scores, sorts and aggregations as the buffer', (_name, r) => {
    const s = { maxDoc: store.maxDoc, seqNo: store.maxSeqNo };
    const want = executeQuery(store, s, req(r));
    expect(want.hits.length > 0 || want.aggs !== undefined).toBe(true);
    const got = executeQuery(diskStoreView(seg, store), s, req(r));
    expect(got).toEqual(want);
  });

  it('holds for a searcher that sees only the first docs of the segment', () => {
    const s = { maxDoc: 2500, seqNo: store.seqNos[2499] };
    for (const [, r] of cases) expect(executeQuery(diskStoreView(seg, store), s, req(r))).toEqual(executeQuery(store, s, req(r)));
  });
});
