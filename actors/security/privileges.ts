import { patternsRegExp, subsetOf } from './actionSets';
import { type ActionSet } from '../wire/security';

/**
 * Named cluster and index privileges as action-name patterns (ES ClusterPrivilegeResolver and
 * IndexPrivilege), and the "granted by" lists ES prints in 403 reasons, ordered from least to most
 * privileged (by how many other privileges each implies, then by name, as ES sorts them).
 */

import { matcherAsRegExp, simpleMatcher } from '../automaton';
import type { PrivilegeDef } from '../wire/security';

const SECURITY = 'cluster:admin/xpack/security/';
const ALL_CLUSTER = ['cluster:*', 'indices:admin/template/*', 'indices:admin/index_template/*'];
const TRANSFORMS = ['cluster:admin/data_frame/*', 'cluster:monitor/data_frame/*', 'cluster:monitor/transform/*', 'cluster:admin/transform/*'];
const SNAPSHOT_READ = ['cluster:admin/snapshot/status*', 'cluster:admin/snapshot/get', 'cluster:admin/snapshot/status', 'cluster:admin/repository/get'];
const ILM_STATUS = 'cluster:admin/ilm/operation_mode/get';

/**
 * Cluster privileges (ES ClusterPrivilegeResolver, every named one, with ES's action names).
 * Unknown names are refused when a role is stored.
 */
export const CLUSTER_PRIVILEGES: Record<string, PrivilegeDef> = {
  none: { include: [] },
  all: { include: ALL_CLUSTER },
  monitor: { include: ['cluster:monitor/*', 'indices:admin/template/get', 'cluster:admin/component_template/get', 'indices:admin/index_template/get'] },
  monitor_ml: { include: ['cluster:monitor/xpack/ml/*'] },
  monitor_text_structure: { include: ['cluster:monitor/text_structure/*'] },
  monitor_data_frame_transforms: { include: ['cluster:monitor/data_frame/*', 'cluster:monitor/transform/*'] },
  monitor_transform: { include: ['cluster:monitor/data_frame/*', 'cluster:monitor/transform/*'] },
  monitor_watcher: { include: ['cluster:monitor/xpack/watcher/*'] },
  monitor_rollup: { include: ['cluster:monitor/xpack/rollup/*'] },
  manage: { include: ALL_CLUSTER, exclude: [`${SECURITY}*`] },
  manage_ml: { include: ['cluster:admin/xpack/ml/*', 'cluster:monitor/xpack/ml/*'] },
  manage_data_frame_transforms: { include: TRANSFORMS },
  manage_transform: { include: TRANSFORMS },
  manage_token: { include: [`${SECURITY}token/*`] },
  manage_watcher: { include: ['cluster:admin/xpack/watcher/*', 'cluster:monitor/xpack/watcher/*'] },
  manage_index_templates: { include: ['indices:admin/template/*', 'indices:admin/index_template/*', 'cluster:admin/component_template/*'] },
  manage_ingest_pipelines: { include: ['cluster:admin/ingest/pipeline/*'] },
  read_pipeline: { include: ['cluster:admin/ingest/pipeline/get', 'cluster:admin/ingest/pipeline/simulate'] },
  transport_client: { include: ['cluster:monitor/nodes/liveness', 'cluster:monitor/state'] },
  manage_security: { include: [`${SECURITY}*`], exclude: [`${SECURITY}delegate_pki`] },
  read_security: {
    include: [
      `${SECURITY}api_key/get`,
      `${SECURITY}api_key/query`,
      `${SECURITY}privilege/builtin/get`,
      `${SECURITY}privilege/get`,
      `${SECURITY}profile/get`,
      `${SECURITY}profile/has_privileges`,
      `${SECURITY}profile/suggest`,
      `${SECURITY}role/get`,
      `${SECURITY}role/query`,
      `${SECURITY}role_mapping/get`,
      `${SECURITY}service_account/get`,
      `${SECURITY}service_account/credential/get*`,
      `${SECURITY}user/get`,
      `${SECURITY}user/query`,
      `${SECURITY}user/list_privileges`,
      `${SECURITY}user/has_privileges`,
    ],
  },
  manage_saml: { include: [`${SECURITY}saml/*`, `${SECURITY}token/invalidate`, `${SECURITY}token/refresh`, 'cluster:monitor/xpack/security/saml/metadata'] },
  manage_oidc: { include: [`${SECURITY}oidc/*`] },
  manage_api_key: { include: [`${SECURITY}api_key/*`] },
  grant_api_key: { include: [`${SECURITY}api_key/grant*`] },
  manage_service_account: { include: [`${SECURITY}service_account/*`] },
  manage_user_profile: { include: [`${SECURITY}profile/*`] },
  manage_pipeline: { include: ['cluster:admin/ingest/pipeline/*'] },
  manage_rollup: { include: ['cluster:admin/xpack/rollup/*', 'cluster:monitor/xpack/rollup/*'] },
  manage_autoscaling: { include: ['cluster:admin/autoscaling/*'] },
  manage_ccr: { include: ['cluster:admin/xpack/ccr/*', 'cluster:monitor/state', `${SECURITY}user/has_privileges`] },
  read_ccr: { include: ['cluster:monitor/state', `${SECURITY}user/has_privileges`] },
  create_snapshot: { include: ['cluster:admin/snapshot/create', ...SNAPSHOT_READ] },
  monitor_snapshot: { include: SNAPSHOT_READ },
  manage_ilm: { include: ['cluster:admin/ilm/*'] },
  read_ilm: { include: ['cluster:admin/ilm/get', ILM_STATUS] },
  manage_slm: { include: ['cluster:admin/slm/*', 'cluster:admin/ilm/start', 'cluster:admin/ilm/stop', ILM_STATUS] },
  read_slm: { include: ['cluster:admin/slm/get', ILM_STATUS] },
  delegate_pki: { include: [`${SECURITY}delegate_pki`, `${SECURITY}token/invalidate`] },
  manage_own_api_key: { include: [`${SECURITY}api_key/*`], ownApiKeysOnly: true },
  manage_enrich: { include: ['cluster:admin/xpack/enrich/*'] },
  manage_logstash_pipelines: { include: ['cluster:admin/logstash/pipeline/*'] },
  cancel_task: { include: ['cluster:admin/tasks/cancel*'] },
  manage_search_application: { include: ['cluster:admin/xpack/application/search_application/*'] },
  manage_behavioral_analytics: { include: ['cluster:admin/xpack/application/analytics/*'] },
  send_behavioral_analytics_event: { include: ['cluster:admin/xpack/application/analytics/post_event'] },
  read_fleet_secrets: { include: ['cluster:admin/fleet/secrets/get'] },
};

