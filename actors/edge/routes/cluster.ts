import { flatten } from '../../config';
import { checkValue, NODE_SETTINGS } from '../../knownSettings';
import { EsError, illegalArgument } from '../../wire/esErrors';
import { CHILD_BREAKERS, MAX_BUCKETS_SETTING, TOTAL_LIMIT, USE_REAL_MEMORY } from '../../wire/circuitBreaker';
import { parseTimeValue } from '../../wire/timeValue';
import type { Router } from '../router';
import type { PagingServices } from '../../search';
import { checkDiskSettings, INFO_INTERVAL_KEY, WATERMARK_KEYS } from '../../cluster/diskThreshold';

export const VERSION = {
  number: '8.15.0',
  build_flavor: 'default',
  build_type: 'tar',
  build_hash: 'natsactors',
  build_date: '2026-11-01T00:00:00.000Z',
  build_snapshot: false,
  lucene_version: '9.11.1',
  minimum_wire_compatibility_version: '7.17.0',
  minimum_index_compatibility_version: '7.0.0',
};

/** Breaker limits and overheads and `search.max_buckets`: dynamic in ES, checked by their type here. */
const TYPED_DYNAMIC = new Set([
  MAX_BUCKETS_SETTING, TOTAL_LIMIT, USE_REAL_MEMORY, ...CHILD_BREAKERS.flatMap((b) => [b.limitKey, b.overheadKey]),
]);

/** Dynamic cluster settings this node accepts. */
const DYNAMIC = new Set([
  'search.max_open_scroll_context', 'search.default_keep_alive', 'search.max_keep_alive', 'search.keep_alive_interval', 'action.destructive_requires_name',
  'search.default_allow_partial_results', 'search.max_open_contexts_per_user', 'search.max_async_search_response_size', 'async_search.max_keep_alive',
  'xpack.security.authc.partition_policy', // ours: fail_open | fail_closed (actors/security/partitionPolicy.ts)
  ...TYPED_DYNAMIC,
  ...Object.values(WATERMARK_KEYS), INFO_INTERVAL_KEY,
]);

/** ES's 400 for a bad value (Setting.get: the parser's message, its parse exception as the cause). */
function checkTyped(key: string, v: unknown): void {
  if (v === null) return;
  const bad = typeof v === 'object' || typeof v === 'bigint' ? `Failed to parse value [${String(v)}] for setting [${key}]` : checkValue(key, v, NODE_SETTINGS[key]);
  if (!bad) return;
  const def = NODE_SETTINGS[key];
  throw illegalArgument(bad, def.type === 'memory' && !bad.startsWith('Failed') ? { causedBy: new EsError('parse_exception', 400, bad) } : undefined);
}

function nestedSettings(flat: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(flat)) {
    const parts = k.split('.');
    let o = out;
    for (const p of parts.slice(0, -1)) o = (o[p] ??= {}) as Record<string, unknown>;
    o[parts[parts.length - 1]] = String(v);
  }
  return out;
}

/** `GET /`, cluster health and settings, node stats. */
export function clusterRoutes(r: Router, s: PagingServices): void {
  const node = s.ctx.node;
  r.add(['GET', 'HEAD'], '/', () => ({
    body: {
      name: node.name,
      cluster_name: node.clusterName,
      cluster_uuid: node.clusterUuid,
      version: VERSION,
      tagline: 'You Know, for Search',
    },
  }), { kind: 'cluster', action: 'cluster:monitor/main' });

  // Health, node info and stats: routes/health.ts and routes/nodes.ts (views over clusterNodes()).

  r.add('GET', '/_cluster/settings', () => ({
    body: { persistent: nestedSettings(s.ctx.settings.dynamicEntries()), transient: {} },
  }), { kind: 'cluster', action: 'cluster:monitor/settings' });
  r.add('PUT', '/_cluster/settings', async (req) => {
    const body = req.json<{ persistent?: unknown; transient?: unknown }>() ?? {};
    const transient = flatten(body.transient ?? {});
    const changes = { ...flatten(body.persistent ?? {}), ...transient };
    for (const [k, v] of Object.entries(changes)) {
      // ES names the scope the unknown key came in (ClusterSettings.validateUpdate)
      if (!DYNAMIC.has(k)) throw illegalArgument(`${Object.hasOwn(transient, k) ? 'transient' : 'persistent'} setting [${k}], not recognized`);
      if ((k === 'search.default_allow_partial_results') && v !== null && !['true', 'false'].includes(String(v))) {
        throw illegalArgument(`Failed to parse value [${String(v)}] as only [true] or [false] are allowed.`);
      }
      if (k === 'search.max_open_contexts_per_user' && v !== null && !(Number.isInteger(Number(v)) && Number(v) >= 0 && Number(v) <= 2 ** 31 - 1)) {
        throw illegalArgument(`Failed to parse value [${String(v)}] for setting [${k}] must be >= 0`);
      }
      if (TYPED_DYNAMIC.has(k)) checkTyped(k, v);
      if (k === 'xpack.security.authc.partition_policy' && v !== null && v !== 'fail_open' && v !== 'fail_closed') {
        throw illegalArgument(`Failed to parse value [${String(v)}] for setting [${k}], must be one of [fail_open, fail_closed]`);
      }
      if (k === 'search.max_open_scroll_context' && v !== null && !(Number.isInteger(Number(v)) && Number(v) >= 0)) {
        throw illegalArgument(`Failed to parse value [${String(v)}] for setting [${k}] must be >= 0`);
      }
      if (k === 'search.max_open_scroll_context' && v !== null && Number(v) > 2 ** 31 - 1) {
        throw illegalArgument(`Failed to parse value [${String(v)}] for setting [${k}] must be <= 2147483647`);
      }
      // time settings are checked when set, as ES does, not at every later search
      if (k.endsWith('keep_alive') || k.endsWith('keep_alive_interval')) {
        if (v !== null && (typeof v === 'object' || typeof v === 'bigint')) throw illegalArgument(`Failed to parse value [${String(v)}] for setting [${k}]`);
        if (v !== null) parseTimeValue(String(v), k);
      }
      if (k === 'action.destructive_requires_name' && v !== null && !['true', 'false'].includes(String(v))) {
        throw illegalArgument(`Failed to parse value [${String(v)}] as only [true] or [false] are allowed.`);
      }
    }
    // the watermarks are checked together, against the values they would join (ES's validators)
    checkDiskSettings((k) => s.ctx.settings.get<unknown>(k, undefined), changes);
    if (Object.hasOwn(changes, INFO_INTERVAL_KEY) && changes[INFO_INTERVAL_KEY] !== null) parseTimeValue(String(changes[INFO_INTERVAL_KEY]), INFO_INTERVAL_KEY);
    await s.cluster.putClusterSettings(changes);
    return {
      body: {
        acknowledged: true,
        persistent: nestedSettings(flatten(body.persistent ?? {})),
        transient: nestedSettings(flatten(body.transient ?? {})),
      },
    };
  }, { kind: 'cluster', action: 'cluster:admin/settings/update' });
}
