import { EsError, HttpBodyError, illegalArgument, parseException, validationFailed } from '../../wire/esErrors';
import type { EsRequest, EsResponse } from '../../wire/rest';
import type { Router } from '../router';
import { closePit as close, openPit as open, type PitOptions } from '../../search/pitService';
import type { PagingServices } from '../../search/services';
import { listContexts } from './contextList';

/** `_pit`: open and close requests parsed here, run by the PIT service. */

/** ES's open options: `max_concurrent_shard_requests` (>= 1), `allow_partial_search_results`, body `{index_filter}`. */
function pitOptions(req: EsRequest, partialParam = 'allow_partial_search_results'): PitOptions {
  const o: PitOptions = {};
  const m = req.query.max_concurrent_shard_requests;
  if (m !== undefined) {
    const n = Number(m);
    if (!/^-?\d+$/.test(m)) throw illegalArgument(`Failed to parse int parameter [max_concurrent_shard_requests] with value [${m}]`);
    if (n < 1) throw illegalArgument('maxConcurrentShardRequests must be >= 1');
    o.maxConcurrentShardRequests = n;
  }
  const p = req.query[partialParam];
  if (p !== undefined) o.allowPartialSearchResults = p === 'true' || p === '';
  const body = req.json<Record<string, unknown>>();
  if (body !== undefined) {
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw parseException('request body is required');
    for (const k of Object.keys(body)) {
      // ES's ObjectParser of the open request knows `index_filter` only
      if (k !== 'index_filter') throw new EsError('x_content_parse_exception', 400, `[1:2] [open_point_in_time_request] unknown field [${k}]`);
    }
    if (body.index_filter !== undefined) o.indexFilter = body.index_filter;
  }
  return o;
}

/** POST /<index>/_pit?keep_alive=…: pins the current searcher of every shard, O(1) each. */
async function openPit(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const ka = req.query.keep_alive;
  if (ka === undefined) throw validationFailed(['[keep_alive] is not specified']);
  const { id, shards } = await open(s, req, ka, pitOptions(req));
  return { body: { id, _shards: shards } };
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

// ---- OpenSearch's point in time API, beside ES's (opensearch-js / opensearch-py page through it) ----

/** POST /<index>/_search/point_in_time?keep_alive=: `{pit_id, _shards, creation_time}` (allow_partial_pit_creation). */
async function createPit(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const ka = req.query.keep_alive;
  if (ka === undefined) throw validationFailed(['Keep alive cannot be empty']);
  const pit = await open(s, req, ka, pitOptions(req, 'allow_partial_pit_creation'));
  return { body: { pit_id: pit.id, _shards: pit.shards, creation_time: pit.createdAt } };
}

/** GET /_search/point_in_time/_all: `{pits: [{pit_id, creation_time, keep_alive}]}` (the caller's own, or all for a superuser). */
async function listPits(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const pits = await listContexts(s, req, 'pit');
  return { body: { pits: pits.map((p) => ({ pit_id: p.id, creation_time: Date.parse(p.created), keep_alive: parseInt(p.keep_alive, 10) })) } };
}

/** DELETE /_search/point_in_time {pit_id: [...]} and /_all: `{pits: [{successful, pit_id}]}`. */
async function deletePits(s: PagingServices, req: EsRequest, all: boolean): Promise<EsResponse> {
  let ids: string[];
  if (all) {
    ids = (await listContexts(s, req, 'pit')).map((p) => p.id);
  } else {
    const body = req.json<{ pit_id?: unknown }>();
    if (!body) throw parseException('request body or source parameter is required');
    const given = Array.isArray(body.pit_id) ? body.pit_id : body.pit_id === undefined ? [] : [body.pit_id];
    if (!given.length) throw validationFailed(['no pit ids specified']);
    ids = given.map(String);
  }
  const pits = [];
  for (const id of ids) {
    let freed = 0;
    try {
      freed = await close(s, req, id);
    } catch {
      freed = 0; // an id that does not parse frees nothing
    }
    pits.push({ successful: freed > 0, pit_id: id });
  }
  return { body: { pits } };
}

export function pitRoutes(r: Router, s: PagingServices): void {
  r.add('POST', '/{index}/_pit', (req) => openPit(s, req), { kind: 'handler' });
  r.add('DELETE', '/_pit', (req) => closePit(s, req), { kind: 'handler' });
  // Our extension: list the open PITs of the whole cluster.
  r.add('GET', '/_pit', async (req) => {
    const pits = await listContexts(s, req, 'pit');
    return { body: { count: pits.length, pits } };
  }, { kind: 'cluster', action: 'cluster:monitor/point_in_time/list' });
  r.add('POST', '/{index}/_search/point_in_time', (req) => createPit(s, req), { kind: 'handler' });
  r.add('GET', '/_search/point_in_time/_all', (req) => listPits(s, req), { kind: 'none' });
  r.add('DELETE', '/_search/point_in_time', (req) => deletePits(s, req, false), { kind: 'handler' });
  r.add('DELETE', '/_search/point_in_time/_all', (req) => deletePits(s, req, true), { kind: 'handler' });
}