/** Index privileges (ES IndexPrivilege automata, every named one). */
export const INDEX_PRIVILEGES: Record<string, PrivilegeDef> = {
  none: { include: [] },
  all: { include: ['indices:*', 'internal:transport/proxy/indices:*'] },
  read: { include: ['indices:data/read/*'] },
  read_cross_cluster: { include: ['internal:transport/proxy/indices:data/read/*', 'indices:admin/shards/search_shards'] },
  create: { include: ['indices:data/write/index*', 'indices:data/write/bulk*'] },
  create_doc: {
    include: ['indices:data/write/index', 'indices:data/write/index[*', 'indices:data/write/index:op_type/create', 'indices:data/write/bulk*'],
  },
  index: { include: ['indices:data/write/index*', 'indices:data/write/bulk*', 'indices:data/write/update*'] },
  delete: { include: ['indices:data/write/delete*', 'indices:data/write/bulk*'] },
  write: { include: ['indices:data/write/*', 'indices:admin/mapping/auto_put'] },
  monitor: { include: ['indices:monitor/*'] },
  manage: { include: ['indices:monitor/*', 'indices:admin/*', 'indices:data/read/field_caps*', 'indices:admin/xpack/rollup/get/index/caps*'] },
  create_index: { include: ['indices:admin/create', 'indices:admin/auto_create', 'indices:admin/data_stream/create'] },
  delete_index: { include: ['indices:admin/delete', 'indices:admin/data_stream/delete'] },
  view_index_metadata: {
    include: [
      'indices:admin/aliases/get',
      'indices:admin/get',
      'indices:admin/mappings/fields/get*',
      'indices:admin/mappings/get',
      'indices:admin/shards/search_shards',
      'indices:admin/validate/query*',
      'indices:admin/settings/get',
      'indices:admin/ilm/explain',
      'indices:admin/data_stream/get',
      'indices:admin/resolve/index',
      'indices:data/read/field_caps*',
      'indices:admin/xpack/rollup/get/index/caps*',
      'indices:monitor/transform/checkpoint*',
    ],
  },
  manage_follow_index: {
    include: ['indices:admin/xpack/ccr/put_follow', 'indices:admin/xpack/ccr/unfollow', 'indices:admin/close*', 'indices:admin/data_stream/promote', 'indices:admin/rollover'],
  },
  manage_leader_index: { include: ['indices:admin/xpack/ccr/forget_follower*'] },
  manage_ilm: { include: ['indices:admin/ilm/*'] },
  maintenance: { include: ['indices:admin/refresh*', 'indices:admin/flush*', 'indices:admin/synced_flush', 'indices:admin/forcemerge*'] },
  auto_configure: { include: ['indices:admin/mapping/auto_put', 'indices:admin/auto_create'] },
};

