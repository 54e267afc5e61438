/**
 * Derived API keys (ours; README "Differences"): with `xpack.security.authc.api_key.derived_keys.enabled`
 * an API key may create a child key whose privileges are a subset of its own and whose expiry is no
 * later than its own; invalidating a key invalidates its descendants (one `apikey.invalidated` fact
 * each, `cascadeOf` the key that took them with it). ES allows an API key only a child without
 * privileges (`creating derived api keys requires an explicit role descriptor that is empty`), which
 * stays the default.
 */
import type { ApiKeyRecord } from '../../machines/apiKey.machine';
import { illegalArgument } from '../wire/esErrors';
import type { Permission, RoleDescriptor } from '../wire/security';
import type { StoredAppPrivileges } from './appPrivileges';
import { checkRunAs, hasApplicationPrivilege, hasClusterPrivilege, hasIndexPrivilege } from './permission';

export const DERIVED_KEYS_SETTING = 'xpack.security.authc.api_key.derived_keys.enabled';

/** How deep a chain of derived keys may go (a bound for the ancestor walk on every authentication). */
export const MAX_DERIVATION_DEPTH = 16;

/**
 * Whether a permission covers a cluster privilege; manage_own_api_key is a narrower manage_api_key
 * (own keys only), so a role with the wider one covers it (each half of an API key's permission).
 */
function clusterCovered(p: Permission, c: string): boolean {
  if (p.kind === 'limited') return (!p.own || clusterCovered(p.own, c)) && clusterCovered(p.limitedBy, c);
  return hasClusterPrivilege(p, c) || (c === 'manage_own_api_key' && hasClusterPrivilege(p, 'manage_api_key'));
}

/** What the parent's permission lacks of the child's descriptors (empty: a subset). */
function missingPrivileges(descriptors: Record<string, RoleDescriptor>, parent: Permission, stored: StoredAppPrivileges): string[] {
  const out: string[] = [];
  for (const rd of Object.values(descriptors)) {
    for (const c of rd.cluster) if (!clusterCovered(parent, c)) out.push(`cluster [${c}]`);
    for (const ip of rd.indices) {
      for (const n of ip.names) for (const p of ip.privileges) if (!hasIndexPrivilege(parent, n, p)) out.push(`index [${n}] privilege [${p}]`);
    }
    for (const a of rd.applications) {
      for (const r of a.resources) for (const p of a.privileges) if (!hasApplicationPrivilege(parent, a.application, r, p, stored)) out.push(`application [${a.application}] resource [${r}] privilege [${p}]`);
    }
    for (const u of rd.run_as) if (!checkRunAs(parent, u)) out.push(`run_as [${u}]`);
  }
  return [...new Set(out)];
}

/**
 * The descriptors, snapshot and expiry of a key derived from `parent`: no descriptors means the
 * parent's own (the same privileges); any other must be covered by the parent's effective permission.
 * The child is limited by the parent's snapshot, so it can never exceed the parent, and expires no
 * later (the parent's expiry when it asks for none).
 */
export function deriveKey(
  name: string,
  parent: ApiKeyRecord,
  parentPermission: Permission,
  descriptors: Record<string, RoleDescriptor>,
  expiration: number | undefined,
  stored: StoredAppPrivileges,
  depth: number,
): { roleDescriptors: Record<string, RoleDescriptor>; limitedBy: Record<string, RoleDescriptor>; expiration: number | undefined } {
  if (depth >= MAX_DERIVATION_DEPTH) throw illegalArgument(`API key [${parent.keyId}] is derived [${depth}] levels deep; derived keys may be at most [${MAX_DERIVATION_DEPTH}] levels deep`);
  const missing = Object.keys(descriptors).length ? missingPrivileges(descriptors, parentPermission, stored) : [];
  if (missing.length) {
    throw illegalArgument(`derived API key [${name}] may only have privileges of its API key [${parent.keyId}], which does not grant ${missing.join(', ')}`);
  }
  if (expiration !== undefined && parent.expiration !== undefined && expiration > parent.expiration) {
    throw illegalArgument(`derived API key [${name}] may not expire after its API key [${parent.keyId}] (expiration [${new Date(parent.expiration).toISOString()}])`);
  }
  return {
    roleDescriptors: Object.keys(descriptors).length ? descriptors : parent.roleDescriptors,
    limitedBy: parent.limitedBy,
    expiration: expiration ?? parent.expiration,
  };
}

/** Whether every ancestor of a derived key is still usable (a child dies with its parent, even before its cascade fact arrives). */
export function ancestorsActive(rec: ApiKeyRecord, records: ReadonlyMap<string, ApiKeyRecord>, now: number): boolean {
  let id = rec.parentId;
  for (let depth = 0; id !== undefined && depth <= MAX_DERIVATION_DEPTH; depth++) {
    const p = records.get(id);
    if (!p || p.status !== 'active' || (p.expiration !== undefined && p.expiration <= now)) return false;
    id = p.parentId;
  }
  return true;
}

/** How many ancestors a key has. */
export function depthOf(rec: ApiKeyRecord, records: ReadonlyMap<string, ApiKeyRecord>): number {
  let d = 0;
  for (let id = rec.parentId; id !== undefined && d <= MAX_DERIVATION_DEPTH; id = records.get(id)?.parentId) d++;
  return d;
}

/** Every descendant of `id`, nearest first (breadth first over the children index). */
export function descendantsOf(id: string, children: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const out: string[] = [];
  const seen = new Set([id]);
  for (let i = -1; i < out.length; i++) {
    for (const c of children.get(i < 0 ? id : out[i]) ?? []) if (!seen.has(c)) (seen.add(c), out.push(c));
  }
  return out;
}
