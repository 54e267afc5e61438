import { EsError } from '../../wire/esErrors';
import { stringify } from '../../wire/json';
import { parseSourceJson } from '../../wire/sourceJson';
import { docShard, type IndexState } from '../../cluster';
import type { SearchServices } from '../../search/services';
import { filterSource, type GetResult, type SourceFilter } from '../../shard/engine';
import { ShardPage, type QueryPageHead } from '../../shard/pageCodec';
import { checkGetVersion } from './versioning';
import { refuseClosedDoc } from '../../search/indices';
import { refreshIndices } from './indices';

/**
 * One document read as ES's get does (ShardGetService): real-time from the primary, or with
 * `realtime=false` from what the last refresh made searchable; `version` checked; `_source`
 * filtered or dropped (`_source=false`, `stored_fields` without `_source`); stored fields
 * (`store: true` in the mapping) under `fields`. Shared by GET `/_doc`, `/_source` and `_mget`.
 */
export interface GetOptions {
  routing?: string;
  realtime?: boolean;
  refresh?: boolean;
  version?: string;
  versionType?: string;
}

/** The doc, or null when it does not exist; a version mismatch is ES's 409. */
export async function getDoc(s: SearchServices, idx: IndexState, id: string, o: GetOptions): Promise<GetResult | null> {
  refuseClosedDoc(idx);
  if (o.refresh) await refreshIndices(s, [idx]);
  const n = docShard(idx, id, o.routing);
  const ref = idx.shards[n].ref;
  let g: GetResult | null;
  if (o.realtime === false) {
    // what a searcher sees: an ids query on the shard's current searcher, with the hit's metadata and source
    const page = await s.shards.query(ref, {
      req: { query: { ids: { values: [id] } }, from: 0, size: 1, trackTotalHits: false, shardIndex: 0, version: true, seqNoPrimaryTerm: true },
      fetch: true,
    }) as ShardPage<QueryPageHead>;
    g = page.n ? { source: page.source(0), version: page.version(0)!, seqNo: page.seqNo(0)!, primaryTerm: 1, ...(page.routing(0) !== undefined ? { routing: page.routing(0) } : {}) } : null;
  } else g = await s.shards.call<GetResult | null>(ref, 'get', { id });
  if (g && o.version !== undefined) {
    try {
      checkGetVersion(id, g.version, o);
    } catch (e) {
      const err = e as EsError;
      throw new EsError(err.type, err.status, err.message, { meta: { index_uuid: idx.uuid, shard: String(n), index: idx.name } });
    }
  }
  return g;
}

/**
 * Whether `_source` comes back (ShardGetService.normalizeFetchSourceContent): an explicit `_source`
 * decides; stored_fields without `_source` among them turn it off.
 */
export function getSourceFilter(explicit: SourceFilter | undefined, storedFields: string[] | undefined): SourceFilter | undefined {
  if (explicit) return explicit;
  if (storedFields && !storedFields.includes('_source')) return { fetch: false, includes: [], excludes: [] };
  return undefined;
}

/** The `fields` object of stored fields (`store: true` leaves among those asked), read from the source. */
export function storedFieldsOf(idx: IndexState, source: string, storedFields: string[] | undefined): Record<string, unknown[]> | undefined {
  if (!storedFields?.length) return undefined;
  let src: unknown;
  const out: Record<string, unknown[]> = {};
  for (const name of storedFields) {
    const def = idx.mapping.field(name);
    if (!def || !(def.params.store === true || def.params.store === 'true')) continue;
    src ??= parseSourceJson(source);
    const vals = valuesAt(src, def.path.split('.'));
    if (vals.length) out[def.path] = vals;
  }
  return Object.keys(out).length ? out : undefined;
}

function valuesAt(o: unknown, path: string[]): unknown[] {
  if (o === null || o === undefined) return [];
  if (Array.isArray(o)) return o.flatMap((x) => valuesAt(x, path));
  if (!path.length) return typeof o === 'object' ? [] : [o];
  if (typeof o !== 'object') return [];
  const rec = o as Record<string, unknown>;
  const out: unknown[] = [];
  for (let i = 1; i <= path.length; i++) {
    const key = path.slice(0, i).join('.');
    if (key in rec) out.push(...valuesAt(rec[key], path.slice(i)));
  }
  return out;
}

/** A found doc as ES renders a GetResult: metadata, `found`, `_source` (filtered), stored `fields`. */
export function renderFound(idx: IndexState, id: string, g: GetResult, filter: SourceFilter | undefined, storedFields?: string[]): string[] {
  const head = stringify({
    _index: idx.name,
    _id: id,
    _version: g.version,
    _seq_no: g.seqNo,
    _primary_term: g.primaryTerm ?? 1,
    ...(g.routing !== undefined ? { _routing: g.routing } : {}),
    found: true,
  });
  const src = filter ? filterSource(g.source, filter) : g.source;
  const fields = storedFieldsOf(idx, g.source, storedFields);
  const tail = fields ? `,"fields":${stringify(fields)}}` : '}';
  return src === undefined ? [head.slice(0, -1), tail] : [head.slice(0, -1), ',"_source":', src, tail];
}
