import { EsError, illegalArgument } from '../wire/esErrors';
import type { EsRequest } from '../wire/rest';
import { resolveExpression, routingSpec, type IndexState, type ResolveOptions } from '../cluster';
import { aliasFilterFor } from '../cluster/aliases';
import { searchShards } from '../shard/engine';
import type { ShardTarget } from './coordinator';
import type { SearchServices } from './services';

/**
 * Index resolution for searches (ES IndicesAndAliasesResolver): the index expression to the indices
 * the caller may read, their shards in ES's order, and the alias filters that apply to them.
 */

const READ = 'indices:data/read/search';

/** `ignore_unavailable`, `allow_no_indices`, `expand_wildcards` of a request. */
export function resolveOptions(req: Pick<EsRequest, 'query'>): ResolveOptions {
  const q = req.query;
  return {
    ignoreUnavailable: q.ignore_unavailable === 'true',
    allowNoIndices: q.allow_no_indices === undefined ? undefined : q.allow_no_indices !== 'false',
    expandWildcards: q.expand_wildcards,
  };
}

/** Shards of the indices in ES's PIT order: (index name, uuid, shard number); rank = shardIndex. */
export function orderedTargets(indices: IndexState[], routing?: string): ShardTarget[] {
  const sorted = [...indices].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.uuid < b.uuid ? -1 : 1));
  // `routing=a,b` searches only the shards those values route to (ES OperationRouting.searchShards)
  const values = routing ? [...new Set(routing.split(',').map((r) => r.trim()).filter(Boolean))] : [];
  const out: ShardTarget[] = [];
  for (const idx of sorted) {
    const only = values.length ? new Set(values.flatMap((r) => searchShards(routingSpec(idx.settings), r))) : undefined;
    for (const sh of idx.shards) if (!only || only.has(sh.ref.n)) out.push({ ref: sh.ref, shardIndex: out.length });
  }
  return out;
}

/** Resolves the request's indices and filters them to those the caller may read. */
export async function searchIndices(s: SearchServices, req: Pick<EsRequest, 'params' | 'query' | 'auth'>, action = READ): Promise<IndexState[]> {
  const opts = resolveOptions(req);
  if (!s.security) return refuseClosed(s.cluster.resolve(req.params.index, opts), opts.ignoreUnavailable);
  // Authorizing and resolving depend only on the caller's permission, the expression and the
  // cluster state: a credential's next search with the same expression reuses them.
  const memo = req.auth ? memoOf(req.auth) : undefined;
  const key = `${action}\u0000${req.params.index ?? ''}\u0000${opts.ignoreUnavailable}\u0000${opts.allowNoIndices}\u0000${opts.expandWildcards ?? ''}`;
  const generation = s.cluster.generation;
  const hit = memo?.get(key);
  if (hit && hit.generation === generation && hit.permission === req.auth!.permission) return refuseClosed(hit.indices.slice(), opts.ignoreUnavailable);
  const found = await authorizeAndResolve(s, s.security, req, action, opts);
  if (memo) {
    if (memo.size >= RESOLVED_MAX) memo.clear();
    memo.set(key, { generation, permission: req.auth!.permission, indices: found });
  }
  return refuseClosed(found.slice(), opts.ignoreUnavailable);
}

/**
 * Resolutions of index expressions per caller (its Authentication, shared by every request the
 * credential cache answers), kept while the cluster state is unchanged (a 403 or a 404 is thrown,
 * never kept): a search with credentials costs a Map lookup here, not a pass over every index and
 * alias name.
 */
const resolvedFor = new WeakMap<object, Map<string, { generation: number; permission: unknown; indices: IndexState[] }>>();
const RESOLVED_MAX = 64;
function memoOf(auth: object) {
  let m = resolvedFor.get(auth);
  if (!m) resolvedFor.set(auth, (m = new Map()));
  return m;
}

async function authorizeAndResolve(
  s: SearchServices, security: NonNullable<SearchServices['security']>, req: Pick<EsRequest, 'params' | 'query' | 'auth'>, action: string, opts: ResolveOptions,
): Promise<IndexState[]> {
  let expr = req.params.index;
  // Authorize before resolving (ES IndicesAndAliasesResolver + RBACEngine): a name the caller may not
  // use is refused with 403 whether or not it exists, so the answer tells nothing about other
  // indices; only a permitted name that is missing gets 404. With ignore_unavailable such names are
  // dropped instead, as ES treats them as unavailable.
  const parts = (expr ?? '').split(',');
  const explicit = parts.filter((p) => p && !p.includes('*') && !p.includes('?') && !p.startsWith('-') && p !== '_all');
  if (explicit.length) {
    if (opts.ignoreUnavailable) {
      const allowed = new Set(security.allowedIndices(req.auth, action, explicit));
      const kept = parts.filter((p) => !explicit.includes(p) || allowed.has(p));
      if (!kept.some((p) => p && !p.startsWith('-'))) return [];
      expr = kept.join(',');
    } else {
      const ok = security.authorize(req.auth, action, explicit);
      if (ok instanceof Promise) await ok; // (a value from the node's gate: no microtask trip)
    }
  } else {
    const ok = security.authorize(req.auth, action, []); // the action on no index at all: 403 before anything
    if (ok instanceof Promise) await ok;
  }
  return resolveAuthorized(s, security, req.auth, action, expr, opts);
}

