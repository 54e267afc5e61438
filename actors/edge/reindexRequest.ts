import { EsError, illegalArgument, parseException, requireAliasMissing, validationFailed } from '../wire/esErrors';
import { parseBool, type EsRequest } from '../wire/rest';
import { Locator, unknownField } from '../shard/engine/base/xcontent';
import type { ByScrollJob, ReindexDest } from './bulkByScroll';
import { parseSearchCall } from '../search';
import { scriptRefused } from './routes/update';

/**
 * Parsing and validation of `_reindex` and `_delete_by_query` requests (ReindexRequest,
 * DeleteByQueryRequest, AbstractBaseReindexRestHandler), with ES's error texts. Everything here
 * runs before a task starts, so a bad request is a 400 even with `wait_for_completion=false`.
 */

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

const COMMON_PARAMS = ['refresh', 'timeout', 'wait_for_active_shards', 'wait_for_completion', 'requests_per_second', 'scroll', 'slices', 'max_docs', 'pretty', 'human', 'error_trace', 'filter_path'];
const REINDEX_PARAMS = new Set([...COMMON_PARAMS, 'require_alias']);
/** delete-by-query's own params; the rest go to its search (parseSearchRequest checks them). */
const DBQ_OWN = new Set([...COMMON_PARAMS, 'conflicts', 'scroll_size']);

/** `[slices] must be a positive integer or the string "auto"` (AbstractBaseReindexRestHandler.parseSlices). */
export function parseSlices(v: string | undefined): number | 'auto' {
  if (v === undefined) return 1;
  if (v === 'auto') return 'auto';
  const n = /^[+-]?\d+$/.test(v) ? Number(v) : NaN;
  if (!(n >= 1)) throw illegalArgument(`[slices] must be a positive integer or the string "auto", but was [${v}]`);
  return n;
}

/** requests_per_second: a float > 0, or -1 for unthrottled (Infinity). */
export function parseRequestsPerSecond(v: string | undefined): number {
  if (v === undefined) return Infinity;
  const n = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(v) ? Number(v) : NaN;
  if (n === -1) return Infinity;
  if (!(n > 0)) throw illegalArgument('[requests_per_second] must be a float greater than 0. Use -1 to disable throttling.');
  return n;
}

export { parseBool };

function parseConflicts(v: unknown): boolean {
  if (v === 'proceed') return false;
  if (v === 'abort') return true;
  throw illegalArgument(`conflicts may only be "proceed" or "abort" but was [${String(v)}]`);
}

/** max_docs from several places (URL, body `max_docs`, deprecated body `size`): one value, never negative. */
class MaxDocs {
  value?: number;
  set(v: unknown): void {
    const n = typeof v === 'number' || typeof v === 'bigint' ? Number(v) : typeof v === 'string' && /^[+-]?\d+$/.test(v) ? Number(v) : NaN;
    if (Number.isNaN(n)) throw illegalArgument(`Failed to parse int parameter [max_docs] with value [${String(v)}]`);
    if (n < 0) throw illegalArgument(`[max_docs] parameter cannot be negative, found [${n}]`);
    if (this.value !== undefined && this.value !== n) throw illegalArgument(`[max_docs] set to two different values [${this.value}] and [${n}]`);
    this.value = n;
  }
}

/** Checks URL params against what the route reads: BaseRestHandler's unrecognized-parameter error. */
function checkParams(req: EsRequest, known: (k: string) => boolean): void {
  const bad = Object.keys(req.query).filter((k) => !known(k)).sort();
  if (bad.length) throw illegalArgument(`request [${req.path}] contains unrecognized parameter${bad.length > 1 ? 's' : ''}: ${bad.map((k) => `[${k}]`).join(', ')}`);
}

/** The checks both share (AbstractBulkByScrollRequest.validate), after the search itself validated. */
function byScrollValidation(body: Json, maxDocs: number | undefined, slices: number | 'auto'): string[] {
  const errs: string[] = [];
  if (body.from !== undefined && Number(body.from) !== -1) errs.push('from is not supported in this context');
  if (body.stored_fields !== undefined) errs.push('stored_fields is not supported in this context');
  if (maxDocs !== undefined && typeof slices === 'number' && maxDocs < slices) errs.push('[max_docs] should be >= [slices]');
  if (body.slice !== undefined && (slices === 'auto' || slices > 1)) errs.push("can't specify both manual and automatic slicing at the same time");
  if (body._source === false) errs.push('_source:false is not supported in this context');
  return errs;
}

/** The scroll body of a job: `_doc` order unless a sort was given (as ES's bulk-by-scroll requests). */
function scrollBody(body: Json, batchSize: number | undefined): Json {
  const out: Json = { ...body };
  if (batchSize !== undefined) out.size = batchSize;
  else out.size ??= 1000;
  out.sort ??= ['_doc'];
  return out;
}

