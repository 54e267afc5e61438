import { allShardsFailed, illegalArgument } from '../wire/esErrors';
import { docShard, type IndexState } from '../cluster';
import { parseSourceJson } from '../wire/sourceJson';
import type { SearchRequest } from '../shard/engine';
import type { ShardTarget } from './coordinator';
import type { SearchServices } from './services';
import type { Authentication } from '../wire/security';

/**
 * What the coordinator does to a search before the shards see it (ES's rewrite on the coordinating
 * node and SearchService's per-index options): terms lookups fetched and inlined, the
 * `index.max_terms_count` of the target indices enforced, and `indices_boost` resolved per index.
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `index.max_terms_count` default. */
const MAX_TERMS_COUNT = 65_536;

/** Inlines every terms lookup of the query, post_filter, rescore and aggregation queries (GETs run in parallel). */
export async function rewriteTermsLookups(s: SearchServices, sr: SearchRequest, auth?: Authentication): Promise<SearchRequest> {
  const jobs: Array<Promise<void>> = [];
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (!isObj(v)) return v;
    const out: Obj = {};
    for (const [k, x] of Object.entries(v)) {
      if (k === 'terms' && isObj(x)) {
        const terms: Obj = {};
        for (const [f, spec] of Object.entries(x)) {
          if (isObj(spec) && typeof spec.id === 'string' && typeof spec.path === 'string') {
            terms[f] = [];
            jobs.push(lookup(s, spec, auth).then((vals) => void (terms[f] = vals)));
          } else terms[f] = spec;
        }
        out[k] = terms;
      } else out[k] = walk(x);
    }
    return out;
  };
  const next: SearchRequest = { ...sr };
  if (sr.query !== undefined) next.query = walk(sr.query) as SearchRequest['query'];
  if (sr.postFilter !== undefined) next.postFilter = walk(sr.postFilter) as SearchRequest['postFilter'];
  if (sr.rescore) next.rescore = sr.rescore.map((r) => ({ ...r, query: walk(r.query) as typeof r.query }));
  if (sr.aggs !== undefined) next.aggs = walk(sr.aggs) as SearchRequest['aggs']; // filter / filters aggregations
  if (!jobs.length) return sr;
  await Promise.all(jobs);
  return next;
}

/** The values at `path` of the lookup document (none when it does not exist). */
async function lookup(s: SearchServices, spec: Obj, auth?: Authentication): Promise<unknown[]> {
  const index = s.cluster.single(String(spec.index));
  if (s.security) await s.security.authorize(auth, 'indices:data/read/get', [index.name]);
  const routing = spec.routing === undefined ? undefined : String(spec.routing);
  const n = docShard(index, String(spec.id), routing);
  const doc = await s.shards.call<{ source: string } | null>(index.shards[n].ref, 'get', { id: String(spec.id) });
  if (!doc) return [];
  return extractRawValues(parseSourceJson(doc.source), String(spec.path).split('.'));
}

/** XContentMapValues.extractRawValues: values at a dotted path, through arrays, dotted keys too. */
function extractRawValues(o: unknown, path: string[]): unknown[] {
  if (o === null || o === undefined) return [];
  if (Array.isArray(o)) return o.flatMap((x) => extractRawValues(x, path));
  if (!path.length) return isObj(o) ? [] : [o];
  if (!isObj(o)) return [];
  const out: unknown[] = [];
  for (let i = 1; i <= path.length; i++) {
    const key = path.slice(0, i).join('.');
    if (key in o) out.push(...extractRawValues(o[key], path.slice(i)));
  }
  return out;
}

/** TermsQueryBuilder's check of `index.max_terms_count` on every index the search reaches. */
export function checkMaxTermsCount(sr: SearchRequest, indices: IndexState[]): void {
  if (!indices.length) return;
  const max = Math.min(...indices.map((i) => Number(i.settings.raw['index.max_terms_count'] ?? MAX_TERMS_COUNT)));
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(visit);
    if (!isObj(v)) return;
    for (const [k, x] of Object.entries(v)) {
      if (k === 'terms' && isObj(x)) {
        for (const vals of Object.values(x)) {
          if (Array.isArray(vals) && vals.length > max) {
            throw allShardsFailed([illegalArgument(
              `The number of terms [${vals.length}] used in the Terms Query request has exceeded the allowed maximum of [${max}]. This maximum can be set by changing the [index.max_terms_count] index level setting.`,
            )]);
          }
        }
      } else visit(x);
    }
  };
  visit(sr.query);
  visit(sr.postFilter);
}

/**
 * `indices_boost`: each target gets the boost of the first entry whose expression (index, alias or
 * pattern) covers its index; an entry naming nothing is ES's 404 unless `ignore_unavailable`.
 */
export function withIndexBoosts(s: SearchServices, sr: SearchRequest, targets: ShardTarget[], ignoreUnavailable: boolean): ShardTarget[] {
  if (!sr.indicesBoost?.length) return targets;
  const resolved = sr.indicesBoost.map(([expr, boost]) => {
    const names = new Set(s.cluster.resolve(expr, { ignoreUnavailable, allowNoIndices: true }).map((i) => i.name));
    return { names, boost };
  });
  return targets.map((t) => {
    const hit = resolved.find((r) => r.names.has(t.ref.index));
    return hit ? { ...t, boost: hit.boost } : t;
  });
}
