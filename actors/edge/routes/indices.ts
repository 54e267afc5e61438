import { settingsEntry } from '../views/settingsView';
import { EsError, illegalArgument, isJetStreamFull, parseException } from '../../wire/esErrors';
import { flatten } from '../../config';
import { DATA_STREAM, deleteSubjectMessages, subjects } from '../../../streams';
import type { Router } from '../router';
import type { EsRequest } from '../../wire/rest';
import type { SearchServices } from '../../search/services';
import { resolveOptions } from '../../search';
import { renderSettings, type IndexState } from '../../cluster';
import { renderAliasMeta } from '../../cluster/aliases';

/**
 * Refreshes every copy of shard `n`: the primary first, then each replica once it has applied
 * everything the primary had (and at least `minSeqNo`).
 */
export function refreshShard(s: SearchServices, idx: IndexState, n: number, minSeqNo?: number) {
  const replicas = s.cluster.copyNodes(idx, n).filter((c) => !c.primary).map((c) => c.node);
  return s.shards.refresh(idx.shards[n].ref, replicas, minSeqNo);
}

/** Refreshes every copy of every shard of the given indices. */
export async function refreshIndices(s: SearchServices, indices: IndexState[]) {
  const shards = indices.flatMap((i) => i.shards.map((_, n) => ({ i, n })));
  const res = await Promise.allSettled(shards.map(({ i, n }) => refreshShard(s, i, n)));
  const ok = res.reduce((a, r) => a + (r.status === 'fulfilled' ? r.value.successful : 0), 0);
  const total = indices.reduce((a, i) => a + i.settings.numberOfShards * (1 + i.settings.numberOfReplicas), 0);
  return { _shards: { total, successful: ok, failed: res.filter((r) => r.status === 'rejected').length } };
}

const FLOOD_BLOCK_KEY = 'index.blocks.read_only_allow_delete';

/** A settings update without `index.blocks.read_only_allow_delete` (any spelling); undefined when nothing else is left. */
function withoutFloodBlock(changes: unknown): unknown {
  if (!changes || typeof changes !== 'object' || Array.isArray(changes)) return changes;
  const flat = flatten(changes);
  if (!Object.hasOwn(flat, FLOOD_BLOCK_KEY) && !Object.hasOwn(flat, FLOOD_BLOCK_KEY.slice('index.'.length))) return changes;
  const rest = Object.fromEntries(Object.entries(flat).filter(([k]) => k !== FLOOD_BLOCK_KEY && k !== FLOOD_BLOCK_KEY.slice('index.'.length)));
  return Object.keys(rest).length ? rest : undefined;
}

/**
 * A deleted index's documents leave the document log, so the room they took in the store is free
 * again (ES frees a deleted index's disk): in the background, then the flood stage looks again.
 */
async function freeLogRoom(s: SearchServices, idx: IndexState): Promise<void> {
  try {
    const n = await deleteSubjectMessages(s.ctx.nc, DATA_STREAM, subjects.dataShards(idx.uuid));
    s.ctx.log.info({ index: idx.name, uuid: idx.uuid, messages: n }, 'deleted index: its messages left the document log');
    await s.flood?.poll();
  } catch (e) {
    s.ctx.log.warn({ err: (e as Error).message, index: idx.name }, 'deleted index: its messages could not be removed from the document log');
  }
}