/**
 * A closed index named explicitly is ES's 400 `index_closed_exception` for searches, PITs and scrolls
 * (IndicesOptions forbid closed), or is left out with `ignore_unavailable`; wildcards skip closed ones.
 */
export function refuseClosed(indices: IndexState[], ignoreUnavailable?: boolean): IndexState[] {
  if (!indices.some((i) => i.settings.closed)) return indices;
  if (ignoreUnavailable) return indices.filter((i) => !i.settings.closed);
  throw indexClosed(indices.find((i) => i.settings.closed)!);
}

/** ES IndexClosedException: 400 `closed`, naming the index. */
export const indexClosed = (c: IndexState): EsError => new EsError('index_closed_exception', 400, 'closed', { meta: { index_uuid: c.uuid, index: c.name } });

/**
 * A document read or write on a closed index (ES resolves them with IndicesOptions that forbid
 * closed indices, BulkOperation.addFailureIfIndexIsClosed): ES's `index_closed_exception`.
 */
export function refuseClosedDoc(idx: IndexState): void {
  if (idx.settings.closed) throw indexClosed(idx);
}

/**
 * Resolves an index expression over the names the caller may use (ES IndicesAndAliasesResolver
 * with the role's authorized indices and aliases): wildcards expand to authorized indices and to
 * the indices of authorized aliases, and an alias the caller may use stands for all its indices,
 * which are reached through it whatever the role says about their own names (RBACEngine checks the
 * alias). Explicit names were authorized by the caller already.
 */
function resolveAuthorized(
  s: SearchServices,
  security: NonNullable<SearchServices['security']>,
  auth: EsRequest['auth'],
  action: string,
  expr: string | undefined,
  opts: ResolveOptions,
): IndexState[] {
  const names = security.allowedIndices(auth, action, s.cluster.names());
  const all = s.cluster.metadata.aliases.map(true); // as ClusterState.resolve sees them (hidden ones hidden from wildcards there)
  const aliases = new Map<string, string[]>();
  for (const a of security.allowedIndices(auth, action, [...all.keys()])) {
    aliases.set(a, all.get(a)!.map((u) => s.cluster.getByUuid(u)?.name).filter((n): n is string => n !== undefined));
  }
  const hidden = { hiddenIndex: (n: string) => s.cluster.isHidden(n), hiddenAlias: (a: string) => s.cluster.metadata.aliases.isHidden(a) };
  return resolveExpression(expr, names, { ...hidden, ...opts }, aliases).map((n) => s.cluster.get(n)!);
}

/**
 * Alias filters on the search side: a search or count through a filtered alias runs each of the
 * alias's indices with the filter ANDed to the query (ES's alias filter), shard by shard.
 */
export function withAliasFilters(s: SearchServices, expr: string | undefined, targets: ShardTarget[]): ShardTarget[] {
  const byUuid = new Map<string, unknown>();
  for (const t of targets) {
    if (byUuid.has(t.ref.indexUuid)) continue;
    byUuid.set(t.ref.indexUuid, aliasFilterFor(s.cluster.metadata.aliases, expr, { name: t.ref.index, uuid: t.ref.indexUuid }));
  }
  return targets.map((t) => {
    const filter = byUuid.get(t.ref.indexUuid);
    return filter === undefined ? t : { ...t, filter };
  });
}

/**
 * Scroll and PIT contexts do not record alias filters (a revived context could not re-apply
 * them), so opening one through a filtered alias is refused rather than answered unfiltered.
 */
export function refuseFilteredAliases(s: SearchServices, expr: string | undefined, indices: IndexState[], what: 'scroll' | 'point in time'): void {
  for (const i of indices) {
    if (aliasFilterFor(s.cluster.metadata.aliases, expr, i) !== undefined) {
      throw illegalArgument(`[${what}] through an alias with a filter is not supported by this node; search the alias without ${what}, or name the indices`);
    }
  }
}
