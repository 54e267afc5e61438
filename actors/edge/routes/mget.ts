import { EsError, asEsError, illegalArgument, parseException, parsingException, toErrorBody, validationFailed } from '../../wire/esErrors';
import { stringify } from '../../wire/json';
import { type Router } from '../router';
import { RawJson, type EsRequest, type EsResponse } from '../../wire/rest';
import type { SearchServices } from '../../search/services';
import type { IndexState } from '../../cluster';
import { parseSourceBody, parseSourceParams, type SourceFilter } from '../../shard/engine';
import { refreshIndices } from './indices';
import { getDoc, getSourceFilter, renderFound } from './getDoc';
import { aliasIndexRouting } from './documents';

/** One document to get. */
export interface MgetItem {
  index?: string;
  id?: string;
  routing?: string;
  storedFields?: string[];
  /** undefined = the request's default (URL `_source*`, else the whole source). */
  source?: SourceFilter;
  version?: string;
  versionType?: string;
}

const SHARD_ACTION = 'indices:data/read/mget[shard]';
const splitComma = (s: string) => s.split(',').map((x) => x.trim()).filter(Boolean);

/**
 * Parses an `_mget` body (MultiGetRequest.add): `docs` objects or `ids`, with the URL's index,
 * routing, stored_fields and `_source` as defaults.
 * @throws EsError 400 with ES's texts (then `Validation Failed` for missing index or id).
 */
export function parseMget(body: unknown, defaults: { index?: string; routing?: string; storedFields?: string[] }): MgetItem[] {
  if (body === undefined) throw parseException('request body or source parameter is required');
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw parsingException(`unexpected token [${Array.isArray(body) ? 'START_ARRAY' : 'VALUE_STRING'}], expected [START_OBJECT]`, 1, 1);
  }
  const items: MgetItem[] = [];
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    if (!Array.isArray(v)) {
      throw parsingException(`unexpected token [${v !== null && typeof v === 'object' ? 'START_OBJECT' : 'VALUE_STRING'}], expected [FIELD_NAME] or [START_ARRAY]`, 1, 1);
    }
    if (k === 'docs') items.push(...v.map((d) => parseDoc(d, defaults)));
    else if (k === 'ids') {
      for (const id of v) {
        if (id === null || typeof id === 'object') throw illegalArgument('ids array element should only contain ids');
        items.push({ index: defaults.index, id: String(id), routing: defaults.routing, storedFields: defaults.storedFields });
      }
    } else throw parsingException(`unknown key [${k}] for a START_ARRAY, expected [docs] or [ids]`, 1, 1);
  }
  const errs: string[] = [];
  if (!items.length) errs.push('no documents to get');
  items.forEach((it, i) => {
    if (it.index === undefined) errs.push(`index is missing for doc ${i}`);
    if (it.id === undefined) errs.push(`id is missing for doc ${i}`);
  });
  if (errs.length) throw validationFailed(errs);
  return items;
}

function parseDoc(d: unknown, defaults: { index?: string; routing?: string; storedFields?: string[] }): MgetItem {
  if (d === null || typeof d !== 'object' || Array.isArray(d)) throw illegalArgument('docs array element should include an object');
  const it: MgetItem = { index: defaults.index, routing: defaults.routing, storedFields: defaults.storedFields };
  for (const [k, v] of Object.entries(d as Record<string, unknown>)) {
    const scalar = v === null || typeof v !== 'object';
    if (k === '_index' && scalar) it.index = String(v);
    else if (k === '_id' && scalar) it.id = String(v);
    else if ((k === 'routing' || k === '_routing') && scalar) it.routing = String(v);
    else if (k === 'fields') throw parsingException('Unsupported field [fields] used, expected [stored_fields] instead');
    else if (k === 'stored_fields') it.storedFields = Array.isArray(v) ? v.map(String) : [String(v)];
    else if (k === '_source') it.source = parseSourceBody(v);
    else if (k === 'version' && scalar) it.version = String(v);
    else if (k === 'version_type' && scalar) it.versionType = String(v);
    else if (scalar) throw new EsError('parse_exception', 400, `failed to parse multi get request. unknown field [${k}]`);
    // ES skips unknown object/array fields in a doc
  }
  return it;
}

/** Runs `fn` over `xs` with at most `limit` in flight; results in order. */
export async function mapLimit<T, R>(xs: T[], limit: number, fn: (x: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(xs.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < xs.length; i = next++) out[i] = await fn(xs[i], i);
  };
  await Promise.all(Array.from({ length: Math.min(limit, xs.length) }, worker));
  return out;
}

/**
 * `GET|POST /_mget`, `/<index>/_mget`: real-time gets from the shards, in request order; each doc
 * is found, not found, or its own error (missing index, no privilege on it) as ES answers.
 */
async function mget(s: SearchServices, req: EsRequest): Promise<EsResponse> {
  const q = req.query;
  const items = parseMget(req.json(), {
    index: req.params.index,
    routing: q.routing,
    storedFields: q.stored_fields !== undefined ? splitComma(q.stored_fields) : undefined,
  });
  const urlSource = parseSourceParams({ _source: q._source, _source_includes: q._source_includes, _source_excludes: q._source_excludes });
  // Resolve and authorize each index once; a failure belongs to its docs only.
  const targets = new Map<string, IndexState | EsError>();
  for (const it of items) {
    if (targets.has(it.index!)) continue;
    try {
      if (s.security) await s.security.authorize(req.auth, SHARD_ACTION, [it.index!]);
      targets.set(it.index!, s.cluster.single(it.index!)); // an alias of one index reads that index (ES: 400 for more)
    } catch (e) {
      targets.set(it.index!, asEsError(e));
    }
  }
  if (q.refresh === 'true' || q.refresh === '') {
    await refreshIndices(s, [...targets.values()].filter((t): t is IndexState => !(t instanceof Error)));
  }
  const docs = await mapLimit(items, 64, async (it): Promise<string[]> => {
    const t = targets.get(it.index!)!;
    const failed = (e: EsError) => [stringify({ _index: it.index, _id: it.id, error: toErrorBody(e).error })];
    if (t instanceof Error) return failed(t);
    try {
      const g = await getDoc(s, t, it.id!, {
        routing: it.routing ?? aliasIndexRouting(s, it.index!, t),
        realtime: q.realtime === undefined ? undefined : q.realtime === '' || q.realtime === 'true',
        version: it.version,
        versionType: it.versionType,
      });
      if (!g) return [stringify({ _index: t.name, _id: it.id, found: false })];
      return renderFound(t, it.id!, g, getSourceFilter(it.source ?? urlSource, it.storedFields), it.storedFields);
    } catch (e) {
      return failed(asEsError(e));
    }
  });
  const chunks: string[] = ['{"docs":['];
  docs.forEach((d, i) => {
    if (i) chunks.push(',');
    chunks.push(...d);
  });
  chunks.push(']}');
  return { body: new RawJson(chunks) };
}

export function mgetRoutes(r: Router, s: SearchServices): void {
  // Each doc's index is authorized as ES authorizes the shard-level get (indices:data/read/mget[shard]).
  const authz = { kind: 'handler' as const };
  r.add(['GET', 'POST'], '/_mget', (req) => mget(s, req), authz);
  r.add(['GET', 'POST'], '/{index}/_mget', (req) => mget(s, req), authz);
}
