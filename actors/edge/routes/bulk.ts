import { EsError, illegalArgument, validationFailed } from '../../wire/esErrors';
import type { EsRequest, Router } from '../router';
import type { EdgeServices } from '../services';
import type { IndexState } from '../../cluster';
import { shardFor } from '../../shard/engine';
import type { DocWrite, WriteOutcome } from '../../shard/engine/types';
import { autoId, outcomeError, refreshParam, writeResponse, writeTarget } from './documents';

type Action = 'index' | 'create' | 'delete' | 'update';
interface Item {
  action: Action;
  index: string;
  id?: string;
  routing?: string;
  source?: string;
  /** Set when the item failed before reaching a shard. */
  error?: EsError;
}

const ACTIONS = new Set<Action>(['index', 'create', 'delete', 'update']);

/** Splits an NDJSON bulk body into items; source lines stay raw text (never parsed here). */
export function parseBulk(text: string, defaultIndex: string | undefined): Item[] {
  if (!text.length) throw validationFailed(['no requests added']);
  if (!text.endsWith('\n')) throw illegalArgument('The bulk request must be terminated by a newline [\\n]');
  const items: Item[] = [];
  let pos = 0;
  let line = 0;
  const next = (): string | undefined => {
    if (pos >= text.length) return undefined;
    const nl = text.indexOf('\n', pos);
    const l = text.slice(pos, nl);
    pos = nl + 1;
    line++;
    return l;
  };
  for (let l = next(); l !== undefined; l = next()) {
    if (!l.trim()) continue;
    let meta: Record<string, Record<string, unknown>>;
    try {
      meta = JSON.parse(l);
    } catch {
      throw illegalArgument(`Malformed action/metadata line [${line}], expected START_OBJECT but found [VALUE_STRING]`);
    }
    if (!meta || typeof meta !== 'object' || Array.isArray(meta)) {
      throw illegalArgument(`Malformed action/metadata line [${line}], expected START_OBJECT but found [${Array.isArray(meta) ? 'START_ARRAY' : 'VALUE_STRING'}]`);
    }
    const keys = Object.keys(meta);
    const action = keys[0] as Action;
    if (keys.length !== 1 || !ACTIONS.has(action)) {
      throw illegalArgument(`Malformed action/metadata line [${line}], expected field [create], [delete], [index] or [update] but found [${keys[0]}]`);
    }
    const m = meta[action] ?? {};
    if (typeof m !== 'object' || Array.isArray(m)) {
      throw illegalArgument(`Malformed action/metadata line [${line}], expected START_OBJECT but found [${Array.isArray(m) ? 'START_ARRAY' : typeof m === 'string' ? 'VALUE_STRING' : typeof m === 'boolean' ? 'VALUE_BOOLEAN' : 'VALUE_NUMBER'}]`);
    }
    // metadata values are simple values, read as text (BulkRequestParser)
    const text = (k: string): string | undefined => {
      const v = m[k];
      if (v === undefined || v === null) return undefined;
      if (typeof v === 'object') throw illegalArgument(`Malformed action/metadata line [${line}], expected a simple value for field [${k}] but found [${Array.isArray(v) ? 'START_ARRAY' : 'START_OBJECT'}]`);
      return String(v);
    };
    const index = text('_index') ?? defaultIndex;
    if (!index) throw validationFailed(['index is missing']);
    const item: Item = { action, index, id: text('_id'), routing: text('routing') ?? text('_routing') };
    if (action !== 'delete') {
      const src = next();
      if (src === undefined || !src.trim()) throw illegalArgument(`The bulk request must be terminated by a newline [\\n]`);
      item.source = src;
    }
    if (action === 'delete' && item.id === undefined) item.error = illegalArgument('id is missing');
    items.push(item);
  }
  if (!items.length) throw validationFailed(['no requests added']);
  return items;
}

function itemError(e: EsError, idx: IndexState | undefined, shard: number | undefined) {
  return {
    type: e.type,
    reason: e.message,
    ...(e.extra.meta ?? {}),
    ...(idx ? { index_uuid: idx.uuid, ...(shard !== undefined ? { shard: String(shard) } : {}), index: idx.name } : {}),
  };
}

async function bulk(s: EdgeServices, req: EsRequest) {
  const start = Date.now();
  const refresh = refreshParam(req);
  const items = parseBulk(req.body?.toString('utf8') ?? '', req.params.index);
  const results: Array<Record<string, unknown>> = new Array(items.length);
  // Resolve (and auto-create) target indices once each.
  const targets = new Map<string, IndexState | EsError>();
  for (const it of items) {
    if (targets.has(it.index)) continue;
    try {
      // Per-index authorization: a forbidden index fails its items, not the whole request (as ES).
      if (s.security) await s.security.authorize(req.auth, it.action === 'delete' ? 'indices:data/write/delete' : 'indices:data/write/index', [it.index]);
      targets.set(it.index, it.action === 'delete' ? s.cluster.require(it.index) : await writeTarget(s, it.index));
    } catch (e) {
      targets.set(it.index, e as EsError);
    }
  }
  // Group by shard, keeping each item's position.
  const groups = new Map<string, { idx: IndexState; n: number; writes: DocWrite[]; pos: number[] }>();
  items.forEach((it, i) => {
    const t = targets.get(it.index)!;
    if (t instanceof Error || it.error || it.action === 'update') {
      const err = t instanceof Error ? t : (it.error ?? illegalArgument('bulk [update] is not supported by this node; use [index]'));
      results[i] = { [it.action]: { _index: it.index, _id: it.id ?? null, status: err.status, error: itemError(err, t instanceof Error ? undefined : t, undefined) } };
      return;
    }
    const id = it.id ?? autoId();
    it.id = id;
    const n = shardFor(it.routing ?? id, t.settings.numberOfShards);
    const key = `${t.uuid}/${n}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { idx: t, n, writes: [], pos: [] }));
    g.writes.push({ op: it.action === 'delete' ? 'delete' : it.action, id, ...(it.source !== undefined ? { source: it.source } : {}), ...(it.routing ? { routing: it.routing } : {}) });
    g.pos.push(i);
  });
  await Promise.all(
    [...groups.values()].map(async (g) => {
      let outcomes: WriteOutcome[];
      let refreshed = false;
      try {
        ({ outcomes, refreshed } = await s.shards.write(g.idx.shards[g.n].ref, g.writes, refresh));
      } catch (e) {
        const err = e as EsError;
        outcomes = g.writes.map(() => ({ ok: false, status: err.status ?? 500, error: { type: err.type ?? 'exception', reason: err.message } }));
      }
      outcomes.forEach((o, j) => {
        const i = g.pos[j];
        const it = items[i];
        if (o.ok) {
          const status = o.result === 'created' ? 201 : o.result === 'not_found' ? 404 : 200;
          results[i] = { [it.action]: { ...writeResponse(g.idx, it.id!, o, refreshed), status } };
        } else {
          const err = outcomeError(g.idx, g.n, o);
          results[i] = { [it.action]: { _index: g.idx.name, _id: it.id, status: o.status, error: itemError(err, undefined, undefined) } };
        }
      });
    }),
  );
  const errors = results.some((r) => {
    const v = Object.values(r)[0] as { error?: unknown };
    return v.error !== undefined;
  });
  return { body: { errors, took: Date.now() - start, items: results } };
}

export function bulkRoutes(r: Router, s: EdgeServices): void {
  const authz = { kind: 'handler' as const };
  r.add(['POST', 'PUT'], '/_bulk', (req) => bulk(s, req), authz);
  r.add(['POST', 'PUT'], '/{index}/_bulk', (req) => bulk(s, req), authz);
}

