import { allShardsFailed, EsError } from '../wire/esErrors';
import type { EsRequest, EsResponse } from '../wire/rest';
import { parseSearchRequest, withImplicitShardDoc, type SearchRequest } from '../shard/engine';
import { executeSearch, renderSearch, sliceTargets, targetQuery } from './coordinator';
import { contextMissing, mayUse, useContext } from './contextUse';
import { orderedTargets, searchIndices, withAliasFilters } from './indices';
import { indexNames } from './coordinator';
import { keepAliveOrThrow } from './keepAlive';
import { openScroll } from './scrollService';
import type { PagingServices, SearchCall } from './services';
import { checkMaxTermsCount, rewriteTermsLookups, withIndexBoosts } from './searchRewrite';
import { expandCollapse } from './collapseExpand';

/**
 * The search service (ES `TransportSearchAction`): one search, whatever asked for it (a REST
 * request, an `_msearch` item, a reindex's scroll), parsed, authorized and run the same way.
 */

const READ = 'indices:data/read/search';

/** A REST request as a SearchCall. */
export function searchCallOf(req: EsRequest): SearchCall {
  return {
    params: req.params,
    query: req.query,
    body: req.json(),
    text: req.body?.length ? req.body.toString('utf8') : undefined,
    auth: req.auth,
    opaqueId: req.opaqueId,
  };
}

/** Parses and validates one search (ES's texts); throws the 400 before anything runs. */
export function parseSearchCall(call: SearchCall, path?: string): SearchRequest {
  return parseSearchRequest(call.body, call.query, { scroll: call.query.scroll !== undefined, indicesInPath: !!call.params.index, path });
}

/** Runs one parsed search: a PIT search, the first page of a scroll, or a plain search. */
export async function runSearch(s: PagingServices, call: SearchCall, parsed: SearchRequest): Promise<EsResponse> {
  const sr = await rewriteTermsLookups(s, parsed, call.auth);
  if (sr.pit) return pitSearch(s, call, sr);
  if (sr.scrollKeepAliveMs !== undefined) return openScroll(s, call, sr);
  return plainSearch(s, call, sr);
}

async function plainSearch(s: PagingServices, call: SearchCall, sr: SearchRequest): Promise<EsResponse> {
  const indices = await searchIndices(s, call);
  checkMaxTermsCount(sr, indices);
  const targets = withIndexBoosts(s, sr, withAliasFilters(s, call.params.index, orderedTargets(indices, sr.routing)), call.query.ignore_unavailable === 'true');
  const out = await executeSearch(s, { ...sr, checkWindow: 'search' }, targets, { timeoutMs: sr.timeoutMs, onShard: call.onShard, render: {} });
  checkPartial(s, sr, out);
  await expandCollapse(s, sr, out, targets);
  return {
    body: renderSearch(out, sr, indexNames(targets), { restTotalHitsAsInt: sr.restTotalHitsAsInt, noTotal: sr.trackTotalHits === false }),
  };
}

async function pitSearch(s: PagingServices, req: SearchCall, sr: SearchRequest): Promise<EsResponse> {
  const pit = sr.pit!;
  const contextId = s.ids.parsePitId(pit.id);
  // The PIT's indices are authorized before it is used (wherever its owner node runs).
  const st = await s.contextService.state(contextId);
  if (!st || st.kind !== 'pit' || st.status !== 'open' || !mayUse(s, req, st.owner)) throw contextMissing(s, contextId, 'query', req);
  if (s.security) await s.security.authorize(req.auth, READ, st.indices);
  const keepAliveMs = pit.keepAliveMs === undefined ? undefined : keepAliveOrThrow(s, pit.keepAliveMs);
  const h = await useContext(s, req, contextId, 'pit', keepAliveMs);
  try {
    const sort = withImplicitShardDoc(sr.sort, sr.searchAfter);
    const targets = withIndexBoosts(s, sr, sliceTargets(
      h.shards.map((p) => ({ ref: { index: p.index, indexUuid: p.indexUuid, n: p.n }, shardIndex: p.shardIndex, searcher: p.searcher })),
      sr.slice,
      'pit',
    ), false);
    checkMaxTermsCount(sr, [...new Set(h.shards.map((p) => p.index))].map((n) => s.cluster.get(n)).filter((i): i is NonNullable<typeof i> => !!i));
    const out = await executeSearch(s, { ...sr, sort, checkWindow: 'search' }, targets, { timeoutMs: sr.timeoutMs, onShard: req.onShard, render: {} });
    checkPartial(s, sr, out);
    await expandCollapse(s, sr, out, targets);
    await h.ready; // the extension is logged before the answer
    return {
      body: renderSearch(out, sr, indexNames(targets), {
        pitId: s.ids.pitId(h.id),
        restTotalHitsAsInt: sr.restTotalHitsAsInt,
        noTotal: sr.trackTotalHits === false,
      }),
    };
  } finally {
    h.done();
  }
}

/**
 * `allow_partial_search_results=false` (or the cluster's `search.default_allow_partial_results:
 * false`): a search some shard failed is ES's `Partial shards failure` instead of a 200 with
 * `_shards.failures` (AbstractSearchAsyncAction).
 */
function checkPartial(s: PagingServices, sr: SearchRequest, out: { shards: { failed: number; failures?: Array<{ shard: number; index: string | null; node: string; reason: { type: string; reason: string } }> } }): void {
  if (!out.shards.failed) return;
  if (sr.allowPartialSearchResults ?? s.ctx.settings.bool('search.default_allow_partial_results', true)) return;
  const failures = out.shards.failures ?? [];
  const causes = failures.map((f) => new EsError(f.reason.type, 500, f.reason.reason));
  const status = failures.some((f) => f.reason.type === 'no_shard_available_action_exception' || f.reason.type === 'timeout_exception') ? 503 : 500;
  throw new EsError('search_phase_execution_exception', status, 'Partial shards failure', {
    causes: causes.length ? causes : undefined,
    causedBy: causes[0],
    meta: { phase: 'query', grouped: true, failed_shards: failures },
  });
}

/** `_count`: the query on every target shard, the counts added (every shard failing: all shards failed). */
export async function runCount(s: PagingServices, req: Pick<EsRequest, 'params' | 'query' | 'auth'>, sr: SearchRequest): Promise<EsResponse> {
  const indices = await searchIndices(s, req);
  const targets = withAliasFilters(s, req.params.index, orderedTargets(indices, req.query.routing));
  if (sr.minScore !== undefined || sr.terminateAfter !== undefined) {
    // scores or early termination: the count is a size-0 search's exact total (ES counts through a search too)
    const out = await executeSearch(s, { ...sr, size: 0, from: 0, trackTotalHits: true, checkWindow: 'search' }, targets, {});
    const { total, successful, skipped, failed } = out.shards;
    return {
      body: {
        count: out.total?.value ?? 0,
        _shards: { total, successful, skipped, failed, ...(out.shards.failures ? { failures: out.shards.failures } : {}) },
      },
    };
  }
  const res = await Promise.allSettled(targets.map((t) => s.shards.call<number>(t.ref, 'count', { query: targetQuery(sr.query, t) })));
  const ok = res.filter((r) => r.status === 'fulfilled') as PromiseFulfilledResult<number>[];
  if (!ok.length && targets.length) throw allShardsFailed(res.map((r) => (r as PromiseRejectedResult).reason));
  return {
    body: { count: ok.reduce((a, r) => a + r.value, 0), _shards: { total: targets.length, successful: ok.length, skipped: 0, failed: targets.length - ok.length } },
  };
}