/** Index administration: create, delete, exists, get, mapping, settings, refresh, count. */
export function indexRoutes(r: Router, s: SearchServices): void {
  const named = (req: EsRequest) => [req.params.index];
  r.add('PUT', '/{index}', async (req) => {
    const body = (req.json<Record<string, unknown>>() ?? {}) as Record<string, unknown>;
    for (const k of Object.keys(body)) {
      if (!['settings', 'mappings', 'aliases'].includes(k)) {
        throw new EsError('parsing_exception', 400, `unknown key [${k}] for create index`, { meta: { line: 1, col: 1 } });
      }
    }
    const idx = await s.cluster.createIndex(req.params.index, body);
    return { body: { acknowledged: true, shards_acknowledged: true, index: idx.name } };
  }, { kind: 'indices', action: 'indices:admin/create', indices: named });

  r.add('DELETE', '/{index}', async (req) => {
    const expr = req.params.index;
    if (expr === '_all' || expr === '*' || expr.includes('*')) {
      throw illegalArgument('Wildcard expressions or all indices are not allowed');
    }
    // An alias names indices but is not one: ES refuses to delete through it.
    const viaAlias = expr.split(',').find((n) => !s.cluster.get(n) && s.cluster.metadata.aliases.has(n));
    if (viaAlias !== undefined) {
      throw illegalArgument(`The provided expression [${viaAlias}] matches an alias, specify the corresponding concrete indices instead.`);
    }
    const targets = s.cluster.resolve(expr, resolveOptions(req));
    for (const t of targets) {
      try {
        await s.cluster.deleteIndex(t);
      } catch (e) {
        // a log at its cap still takes the deletion that frees it (ES: read-only-allow-delete)
        if (!isJetStreamFull(e) || !(await s.flood?.borrowRoom())) throw e;
        await s.cluster.deleteIndex(t);
      }
      void freeLogRoom(s, t);
    }
    return { body: { acknowledged: true } };
  }, { kind: 'indices', action: 'indices:admin/delete', indices: named });

  r.add('HEAD', '/{index}', (req) => {
    try {
      const found = s.cluster.resolve(req.params.index, resolveOptions(req));
      return { status: found.length ? 200 : 404 };
    } catch {
      return { status: 404 };
    }
  }, { kind: 'indices', action: 'indices:admin/get', indices: named });

  r.add('GET', '/{index}', (req) => {
    const out: Record<string, unknown> = {};
    for (const i of s.cluster.resolve(req.params.index, resolveOptions(req))) {
      const aliases = Object.fromEntries(s.cluster.metadata.aliases.of(i.uuid).map(([a, m]) => [a, renderAliasMeta(m)]));
      out[i.name] = { aliases, mappings: i.mapping.toJSON(), settings: renderSettings(i.settings, i) };
    }
    return { body: out };
  }, { kind: 'indices', action: 'indices:admin/get', indices: named });

  const mapping = (req: EsRequest) => {
    const out: Record<string, unknown> = {};
    for (const i of s.cluster.resolve(req.params.index, resolveOptions(req))) out[i.name] = { mappings: i.mapping.toJSON() };
    return { body: out };
  };
  r.add('GET', '/{index}/_mapping', mapping, { kind: 'indices', action: 'indices:admin/mappings/get', indices: named });
  r.add('GET', '/_mapping', mapping, { kind: 'indices', action: 'indices:admin/mappings/get', indices: () => ['*'] });
  r.add(['PUT', 'POST'], '/{index}/_mapping', async (req) => {
    if (!req.body?.length) throw parseException('request body is required');
    // ES reads the body as a map: blank text or a non-object value is an empty mapping update
    const body = req.json();
    const mappings = body !== null && typeof body === 'object' && !Array.isArray(body) ? body : {};
    // RestPutMappingAction: a body that is only `{"_doc": …}` is a typed mapping (MapperService.isMappingSourceTyped)
    const keys = Object.keys(mappings);
    if (keys.length === 1 && keys[0] === '_doc') throw illegalArgument('Types cannot be provided in put mapping requests');
    const targets = s.cluster.resolve(req.params.index, resolveOptions(req));
    s.flood?.checkWrite(...targets.map((i) => i.name)); // a metadata write: refused at flood stage, as ES
    for (const i of targets) await s.cluster.putMapping(i, mappings);
    return { body: { acknowledged: true } };
  }, { kind: 'indices', action: 'indices:admin/mapping/put', indices: named });

  const getSettings = (req: EsRequest) => {
    const out: Record<string, unknown> = {};
    const flag = (v: string | undefined) => v === '' || v === 'true';
    const o = {
      ...(req.params.name !== undefined ? { names: req.params.name.split(',').map((n) => n.trim()).filter(Boolean) } : {}),
      flat: flag(req.query.flat_settings),
      includeDefaults: flag(req.query.include_defaults),
    };
    for (const i of s.cluster.resolve(req.params.index, resolveOptions(req))) out[i.name] = settingsEntry(renderSettings(i.settings, i), o);
    return { body: out };
  };
  r.add('GET', '/{index}/_settings', getSettings, { kind: 'indices', action: 'indices:monitor/settings/get', indices: named });
  r.add('GET', '/{index}/_settings/{name}', getSettings, { kind: 'indices', action: 'indices:monitor/settings/get', indices: named });
  r.add('GET', '/_settings', getSettings, { kind: 'indices', action: 'indices:monitor/settings/get', indices: () => ['*'] });
  r.add('GET', '/_settings/{name}', getSettings, { kind: 'indices', action: 'indices:monitor/settings/get', indices: () => ['*'] });
  r.add('PUT', '/{index}/_settings', async (req) => {
    const body = req.json<Record<string, unknown>>();
    if (!body || typeof body !== 'object') throw new EsError('action_request_validation_exception', 400, 'Validation Failed: 1: no settings to update;');
    const targets = s.cluster.resolve(req.params.index, resolveOptions(req));
    // The flood-stage block follows the store's room here: removing it by hand (ES's documented
    // `"index.blocks.read_only_allow_delete": null`) is acknowledged and changes nothing.
    const changes = withoutFloodBlock('settings' in body ? body.settings : body);
    if (changes === undefined) return { body: { acknowledged: true } };
    s.flood?.checkWrite(...targets.map((i) => i.name)); // a metadata write: refused at flood stage, as ES
    for (const i of targets) await s.cluster.updateSettings(i, changes);
    return { body: { acknowledged: true } };
  }, { kind: 'indices', action: 'indices:admin/settings/update', indices: named });

  const refresh = async (req: EsRequest) => ({ body: await refreshIndices(s, s.cluster.resolve(req.params.index, resolveOptions(req))) });
  r.add(['POST', 'GET'], '/_refresh', refresh, { kind: 'indices', action: 'indices:admin/refresh', indices: () => ['*'] });
  r.add(['POST', 'GET'], '/{index}/_refresh', refresh, { kind: 'indices', action: 'indices:admin/refresh', indices: named });
}

