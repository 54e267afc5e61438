import type { EsRequest } from '../wire/rest';
import type { SearcherRef } from '../shard/engine/types';
import { mayUse, requireLog } from './contextUse';
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
  shards: { total: number; successful: number; failed: number };
}

/** Opens a PIT on the request's indices with keep alive `keepAlive` (ES time value). */
export async function openPit(s: PagingServices, req: Pick<EsRequest, 'params' | 'query' | 'auth' | 'opaqueId'>, keepAlive: string): Promise<PitOpened> {
  const keepAliveMs = keepAliveOrThrow(s, parseKeepAlive(keepAlive, 'keep_alive'));
  requireLog(s);
  const indices = await searchIndices(s, req, OPEN);
  refuseFilteredAliases(s, req.params.index, indices, 'point in time');
  const targets = orderedTargets(indices, req.query.routing);
  const settled = await Promise.allSettled(targets.map((t) => s.shards.call<SearcherRef>(t.ref, 'searcher', {})));
  const shards = targets.flatMap((t, i) => {
    const r = settled[i];
    return r.status === 'fulfilled' ? [{ index: t.ref.index, indexUuid: t.ref.indexUuid, n: t.ref.n, shardIndex: t.shardIndex, searcher: r.value }] : [];
  });
  const failed = targets.length - shards.length;
  if (failed && req.query.allow_partial_search_results !== 'true') {
    const first = settled.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    throw first.reason;
  }
  const rec = s.contexts.open({
    kind: 'pit',
    indices: indices.map((i) => i.name),
    shards,
    keepAliveMs,
    owner: s.security?.ownerOf(req.auth),
    correlationId: req.opaqueId,
  });
  await rec.appended;
  return { id: s.ids.pitId(rec.id), shards: { total: targets.length, successful: shards.length, failed } };
}

/** Closes the caller's PIT `pitId` wherever its owner node runs; how many contexts were freed. */
export async function closePit(s: PagingServices, req: Pick<EsRequest, 'auth' | 'opaqueId'>, pitId: string): Promise<number> {
  const contextId = s.ids.parsePitId(pitId);
  // Only the caller's own PIT is closed, wherever its owner node runs.
  const owner = s.security?.ownerOf(req.auth);
  return s.contextService.clear(contextId, 'pit', owner?.username, req.opaqueId, (o) => mayUse(s, req, o));
}
