import { EsError, asEsError, idTooLong, illegalArgument, indexNotFound, requireAliasMissing, toErrorBody, validationFailed } from '../../wire/esErrors';
import { parseBool, RawJson } from '../../wire/rest';
import { stringify } from '../../wire/json';
import { Slicer } from '../../../streams';
import type { Router } from '../router';
import type { EsRequest } from '../../wire/rest';
import type { SearchServices } from '../../search/services';
import { indexClosed } from '../../search/indices';
import { docShard, type IndexState } from '../../cluster';
import { parseSourceBody } from '../../shard/engine';
import type { DocWrite, WriteOutcome } from '../../shard/engine/types';
import { aliasIndexRouting, autoId, outcomeError, refreshParam, refreshReplicas, writeResponse, writeTarget } from './documents';
import { writeVersion } from './versioning';
import { AUTO_CREATE_ACTION, authorizeOn, authorizeWrite, BULK_ACTION } from './writeAuthz';
import { checkSeqNoParams, executeUpdate, losslessBody, parseUpdateBody, updateResponse, validateUpdate, type UpdateOutcome, type UpdateSpec } from './update';
import type { Authentication } from '../../wire/security';

type Action = 'index' | 'create' | 'delete' | 'update';
interface Item {
  action: Action;
  index: string;
  id?: string;
  routing?: string;
  source?: string;
  /** Set when the item failed before reaching a shard. */
  error?: EsError;
  /** The action line's object (update items read `retry_on_conflict`, `if_seq_no`, `_source` from it). */
  meta?: Record<string, unknown>;
  /** `require_alias` (the item's, else the request's): the name must be an alias. */
  requireAlias?: boolean;
}

const ACTIONS = new Set<Action>(['index', 'create', 'delete', 'update']);

/**
 * What JSON.parse gives for the action lines clients send most, `{"index":{"_index":"i","_id":"1"}}`
 * (either key optional, in that order; `index`, `create` or `delete`; no whitespace, no escapes),
 * read without the parser; undefined for any other line (JSON.parse reads it).
 */
export function plainActionLine(l: string): Record<string, Record<string, unknown>> | undefined {
  let action: string;
  let at: number;
  if (l.startsWith('{"index":{')) [action, at] = ['index', 10];
  else if (l.startsWith('{"create":{')) [action, at] = ['create', 11];
  else if (l.startsWith('{"delete":{')) [action, at] = ['delete', 11];
  else return undefined;
  const meta: Record<string, unknown> = {};
  let idMayFollow = true;
  if (l.startsWith('"_index":"', at)) {
    const end = plainStringEnd(l, at + 10);
    if (end < 0) return undefined;
    meta._index = l.slice(at + 10, end);
    at = end + 1;
    idMayFollow = l.charCodeAt(at) === 0x2c; /* , */
    if (idMayFollow) {
      if (!l.startsWith('"_id":"', at + 1)) return undefined;
      at++;
    }
  }
  if (idMayFollow && l.startsWith('"_id":"', at)) {
    const end = plainStringEnd(l, at + 7);
    if (end < 0) return undefined;
    meta._id = l.slice(at + 7, end);
    at = end + 1;
  }
  if (at !== l.length - 2 || l.charCodeAt(at) !== 0x7d || l.charCodeAt(at + 1) !== 0x7d) return undefined;
  return { [action]: meta };
}

/** Index of the quote closing a JSON string's text starting at `from`; -1 if it holds an escape or a control character. */
function plainStringEnd(l: string, from: number): number {
  for (let i = from; i < l.length; i++) {
    const c = l.charCodeAt(i);
    if (c === 0x22) return i;
    if (c === 0x5c || c < 0x20) return -1;
  }
  return -1;
}

/**
 * Reads a bulk body line by line (ES BulkRequestParser): an action line, then, unless it is a
 * delete, the line after it as the raw source (never parsed here).
 */
class BulkLines {
  items: Item[] = [];
  /** Items handed out by take() so far. */
  private taken = 0;
  private line = 0;
  /** An action waiting for its source line. */
  private pending?: Item;

  constructor(
    private readonly defaultIndex: string | undefined,
    private readonly requireAlias: boolean,
    /** The request's `pipeline` parameter. */
    private readonly pipeline?: string,
  ) {}

