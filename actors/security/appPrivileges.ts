/**
 * Application privileges (ES ApplicationPrivilege, ApplicationPrivilegeDescriptor, ApplicationPermission):
 * named privileges an outside application (Kibana, …) defines with `PUT /_security/privilege`, each a
 * set of action patterns; roles grant them on resources, and `_has_privileges` answers whether a caller
 * holds an application privilege (by name or by action) on a resource. Elasticsearch itself never
 * enforces them.
 */
import { subsetOf } from './actionSets';
import { patternsRegExp } from './privileges';
import type { ApplicationPrivileges } from '../wire/security';
import type { AppEntry, ResolvedAppPrivilege } from '../wire/security';

/** A stored application privilege (`PUT /_security/privilege`). */
export interface AppPrivilegeDescriptor {
  application: string;
  name: string;
  actions: string[];
  metadata: Record<string, unknown>;
}

/** Stored privileges by application, then name. */
export type StoredAppPrivileges = ReadonlyMap<string, ReadonlyMap<string, AppPrivilegeDescriptor>>;

const VALID_PREFIX = /^[a-z][A-Za-z0-9]*$/;
const VALID_NAME = /^[a-z][a-zA-Z0-9_.-]*$/;
const GRAPH = /^[\x21-\x7e]*$/;
// ES Strings.INVALID_FILENAME_CHARS
const INVALID_FILENAME = ['\\', '/', '*', '?', '"', '<', '>', '|', ' ', ','];
const WHITESPACE = /[\v\t \u00a0\u1680\u180e\u2000-\u200a\u202f\u205f\u3000\n\r\f\u2028\u2029\u0085]/;

/**
 * ES ApplicationPrivilege.validateApplicationName: a 3+ character prefix `[a-z][A-Za-z0-9]*`,
 * optionally `-`/`_` and a file-name-safe suffix; with `allowWildcard` (roles) a trailing `*`.
 * @returns ES's message, or undefined when valid
 */
export function applicationNameError(application: string, allowWildcard: boolean): string | undefined {
  if (!application) return 'Application names cannot be blank';
  const asterisk = application.indexOf('*');
  if (asterisk !== -1) {
    if (!allowWildcard) return `Application names may not contain '*' (found '${application}')`;
    if (application === '*') return undefined;
    if (asterisk !== application.length - 1) return `Application name patterns only support trailing wildcards (found '${application}')`;
  }
  if (WHITESPACE.test(application)) return `Application names may not contain whitespace (found '${application}')`;
  const m = /[_-]/.exec(application);
  let prefix = m ? application.slice(0, m.index) : application;
  if (prefix.endsWith('*')) prefix = prefix.slice(0, -1);
  if (!VALID_PREFIX.test(prefix)) return `An application name prefix must match the pattern ^[a-z][A-Za-z0-9]*$ (found '${prefix}')`;
  if (prefix.length < 3 && asterisk === -1) return `An application name prefix must be at least 3 characters long (found '${prefix}')`;
  if (m) {
    let suffix = application.slice(m.index + 1);
    if (allowWildcard && suffix.endsWith('*')) suffix = suffix.slice(0, -1);
    if (INVALID_FILENAME.some((c) => suffix.includes(c))) {
      return `An application name suffix may not contain any of the characters '${INVALID_FILENAME.join('')}' (found '${suffix}')`;
    }
  }
  return undefined;
}

/** A privilege name (vs. an action pattern, which has one of `/ * :` or other characters). */
export const isValidPrivilegeName = (name: string) => VALID_NAME.test(name);

export const privilegeNameError = (name: string) =>
  isValidPrivilegeName(name) ? undefined : `Application privilege names must match the pattern ^[a-z][a-zA-Z0-9_.-]*$ (found '${name}')`;

export const privilegeOrActionNameError = (name: string) =>
  GRAPH.test(name) ? undefined : `Application privilege names and actions must match the pattern ^\\p{Graph}*$ (found '${name}')`;

function resolveOne(application: string, names: string[], lookup: ReadonlyMap<string, AppPrivilegeDescriptor> | undefined): ResolvedAppPrivilege {
  const patterns = new Set<string>();
  for (const n of names) {
    if (isValidPrivilegeName(n)) for (const a of lookup?.get(n)?.actions ?? []) patterns.add(a);
    else patterns.add(n); // an action pattern given directly (or `*`)
  }
  return { application, names: [...new Set(names)].sort(), patterns: [...patterns].sort() };
}

/**
 * ES ApplicationPrivilege.get: names resolved against the stored privileges of the application; an
 * application pattern (`kibana-*`) stands for every stored application it matches (or, when none is
 * stored, for itself with no stored names).
 */
export function resolveAppPrivileges(application: string, names: string[], stored: StoredAppPrivileges): ResolvedAppPrivilege[] {
  if (!names.length) return [{ application, names: ['none'], patterns: [] }];
  if (!application.includes('*')) return [resolveOne(application, names, stored.get(application))];
  const re = patternsRegExp([application]);
  const apps = [...stored.keys()].filter((a) => re.test(a));
  if (!apps.length) return [resolveOne(application, names, undefined)];
  return apps.map((a) => resolveOne(a, names, stored.get(a)));
}

const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** ES ApplicationPermission: entries by privilege, resources of equal privileges merged. */
export function compileApplications(apps: readonly ApplicationPrivileges[], stored: StoredAppPrivileges): AppEntry[] {
  const out: AppEntry[] = [];
  for (const a of apps) {
    for (const privilege of resolveAppPrivileges(a.application, a.privileges, stored)) {
      const same = out.find((e) => e.privilege.application === privilege.application && sameList(e.privilege.names, privilege.names) && sameList(e.privilege.patterns, privilege.patterns));
      if (same) same.resources = [...new Set([...same.resources, ...a.resources])];
      else out.push({ privilege, application: patternsRegExp([privilege.application]), resources: [...a.resources] });
    }
  }
  return out;
}

const TOTAL = { include: ['*'] };

/** ES PermissionEntry.matchesPrivilege. */
function matchesPrivilege(e: AppEntry, other: ResolvedAppPrivilege): boolean {
  const p = e.privilege;
  if (p.application === other.application && sameList(p.names, other.names) && sameList(p.patterns, other.patterns)) return true;
  if (!e.application.test(other.application)) return false;
  if (subsetOf(TOTAL, [{ include: p.patterns }])) return true;
  return p.patterns.length > 0 && other.patterns.length > 0 && subsetOf({ include: other.patterns }, [{ include: p.patterns }]);
}

/**
 * ES ApplicationPermission.checkResourcePrivileges for one (resource, privilege) pair: is the
 * privilege (a stored name, or an action pattern) granted on the resource (a name or a pattern)?
 */
export function grantsApplication(entries: readonly AppEntry[], application: string, resource: string, privilege: string, stored: StoredAppPrivileges): boolean {
  const checks = resolveAppPrivileges(application, [privilege], stored);
  return checks.every((c) => entries.some((e) => matchesPrivilege(e, c) && subsetOf({ include: [resource] }, [{ include: e.resources }])));
}
