/**
 * What the shard adds to its top hits beyond ids, scores and sort values: `matched_queries`
 * (matchedQueries.ts) and `fields` (docvalue_fields / fields, fetchFields.ts).
 */
import type { ShardHit, ShardQueryRequest } from '../types';
import { addMatchedQueries } from './matchedQueries';
import { addFetchFields } from './fetchFields';
import { addNestedInnerHits } from './nested';
import type { QueryContext } from './qnode';

/** Decorates the page's hits as the request asks. */
export function finishHits(ctx: QueryContext, req: ShardQueryRequest, hits: ShardHit[]): void {
  if (!hits.length) return;
  addMatchedQueries(ctx, hits, req.namedQueriesScore === true);
  addNestedInnerHits(ctx, hits);
  if (req.docvalueFields?.length || req.fields?.length) addFetchFields(ctx, req, hits);
}
