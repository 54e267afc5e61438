import { HttpBodyError, illegalArgument, parseException, validationFailed } from '../../wire/esErrors';
import type { EsRequest, EsResponse } from '../../wire/rest';
import type { Router } from '../router';
import { closePit as close, openPit as open } from '../../search/pitService';
import type { PagingServices } from '../../search/services';
import { listContexts } from './contextList';

/** `_pit`: open and close requests parsed here, run by the PIT service. */

/** POST /<index>/_pit?keep_alive=…: pins the current searcher of every shard, O(1) each. */
async function openPit(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const ka = req.query.keep_alive;
  if (ka === undefined) throw validationFailed(['[keep_alive] is not specified']);
  const { id, shards } = await open(s, req, ka);
  return { body: { id, _shards: { total: shards.total, successful: shards.successful, skipped: 0, failed: shards.failed } } };
}

/** DELETE /_pit {id}: `{succeeded, num_freed}`; nothing freed -> 404 with the same shape. */
async function closePit(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const body = req.json<Record<string, unknown>>();
  if (!body) throw parseException('request body or source parameter is required');
  for (const k of Object.keys(body)) {
    if (k !== 'id') throw illegalArgument(`Unknown parameter [${k}] in request body or parameter is of the wrong type[VALUE_STRING] `);
  }
  if (!body.id) throw illegalArgument('search context id is is not provided');
  const freed = await close(s, req, String(body.id));
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