/** Validates the source search now, so a bad request is ES's 400 before any task starts. */
export function checkSearch(job: ByScrollJob, path: string): void {
  parseSearchCall({ params: job.search.index ? { index: job.search.index } : {}, query: { ...job.search.params, scroll: job.scroll }, body: job.search.body }, path);
}

/** `POST /_reindex` body and params (ReindexRequest.fromXContent, RestReindexAction). */
export function parseReindex(req: EsRequest, isAlias: (name: string) => boolean = () => false): ByScrollJob {
  checkParams(req, (k) => REINDEX_PARAMS.has(k));
  const q = req.query;
  const text = req.body?.toString('utf8') ?? '';
  const body = req.json<unknown>();
  if (body === undefined) throw parseException('request body is required');
  const loc = new Locator(text);
  if (!isObj(body)) throw loc.xContent([], `[reindex] Expected START_OBJECT but was: VALUE_STRING`);
  const maxDocs = new MaxDocs();
  if (q.max_docs !== undefined) maxDocs.set(q.max_docs);
  let abortOnConflict = true;
  let source: Json = {};
  let dest: Json | undefined;
  let script: unknown;
  for (const [k, v] of Object.entries(body)) {
    if (k === 'source') {
      if (!isObj(v)) throw loc.xContent([k], '[reindex] source doesn\'t support values of type: VALUE_STRING');
      source = v;
    } else if (k === 'dest') {
      if (!isObj(v)) throw loc.xContent([k], '[reindex] dest doesn\'t support values of type: VALUE_STRING');
      dest = v;
    } else if (k === 'conflicts') abortOnConflict = parseConflicts(v);
    else if (k === 'max_docs' || k === 'size') maxDocs.set(v);
    else if (k === 'script') script = v;
    else throw unknownField(loc, [k], 'reindex', k, ['source', 'dest', 'conflicts', 'max_docs', 'size', 'script']);
  }
  const { index: srcIndex, remote, size: batchSize, ...searchBody } = source;
  if (remote !== undefined) throw remoteRefused(remote);
  const destSpec = parseDest(dest ?? {}, loc);
  const slices = parseSlices(q.slices);
  const job: ByScrollJob = {
    kind: 'reindex',
    search: { index: indexExpr(srcIndex), params: {}, body: scrollBody(searchBody, batchSize === undefined ? undefined : intValue(batchSize)) },
    dest: destSpec.dest,
    maxDocs: maxDocs.value,
    abortOnConflict,
    scroll: q.scroll ?? '5m',
    rps: parseRequestsPerSecond(q.requests_per_second),
    slices,
    refresh: parseBool(q.refresh, false),
    auth: req.auth,
    opaqueId: req.opaqueId,
  };
  // Reindexer.validateAgainstAliases: with require_alias the destination must be an alias
  if (parseBool(q.require_alias, false) && !isAlias(destSpec.dest.index)) throw requireAliasMissing(destSpec.dest.index);
  const errs = byScrollValidation(searchBody, job.maxDocs, slices);
  if (job.search.index === undefined) errs.push('use _all if you really want to copy from all existing indexes');
  errs.push(...destSpec.errors);
  if (errs.length) throw validationFailed(errs);
  if (script !== undefined) throw scriptRefused(script).extra.causedBy!; // ES compiles the script up front
  return job;
}

/** XContentMapValues.nodeIntegerValue: a number, or a string Integer.parseInt accepts. */
function intValue(v: unknown): number {
  const t = String(v);
  if (typeof v === 'number' ? Number.isInteger(v) : /^[+-]?\d+$/.test(t)) return Number(t);
  throw new EsError('number_format_exception', 400, `For input string: "${t}"`);
}

function indexExpr(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  const s = Array.isArray(v) ? v.map(String).join(',') : String(v);
  return s.length ? s : undefined;
}

/** Remote reindex: this node allows no remote host (ES's default `reindex.remote.whitelist` is empty). */
function remoteRefused(remote: unknown): EsError {
  const host = isObj(remote) ? String(remote.host ?? '') : '';
  const m = /^([a-z][a-z0-9+.-]*):\/\/([^:/]+)(?::(\d+))?(\/.*)?$/i.exec(host);
  if (!m) return illegalArgument(`[host] must be of the form [scheme]://[host]:[port](/[pathPrefix])? but was [${host}]`);
  return illegalArgument(`[${m[2]}:${m[3] ?? '9200'}] not whitelisted in reindex.remote.whitelist`);
}