  push(l: string): void {
    this.line++;
    if (this.pending) {
      // ES: the line after an action is its source whatever it holds (a blank one fails its item)
      this.pending.source = l;
      this.items.push(this.pending);
      this.pending = undefined;
      return;
    }
    if (l.charCodeAt(0) !== 0x7b && !l.trim()) return;
    const line = this.line;
    let meta: Record<string, Record<string, unknown>>;
    try {
      meta = plainActionLine(l) ?? JSON.parse(l);
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
    const index = text('_index') ?? this.defaultIndex;
    if (!index) throw validationFailed(['index is missing']);
    const item: Item = { action, index, id: text('_id'), routing: text('routing') ?? text('_routing'), meta: m };
    const ra = text('require_alias');
    if (action !== 'delete' && (ra === undefined ? this.requireAlias : parseBool(ra, false))) item.requireAlias = true;
    if (action === 'delete') {
      if (!item.id) item.error = illegalArgument('id is missing');
      this.items.push(item);
      return;
    }
    // ES's BulkOperation: an empty `_id` fails its item (`update` items: the request's validation)
    if (item.id === '' && action !== 'update') item.error = illegalArgument('if _id is specified it must not be empty');
    // No ingest pipelines here: naming one (the item's, else the request's) fails the item as a
    // pipeline that does not exist does in ES; `_none` is no pipeline.
    const pipeline = action === 'update' ? undefined : (text('pipeline') ?? this.pipeline);
    if (pipeline !== undefined && pipeline !== '_none') item.error ??= illegalArgument(`pipeline with id [${pipeline}] does not exist`);
    this.pending = item; // an action line that ends the body has no source: dropped (ES)
  }

  /** The items read since the last take (an action still waiting for its source stays). */
  take(): Item[] {
    const out = this.items;
    this.taken += out.length;
    this.items = [];
    return out;
  }

  finish(): Item[] {
    if (!this.items.length && !this.taken) throw validationFailed(['no requests added']);
    return this.take();
  }
}

/** Splits an NDJSON bulk body into items; source lines stay raw text (never parsed here). */
export function parseBulk(text: string, defaultIndex: string | undefined, requireAlias = false, pipeline?: string): Item[] {
  if (!text.length) throw validationFailed(['no requests added']);
  if (!text.endsWith('\n')) throw illegalArgument('The bulk request must be terminated by a newline [\\n]');
  const p = new BulkLines(defaultIndex, requireAlias, pipeline);
  for (let pos = 0; pos < text.length; ) {
    const nl = text.indexOf('\n', pos);
    p.push(text.slice(pos, nl));
    pos = nl + 1;
  }
  return p.finish();
}

/** Bodies over this are read in windows of about this much (bulkWindows). */
export const BULK_WINDOW = 4 * 1024 * 1024;

/**
 * A bulk body as received, in windows of items of about `windowBytes` of NDJSON each: decoded a
 * window at a time (cut at newlines, so no character is split; an action never parted from its
 * source), the event loop getting a turn whenever a slice's time is used. A small body is one window.
 */
export async function* bulkWindows(body: Buffer | undefined, defaultIndex: string | undefined, requireAlias = false, pipeline?: string, windowBytes = BULK_WINDOW): AsyncGenerator<Item[]> {
  if (!body || body.length < windowBytes) {
    yield parseBulk(body?.toString('utf8') ?? '', defaultIndex, requireAlias, pipeline);
    return;
  }
  if (body[body.length - 1] !== 0x0a) throw illegalArgument('The bulk request must be terminated by a newline [\\n]');
  const p = new BulkLines(defaultIndex, requireAlias, pipeline);
  const slicer = new Slicer();
  for (let pos = 0; pos < body.length; ) {
    let end = body.indexOf(0x0a, Math.min(body.length - 1, pos + windowBytes));
    if (end < 0) end = body.length - 1;
    const text = body.toString('utf8', pos, end + 1);
    for (let at = 0, n = 0; at < text.length; n++) {
      if ((n & 255) === 0 && slicer.due) await slicer.pause();
      const nl = text.indexOf('\n', at);
      p.push(text.slice(at, nl));
      at = nl + 1;
    }
    pos = end + 1;
    if (pos >= body.length) yield p.finish();
    else yield p.take();
  }
}

/** parseBulk for a body as received, read in windows (bulkWindows); every item at once. */
export async function parseBulkBody(body: Buffer | undefined, defaultIndex: string | undefined, requireAlias = false): Promise<Item[]> {
  const all: Item[] = [];
  for await (const w of bulkWindows(body, defaultIndex, requireAlias)) for (const it of w) all.push(it);
  return all;
}

function itemError(e: EsError, idx: IndexState | undefined, shard: number | undefined) {
  return {
    type: e.type,
    reason: e.message,
    ...(e.extra.meta ?? {}),
    ...(e.extra.causedBy ? { caused_by: toErrorBody(e.extra.causedBy).error } : {}),
    ...(idx ? { index_uuid: idx.uuid, ...(shard !== undefined ? { shard: String(shard) } : {}), index: idx.name } : {}),
  };
}

/** One write of a bulk (a `_bulk` line pair, or a reindex / delete-by-query hit). */
export interface BulkOp {
  action: Action;
  index: string;
  id?: string;
  routing?: string;
  /** Raw `_source` text (index/create). */
  source?: string;
  /** Update items: what to merge or upsert. */
  update?: UpdateSpec;
  /** Failed before reaching a shard. */
  error?: EsError;
  /** The shard the doc is known to live on (a delete-by-query hit); else routing or id decides. */
  shard?: number;
  /** Compare-and-set of a plain write (a delete-by-query hit's `_seq_no` / `_primary_term`). */
  ifSeqNo?: number;
  ifPrimaryTerm?: number;
  /** External versioning of a plain write. */
  version?: number;
  /** The item must name an alias (`require_alias`). */
  requireAlias?: boolean;
  versionType?: 'external' | 'external_gte';
}

/** A bulk item's result, keyed by its action as ES renders it (`{"index":{…,"status":201}}`). */
export type BulkItemResult = Record<string, Record<string, unknown>>;


/**
 * Runs bulk ops as `_bulk` does: per-item authorization (a forbidden item fails alone, writeAuthz.ts),
 * auto-creation of missing indices (not for deletes alone), then per shard, in item order: runs of
 * plain writes go to the shard in one write message, and each update is read → merge → conditional
 * write at its place in the order, so later items see earlier ones. Shards run in parallel.
 */
export async function executeBulk(s: SearchServices, auth: Authentication | undefined, items: BulkOp[], refresh?: string): Promise<BulkItemResult[]> {
  const results: BulkItemResult[] = new Array(items.length);
  // Item by item, the shard-level bulk[s] and the action the op type implies (ES authorizeBulkItems):
  // a denied item gets its own 403 while the others proceed. Checked on the name before it is
  // resolved, so a missing index tells nothing to whoever may not write it. Memoized per (op, index).
  // (Keyed by action, then index: no key string per item.)
  const denied = new Map<string, Map<string, EsError | undefined>>();
  const deniedOf = (it: BulkOp) => denied.get(it.action)?.get(it.index);
  // A bulk may hold hundreds of thousands of items: every pass over them gives the loop a turn now
  // and then (wire/slicer.ts), so that no request holds the event loop for long.
  const slicer = new Slicer();
  for (let i = 0; i < items.length; i++) {
    if ((i & 1023) === 0 && slicer.due) await slicer.pause();
    const it = items[i];
    let byIndex = denied.get(it.action);
    if (!byIndex) denied.set(it.action, (byIndex = new Map()));
    if (!byIndex.has(it.index)) byIndex.set(it.index, await authorizeWrite(s, auth, it.action, it.index).then(() => undefined, (e) => asEsError(e)));
  }
  // Resolve target indices once each, auto-creating those an allowed non-delete item writes to (ES
  // creates no index for deletes); a failure fails that index's items, not the request.
  const targets = new Map<string, IndexState | EsError>();
  // require_alias: the name must be an alias, and nothing is created for it (TransportBulkAction)
  const notAlias = (it: BulkOp) => it.requireAlias === true && !s.cluster.metadata.aliases.has(it.index);
  const writesTo = new Set<string>();
  for (let i = 0; i < items.length; i++) {
    if ((i & 1023) === 0 && slicer.due) await slicer.pause();
    const it = items[i];
    if (it.action !== 'delete' && !it.error && !deniedOf(it) && !notAlias(it)) writesTo.add(it.index);
  }
  for (let i = 0; i < items.length; i++) {
    if ((i & 1023) === 0 && slicer.due) await slicer.pause();
    const it = items[i];
    if (targets.has(it.index) || deniedOf(it) || notAlias(it)) continue;
    try {
      let idx = s.cluster.writeIndex(it.index); // an alias writes to its write index
      if (!idx) {
        if (!writesTo.has(it.index)) idx = s.cluster.require(it.index);
        else {
          await authorizeOn(s, auth, AUTO_CREATE_ACTION, it.index);
          idx = await writeTarget(s, it.index);
        }
      }
      targets.set(it.index, idx.settings.closed ? indexClosed(idx) : idx); // BulkOperation.addFailureIfIndexIsClosed
    } catch (e) {
      targets.set(it.index, asEsError(e));
    }
  }
  // Group by shard, keeping each item's position (groups in order of first appearance).
  type Group = { idx: IndexState; n: number; pos: number[] };
  const groups: Group[] = [];
  const groupOf = new Map<IndexState, Group[]>();
  for (let i = 0; i < items.length; i++) {
    if ((i & 255) === 0 && slicer.due) await slicer.pause();
    const it = items[i];
    const t = targets.get(it.index);
    // flood stage: every write but a delete is refused (ES's read-only-allow-delete block)
    const blocked = it.action !== 'delete' && t && !(t instanceof Error) && s.flood ? floodBlock(s, t.name) : undefined;
    const err = deniedOf(it) ?? (notAlias(it) ? requireAliasMissing(it.index) : undefined) ?? (t instanceof Error ? t : it.error) ?? blocked;
    if (err || !t || t instanceof Error) {
      const e = err ?? indexNotFound(it.index);
      const onIndex = t instanceof Error || !t || e === blocked || notAlias(it) ? undefined : t;
      results[i] = { [it.action]: { _index: it.index, _id: it.id ?? null, status: e.status, error: itemError(e, onIndex, undefined) } };
      continue;
    }
    it.id ??= autoId();
    it.routing ??= aliasIndexRouting(s, it.index, t);
    let n: number;
    try {
      n = it.shard ?? docShard(t, it.id, it.routing, it.action !== 'delete');
    } catch (e) {
      const err = asEsError(e); // routing required / partitioned index: that item fails alone
      results[i] = { [it.action]: { _index: t.name, _id: it.id, status: err.status, error: itemError(err, undefined, undefined) } };
      continue;
    }
    let byShard = groupOf.get(t);
    if (!byShard) groupOf.set(t, (byShard = []));
    let g = byShard[n];
    if (!g) groups.push((g = byShard[n] = { idx: t, n, pos: [] }));
    g.pos.push(i);
  }
  await Promise.all(groups.map((g) => runShardGroup(s, g, items, results, refresh)));
  return results;
}

function floodBlock(s: SearchServices, index: string): EsError | undefined {
  try {
    s.flood?.checkWrite(index);
    return undefined;
  } catch (e) {
    return asEsError(e);
  }
}

/** One shard's items in order: plain writes batched between updates. */
async function runShardGroup(
  s: SearchServices,
  g: { idx: IndexState; n: number; pos: number[] },
  items: BulkOp[],
  results: BulkItemResult[],
  refresh: string | undefined,
): Promise<void> {
  let batch: number[] = [];
  const slicer = new Slicer();
  const flush = async () => {
    if (!batch.length) return;
    const pos = batch;
    batch = [];
    const writes: DocWrite[] = new Array(pos.length);
    for (let j = 0; j < pos.length; j++) {
      if ((j & 1023) === 0 && slicer.due) await slicer.pause();
      const it = items[pos[j]];
      const w: DocWrite = { op: it.action === 'delete' ? 'delete' : (it.action as 'index' | 'create'), id: it.id! };
      if (it.source !== undefined) w.source = it.source;
      if (it.routing) w.routing = it.routing;
      if (it.ifSeqNo !== undefined) w.ifSeqNo = it.ifSeqNo;
      if (it.ifPrimaryTerm !== undefined) w.ifPrimaryTerm = it.ifPrimaryTerm;
      if (it.versionType) {
        w.version = it.version;
        w.versionType = it.versionType;
      }
      writes[j] = w;
    }
    let outcomes: WriteOutcome[];
    let refreshed = false;
    try {
      let maxSeqNo: number;
      ({ outcomes, refreshed, maxSeqNo } = await s.shards.write(g.idx.shards[g.n].ref, writes, refresh));
      if (refresh === 'true' || refresh === 'wait_for') await refreshReplicas(s, g.idx, g.n, maxSeqNo);
    } catch (e) {
      const err = asEsError(e);
      outcomes = writes.map(() => ({ ok: false, status: err.status, error: { type: err.type, reason: err.message } }));
    }
    for (let j = 0; j < outcomes.length; j++) {
      if ((j & 1023) === 0 && slicer.due) await slicer.pause();
      const o = outcomes[j];
      const i = pos[j];
      const it = items[i];
      if (o.ok) {
        const r: Record<string, unknown> = writeResponse(g.idx, it.id!, o, refreshed);
        r.status = o.result === 'created' ? 201 : o.result === 'not_found' ? 404 : 200;
        results[i] = { [it.action]: r };
      } else {
        const err = outcomeError(g.idx, g.n, o);
        results[i] = { [it.action]: { _index: g.idx.name, _id: it.id, status: o.status, error: itemError(err, undefined, undefined) } };
      }
    }
  };
  for (const i of g.pos) {
    const it = items[i];
    if (it.action !== 'update') {
      batch.push(i);
      continue;
    }
    await flush(); // the update reads what the items before it wrote
    let o: UpdateOutcome;
    try {
      o = await executeUpdate(s, { idx: g.idx, n: g.n, id: it.id!, routing: it.routing }, it.update!, refresh);
    } catch (e) {
      o = { ok: false, error: asEsError(e) };
    }
    if (o.ok) {
      results[i] = { update: { ...updateResponse(g.idx, it.id!, o, it.update!.fetchSource), status: o.result === 'created' ? 201 : 200 } };
    } else {
      results[i] = { update: { _index: g.idx.name, _id: it.id, status: o.error.status, error: itemError(o.error, undefined, undefined) } };
    }
  }
  await flush();
}

const metaInt = (m: Record<string, unknown> | undefined, ...keys: string[]): number | undefined => {
  for (const k of keys) {
    const v = m?.[k];
    if (v === undefined || v === null) continue;
    if (!/^[+-]?\d+$/.test(String(v))) throw new EsError('number_format_exception', 400, `For input string: "${String(v)}"`);
    return Number(v);
  }
  return undefined;
};

/**
 * Update items' bodies are parsed with the request, and validated with it (BulkRequest.validate):
 * a malformed or invalid update line fails the whole bulk, as in ES.
 */
function prepareUpdates(items: Item[]): BulkOp[] {
  const invalid: string[] = [];
  const ops = items.map((it): BulkOp => {
    if (it.error) return it;
    if (it.action !== 'update') return plainWrite(it, invalid);
    const m = it.meta;
    const fetchSource = m?._source !== undefined ? parseSourceBody(m._source) : undefined;
    const spec = parseUpdateBody(it.source ?? '', { fetchSource });
    spec.retryOnConflict = metaInt(m, 'retry_on_conflict', '_retry_on_conflict') ?? 0;
    spec.ifSeqNo ??= metaInt(m, 'if_seq_no');
    spec.ifPrimaryTerm ??= metaInt(m, 'if_primary_term');
    checkSeqNoParams(spec.ifSeqNo, spec.ifPrimaryTerm);
    if (!it.id) invalid.push('id is missing');
    invalid.push(...validateUpdate(spec, it.id));
    return { action: 'update', index: it.index, id: it.id, routing: it.routing, update: spec, ...(it.requireAlias ? { requireAlias: true } : {}) };
  });
  if (invalid.length) throw validationFailed(invalid);
  return ops;
}

/** An index, create or delete item's compare-and-set and version fields (validated with the bulk). */
function plainWrite(it: Item, invalid: string[]): BulkOp {
  const m = it.meta;
  const ifSeqNo = metaInt(m, 'if_seq_no');
  const ifPrimaryTerm = metaInt(m, 'if_primary_term');
  if (ifSeqNo !== undefined || ifPrimaryTerm !== undefined) checkSeqNoParams(ifSeqNo, ifPrimaryTerm);
  const raw = (k: string) => (m?.[k] === undefined || m[k] === null ? undefined : String(m[k]));
  const { fields, errors } = writeVersion(it.action as 'index' | 'create' | 'delete', { version: raw('version') ?? raw('_version'), versionType: raw('version_type') ?? raw('_version_type'), ifSeqNo });
  invalid.push(...errors);
  const long = it.action === 'delete' ? null : idTooLong(it.id);
  if (long) invalid.push(long);
  return { ...it, ...(ifSeqNo !== undefined ? { ifSeqNo } : {}), ...(ifPrimaryTerm !== undefined ? { ifPrimaryTerm } : {}), ...fields };
}

async function bulk(s: SearchServices, req: EsRequest) {
  const start = Date.now();
  const refresh = refreshParam(req);
  // ES: the bulk action needs a grant on some index at all, else the whole request is refused.
  if (s.security) await s.security.authorize(req.auth, BULK_ACTION, []);
  const requireAlias = parseBool(req.query.require_alias, false);
  const pipeline = req.query.pipeline;
  if (!req.body || req.body.length < BULK_WINDOW) {
    const items = prepareUpdates(parseBulk(req.body?.toString('utf8') ?? '', req.params.index, requireAlias, pipeline));
    const results = await executeBulk(s, req.auth, items, refresh);
    // An update's `get._source` keeps its numbers' spelling (lossless); everything else is plain JSON.
    if (items.some((it) => it.update?.fetchSource?.fetch)) {
      const errors = results.some((r) => (Object.values(r)[0] as { error?: unknown }).error !== undefined);
      return { body: losslessBody({ errors, took: Date.now() - start, items: results }) };
    }
    return { body: await bulkResponse([await itemsJson(results)], start) };
  }
  // A large body (up to http.max_content_length): checked whole first, as ES parses a bulk request
  // before it runs any item (a malformed line fails the request, nothing written); then run a window
  // at a time, each window's results serialized at once. Only one window's items are ever held, and
  // no step holds the event loop for long.
  for await (const w of bulkWindows(req.body, req.params.index, requireAlias, pipeline)) prepareUpdates(w);
  const parts: ItemsJson[] = [];
  for await (const w of bulkWindows(req.body, req.params.index, requireAlias, pipeline)) {
    const items = prepareUpdates(w);
    parts.push(await itemsJson(await executeBulk(s, req.auth, items, refresh), items.some((it) => it.update?.fetchSource?.fetch)));
  }
  return { body: await bulkResponse(parts, start) };
}

/** Items per serialized slice of a bulk response. */
const RESPONSE_SLICE = 2_000;

interface ItemsJson {
  /** The items' JSON, without the array's brackets, in slices. */
  chunks: Buffer[];
  errors: boolean;
}

/** Results as JSON bytes, a slice of items at a time with turns of the loop between. */
async function itemsJson(results: BulkItemResult[], lossless = false): Promise<ItemsJson> {
  const slicer = new Slicer();
  let errors = false;
  for (let i = 0; i < results.length && !errors; i++) {
    if ((i & 1023) === 0 && slicer.due) await slicer.pause();
    for (const k in results[i]) if ((results[i][k] as { error?: unknown }).error !== undefined) errors = true;
  }
  const chunks: Buffer[] = [];
  for (let i = 0; i < results.length; i += RESPONSE_SLICE) {
    if (slicer.due) await slicer.pause();
    const part = results.slice(i, i + RESPONSE_SLICE);
    const json = lossless ? (losslessBody(part).chunks[0] as string) : stringify(part);
    chunks.push(Buffer.from(json.slice(1, -1)));
  }
  return { chunks, errors };
}

/** `{"errors":…,"took":…,"items":[…]}` from the items' JSON parts (a large bulk's windows). */
async function bulkResponse(parts: ItemsJson[], start: number): Promise<RawJson> {
  const errors = parts.some((p) => p.errors);
  const out: Buffer[] = [Buffer.from(`{"errors":${errors},"took":${Date.now() - start},"items":[`)];
  const comma = Buffer.from(',');
  let first = true;
  for (const p of parts) {
    for (const c of p.chunks) {
      if (!first) out.push(comma);
      out.push(c);
      first = false;
    }
  }
  out.push(Buffer.from(']}'));
  return new RawJson(out);
}

export function bulkRoutes(r: Router, s: SearchServices): void {
  const authz = { kind: 'handler' as const };
  r.add(['POST', 'PUT'], '/_bulk', (req) => bulk(s, req), authz);
  r.add(['POST', 'PUT'], '/{index}/_bulk', (req) => bulk(s, req), authz);
}

