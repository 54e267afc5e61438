import { docShard } from '../../cluster';
import { AUTO_CREATE_ACTION, authorizeOn, authorizeWrite } from './writeAuthz';
import { isLosslessNumber, parse as losslessParse, stringify as losslessStringify, type LosslessNumber } from 'lossless-json';
import { EsError, illegalArgument, parseException, validationFailed, idTooLong, requireAliasMissing } from '../../wire/esErrors';
import { parseBody } from '../../wire/json';
import { type Router } from '../router';
import { RawJson, type EsRequest, type EsResponse } from '../../wire/rest';
import type { SearchServices } from '../../search/services';
import { refuseClosedDoc } from '../../search/indices';
import type { IndexState } from '../../cluster';
import { filterSource, parseSourceBody, parseSourceParams, type GetResult, type SourceFilter } from '../../shard/engine';
import { Locator, tokenName, unknownField } from '../../shard/engine/base/xcontent';
import type { DocWrite } from '../../shard/engine/types';
import { outcomeError, refreshParam, shardsHeader, writeTarget } from './documents';
import { parseBool } from '../../wire/rest';

type Json = Record<string, unknown>;

/** What an update asks for (UpdateRequest's body, plus the compare-and-set of the URL or bulk line). */
export interface UpdateSpec {
  /** Partial document, parsed losslessly (numbers keep their spelling). */
  doc?: Json;
  upsert?: Json;
  docAsUpsert: boolean;
  detectNoop: boolean;
  script?: unknown;
  scriptedUpsert: boolean;
  /** `_source` of the response's `get`; undefined = no `get`. */
  fetchSource?: SourceFilter;
  ifSeqNo?: number;
  ifPrimaryTerm?: number;
  retryOnConflict: number;
}

const BODY_FIELDS = ['script', 'scripted_upsert', 'upsert', 'doc', 'doc_as_upsert', 'detect_noop', '_source', 'if_seq_no', 'if_primary_term'];
const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v) && !isLosslessNumber(v);

/**
 * Parses an update body as ES's `UpdateRequest` ObjectParser does: `doc`/`upsert` objects, booleans,
 * `_source`, `script`; an unknown field is `[l:c] [UpdateRequest] unknown field [x]`.
 * @param text the body (or bulk update line) as received.
 */
export function parseUpdateBody(text: string, defaults: { fetchSource?: SourceFilter } = {}): UpdateSpec {
  const plain = parseBody<unknown>(text); // ES's parse error for malformed JSON
  const loc = new Locator(text);
  if (!isObj(plain)) throw loc.xContent([], `[UpdateRequest] Expected START_OBJECT but was: ${tokenName(plain)}`);
  const body = losslessParse(text) as Json;
  const spec: UpdateSpec = { docAsUpsert: false, detectNoop: true, scriptedUpsert: false, retryOnConflict: 0, fetchSource: defaults.fetchSource };
  const bool = (k: string, v: unknown): boolean => {
    if (typeof v === 'boolean') return v;
    if (v === 'true' || v === 'false') return v === 'true';
    throw loc.xContent([k], `[UpdateRequest] failed to parse field [${k}]`, illegalArgument(`Failed to parse value [${String(v)}] as only [true] or [false] are allowed.`));
  };
  const long = (k: string, v: unknown): number => {
    const n = isLosslessNumber(v) ? Number((v as LosslessNumber).value) : typeof v === 'string' ? Number(v) : NaN;
    if (!Number.isInteger(n)) throw loc.xContent([k], `[UpdateRequest] failed to parse field [${k}]`);
    return n;
  };
  for (const [k, v] of Object.entries(body)) {
    switch (k) {
      case 'doc':
      case 'upsert':
        if (!isObj(v)) throw loc.xContent([k], `[UpdateRequest] ${k} doesn't support values of type: ${tokenName(plainOf(v))}`);
        if (k === 'doc') spec.doc = v;
        else spec.upsert = v;
        break;
      case 'doc_as_upsert':
        spec.docAsUpsert = bool(k, v);
        break;
      case 'detect_noop':
        spec.detectNoop = bool(k, v);
        break;
      case 'scripted_upsert':
        spec.scriptedUpsert = bool(k, v);
        break;
      case 'script':
        spec.script = v;
        break;
      case '_source':
        spec.fetchSource = parseSourceBody(plainOf(v), loc, ['_source']);
        break;
      case 'if_seq_no':
        spec.ifSeqNo = long(k, v);
        break;
      case 'if_primary_term':
        spec.ifPrimaryTerm = long(k, v);
        break;
      default:
        throw unknownField(loc, [k], 'UpdateRequest', k, BODY_FIELDS);
    }
  }
  return spec;
}