export { patternsRegExp } from './actionSets';

/** Does index-name pattern `p` match every name pattern `q` matches (prefix globs only)? */
export function patternCovers(p: string, q: string): boolean {
  if (p.endsWith('*') && !p.slice(0, -1).includes('*')) {
    const prefix = p.slice(0, -1);
    return q.startsWith(prefix);
  }
  if (!p.includes('*')) return p === q;
  return !q.includes('*') && patternsRegExp([p]).test(q);
}

/**
 * Does privilege `a` grant every action `b` grants (ES Privilege.implies: a subset test on the
 * automata, exclusions included, so `manage` implies `manage`)? manage_own_api_key is a check of
 * another kind: it implies only itself, and nothing else implies it (ES ManageOwnClusterPermissionCheck).
 */
export function implies(a: PrivilegeDef, b: PrivilegeDef): boolean {
  if (!!a.ownApiKeysOnly !== !!b.ownApiKeysOnly) return false;
  return subsetOf(b, [a]);
}

/** Does the privilege grant this action (ignoring request-dependent rules)? */
export function grants(def: PrivilegeDef, action: string): boolean {
  const inc = compiled(def);
  return inc.include.test(action) && !inc.exclude.test(action);
}

const compiledDefs = new WeakMap<PrivilegeDef, { include: RegExp; exclude: RegExp }>();
function compiled(def: PrivilegeDef) {
  let c = compiledDefs.get(def);
  if (!c) compiledDefs.set(def, (c = { include: patternsRegExp(def.include), exclude: patternsRegExp(def.exclude ?? []) }));
  return c;
}

function sortByAccessLevel(defs: Record<string, PrivilegeDef>): string[] {
  const names = Object.keys(defs);
  const count = new Map(names.map((n) => [n, names.filter((m) => m !== n && implies(defs[n], defs[m])).length]));
  return names.sort((x, y) => count.get(x)! - count.get(y)! || (x < y ? -1 : x > y ? 1 : 0));
}

const CLUSTER_ORDER = sortByAccessLevel(CLUSTER_PRIVILEGES);
const INDEX_ORDER = sortByAccessLevel(INDEX_PRIVILEGES);

/**
 * Names of the cluster privileges granting `action`, least privileged first (ES
 * ClusterPrivilegeResolver.findPrivilegesThatGrant). `ownRequest` says whether an API key request is
 * scoped to the caller's own keys (only then does manage_own_api_key count).
 */
export function clusterPrivilegesThatGrant(action: string, ownRequest = false): string[] {
  return CLUSTER_ORDER.filter((n) => {
    const d = CLUSTER_PRIVILEGES[n];
    if (d.ownApiKeysOnly && !ownRequest) return false;
    return grants(d, action);
  });
}

/** Names of the index privileges granting `action`, least privileged first. */
export function indexPrivilegesThatGrant(action: string): string[] {
  return INDEX_ORDER.filter((n) => grants(INDEX_PRIVILEGES[n], action));
}

/** ES ClusterPrivilegeResolver.isClusterAction. */
export const isClusterActionName = (n: string) => n.startsWith('cluster:') || n.startsWith('indices:admin/template/') || n.startsWith('indices:admin/index_template/');
/** ES IndexPrivilege.ACTION_MATCHER. */
const isIndexActionName = (n: string) => n.startsWith('indices:') || n.startsWith('internal:transport/proxy/indices:');

/**
 * A privilege given by name, or by an action pattern (`cluster:monitor/main` or `indices:data/read/search`
 * mean that action and its sub-actions, as ES's `actionToPattern`). Undefined for unknown names.
 */
export function resolvePrivilege(kind: 'cluster' | 'index', name: string): PrivilegeDef | undefined {
  const n = name.toLowerCase();
  if (kind === 'cluster' ? isClusterActionName(n) : isIndexActionName(n)) return { include: [n.endsWith('*') ? n : `${n}*`] };
  const defs = kind === 'cluster' ? CLUSTER_PRIVILEGES : INDEX_PRIVILEGES;
  return Object.hasOwn(defs, n) ? defs[n] : undefined;
}

/** ES's message for an unknown privilege name (400 illegal_argument_exception). */
export function unknownPrivilegeMessage(kind: 'cluster' | 'index', name: string): string {
  return kind === 'cluster'
    ? `unknown cluster privilege [${name.toLowerCase()}]. a privilege must be either one of the predefined cluster privilege names [${CLUSTER_ORDER.join(',')}] or a pattern over one of the available cluster actions`
    : `unknown index privilege [${name.toLowerCase()}]. a privilege must be either one of the predefined fixed indices privileges [${INDEX_ORDER.join(',')}] or a pattern over one of the available index actions`;
}
