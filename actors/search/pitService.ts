import { asEsError, EsError, toErrorBody } from '../wire/esErrors';
import type { EsRequest } from '../wire/rest';
import type { SearcherRef } from '../shard/engine/types';
import { mayUse, requireLog } from './contextUse';
import { checkContextQuota } from './contextQuota';
import { orderedTargets, refuseFilteredAliases, searchIndices } from './indices';
import { keepAliveOrThrow, parseKeepAlive } from './keepAlive';
import type { PagingServices } from './services';

/**
 * Point in time contexts (ES `TransportOpenPointInTimeAction`, `TransportClosePointInTimeAction`):
 * opening pins the current searcher of every shard, O(1) each; searches through a PIT run in the
 * search service.
 */

const OPEN = 'indices:data/read/open_point_in_time';

/** A PIT just opened: its id and how many shards it pinned. */
export interface PitOpened {
  id: string;
  shards: { total: number; successful: number; skipped: number; failed: number };
  /** Our context uuid (OpenSearch's list and delete name PITs by id; the registry by uuid). */
  contextId: string;
  createdAt: number;
}

/** ES's open options beyond the index expression and keep alive. */
export interface PitOptions {
  /** A query: shards where no document matches are left out of the PIT (counted as skipped). */
  indexFilter?: unknown;
  /** Shards asked at once (ES default 5). */
  maxConcurrentShardRequests?: number;
  /** ES default false: a shard without a started copy fails the open. */
  allowPartialSearchResults?: boolean;
}

/** Runs `fns` with at most `limit` under way at once, results in order (allSettled). */
async function limited<T>(fns: Array<() => Promise<T>>, limit: number): Promise<PromiseSettledResult<T>[]> {
  const out: PromiseSettledResult<T>[] = new Array(fns.length);
  let next = 0;
  const worker = async () => {
    while (next < fns.length) {
      const i = next++;
      out[i] = await fns[i]().then((value) => ({ status: 'fulfilled' as const, value }), (reason: unknown) => ({ status: 'rejected' as const, reason }));
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, fns.length) }, worker));
  return out;
}

/**
 * ES's refusal of a PIT open some shard failed, partial results not allowed (AbstractSearchAsyncAction,
 * phase `open_pit`): shards without a started copy are `Search rejected due to missing shards [...]`
 * (503, nothing tried); any other failure is `Partial shards failure` with the shards' failures.
 */
function openRefused(targets: Array<{ ref: { index: string; n: number } }>, settled: PromiseSettledResult<unknown>[]): EsError {
  const failures = targets.flatMap((t, i) => {
    const r = settled[i];
    return r.status === 'rejected' ? [{ t, e: asEsError(r.reason) }] : [];
  });
  if (failures.every((f) => f.e.type === 'no_shard_available_action_exception')) {
    const missing = failures.map((f) => `[${f.t.ref.index}][${f.t.ref.n}]`).join(', ');
    return new EsError('search_phase_execution_exception', 503, `Search rejected due to missing shards [${missing}]. Consider using \`allow_partial_search_results\` setting to bypass this error.`, {
      meta: { phase: 'open_pit', grouped: true, failed_shards: [] },
    });
  }
  const failedShards = failures.map((f) => ({ shard: f.t.ref.n, index: f.t.ref.index, node: null, reason: toErrorBody(f.e).error }));
  return new EsError('search_phase_execution_exception', failures.some((f) => f.e.status === 503) ? 503 : 500, 'Partial shards failure', {
    causedBy: failures[0].e,
    meta: { phase: 'open_pit', grouped: true, failed_shards: failedShards },
  });
}

/** Opens a PIT on the request's indices with keep alive `keepAlive` (ES time value). */
export async function openPit(s: PagingServices, req: Pick<EsRequest, 'params' | 'query' | 'auth' | 'opaqueId'>, keepAlive: string, o: PitOptions = {}): Promise<PitOpened> {
  const keepAliveMs = keepAliveOrThrow(s, parseKeepAlive(keepAlive, 'keep_alive'));
  requireLog(s);
  checkContextQuota(s, req, 'pit');
  const indices = await searchIndices(s, req, OPEN);
  refuseFilteredAliases(s, req.params.index, indices, 'point in time');
  const all = orderedTargets(indices, req.query.routing);
  const concurrency = o.maxConcurrentShardRequests ?? 5;
  // index_filter: a shard none of whose documents match is left out (ES's can-match phase skips it)
  let targets = all;
  if (o.indexFilter !== undefined) {
    const counts = await limited(all.map((t) => () => s.shards.call<number>(t.ref, 'count', { query: o.indexFilter })), concurrency);
    targets = all.filter((_, i) => counts[i].status !== 'fulfilled' || (counts[i] as PromiseFulfilledResult<number>).value > 0).map((t, i) => ({ ...t, shardIndex: i }));
  }
  const skipped = all.length - targets.length;
  const settled = await limited(targets.map((t) => () => s.shards.call<SearcherRef>(t.ref, 'searcher', {})), concurrency);
  // pinned shards keep their rank in the PIT's own shard list (_shard_doc)
  const shards = targets.flatMap((t, i) => {
    const r = settled[i];
    return r.status === 'fulfilled' ? [{ index: t.ref.index, indexUuid: t.ref.indexUuid, n: t.ref.n, shardIndex: t.shardIndex, searcher: r.value }] : [];
  });
  const failed = targets.length - shards.length;
  if (failed && !(o.allowPartialSearchResults ?? req.query.allow_partial_search_results === 'true')) throw openRefused(targets, settled);
  const rec = s.contexts.open({
    kind: 'pit',
    indices: indices.map((i) => i.name),
    shards,
    keepAliveMs,
    owner: s.security?.ownerOf(req.auth),
    correlationId: req.opaqueId,
  });
  await rec.appended;
  return { id: s.ids.pitId(rec.id), contextId: rec.id, createdAt: rec.createdAt, shards: { total: all.length, successful: shards.length, skipped, failed } };
}

/** Closes the caller's PIT `pitId` wherever its owner node runs; how many contexts were freed. */
export async function closePit(s: PagingServices, req: Pick<EsRequest, 'auth' | 'opaqueId'>, pitId: string): Promise<number> {
  const contextId = s.ids.parsePitId(pitId);
  // Only the caller's own PIT is closed, wherever its owner node runs.
  const owner = s.security?.ownerOf(req.auth);
  return s.contextService.clear(contextId, 'pit', owner?.username, req.opaqueId, (o) => mayUse(s, req, o));
}