/** A lossless value as plain JSON (for type names and `_source` filter parsing). */
const plainOf = (v: unknown): unknown => JSON.parse(losslessStringify(v) ?? 'null');

/** UpdateRequest.validate (with DocWriteRequest.validateSeqNoBasedCASParams), in ES's order. */
export function validateUpdate(spec: UpdateSpec, id?: string): string[] {
  const errs: string[] = [];
  if (spec.ifPrimaryTerm === undefined && spec.ifSeqNo !== undefined) errs.push('ifSeqNo is set, but primary term is [0]');
  if (spec.ifPrimaryTerm !== undefined && spec.ifSeqNo === undefined) errs.push(`ifSeqNo is unassigned, but primary term is [${spec.ifPrimaryTerm}]`);
  if (spec.ifSeqNo !== undefined) {
    if (spec.retryOnConflict > 0) errs.push('compare and write operations can not be retried');
    if (spec.docAsUpsert) errs.push('compare and write operations can not be used with upsert');
    if (spec.upsert) errs.push("upsert requests don't support `if_seq_no` and `if_primary_term`");
  }
  if (spec.script === undefined && spec.doc === undefined) errs.push('script or doc is missing');
  if (spec.script !== undefined && spec.doc !== undefined) errs.push("can't provide both script and doc");
  if (spec.doc === undefined && spec.docAsUpsert) errs.push('doc must be specified if doc_as_upsert is enabled');
  const long = idTooLong(id);
  if (long) errs.push(long);
  return errs;
}

/** Checks the compare-and-set numbers as IndexRequest.setIfSeqNo / setIfPrimaryTerm do. */
export function checkSeqNoParams(ifSeqNo: number | undefined, ifPrimaryTerm: number | undefined): void {
  if (ifSeqNo !== undefined && ifSeqNo < 0 && ifSeqNo !== -2) throw illegalArgument(`sequence numbers must be non negative. got [${ifSeqNo}].`);
  if (ifPrimaryTerm !== undefined && ifPrimaryTerm < 0) throw illegalArgument(`primary term must be non negative. got [${ifPrimaryTerm}]`);
}

/**
 * ES on a node that runs no scripts (`script.allowed_types: none`): UpdateHelper wraps the compile
 * failure in `failed to execute script`. Only raised when the script would run (an existing doc,
 * or a scripted upsert), as in ES.
 */
export function scriptRefused(script: unknown): EsError {
  const s = isObj(script) ? (script as Json) : {};
  const lang = typeof s.lang === 'string' ? s.lang : 'painless';
  let cause: EsError;
  if (s.id !== undefined && s.source === undefined) cause = new EsError('resource_not_found_exception', 404, `unable to find script [${String(s.id)}] in cluster state`);
  else if (!['painless', 'expression', 'mustache'].includes(lang)) cause = illegalArgument(`script_lang not supported [${lang}]`);
  else cause = illegalArgument('cannot execute [inline] scripts');
  return illegalArgument('failed to execute script', { causedBy: cause });
}

/** The text and class of a JSON number: ES compares Integer/Long/Double boxes, so 1 and 1.0 differ. */
function numKey(v: LosslessNumber): string {
  const t = v.value;
  return /[.eE]/.test(t) ? `d:${Number(t)}` : `i:${BigInt(t)}`;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (isLosslessNumber(a) || isLosslessNumber(b)) return isLosslessNumber(a) && isLosslessNumber(b) && numKey(a as LosslessNumber) === numKey(b as LosslessNumber);
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isObj(a) && isObj(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]));
  }
  return a === b;
}

/**
 * Merges `changes` into `source` in place (XContentHelper.update): objects merge recursively,
 * anything else is replaced. Returns whether something changed (checked only while
 * `checkUnequal`; without it any present key counts as a change).
 */
export function mergeSource(source: Json, changes: Json, checkUnequal: boolean): boolean {
  let modified = false;
  for (const [k, v] of Object.entries(changes)) {
    if (!Object.prototype.hasOwnProperty.call(source, k)) {
      source[k] = v;
      modified = true;
      continue;
    }
    const old = source[k];
    if (isObj(old) && isObj(v)) {
      modified = mergeSource(old, v, checkUnequal && !modified) || modified;
      continue;
    }
    source[k] = v;
    if (modified) continue;
    modified = !checkUnequal || !deepEqual(old, v);
  }
  return modified;
}

