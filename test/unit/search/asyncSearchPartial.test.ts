/**
 * Partial results of a running async search (issue 22 item 1): every `batched_reduce_size` shard
 * answers, the shards answered so far are reduced (totals, aggregations through the engine's own
 * aggregators), and the running response shows them, as ES's partial reduces do.
 */
import { createAggregators } from '../../../actors/shard/engine/aggregations/aggs';
import { parseSearchRequest } from '../../../actors/shard/engine';
import type { DocValuesReader, FieldType } from '../../../actors/shard/engine/types';
import type { QueryPageHead } from '../../../actors/shard/pageCodec';
import { parseJson, stringify } from '../../../actors/wire/json';
import { partialReducer, runningResponse, type PartialResult } from '../../../actors/search/asyncSearchPartial';
import type { Progress } from '../../../actors/contexts/asyncSearches';

const MAPPING: Record<string, FieldType> = { tag: 'keyword', n: 'long' };
const reader = (docs: Array<Record<string, unknown>>): DocValuesReader => ({
  fieldType: (f) => MAPPING[f],
  values: (f, doc) => (docs[doc]?.[f] === undefined ? [] : [docs[doc][f] as string | number]),
});
const AGGS = { tags: { terms: { field: 'tag' } }, top: { max: { field: 'n' } } };

/** One shard's query answer: its docs' aggregation partial (through JSON, as over NATS) and its total. */
function head(docs: Array<Record<string, unknown>>): QueryPageHead {
  const a = createAggregators(AGGS, reader(docs));
  docs.forEach((_, i) => a.collect(i));
  return { searcher: { maxDoc: docs.length, seqNo: 0 } as QueryPageHead['searcher'], totalHits: docs.length, totalRelation: 'eq', maxScore: null, aggs: parseJson(stringify(a.partial())) };
}

const request = (query: Record<string, string> = {}) => parseSearchRequest({ size: 0, aggs: AGGS }, query, { scroll: false, indicesInPath: true });
const shard = (i: number) => head([{ tag: i % 2 ? 'odd' : 'even', n: i }, { tag: 'all', n: 10 * i }]);

describe('partial reduces of a running async search', () => {
  it('reduces every batch of shard answers, never the last one, and shows it while running', () => {
    const progress: Progress & { partial?: PartialResult } = { total: 0, successful: 0, failed: 0 };
    const onShard = partialReducer(request(), 2, progress, 65_536);
    onShard(true, 6, shard(1));
    expect(progress.partial).toBeUndefined();
    onShard(true, 6, shard(2));
    expect(progress.partial).toEqual({
      reduces: 1,
      total: { value: 4, relation: 'eq' },
      aggregations: {
        tags: { doc_count_error_upper_bound: 0, sum_other_doc_count: 0, buckets: [{ key: 'all', doc_count: 2 }, { key: 'even', doc_count: 1 }, { key: 'odd', doc_count: 1 }] },
        top: { value: 20 },
      },
    });
    onShard(false, 6);
    onShard(true, 6, shard(3));
    expect(progress.partial!.reduces).toBe(1); // 3 answers: no new batch yet
    onShard(true, 6, shard(4));
    expect(progress.partial).toMatchObject({ reduces: 2, total: { value: 8 }, aggregations: { top: { value: 40 } } });
    expect(progress).toMatchObject({ total: 6, successful: 4, failed: 1 });
    onShard(true, 6, shard(5));
    expect(progress.partial!.reduces).toBe(2); // the last answer is the final reduce's
    const shown = JSON.parse(`{${runningResponse(progress, Date.now())}}`).response;
    expect(shown).toMatchObject({ num_reduce_phases: 2, _shards: { total: 6, successful: 5, skipped: 0, failed: 1 }, hits: { total: { value: 8, relation: 'eq' }, max_score: null, hits: [] } });
    expect(shown.aggregations.top).toEqual({ value: 40 });
  });

  it('names aggregations with their type under typed_keys, and shows nothing reduced before the first batch', () => {
    const progress: Progress & { partial?: PartialResult } = { total: 0, successful: 0, failed: 0 };
    const onShard = partialReducer(request({ typed_keys: 'true' }), 2, progress, 65_536);
    const before = JSON.parse(`{${runningResponse(progress, Date.now())}}`).response;
    expect(before).toMatchObject({ num_reduce_phases: 0, hits: { total: { value: 0, relation: 'gte' }, hits: [] } });
    expect(before.aggregations).toBeUndefined();
    onShard(true, 3, shard(1));
    onShard(true, 3, shard(2));
    expect(Object.keys(progress.partial!.aggregations!).sort()).toEqual(['max#top', 'sterms#tags']);
  });
});
