import { randomBytes } from 'node:crypto';
import { EsError, validationFailed, illegalArgument, idTooLong, requireAliasMissing } from '../../wire/esErrors';
import { parseBool } from '../../wire/rest';
import { type Router } from '../router';
import { RawJson, type EsRequest, type EsResponse } from '../../wire/rest';
import type { SearchServices } from '../../search/services';
import { refuseClosedDoc } from '../../search/indices';
import { docShard, type IndexState } from '../../cluster';
import type { DocWrite, WriteOutcome } from '../../shard/engine/types';
import { AUTO_CREATE_ACTION, authorizeOn, authorizeWrite } from './writeAuthz';
import { writeVersion } from './versioning';
import { getDoc, getSourceFilter, renderFound, type GetOptions } from './getDoc';
import { filterSource, parseSourceParams, type SourceFilter } from '../../shard/engine';

const splitComma = (v: string) => v.split(',').map((x) => x.trim()).filter(Boolean);

/** `_source`, `_source_includes`, `_source_excludes` of a get. */
function sourceParams(req: EsRequest): SourceFilter | undefined {
  const q = req.query;
  return parseSourceParams({ _source: q._source, _source_includes: q._source_includes, _source_excludes: q._source_excludes });
}

/** routing, realtime, refresh, version of a get (realtime=false reads what the last refresh made searchable). */
function getOptions(s: SearchServices, req: EsRequest, index: IndexState): GetOptions {
  const q = req.query;
  const flag = (v: string | undefined) => (v === undefined ? undefined : v === '' || v === 'true');
  return {
    routing: q.routing ?? aliasIndexRouting(s, req.params.index, index),
    realtime: flag(q.realtime),
    refresh: flag(q.refresh),
    version: q.version,
    versionType: q.version_type,
  };
}

/** ES-style auto ids: 20 URL-safe base64 characters. */
export const autoId = () => randomBytes(15).toString('base64url');

const REFRESH_VALUES = new Set(['true', 'false', 'wait_for', '']);

export function refreshParam(req: EsRequest): string | undefined {
  const r = req.query.refresh;
  if (r === undefined) return undefined;
  if (!REFRESH_VALUES.has(r)) throw illegalArgument(`Unknown value for refresh: [${r}].`);
  return r === '' ? 'true' : r;
}

/** Index for a write: existing, the write index of an alias, or auto-created as ES does. */
export async function writeTarget(s: SearchServices, name: string): Promise<IndexState> {
  return s.cluster.writeIndex(name) ?? (await s.cluster.createIndex(name).catch(async (e) => {
    // Lost a race with another auto-create of the same name: use the winner, which may still be
    // being logged (its name is taken before it appears), so wait for it a little.
    for (let i = 0; i < 2000; i++) {
      const idx = s.cluster.get(name);
      if (idx) return idx;
      if ((e as { type?: string }).type !== 'resource_already_exists_exception') break;
      await new Promise((r) => setTimeout(r, 5));
    }
    throw e;
  }));
}

/** After a write with `refresh`: the replicas refresh too, once they applied it (as ES's refresh on every copy). */
export async function refreshReplicas(s: SearchServices, idx: IndexState, n: number, minSeqNo: number): Promise<void> {
  const replicas = s.cluster.copyNodes(idx, n).filter((c) => !c.primary).map((c) => c.node);
  await Promise.allSettled(replicas.map((node) => s.shards.call(idx.shards[n].ref, 'refresh', { minSeqNo }, node)));
}

/** The `index_routing` of the alias a request named instead of the index (undefined otherwise). */
export function aliasIndexRouting(s: SearchServices, name: string, idx: IndexState): string | undefined {
  return name === idx.name ? undefined : s.cluster.metadata.aliases.meta(idx.uuid, name)?.index_routing;
}

export function shardsHeader(idx: IndexState) {
  return { total: 1 + idx.settings.numberOfReplicas, successful: 1, failed: 0 };
}

export function writeResponse(idx: IndexState, id: string, o: WriteOutcome & { ok: true }, refreshed: boolean) {
  return {
    _index: idx.name,
    _id: id,
    _version: o.version,
    result: o.result,
    ...(refreshed ? { forced_refresh: true } : {}),
    _shards: shardsHeader(idx),
    _seq_no: o.seqNo,
    _primary_term: 1,
  };
}

export function outcomeError(idx: IndexState, shard: number, o: WriteOutcome & { ok: false }): EsError {
  return new EsError(o.error.type, o.status, o.error.reason, {
    meta: { ...(o.error.meta ?? {}), index_uuid: idx.uuid, shard: String(shard), index: idx.name },
  });
}