/** Where an update goes: the index, its shard for the id (or routing), the id. */
export interface UpdateTarget {
  idx: IndexState;
  n: number;
  id: string;
  routing?: string;
}

export type UpdateOutcome =
  | { ok: true; result: 'created' | 'updated' | 'noop'; version: number; seqNo: number; source: string; refreshed: boolean }
  | { ok: false; error: EsError };

const conflict = (id: string, want: string, cur: string) => new EsError('version_conflict_engine_exception', 409, `[${id}]: version conflict, ${want}. ${cur}`);

/**
 * An update at the coordinator: real-time get from the shard, merge (or upsert), then a
 * conditional write (`ifSeqNo` of what was read) through the shard's normal write message, so a
 * concurrent write makes it a version conflict; retried up to `retry_on_conflict` times.
 */
export async function executeUpdate(s: SearchServices, t: UpdateTarget, spec: UpdateSpec, refresh?: string): Promise<UpdateOutcome> {
  const { idx, n, id } = t;
  s.flood?.checkWrite(idx.name); // flood stage: an update is a write
  const ref = idx.shards[n].ref;
  const meta = { index_uuid: idx.uuid, shard: String(n), index: idx.name };
  for (let attempt = 0; ; attempt++) {
    const g = await s.shards.call<GetResult | null>(ref, 'get', { id });
    if (spec.ifSeqNo !== undefined) {
      const want = `required seqNo [${spec.ifSeqNo}], primary term [${spec.ifPrimaryTerm ?? 0}]`;
      // a missing document is ES's 404 document_missing_exception below (UpdateHelper looks at the get first)
      if (g && (g.seqNo !== spec.ifSeqNo || (g.primaryTerm ?? 1) !== spec.ifPrimaryTerm)) {
        return { ok: false, error: withMeta(conflict(id, want, `current document has seqNo [${g.seqNo}] and primary term [${g.primaryTerm ?? 1}]`), meta) };
      }
    }
    let write: DocWrite;
    let result: 'created' | 'updated';
    if (!g) {
      if (!spec.upsert && !spec.docAsUpsert) {
        return { ok: false, error: new EsError('document_missing_exception', 404, `[${id}]: document missing`, { meta }) };
      }
      if (spec.scriptedUpsert && spec.script !== undefined) return { ok: false, error: scriptRefused(spec.script) };
      const doc = spec.docAsUpsert ? spec.doc! : spec.upsert!;
      write = { op: 'create', id, source: losslessStringify(doc)!, ...(t.routing !== undefined ? { routing: t.routing } : {}) };
      result = 'created';
    } else {
      if (spec.script !== undefined) return { ok: false, error: scriptRefused(spec.script) };
      const merged = losslessParse(g.source) as Json;
      const changed = mergeSource(merged, spec.doc!, spec.detectNoop);
      if (spec.detectNoop && !changed) {
        const key = `${idx.uuid}/${n}`;
        (s.noopUpdates ??= new Map()).set(key, (s.noopUpdates.get(key) ?? 0) + 1);
        return { ok: true, result: 'noop', version: g.version, seqNo: g.seqNo, source: g.source, refreshed: false };
      }
      const routing = t.routing ?? g.routing;
      write = { op: 'index', id, source: losslessStringify(merged)!, ...(routing !== undefined ? { routing } : {}), ifSeqNo: g.seqNo, ifPrimaryTerm: g.primaryTerm ?? 1 };
      result = 'updated';
    }
    const { outcomes, refreshed } = await s.shards.write(ref, [write], refresh);
    const o = outcomes[0];
    if (o.ok) return { ok: true, result, version: o.version, seqNo: o.seqNo, source: write.source!, refreshed };
    if (o.status === 409 && o.error.type === 'version_conflict_engine_exception' && attempt < spec.retryOnConflict) continue;
    return { ok: false, error: outcomeError(idx, n, o) };
  }
}

function withMeta(e: EsError, meta: Record<string, unknown>): EsError {
  return new EsError(e.type, e.status, e.message, { ...e.extra, meta: { ...(e.extra.meta ?? {}), ...meta } });
}

