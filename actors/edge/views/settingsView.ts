import { flatten } from '../../config';
import { simpleMatch } from '../../automaton';

/**
 * GET `_settings` as ES's RestGetSettingsAction renders it: settings filtered by names (comma
 * list, `*` patterns, `_all`), nested or flat (`flat_settings`), and with `include_defaults` the
 * index settings left at their defaults under `defaults`.
 */

/** ES 8's defaults of the index settings users look up (IndexScopedSettings), as strings. */
const INDEX_DEFAULTS: Record<string, string | string[]> = {
  'index.auto_expand_replicas': 'false',
  'index.blocks.metadata': 'false',
  'index.blocks.read': 'false',
  'index.blocks.read_only': 'false',
  'index.blocks.read_only_allow_delete': 'false',
  'index.blocks.write': 'false',
  'index.codec': 'default',
  'index.default_pipeline': '_none',
  'index.final_pipeline': '_none',
  'index.gc_deletes': '60s',
  'index.hidden': 'false',
  'index.mapping.depth.limit': '20',
  'index.mapping.field_name_length.limit': '9223372036854775807',
  'index.mapping.nested_fields.limit': '50',
  'index.mapping.nested_objects.limit': '10000',
  'index.mapping.total_fields.limit': '1000',
  'index.max_docvalue_fields_search': '100',
  'index.max_inner_result_window': '100',
  'index.max_ngram_diff': '1',
  'index.max_refresh_listeners': '1000',
  'index.max_regex_length': '1000',
  'index.max_rescore_window': '10000',
  'index.max_result_window': '10000',
  'index.max_script_fields': '32',
  'index.max_shingle_diff': '3',
  'index.max_slices_per_scroll': '1024',
  'index.max_terms_count': '65536',
  'index.priority': '1',
  'index.query.default_field': ['*'],
  'index.refresh_interval': '1s',
  'index.routing_partition_size': '1',
  'index.search.idle.after': '30s',
  'index.shard.check_on_startup': 'false',
  'index.soft_deletes.enabled': 'true',
  'index.soft_deletes.retention_lease.period': '12h',
  'index.translog.durability': 'REQUEST',
  'index.write.wait_for_active_shards': '1',
};

/** Whether setting `key` is asked for by `names` (undefined: all). */
function wanted(key: string, names: string[] | undefined): boolean {
  if (!names) return true;
  return names.some((n) => n === '_all' || n === '*' || (n.includes('*') ? simpleMatch(n, key) : n === key));
}

function nest(flat: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(flat)) {
    const path = k.split('.');
    let o = out;
    for (const p of path.slice(0, -1)) o = (o[p] ??= {}) as Record<string, unknown>;
    o[path[path.length - 1]] = v;
  }
  return out;
}

/** One index's entry of a GET `_settings` response. */
export function settingsEntry(rendered: Record<string, unknown>, o: { names?: string[]; flat?: boolean; includeDefaults?: boolean }): Record<string, unknown> {
  const set = flatten(rendered) as Record<string, unknown>;
  const pick = (src: Record<string, unknown>) => Object.fromEntries(Object.entries(src).filter(([k]) => wanted(k, o.names)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const shape = (src: Record<string, unknown>) => (o.flat ? pick(src) : nest(pick(src)));
  const out: Record<string, unknown> = { settings: shape(set) };
  if (o.includeDefaults) out.defaults = shape(Object.fromEntries(Object.entries(INDEX_DEFAULTS).filter(([k]) => !(k in set))));
  return out;
}
