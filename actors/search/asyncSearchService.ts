import { randomBytes } from 'node:crypto';
import { asEsError, illegalArgument, toErrorBody, validationFailed, EsError } from '../wire/esErrors';
import { stringify } from '../wire/json';
import { RawJson, type EsRequest, type EsResponse } from '../wire/rest';
import { formatTimeValue, parseTimeValue } from '../wire/timeValue';
import type { AsyncOutcome, AsyncSearchRegistry, Progress } from '../contexts/asyncSearches';
import type { AsyncSearchState } from '../../streams/evolve';
import { parseSearchCall, runSearch, searchCallOf } from './searchService';
import { isSuperuser, mayUse } from './contextUse';
import { checkContextQuota } from './contextQuota';
import { ASYNC_BATCHED_REDUCE_SIZE, partialReducer, runningResponse } from './asyncSearchPartial';
import { DEFAULT_MAX_BUCKETS } from '../wire/circuitBreaker';
import type { PagingServices, SearchCall } from './services';

/**
 * Async search (ES TransportSubmitAsyncSearchAction, TransportGetAsyncSearchAction, AsyncResultsService):
 * a search that may outlive its request. It runs like any search; if it is still running after
 * `wait_for_completion_timeout` (1s), or `keep_on_completion` asks, the client gets ES's id and the
 * search becomes an actor of the async search registry, its result stored where every node reads it.
 */

const DEFAULT_WAIT_MS = 1_000;
const DEFAULT_KEEP_ALIVE_MS = 5 * 86_400_000;
const MIN_KEEP_ALIVE_MS = 1_000;
/** ES's `search.max_async_search_response_size` default (10mb). */
const DEFAULT_MAX_RESPONSE = 10 * 1024 * 1024;
/**
 * URL parameters of the async APIs themselves (not the search's). `typed_keys` stays with the search:
 * the stored response is rendered with it (ES applies it when rendering, also on GET; here the
 * submit's choice holds for every GET).
 */
const ASYNC_PARAMS = ['wait_for_completion_timeout', 'keep_on_completion', 'keep_alive', 'batched_reduce_size', 'ccs_minimize_roundtrips', 'pre_filter_shard_size'];

// ---- ids (ES AsyncExecutionId: base64url of writeString(docId) + writeString(taskId)) ----

let taskSeq = 0;

function writeString(s: string): Buffer {
  const b = Buffer.from(s, 'utf8');
  const len: number[] = [];
  for (let n = s.length; ; n >>>= 7) {
    if (n < 0x80) {
      len.push(n);
      break;
    }
    len.push((n & 0x7f) | 0x80);
  }
  return Buffer.concat([Buffer.from(len), b]);
}

function readString(b: Buffer, at: number): [string, number] {
  let n = 0;
  let shift = 0;
  for (;;) {
    if (at >= b.length || shift > 28) throw new Error('truncated');
    const x = b[at++];
    n |= (x & 0x7f) << shift;
    if (!(x & 0x80)) break;
    shift += 7;
  }
  if (at + n > b.length) throw new Error('truncated');
  return [b.subarray(at, at + n).toString('utf8'), at + n];
}