async function writeOne(s: SearchServices, req: EsRequest, op: DocWrite['op'], id: string | undefined): Promise<EsResponse> {
  const refresh = refreshParam(req);
  const source = op === 'delete' ? undefined : req.body?.toString('utf8');
  if (op !== 'delete' && !source?.trim()) throw validationFailed(['source is missing', 'content type is missing']);
  if (op !== 'delete' && source) req.json(); // malformed JSON -> ES's parse error before anything is written
  const { fields: versioned, errors } = writeVersion(op, { version: req.query.version, versionType: req.query.version_type, ifSeqNo: req.query.if_seq_no });
  const long = op === 'delete' ? null : idTooLong(id);
  if (long) errors.push(long);
  if (errors.length) throw validationFailed(errors);
  // no ingest pipelines here: naming one is ES's answer for a pipeline that does not exist
  if (op !== 'delete' && req.query.pipeline !== undefined && req.query.pipeline !== '_none') throw illegalArgument(`pipeline with id [${req.query.pipeline}] does not exist`);
  // TransportBulkAction: a require_alias write goes to an alias only (no auto-creation either)
  if (op !== 'delete' && parseBool(req.query.require_alias, false) && !s.cluster.metadata.aliases.has(req.params.index)) throw requireAliasMissing(req.params.index);
  // ES order: auto-create (its own action), then the shard-level bulk[s] and the op's implied action
  let idx: IndexState;
  if (op === 'delete') idx = s.cluster.writeIndex(req.params.index) ?? s.cluster.require(req.params.index);
  else {
    if (!s.cluster.writeIndex(req.params.index)) await authorizeOn(s, req.auth, AUTO_CREATE_ACTION, req.params.index);
    idx = await writeTarget(s, req.params.index);
  }
  await authorizeWrite(s, req.auth, op, req.params.index);
  refuseClosedDoc(idx);
  if (op !== 'delete') s.flood?.checkWrite(idx.name); // flood stage: read-only, deletes allowed
  const docId = id ?? autoId();
  const routing = req.query.routing ?? aliasIndexRouting(s, req.params.index, idx);
  const n = docShard(idx, docId, routing, op !== 'delete');
  const w: DocWrite = { op, id: docId, ...(source !== undefined ? { source } : {}), ...(routing ? { routing } : {}) };
  if (req.query.if_seq_no !== undefined) w.ifSeqNo = Number(req.query.if_seq_no);
  if (req.query.if_primary_term !== undefined) w.ifPrimaryTerm = Number(req.query.if_primary_term);
  Object.assign(w, versioned);
  const { outcomes, refreshed, maxSeqNo } = await s.shards.write(idx.shards[n].ref, [w], refresh);
  if (refresh === 'true' || refresh === 'wait_for') await refreshReplicas(s, idx, n, maxSeqNo);
  const o = outcomes[0];
  if (!o.ok) throw outcomeError(idx, n, o);
  const status = o.result === 'created' ? 201 : o.result === 'not_found' ? 404 : 200;
  return { status, body: writeResponse(idx, docId, o, refreshed) };
}

/** Document APIs: index, create, get, delete. */
export function documentRoutes(r: Router, s: SearchServices): void {
  const idx = (req: EsRequest) => [req.params.index];
  // Without an id ES defaults op_type to create (RestIndexAction.AutoIdHandler), which create_doc allows.
  const opType = (req: EsRequest, dflt: 'index' | 'create' = 'index'): DocWrite['op'] => {
    const t = req.query.op_type;
    if (t === undefined) return dflt;
    if (t === 'index') return 'index';
    if (t === 'create') return 'create';
    throw illegalArgument(`opType must be 'create' or 'index', found: [${t}]`);
  };
  r.add(['PUT', 'POST'], '/{index}/_doc/{id}', (req) => writeOne(s, req, opType(req), req.params.id), {
    kind: 'indices',
    action: 'indices:data/write/index',
    indices: idx,
  });
  r.add('POST', '/{index}/_doc', (req) => writeOne(s, req, opType(req, 'create'), undefined), { kind: 'indices', action: 'indices:data/write/index', indices: idx });
  r.add(['PUT', 'POST'], '/{index}/_create/{id}', (req) => writeOne(s, req, 'create', req.params.id), {
    kind: 'indices',
    action: 'indices:data/write/index',
    indices: idx,
  });
  r.add('DELETE', '/{index}/_doc/{id}', (req) => writeOne(s, req, 'delete', req.params.id), {
    kind: 'indices',
    action: 'indices:data/write/delete',
    indices: idx,
  });
  r.add(['GET', 'HEAD'], '/{index}/_doc/{id}', async (req) => {
    const index = s.cluster.single(req.params.index);
    const id = req.params.id;
    const doc = await getDoc(s, index, id, getOptions(s, req, index));
    if (!doc) return { status: 404, body: { _index: index.name, _id: id, found: false } };
    const storedFields = req.query.stored_fields !== undefined ? splitComma(req.query.stored_fields) : undefined;
    return { body: new RawJson(renderFound(index, id, doc, getSourceFilter(sourceParams(req), storedFields), storedFields)) };
  }, { kind: 'indices', action: 'indices:data/read/get', indices: idx });
  r.add(['GET', 'HEAD'], '/{index}/_source/{id}', async (req) => {
    const index = s.cluster.single(req.params.index);
    const id = req.params.id;
    const doc = await getDoc(s, index, id, getOptions(s, req, index));
    if (!doc) throw new EsError('resource_not_found_exception', 404, `Document not found [${index.name}]/[${id}]`);
    const filter = sourceParams(req);
    const src = filter ? filterSource(doc.source, { ...filter, fetch: true }) : doc.source;
    return { body: new RawJson([src ?? '{}']) };
  }, { kind: 'indices', action: 'indices:data/read/get', indices: idx });
}
