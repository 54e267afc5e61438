import { EsError } from '../wire/esErrors';
import type { RoleDescriptor } from '../wire/security';
import { subsetOf } from './actionSets';
import { compileApplications, grantsApplication, type StoredAppPrivileges } from './appPrivileges';
import { type AppEntry } from '../wire/security';
import { matcherAsRegExp, namePatternsMatcher } from '../automaton';
import { patternCovers, patternsRegExp, resolvePrivilege } from './privileges';
import { type PrivilegeDef } from '../wire/security';
import type { ClusterGrant, IndexGroup, LimitedPermission, Permission, RolePermission } from '../wire/security';

/**
 * What a set of role descriptors allows, compiled for fast checks: cluster actions by pattern, index
 * actions per group of index-name patterns. An API key's permission is the intersection of its own
 * descriptors and its owner's snapshot (`limited`).
 */

const MEMO_MAX = 4096;
const MEMO_ACTIONS = 256;
/** The memo's index key of "on any index" (no index name holds a NUL). */
const ANY_INDEX = '\u0000';

/**
 * Index-name patterns: `*`/`?` wildcards, or a Lucene regex between slashes (ES Automatons.patterns),
 * matched by automata in linear time (a role's `/(a+)+b/` must not stall authorization).
 */
export function indexNamesRegExp(patterns: string[]): RegExp {
  return matcherAsRegExp(namePatternsMatcher(patterns));
}

const NO_STORED: StoredAppPrivileges = new Map();

/**
 * Compiles role descriptors (already validated) into a permission; application privilege names are
 * resolved against `stored` (the role store recompiles on every change).
 */
export function compileRoles(descriptors: Record<string, RoleDescriptor>, stored: StoredAppPrivileges = NO_STORED): RolePermission {
  const cluster: ClusterGrant[] = [];
  const clusterNames = new Set<string>();
  const groups: IndexGroup[] = [];
  for (const rd of Object.values(descriptors)) {
    for (const name of rd.cluster ?? []) {
      const def = resolvePrivilege('cluster', name);
      if (!def) continue;
      clusterNames.add(name);
      cluster.push({ def, include: patternsRegExp(def.include), exclude: patternsRegExp(def.exclude ?? []) });
    }
    for (const ip of rd.indices ?? []) {
      const defs = ip.privileges.map((n) => resolvePrivilege('index', n)).filter((d): d is PrivilegeDef => !!d);
      groups.push({
        namePatterns: ip.names,
        names: indexNamesRegExp(ip.names),
        privileges: ip.privileges,
        defs,
        actions: patternsRegExp(defs.flatMap((d) => d.include)),
      });
    }
  }
  return {
    kind: 'role',
    roleNames: Object.keys(descriptors).sort(),
    clusterNames: [...clusterNames],
    cluster,
    groups,
    apps: compileApplications(
      Object.values(descriptors).flatMap((rd) => rd.applications ?? []),
      stored,
    ),
    descriptors,
    memo: new Map(),
    runAs: indexNamesRegExp(Object.values(descriptors).flatMap((rd) => rd.run_as ?? [])),
  };
}

/** ES RunAsPermission.check: may the permission run as `username` (both halves of an API key's)? */
export function checkRunAs(p: Permission, username: string): boolean {
  if (p.kind === 'role') return p.runAs.test(username);
  return (!p.own || p.own.runAs.test(username)) && p.limitedBy.runAs.test(username);
}

/** An API key's permission: its descriptors (if any) intersected with the owner's snapshot. */
export function limitPermission(own: RolePermission | undefined, limitedBy: RolePermission): LimitedPermission {
  return { kind: 'limited', own, limitedBy, memo: new Map() };
}

function roleCluster(p: RolePermission, action: string, ownRequest: boolean): boolean {
  for (const g of p.cluster) {
    // manage_own_api_key: create and update are always about the caller's own keys
    if (g.def.ownApiKeysOnly && !ownRequest && !/\/api_key\/(create|update)$/.test(action)) continue;
    if (g.include.test(action) && !g.exclude.test(action)) return true;
  }
  return false;
}

/** May the permission run a cluster action? `ownRequest`: an API key request scoped to the caller's keys. */
export function checkCluster(p: Permission, action: string, ownRequest = false): boolean {
  if (p.kind === 'role') return roleCluster(p, action, ownRequest);
  return (!p.own || roleCluster(p.own, action, ownRequest)) && roleCluster(p.limitedBy, action, ownRequest);
}

