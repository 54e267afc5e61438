import { HttpBodyError, illegalArgument, parseException, validationFailed } from '../../wire/esErrors';
import type { EsRequest, EsResponse, Router } from '../router';
import type { SearcherRef } from '../../shard/engine/types';
import { parseTimeValue } from '../../shard/engine';
import { refuseFilteredAliases } from '../aliasFilters';
import { listContexts } from './contextList';
import { keepAliveOrThrow, mayUse, requireLog, orderedTargets, searchIndices, type PagingServices } from './search';

const OPEN = 'indices:data/read/open_point_in_time';

/** POST /<index>/_pit?keep_alive=…: pins the current searcher of every shard, O(1) each. */
async function openPit(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const ka = req.query.keep_alive;
  if (ka === undefined) throw validationFailed(['[keep_alive] is not specified']);
  const keepAliveMs = keepAliveOrThrow(s, parseTimeValue(ka, 'keep_alive'));
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
  return {
    body: { id: s.ids.pitId(rec.id), _shards: { total: targets.length, successful: shards.length, skipped: 0, failed } },
  };
}

/** DELETE /_pit {id}: `{succeeded, num_freed}`; nothing freed -> 404 with the same shape. */
async function closePit(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const body = req.json<Record<string, unknown>>();
  if (!body) throw parseException('request body or source parameter is required');
  for (const k of Object.keys(body)) {
    if (k !== 'id') throw illegalArgument(`Unknown parameter [${k}] in request body or parameter is of the wrong type[VALUE_STRING] `);
  }
  if (!body.id) throw illegalArgument('search context id is is not provided');
  const contextId = s.ids.parsePitId(String(body.id));
  // Only the caller's own PIT is closed, wherever its owner node runs.
  const owner = s.security?.ownerOf(req.auth);
  const freed = await s.contextService.clear(contextId, 'pit', owner?.username, req.opaqueId, (o) => mayUse(s, req, o));
  if (!freed) throw new HttpBodyError(404, { succeeded: false, num_freed: 0 });
  return { body: { succeeded: true, num_freed: freed } };
}

export function pitRoutes(r: Router, s: PagingServices): void {
  r.add('POST', '/{index}/_pit', (req) => openPit(s, req), { kind: 'handler' });
  r.add('DELETE', '/_pit', (req) => closePit(s, req), { kind: 'handler' });
  // Our extension: list the open PITs of the whole cluster.
  r.add('GET', '/_pit', async (req) => {
    const pits = await listContexts(s, req, 'pit');
    return { body: { count: pits.length, pits } };
  }, { kind: 'cluster', action: 'cluster:monitor/point_in_time/list' });
}
