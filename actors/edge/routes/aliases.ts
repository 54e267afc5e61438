import type { Router } from '../router';
import type { EsRequest, EsResponse } from '../../wire/rest';
import type { SearchServices } from '../../search/services';
import { resolveOptions } from '../../search';
import { globMatch, renderAliasMeta } from '../../cluster/aliases';
import type { IndexState } from '../../cluster';
import { visibleIndices } from '../views/visible';

const isPattern = (p: string) => p === '_all' || p.includes('*');
const split = (s: string | undefined) => (s ?? '').split(',').map((x) => x.trim()).filter(Boolean);

/** Does alias `a` match the requested names (`*`, `_all`, patterns, later `-exclusions`)? */
function selects(requested: string[], a: string): boolean {
  if (!requested.length) return true;
  let hit = false;
  const firstPattern = requested.findIndex(isPattern);
  requested.forEach((r, i) => {
    if (r.startsWith('-') && firstPattern >= 0 && i > firstPattern) {
      if (globMatch(r.slice(1), a)) hit = false;
    } else if (r === '_all' || globMatch(r, a)) hit = true;
  });
  return hit;
}

/** Explicitly named aliases that nothing returned (RestGetAliasesAction's 404 rule). */
function missingAliases(requested: string[], returned: Set<string>): string[] {
  const firstPattern = requested.findIndex(isPattern);
  const missing = new Set<string>();
  requested.forEach((r, i) => {
    if (isPattern(r) || (firstPattern >= 0 && i > firstPattern && r.startsWith('-'))) return;
    const excluded = requested.slice(Math.max(i + 1, firstPattern < 0 ? requested.length : firstPattern)).some((x) => x.startsWith('-') && (globMatch(x.slice(1), r) || x.slice(1) === '_all'));
    if (!excluded && !returned.has(r)) missing.add(r);
  });
  return [...missing].sort();
}

/** `GET /_alias[/<name>]`, `GET /<index>/_alias[/<name>]` (and `_aliases`), HEAD forms. */
function getAliases(s: SearchServices, req: EsRequest): EsResponse {
  const namesProvided = req.params.name !== undefined;
  const requested = namesProvided ? split(req.params.name).filter((n) => n !== '_all') : [];
  const all = namesProvided && split(req.params.name).includes('_all');
  const indices: IndexState[] = visibleIndices(s, req, 'indices:admin/aliases/get',
    req.params.index !== undefined ? s.cluster.resolve(req.params.index, resolveOptions(req)) : s.cluster.resolve('*', { expandWildcards: 'all' }));
  const out: Record<string, unknown> = {};
  const returned = new Set<string>();
  for (const i of [...indices].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const aliases = s.cluster.metadata.aliases.of(i.uuid).filter(([a]) => all || selects(requested, a));
    for (const [a] of aliases) returned.add(a);
    if (namesProvided && !aliases.length) continue;
    out[i.name] = { aliases: Object.fromEntries(aliases.map(([a, m]) => [a, renderAliasMeta(m)])) };
  }
  const missing = namesProvided ? missingAliases(requested, returned) : [];
  if (req.method === 'HEAD') return { status: missing.length || (namesProvided && !returned.size) ? 404 : 200 };
  if (!missing.length) return { body: out };
  const error = missing.length === 1 ? `alias [${missing[0]}] missing` : `aliases [${missing.join(',')}] missing`;
  return { status: 404, body: { error, status: 404, ...out } };
}

/** One alias from the path (`PUT /<index>/_alias/<name>`, body = its properties). */
async function putAlias(s: SearchServices, req: EsRequest): Promise<EsResponse> {
  const body = req.json<Record<string, unknown>>() ?? {};
  const add: Record<string, unknown> = { index: split(req.params.index), alias: req.params.name };
  for (const [k, v] of Object.entries(body)) add[k] = v;
  await s.cluster.updateAliases({ actions: [{ add }] });
  return { body: { acknowledged: true } };
}

async function deleteAlias(s: SearchServices, req: EsRequest): Promise<EsResponse> {
  await s.cluster.updateAliases({ actions: [{ remove: { index: split(req.params.index), alias: split(req.params.name) } }] });
  return { body: { acknowledged: true } };
}

/** Alias APIs: `POST /_aliases` (add, remove, remove_index, all or nothing), put/delete/get/exists. */
export function aliasRoutes(r: Router, s: SearchServices): void {
  const manage = (req: EsRequest) => split(req.params.index);
  const get = { kind: 'indices' as const, action: 'indices:admin/aliases/get', indices: (req: EsRequest) => (req.params.index ? split(req.params.index) : ['*']) };
  r.add('POST', '/_aliases', async (req) => {
    await s.cluster.updateAliases(req.json());
    return { body: { acknowledged: true, errors: false } };
  }, { kind: 'indices', action: 'indices:admin/aliases', indices: () => [] });
  for (const seg of ['_alias', '_aliases']) {
    r.add(['PUT', 'POST'], `/{index}/${seg}/{name}`, (req) => putAlias(s, req), { kind: 'indices', action: 'indices:admin/aliases', indices: manage });
    r.add('DELETE', `/{index}/${seg}/{name}`, (req) => deleteAlias(s, req), { kind: 'indices', action: 'indices:admin/aliases', indices: manage });
    r.add(['GET', 'HEAD'], `/{index}/${seg}/{name}`, (req) => getAliases(s, req), get);
    r.add(['GET', 'HEAD'], `/{index}/${seg}`, (req) => getAliases(s, req), get);
    r.add(['GET', 'HEAD'], `/${seg}/{name}`, (req) => getAliases(s, req), get);
  }
  r.add('GET', '/_alias', (req) => getAliases(s, req), get);
  r.add('GET', '/_aliases', (req) => getAliases(s, req), get);
}