/**
 * The update response body (UpdateResponse): DocWriteResponse fields, `_shards` all zero for a
 * noop, and `get` (`_seq_no`, `_primary_term`, `found`, `_source`) when `_source` was asked for.
 * Numbers of the source keep their spelling (lossless).
 */
export function updateResponse(idx: IndexState, id: string, o: UpdateOutcome & { ok: true }, fetchSource: SourceFilter | undefined): Json {
  const body: Json = {
    _index: idx.name,
    _id: id,
    _version: o.version,
    result: o.result,
    ...(o.refreshed ? { forced_refresh: true } : {}),
    _shards: o.result === 'noop' ? { total: 0, successful: 0, failed: 0 } : shardsHeader(idx),
    _seq_no: o.seqNo,
    _primary_term: 1,
  };
  if (fetchSource?.fetch) {
    const filtered = filterSource(o.source, fetchSource);
    body.get = { _seq_no: o.seqNo, _primary_term: 1, found: true, ...(filtered !== undefined ? { _source: losslessParse(filtered) } : {}) };
  }
  return body;
}

/** Serializes a body that may hold lossless numbers (from `updateResponse`). */
export const losslessBody = (v: unknown): RawJson => new RawJson([losslessStringify(v) ?? 'null']);

function intParam(q: Record<string, string>, k: string, kind = 'int'): number | undefined {
  const v = q[k];
  if (v === undefined) return undefined;
  if (!/^[+-]?\d+$/.test(v)) throw illegalArgument(`Failed to parse ${kind} parameter [${k}] with value [${v}]`);
  return Number(v);
}

/** `POST /<index>/_update/<id>` (RestUpdateAction). */
async function update(s: SearchServices, req: EsRequest): Promise<EsResponse> {
  const q = req.query;
  const refresh = refreshParam(req);
  const retryOnConflict = intParam(q, 'retry_on_conflict') ?? 0;
  if (retryOnConflict < 0) throw illegalArgument('retryOnConflict must be >= 0');
  const ifSeqNo = intParam(q, 'if_seq_no', 'long');
  const ifPrimaryTerm = intParam(q, 'if_primary_term', 'long');
  checkSeqNoParams(ifSeqNo, ifPrimaryTerm);
  const text = req.body?.toString('utf8') ?? '';
  if (!text.trim()) throw parseException('request body is required');
  const urlSource = parseSourceParams({ _source: q._source, _source_includes: q._source_includes, _source_excludes: q._source_excludes });
  const spec = parseUpdateBody(text, { fetchSource: urlSource });
  spec.retryOnConflict = retryOnConflict;
  spec.ifSeqNo ??= ifSeqNo;
  spec.ifPrimaryTerm ??= ifPrimaryTerm;
  checkSeqNoParams(spec.ifSeqNo, spec.ifPrimaryTerm);
  const errs = validateUpdate(spec, req.params.id);
  if (errs.length) throw validationFailed(errs);
  if (parseBool(q.require_alias, false) && !s.cluster.metadata.aliases.has(req.params.index)) throw requireAliasMissing(req.params.index);
  // ES order: auto-create (its own action), then the shard-level bulk[s] and the update action
  if (!s.cluster.writeIndex(req.params.index)) await authorizeOn(s, req.auth, AUTO_CREATE_ACTION, req.params.index);
  const idx = await writeTarget(s, req.params.index); // an update auto-creates the index, as ES
  await authorizeWrite(s, req.auth, 'update', req.params.index);
  refuseClosedDoc(idx);
  const id = req.params.id;
  const routing = q.routing || undefined;
  const n = docShard(idx, id, routing, true);
  const o = await executeUpdate(s, { idx, n, id, routing }, spec, refresh);
  if (!o.ok) throw o.error;
  const status = o.result === 'created' ? 201 : 200;
  const location = `/${encodeURIComponent(idx.name)}/_doc/${encodeURIComponent(id)}${routing !== undefined ? `?routing=${encodeURIComponent(routing)}` : ''}`;
  return { status, body: losslessBody(updateResponse(idx, id, o, spec.fetchSource)), ...(status === 201 ? { headers: { location } } : {}) };
}

export function updateRoutes(r: Router, s: SearchServices): void {
  r.add('POST', '/{index}/_update/{id}', (req) => update(s, req), {
    kind: 'indices',
    action: 'indices:data/write/update',
    indices: (req) => [req.params.index],
  });
}