function parseDest(d: Json, loc: Locator): { dest: ReindexDest; errors: string[] } {
  const errors: string[] = [];
  let index: string | undefined;
  let opType: 'index' | 'create' = 'index';
  let routing: ReindexDest['routing'] = { mode: 'keep' };
  for (const [k, v] of Object.entries(d)) {
    if (k === 'index') index = String(v);
    else if (k === 'op_type') {
      const t = String(v).toLowerCase();
      if (t !== 'index' && t !== 'create') throw illegalArgument(`opType must be 'create' or 'index', found: [${String(v)}]`);
      opType = t;
    } else if (k === 'routing') {
      const r = String(v);
      if (r === 'keep') routing = { mode: 'keep' };
      else if (r === 'discard') routing = { mode: 'discard' };
      else if (r.startsWith('=')) routing = { mode: 'set', value: r.slice(1) };
      else errors.push('routing must be unset, [keep], [discard] or [=<some new value>]');
    } else if (k === 'version_type') {
      if (v !== 'internal') throw illegalArgument(`[dest] version_type [${String(v)}] is not supported by this node (no external versioning)`);
    } else if (k === 'pipeline') throw illegalArgument(`pipeline with id [${String(v)}] does not exist`);
    else throw unknownField(loc, ['dest', k], 'dest', k, ['index', 'op_type', 'routing', 'version_type', 'pipeline']);
  }
  if (index === undefined) errors.push('index must be specified');
  return { dest: { index: index ?? '', opType, routing }, errors };
}

/** `POST /<index>/_delete_by_query` (RestDeleteByQueryAction). */
export function parseDeleteByQuery(req: EsRequest): ByScrollJob {
  const q = req.query;
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(q)) if (!DBQ_OWN.has(k)) params[k] = v;
  const body = req.json<unknown>() ?? {};
  if (!isObj(body)) throw new Locator(req.body?.toString('utf8')).xContent([], 'Expected START_OBJECT but was: VALUE_STRING');
  const maxDocs = new MaxDocs();
  if (q.max_docs !== undefined) maxDocs.set(q.max_docs);
  let abortOnConflict = q.conflicts === undefined ? true : parseConflicts(q.conflicts);
  const search: Json = {};
  for (const [k, v] of Object.entries(body)) {
    if (k === 'conflicts') abortOnConflict = parseConflicts(v);
    else if (k === 'max_docs' || k === 'size') maxDocs.set(v);
    else search[k] = v;
  }
  const slices = parseSlices(q.slices);
  let batchSize: number | undefined;
  if (q.scroll_size !== undefined) {
    if (!/^[+-]?\d+$/.test(q.scroll_size)) throw illegalArgument(`Failed to parse int parameter [scroll_size] with value [${q.scroll_size}]`);
    batchSize = Number(q.scroll_size);
  }
  const job: ByScrollJob = {
    kind: 'delete_by_query',
    search: { index: req.params.index, params, body: scrollBody(search, batchSize) },
    maxDocs: maxDocs.value,
    abortOnConflict,
    scroll: q.scroll ?? '5m',
    rps: parseRequestsPerSecond(q.requests_per_second),
    slices,
    refresh: parseBool(q.refresh, false),
    auth: req.auth,
    opaqueId: req.opaqueId,
  };
  const errs = byScrollValidation(search, job.maxDocs, slices);
  if (search.query === undefined && params.q === undefined) errs.push('query is missing');
  if (errs.length) throw validationFailed(errs);
  return job;
}

/** POST /<index>/_update_by_query (ES UpdateByQueryRequest): delete-by-query's options, no `query` needed; a `script` is refused as reindex refuses it. */
export function parseUpdateByQuery(req: EsRequest): ByScrollJob {
  const q = req.query;
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(q)) if (!DBQ_OWN.has(k) && k !== 'pipeline') params[k] = v;
  const body = req.json<unknown>() ?? {};
  if (!isObj(body)) throw new Locator(req.body?.toString('utf8')).xContent([], 'Expected START_OBJECT but was: VALUE_STRING');
  const maxDocs = new MaxDocs();
  if (q.max_docs !== undefined) maxDocs.set(q.max_docs);
  let abortOnConflict = q.conflicts === undefined ? true : parseConflicts(q.conflicts);
  const search: Json = {};
  for (const [k, v] of Object.entries(body)) {
    if (k === 'conflicts') abortOnConflict = parseConflicts(v);
    else if (k === 'script') throw scriptRefused(v).extra.causedBy!;
    else if (k === 'max_docs' || k === 'size') maxDocs.set(v);
    else search[k] = v;
  }
  const slices = parseSlices(q.slices);
  let batchSize: number | undefined;
  if (q.scroll_size !== undefined) {
    if (!/^[+-]?\d+$/.test(q.scroll_size)) throw illegalArgument(`Failed to parse int parameter [scroll_size] with value [${q.scroll_size}]`);
    batchSize = Number(q.scroll_size);
  }
  const job: ByScrollJob = {
    kind: 'update_by_query',
    search: { index: req.params.index, params, body: scrollBody(search, batchSize) },
    maxDocs: maxDocs.value,
    abortOnConflict,
    scroll: q.scroll ?? '5m',
    rps: parseRequestsPerSecond(q.requests_per_second),
    slices,
    refresh: parseBool(q.refresh, false),
    auth: req.auth,
    opaqueId: req.opaqueId,
  };
  const errs = byScrollValidation(search, job.maxDocs, slices);
  if (errs.length) throw validationFailed(errs);
  return job;
}
