import { illegalArgument } from '../wire/esErrors';
import { aliasFilterFor } from '../cluster/aliases';
import type { IndexState } from '../cluster';
import type { EdgeServices } from './services';
import type { ShardTarget } from './coordinator';

/**
 * Alias filters on the search side: a search or count through a filtered alias runs each of the
 * alias's indices with the filter ANDed to the query (ES's alias filter), shard by shard.
 */
export function withAliasFilters(s: EdgeServices, expr: string | undefined, targets: ShardTarget[]): ShardTarget[] {
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
export function refuseFilteredAliases(s: EdgeServices, expr: string | undefined, indices: IndexState[], what: 'scroll' | 'point in time'): void {
  for (const i of indices) {
    if (aliasFilterFor(s.cluster.metadata.aliases, expr, i) !== undefined) {
      throw illegalArgument(`[${what}] through an alias with a filter is not supported by this node; search the alias without ${what}, or name the indices`);
    }
  }
}