function roleIndex(p: RolePermission, action: string, index: string): boolean {
  for (const g of p.groups) if (g.actions.test(action) && g.names.test(index)) return true;
  return false;
}

// Hot path (every request): no closures, no key strings built per call; a two-level Map memo per
// permission (the action names are constants, the index name string hashes once).
function remember(p: Permission, byIndex: Map<string, boolean> | undefined, action: string, index: string, v: boolean): boolean {
  if (!byIndex) {
    if (p.memo.size >= MEMO_ACTIONS) p.memo.clear();
    p.memo.set(action, (byIndex = new Map()));
  }
  if (byIndex.size >= MEMO_MAX) byIndex.clear();
  byIndex.set(index, v);
  return v;
}

/** May the permission run an index action on this concrete index name? */
export function checkIndex(p: Permission, action: string, index: string): boolean {
  const byIndex = p.memo.get(action);
  const hit = byIndex?.get(index);
  if (hit !== undefined) return hit;
  const v = p.kind === 'role' ? roleIndex(p, action, index) : (!p.own || roleIndex(p.own, action, index)) && roleIndex(p.limitedBy, action, index);
  return remember(p, byIndex, action, index, v);
}

function anyGroup(r: RolePermission, action: string): boolean {
  for (const g of r.groups) if (g.actions.test(action)) return true;
  return false;
}

/** Does any index group grant the action at all (ES checks this before resolving indices)? */
export function checkIndicesAction(p: Permission, action: string): boolean {
  const byIndex = p.memo.get(action);
  const hit = byIndex?.get(ANY_INDEX);
  if (hit !== undefined) return hit;
  const v = p.kind === 'role' ? anyGroup(p, action) : (!p.own || anyGroup(p.own, action)) && anyGroup(p.limitedBy, action);
  return remember(p, byIndex, action, ANY_INDEX, v);
}

/**
 * ES Role.grants(ClusterPrivilege): a role's plain cluster privileges form one merged automaton (each
 * privilege's actions minus its exclusions), so `[manage, manage_security, delegate_pki]` implies
 * `all`; manage_own_api_key is a separate check that only implies itself.
 */
function roleHasCluster(p: RolePermission, name: string): boolean {
  const want = resolvePrivilege('cluster', name);
  if (!want) return false;
  if (want.ownApiKeysOnly) return p.cluster.some((g) => g.def.ownApiKeysOnly);
  return subsetOf(want, p.cluster.filter((g) => !g.def.ownApiKeysOnly).map((g) => g.def));
}

/** `_has_privileges` for a cluster privilege name. */
export function hasClusterPrivilege(p: Permission, name: string): boolean {
  if (p.kind === 'role') return roleHasCluster(p, name);
  return (!p.own || roleHasCluster(p.own, name)) && roleHasCluster(p.limitedBy, name);
}

function groupCoversName(g: IndexGroup, requested: string): boolean {
  if (!/[*?]/.test(requested)) return g.names.test(requested);
  return g.namePatterns.some((p) => (p.startsWith('/') ? g.names.test(requested) : patternCovers(p, requested)));
}

function roleHasIndex(p: RolePermission, index: string, name: string): boolean {
  const want = resolvePrivilege('index', name);
  if (!want) return false;
  // ES IndicesPermission.checkResourcePrivileges: the union of the groups covering the name
  const covering = p.groups.filter((g) => groupCoversName(g, index));
  return subsetOf(want, covering.flatMap((g) => g.defs));
}

/** `_has_privileges` for an index privilege name on an index name or pattern. */
export function hasIndexPrivilege(p: Permission, index: string, name: string): boolean {
  if (p.kind === 'role') return roleHasIndex(p, index, name);
  return (!p.own || roleHasIndex(p.own, index, name)) && roleHasIndex(p.limitedBy, index, name);
}

/**
 * `_has_privileges` for an application privilege (a stored name or an action pattern) on a resource
 * (ES Role.checkApplicationResourcePrivileges; an API key needs it from both its descriptors and its
 * owner's). Nothing not granted is ever true.
 */
export function hasApplicationPrivilege(p: Permission, application: string, resource: string, privilege: string, stored: StoredAppPrivileges): boolean {
  if (p.kind === 'role') return grantsApplication(p.apps, application, resource, privilege, stored);
  return (!p.own || grantsApplication(p.own.apps, application, resource, privilege, stored)) && grantsApplication(p.limitedBy.apps, application, resource, privilege, stored);
}
