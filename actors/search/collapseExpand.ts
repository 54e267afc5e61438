import { parseJson, stringify } from '../wire/json';
import type { SearchRequest } from '../shard/engine';
import type { InnerHitsSpec } from '../shard/engine/request/searchOptions';
import { parseSourceBody } from '../shard/engine';
import { executeSearch, renderSearch, type SearchOutcome, type ShardTarget } from './coordinator';
import { indexNames } from './coordinator';
import type { SearchServices } from './services';
import { Locator } from '../shard/engine/base/xcontent';

/**
 * The expand phase of field collapsing (ES's ExpandSearchPhase): for every collapsed hit and every
 * `inner_hits` of the collapse, a search of the same targets for the hit's group (the original query
 * and post_filter, filtered on the collapse value, or on its absence), with the inner hits' own
 * from/size/sort/fields; its hits go under the hit's `inner_hits.<name>`.
 */
export async function expandCollapse(s: SearchServices, sr: SearchRequest, out: SearchOutcome, targets: ShardTarget[]): Promise<void> {
  const collapse = sr.collapse;
  if (!collapse?.innerHits?.length || !out.list.length) return;
  const field = collapse.field;
  const max = collapse.maxConcurrentGroupSearches ?? 5;
  const jobs: Array<() => Promise<void>> = [];
  for (let i = 0; i < out.list.length; i++) {
    const value = groupValue(out, i, field);
    jobs.push(async () => {
      const inner: Record<string, unknown> = {};
      for (const spec of collapse.innerHits!) inner[spec.name ?? field] = { hits: await innerHits(s, sr, spec, field, value, targets) };
      out.list.addExtra(i, `"inner_hits":${stringify(inner)}`);
    });
  }
  for (let at = 0; at < jobs.length; at += max) await Promise.all(jobs.slice(at, at + max).map((j) => j()));
}

function groupValue(out: SearchOutcome, i: number, field: string): unknown {
  const page = out.list.pages[out.list.pageOf(i)];
  const row = out.list.row(i);
  const [a, e] = page.fieldsRange(row);
  if (a === e) return null;
  const fields = parseJson<Record<string, unknown[]>>(page.b.toString('utf8', a, e));
  return fields[field]?.[0] ?? null;
}

async function innerHits(s: SearchServices, sr: SearchRequest, spec: InnerHitsSpec, field: string, value: unknown, targets: ShardTarget[]): Promise<unknown> {
  const group = value === null ? { bool: { must_not: [{ exists: { field } }] } } : { term: { [field]: { value } } };
  const query = { bool: { ...(sr.query !== undefined ? { must: [sr.query] } : {}), filter: [group] } };
  const req: SearchRequest = {
    query,
    ...(sr.postFilter !== undefined ? { postFilter: sr.postFilter } : {}),
    from: spec.from,
    size: spec.size,
    ...(spec.sort ? { sort: spec.sort } : {}),
    trackTotalHits: sr.trackTotalHits,
    trackTotalHitsExplicit: sr.trackTotalHitsExplicit,
    restTotalHitsAsInt: sr.restTotalHitsAsInt,
    typedKeys: false,
    searchType: sr.searchType,
    indicesOptions: {},
    checkWindow: 'search',
    ...(spec.source !== undefined ? { source: parseSourceBody(spec.source, new Locator(), ['_source']) } : {}),
    ...(spec.version ? { version: true } : {}),
    ...(spec.seqNoPrimaryTerm ? { seqNoPrimaryTerm: true } : {}),
    ...(spec.docvalueFields ? { docvalueFields: spec.docvalueFields } : {}),
    ...(spec.fields ? { fields: spec.fields } : {}),
    ...(spec.collapse ? { collapse: spec.collapse } : {}),
  };
  const plain = targets.map((t) => ({ ref: t.ref, shardIndex: t.shardIndex, ...(t.searcher ? { searcher: t.searcher } : {}), ...(t.filter !== undefined ? { filter: t.filter } : {}) }));
  const res = await executeSearch(s, req, plain);
  const body = renderSearch(res, req, indexNames(plain), { restTotalHitsAsInt: sr.restTotalHitsAsInt, noTotal: sr.trackTotalHits === false });
  return parseJson<{ hits: unknown }>(Buffer.concat(body.chunks.map((p) => (typeof p === 'string' ? Buffer.from(p) : p))).toString('utf8')).hits;
}
