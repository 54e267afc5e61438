/**
 * Named cluster and index privileges as action-name patterns (ES ClusterPrivilegeResolver and
 * IndexPrivilege), and the "granted by" lists ES prints in 403 reasons, ordered from least to most
 * privileged (by how many other privileges each implies, then by name, as ES sorts them).
 */

import { matcherAsRegExp, simpleMatcher } from '../automaton';

/** A privilege: action patterns it grants (`*` matches any run of characters), minus `exclude`. */
export interface PrivilegeDef {
  include: readonly string[];
  exclude?: readonly string[];
  /** manage_own_api_key: API key actions only on the caller's own keys (request-dependent). */
  ownApiKeysOnly?: boolean;
}

const SECURITY = 'cluster:admin/xpack/security/';
const ALL_CLUSTER = ['cluster:*', 'indices:admin/template/*', 'indices:admin/index_template/*'];

/** Cluster privileges this node knows (ES names). Unknown names are refused when a role is stored. */
export const CLUSTER_PRIVILEGES: Record<string, PrivilegeDef> = {
  none: { include: [] },
  all: { include: ALL_CLUSTER },
  monitor: { include: ['cluster:monitor/*'] },
  manage: { include: ALL_CLUSTER, exclude: [`${SECURITY}*`] },
  manage_security: { include: [`${SECURITY}*`] },
  read_security: {
    include: [
      `${SECURITY}api_key/get`,
      `${SECURITY}api_key/query`,
      `${SECURITY}privilege/builtin/get`,
      `${SECURITY}privilege/get`,
      `${SECURITY}role/get`,
      `${SECURITY}role_mapping/get`,
      `${SECURITY}service_account/get`,
      `${SECURITY}service_account/credential/get*`,
      `${SECURITY}user/get`,
      `${SECURITY}user/list_privileges`,
      `${SECURITY}user/has_privileges`,
    ],
  },
  manage_api_key: { include: [`${SECURITY}api_key/*`] },
  manage_own_api_key: {
    include: [`${SECURITY}api_key/create`, `${SECURITY}api_key/get`, `${SECURITY}api_key/invalidate`, `${SECURITY}api_key/update`, `${SECURITY}api_key/query`],
    ownApiKeysOnly: true,
  },
  grant_api_key: { include: [`${SECURITY}api_key/grant*`] },
  manage_token: { include: [`${SECURITY}token/*`] },
  manage_service_account: { include: [`${SECURITY}service_account/*`] },
  manage_index_templates: { include: ['indices:admin/template/*', 'indices:admin/index_template/*', 'cluster:admin/component_template/*'] },
  cancel_task: { include: ['cluster:admin/tasks/cancel*'] },
};

/** Index privileges (ES IndexPrivilege automata, restricted to actions this service has). */
export const INDEX_PRIVILEGES: Record<string, PrivilegeDef> = {
  none: { include: [] },
  all: { include: ['indices:*'] },
  read: { include: ['indices:data/read/*'] },
  create: { include: ['indices:data/write/index*', 'indices:data/write/bulk*'] },
  create_doc: {
    include: ['indices:data/write/index', 'indices:data/write/index[*', 'indices:data/write/index:op_type/create', 'indices:data/write/bulk*'],
  },
  index: { include: ['indices:data/write/index*', 'indices:data/write/bulk*', 'indices:data/write/update*'] },
  delete: { include: ['indices:data/write/delete*', 'indices:data/write/bulk*'] },
  write: { include: ['indices:data/write/*', 'indices:admin/mapping/auto_put'] },
  monitor: { include: ['indices:monitor/*'] },
  manage: { include: ['indices:monitor/*', 'indices:admin/*', 'indices:data/read/field_caps*'] },
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
    ],
  },
  maintenance: { include: ['indices:admin/refresh*', 'indices:admin/flush*', 'indices:admin/synced_flush', 'indices:admin/forcemerge*'] },
  auto_configure: { include: ['indices:admin/mapping/auto_put', 'indices:admin/auto_create'] },
};

/** One anchored RegExp for a list of `*` patterns (never matches when the list is empty). */
export function patternsRegExp(patterns: readonly string[]): RegExp {
  // simpleMatch, not a RegExp: a user's action pattern `indices:*a*a*a…` would backtrack exponentially
  return matcherAsRegExp(simpleMatcher(patterns));
}

/** Does pattern `p` match every name pattern `q` matches (prefix globs only)? */
export function patternCovers(p: string, q: string): boolean {
  if (p.endsWith('*') && !p.slice(0, -1).includes('*')) {
    const prefix = p.slice(0, -1);
    return q.startsWith(prefix);
  }
  if (!p.includes('*')) return p === q;
  return !q.includes('*') && patternsRegExp([p]).test(q);
}

function overlaps(p: string, q: string): boolean {
  const pp = p.endsWith('*') ? p.slice(0, -1) : p;
  const qq = q.endsWith('*') ? q.slice(0, -1) : q;
  if (p.endsWith('*') && q.endsWith('*')) return pp.startsWith(qq) || qq.startsWith(pp);
  if (p.endsWith('*')) return q.startsWith(pp);
  if (q.endsWith('*')) return p.startsWith(qq);
  return p === q;
}

/** Does privilege `a` grant every action `b` grants? */
export function implies(a: PrivilegeDef, b: PrivilegeDef): boolean {
  if (a.ownApiKeysOnly && !b.ownApiKeysOnly && b.include.length) return false;
  return b.include.every(
    (q) => a.include.some((p) => patternCovers(p, q)) && !(a.exclude ?? []).some((x) => overlaps(x, q)),
  );
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

/**
 * A privilege given by name, or by an action pattern (`cluster:monitor/main` or `indices:data/read/search`
 * mean that action and its sub-actions, as ES's `actionToPattern`). Undefined for unknown names.
 */
export function resolvePrivilege(kind: 'cluster' | 'index', name: string): PrivilegeDef | undefined {
  const n = name.toLowerCase();
  const prefix = kind === 'cluster' ? 'cluster:' : 'indices:';
  if (n.startsWith(prefix) || (kind === 'cluster' && n.startsWith('indices:admin/template'))) return { include: [n.endsWith('*') ? n : `${n}*`] };
  return (kind === 'cluster' ? CLUSTER_PRIVILEGES : INDEX_PRIVILEGES)[n];
}

/** ES's message for an unknown privilege name (400 illegal_argument_exception). */
export function unknownPrivilegeMessage(kind: 'cluster' | 'index', name: string): string {
  return kind === 'cluster'
    ? `unknown cluster privilege [${name.toLowerCase()}]. a privilege must be either one of the predefined cluster privilege names [${CLUSTER_ORDER.join(',')}] or a pattern over one of the available cluster actions`
    : `unknown index privilege [${name.toLowerCase()}]. a privilege must be either one of the predefined fixed indices privileges [${INDEX_ORDER.join(',')}] or a pattern over one of the available index actions`;
}