const uuidOf = (bytes: Buffer) => {
  const h = bytes.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

/** A new async search id: our uuid (the aggregate id) and ES's id naming its doc and task (`<node>:<n>`). */
export function newAsyncId(nodeId: string): { id: string; esId: string } {
  const raw = randomBytes(16);
  raw[6] = (raw[6] & 0x0f) | 0x40; // a v4 uuid
  raw[8] = (raw[8] & 0x3f) | 0x80;
  const docId = raw.toString('base64url');
  const esId = Buffer.concat([writeString(docId), writeString(`${nodeId}:${++taskSeq}`)]).toString('base64url');
  // Java's URL encoder pads
  return { id: uuidOf(raw), esId: esId + '='.repeat((4 - (esId.length % 4)) % 4) };
}

/** The uuid behind ES's id; 400 `invalid id: [<id>]` when it does not decode, undefined for a doc id not ours. */
export function parseAsyncId(esId: string): string | undefined {
  try {
    if (!/^[A-Za-z0-9_-]+=*$/.test(esId)) throw new Error('not base64url');
    const b = Buffer.from(esId, 'base64url');
    const [docId, at] = readString(b, 0);
    const [, end] = readString(b, at);
    if (end !== b.length) throw new Error('trailing bytes');
    const doc = Buffer.from(docId, 'base64url');
    return doc.length === 16 && doc.toString('base64url') === docId ? uuidOf(doc) : undefined;
  } catch {
    throw illegalArgument(`invalid id: [${esId}]`);
  }
}

const notFound = (esId: string) => new EsError('resource_not_found_exception', 404, esId);

// ---- parameters ----

function keepAliveParam(s: PagingServices, raw: string | undefined, fallback?: number): number | undefined {
  if (raw === undefined) return fallback;
  const ms = parseTimeValue(raw, 'keep_alive');
  if (ms < MIN_KEEP_ALIVE_MS) throw validationFailed([`[keep_alive] must be greater or equals than 1 second, got:${formatTimeValue(ms)}`]);
  const max = s.ctx.settings.get<unknown>('async_search.max_keep_alive', undefined);
  if (max !== undefined && ms > parseTimeValue(String(max), 'async_search.max_keep_alive')) {
    const maxMs = parseTimeValue(String(max), 'async_search.max_keep_alive');
    throw illegalArgument(`Keep alive for request (${formatTimeValue(ms)}) is too large. It must be less than (${formatTimeValue(maxMs)}). This limit can be set by changing the [async_search.max_keep_alive] cluster level setting.`);
  }
  return ms;
}

// ---- running a search into an outcome ----

const responseText = (body: unknown) =>
  body instanceof RawJson ? body.chunks.map((c) => (typeof c === 'string' ? c : c.toString('utf8'))).join('') : stringify(body);

/** Runs a search and settles to what GET shows: its response, or its error (never rejects). */
async function outcomeOf(s: PagingServices, call: SearchCall, progress: Progress, batch = ASYNC_BATCHED_REDUCE_SIZE): Promise<AsyncOutcome> {
  try {
    const parsed = parseSearchCall(call);
    const onShard = partialReducer(parsed, batch, progress, s.ctx.settings.num('search.max_buckets', DEFAULT_MAX_BUCKETS));
    const res = await runSearch(s, { ...call, onShard }, parsed);
    const text = responseText(res.body);
    const max = Number(s.ctx.settings.get<unknown>('search.max_async_search_response_size', DEFAULT_MAX_RESPONSE)) || DEFAULT_MAX_RESPONSE;
    if (Buffer.byteLength(text) > max) {
      throw illegalArgument(`Can't store an async search response larger than [${max}] bytes. This limit can be set by changing the [search.max_async_search_response_size] setting.`);
    }
    const m = /"_shards":\{"total":(\d+),"successful":(\d+),"skipped":(\d+),"failed":(\d+)/.exec(text.slice(0, 8192));
    const sh = m ? { total: +m[1], successful: +m[2], skipped: +m[3], failed: +m[4] } : { total: progress.total, successful: progress.successful, skipped: 0, failed: progress.failed };
    return { status: res.status ?? 200, partial: sh.failed > 0, shards: sh, text: `"response":${text}` };
  } catch (e) {
    const err = asEsError(e);
    return {
      status: err.status,
      partial: true,
      shards: { total: progress.total, successful: progress.successful, skipped: 0, failed: progress.failed },
      text: `"error":${stringify(toErrorBody(err).error)}`,
    };
  }
}

/** The runner the registry uses to run a submitted search again (adoption, restart): as the owner, on the indices it named. */
export function asyncRunner(s: PagingServices) {
  return (st: Pick<AsyncSearchState, 'request'>, progress: Progress): Promise<AsyncOutcome> => {
    const body = st.request.body;
    const call: SearchCall = { params: st.request.params, query: st.request.query, body: body ? JSON.parse(body) : undefined, text: body };
    // authorized when it was submitted; the index expression is resolved again as it stands now
    return outcomeOf({ ...s, security: undefined }, call, progress);
  };
}

// ---- rendering ----

interface Shape {
  esId?: string;
  running: boolean;
  partial: boolean;
  startedAt: number;
  expiresAt: number;
  completedAt?: number;
  /** `"response":{…}` or `"error":{…}`. */
  fragment?: string;
}

function render(x: Shape, status: number): EsResponse {
  const head = {
    ...(x.esId ? { id: x.esId } : {}),
    is_partial: x.partial,
    is_running: x.running,
    start_time_in_millis: x.startedAt,
    expiration_time_in_millis: x.expiresAt,
    ...(x.completedAt !== undefined ? { completion_time_in_millis: x.completedAt } : {}),
  };
  const text = JSON.stringify(head);
  const headers: Record<string, string> = { 'x-elasticsearch-async-is-running': x.running ? '?1' : '?0', ...(x.esId ? { 'x-elasticsearch-async-id': x.esId } : {}) };
  return { status, headers, body: new RawJson([x.fragment ? `${text.slice(0, -1)},${x.fragment}}` : text]) };
}

const runningFragment = runningResponse;

// ---- the APIs ----

/** POST [/<index>]/_async_search. */
export async function submitAsyncSearch(s: PagingServices, reg: AsyncSearchRegistry, req: EsRequest): Promise<EsResponse> {
  const q = { ...req.query };
  const waitMs = q.wait_for_completion_timeout !== undefined ? parseTimeValue(q.wait_for_completion_timeout, 'wait_for_completion_timeout') : DEFAULT_WAIT_MS;
  const keep = q.keep_on_completion === 'true' || q.keep_on_completion === '';
  const keepAliveMs = keepAliveParam(s, q.keep_alive, DEFAULT_KEEP_ALIVE_MS)!;
  const batch = q.batched_reduce_size !== undefined ? Number(q.batched_reduce_size) : ASYNC_BATCHED_REDUCE_SIZE;
  if (!/^-?\d+$/.test(q.batched_reduce_size ?? '5')) throw illegalArgument(`Failed to parse int parameter [batched_reduce_size] with value [${q.batched_reduce_size}]`);
  if (batch < 2) throw illegalArgument('batchedReduceSize must be >= 2');
  for (const k of ASYNC_PARAMS) delete q[k];
  if (q.scroll !== undefined) throw validationFailed(['[scroll] queries are not supported']);
  const base = searchCallOf(req);
  const call: SearchCall = { ...base, query: q };
  parseSearchCall(call); // ES's 400s come back at once, before anything runs
  checkContextQuota(s, req, 'async_search');
  const startedAt = Date.now();
  const progress: Progress = { total: 0, successful: 0, failed: 0 };
  const run = outcomeOf(s, { ...call, onShard: undefined }, progress, batch);
  let timer: NodeJS.Timeout | undefined;
  const finished = await Promise.race([run.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), Math.max(0, waitMs))))]);
  clearTimeout(timer);
  if (finished && !keep) {
    // done within the wait and not to be kept: nothing is stored, no id (ES)
    const o = await run;
    return render({ running: false, partial: o.partial, startedAt, expiresAt: startedAt + keepAliveMs, completedAt: Date.now(), fragment: o.text }, o.status >= 400 ? o.status : 200);
  }
  const { id, esId } = newAsyncId(s.ctx.node.id);
  const owner = s.security?.ownerOf(req.auth);
  const indices = req.params.index ? req.params.index.split(',') : [];
  await reg.submit({
    id, esId, keepAliveMs, ...(owner ? { owner } : {}), indices, submittedAt: startedAt, correlationId: req.opaqueId, run, progress,
    request: { params: req.params, query: q, ...(base.text ? { body: base.text } : {}) },
  });
  if (finished) {
    const o = await run;
    await reg.view(id, {}); // the stored result and its completed fact are in before the answer
    return render({ esId, running: false, partial: o.partial, startedAt, expiresAt: startedAt + keepAliveMs, completedAt: Date.now(), fragment: o.text }, o.status >= 400 ? o.status : 200);
  }
  return render({ esId, running: true, partial: true, startedAt, expiresAt: startedAt + keepAliveMs, fragment: runningFragment(progress, startedAt) }, 200);
}

/** The search behind an id the caller may see, or ES's 404 (another user's search is as good as missing). */
async function owned(s: PagingServices, reg: AsyncSearchRegistry, req: EsRequest, statusOfAll = false): Promise<{ id: string; esId: string }> {
  const esId = req.params.id;
  const id = parseAsyncId(esId);
  const st = id ? await reg.state(id) : undefined;
  if (!id || !st || (st.status !== 'running' && st.status !== 'completed') || st.expiresAt <= Date.now()) throw notFound(esId);
  if (!mayUse(s, req, st.owner) && !(statusOfAll && (await mayMonitor(s, req)))) throw notFound(esId);
  return { id, esId };
}

/** ES TransportGetAsyncStatusAction: the status of anyone's search for a holder of `cluster:monitor/async_search/status` (`monitor`). */
async function mayMonitor(s: PagingServices, req: EsRequest): Promise<boolean> {
  if (isSuperuser(req)) return true;
  if (!s.security) return false;
  try {
    await s.security.authorize(req.auth, 'cluster:monitor/async_search/status');
    return true;
  } catch {
    return false;
  }
}

/** GET /_async_search/<id> and GET /_async_search/status/<id>. */
export async function getAsyncSearch(s: PagingServices, reg: AsyncSearchRegistry, req: EsRequest, statusOnly: boolean): Promise<EsResponse> {
  const { id, esId } = await owned(s, reg, req, statusOnly);
  const keepAliveMs = keepAliveParam(s, req.query.keep_alive);
  const waitMs = !statusOnly && req.query.wait_for_completion_timeout !== undefined ? parseTimeValue(req.query.wait_for_completion_timeout, 'wait_for_completion_timeout') : undefined;
  const v = await reg.view(id, { keepAliveMs, waitMs, correlationId: req.opaqueId });
  if (!v) throw notFound(esId);
  const st = v.state;
  if (v.running || st.status === 'running') {
    const p = v.progress;
    if (statusOnly) return statusBody(esId, st, true, { total: p?.total ?? 0, successful: p?.successful ?? 0, skipped: 0, failed: p?.failed ?? 0 });
    return render({ esId, running: true, partial: true, startedAt: st.submittedAt, expiresAt: st.expiresAt, fragment: runningFragment(p, st.submittedAt) }, 200);
  }
  const c = st.completion!;
  if (statusOnly) return statusBody(esId, st, false, c.shards, c.status);
  const fragment = await reg.results.get(id);
  if (fragment === undefined) throw notFound(esId);
  return render({ esId, running: false, partial: c.partial, startedAt: st.submittedAt, expiresAt: st.expiresAt, completedAt: st.completedAt, fragment }, c.status >= 400 ? c.status : 200);
}

function statusBody(esId: string, st: AsyncSearchState, running: boolean, shards: AsyncOutcome['shards'], status?: number): EsResponse {
  return {
    body: {
      id: esId, is_running: running, is_partial: running || !!st.completion?.partial,
      start_time_in_millis: st.submittedAt, expiration_time_in_millis: st.expiresAt,
      ...(st.completedAt !== undefined && !running ? { completion_time_in_millis: st.completedAt } : {}),
      _shards: shards,
      ...(!running ? { completion_status: status } : {}),
    },
  };
}

/** DELETE /_async_search/<id>: cancels it if running, deletes its result. */
export async function deleteAsyncSearch(s: PagingServices, reg: AsyncSearchRegistry, req: EsRequest): Promise<EsResponse> {
  const { id, esId } = await owned(s, reg, req);
  const by = s.security?.ownerOf(req.auth)?.username;
  if (!(await reg.delete(id, by, req.opaqueId))) throw notFound(esId);
  return { body: { acknowledged: true } };
}
