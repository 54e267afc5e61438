/**
 * Parsing and validation of role descriptors as PUT /_security/role and API keys'
 * `role_descriptors` send them (`indices` may be spelled `index`), and their REST rendering.
 */
import { EsError, validationFailed } from '../wire/esErrors';
import { applicationNameError, privilegeOrActionNameError } from './appPrivileges';
import { resolvePrivilege, unknownPrivilegeMessage } from './privileges';
import type { ApplicationPrivileges, IndicesPrivileges, RoleDescriptor } from '../wire/security';

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

const strings = (v: unknown, field: string, role: string): string[] => {
  if (v === undefined || v === null) return [];
  const arr = Array.isArray(v) ? v : [v];
  if (!arr.every((x) => typeof x === 'string')) {
    throw new EsError('parse_exception', 400, `failed to parse role [${role}]. field [${field}] must be a string or an array of strings`);
  }
  return arr as string[];
};

function parseIndices(v: unknown, role: string): IndicesPrivileges[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new EsError('parse_exception', 400, `failed to parse indices privileges for role [${role}]. expected field [indices] value to be an array`);
  return v.map((e) => {
    if (!isObj(e)) throw new EsError('parse_exception', 400, `failed to parse indices privileges for role [${role}]. expected an object`);
    const names = strings(e.names, 'names', role);
    const privileges = strings(e.privileges, 'privileges', role);
    if (!names.length) throw new EsError('parse_exception', 400, `failed to parse indices privileges for role [${role}]. missing required [names] field`);
    if (!privileges.length && e.privileges === undefined) {
      throw new EsError('parse_exception', 400, `failed to parse indices privileges for role [${role}]. missing required [privileges] field`);
    }
    const ip: IndicesPrivileges = { names, privileges, allow_restricted_indices: e.allow_restricted_indices === true };
    if (e.field_security !== undefined) ip.field_security = e.field_security;
    if (e.query !== undefined) ip.query = e.query;
    return ip;
  });
}

/** ES RoleDescriptor.parseApplicationPrivilege (shape) for each `applications` entry. */
function parseApplications(v: unknown, role: string): ApplicationPrivileges[] {
  if (v === undefined || v === null) return [];
  const fail = (why: string) => new EsError('parse_exception', 400, `failed to parse application privileges for role [${role}]. ${why}`);
  if (!Array.isArray(v)) throw fail('expected field [applications] value to be an array');
  return v.map((e) => {
    if (!isObj(e)) throw fail('expected an object');
    for (const k of Object.keys(e)) if (!['application', 'privileges', 'resources'].includes(k)) throw fail(`unexpected field [${k}]`);
    if (typeof e.application !== 'string') throw new EsError('illegal_argument_exception', 400, 'application privileges must have an application name');
    const privileges = strings(e.privileges, 'privileges', role);
    const resources = strings(e.resources, 'resources', role);
    if (!privileges.length) throw new EsError('illegal_argument_exception', 400, 'application privileges must define at least one privilege');
    if (!resources.length) throw new EsError('illegal_argument_exception', 400, 'application privileges must refer to at least one resource');
    return { application: e.application, privileges, resources };
  });
}

/** Parses one role descriptor body; throws ES's 400 for bad shapes or unknown privileges. */
export function parseRoleDescriptor(name: string, body: unknown): RoleDescriptor {
  if (!isObj(body)) throw new EsError('parse_exception', 400, `failed to parse role [${name}]. expected an object but found [${typeof body}] instead`);
  const rd: RoleDescriptor = {
    cluster: strings(body.cluster, 'cluster', name),
    indices: parseIndices(body.indices ?? body.index, name),
    applications: parseApplications(body.applications, name),
    run_as: strings(body.run_as, 'run_as', name),
    metadata: isObj(body.metadata) ? body.metadata : {},
    transient_metadata: { enabled: true },
  };
  if (typeof body.description === 'string') rd.description = body.description;
  const errors: string[] = [];
  for (const c of rd.cluster) if (!resolvePrivilege('cluster', c)) errors.push(unknownPrivilegeMessage('cluster', c));
  for (const ip of rd.indices) for (const p of ip.privileges) if (!resolvePrivilege('index', p)) errors.push(unknownPrivilegeMessage('index', p));
  // ES RoleDescriptorRequestValidator: application names (trailing wildcards allowed) and privilege names
  for (const a of rd.applications) {
    const appError = applicationNameError(a.application, true);
    if (appError) errors.push(appError);
    for (const p of a.privileges) {
      const e = privilegeOrActionNameError(p);
      if (e) errors.push(e);
    }
  }
  if (Object.keys(rd.metadata).some((k) => k.startsWith('_'))) errors.push('role metadata keys may not start with [_]');
  if (errors.length) throw validationFailed(errors);
  return rd;
}

/** Parses a `role_descriptors` map (API keys). */
export function parseRoleDescriptors(v: unknown): Record<string, RoleDescriptor> {
  if (v === undefined || v === null) return {};
  if (!isObj(v)) throw new EsError('parse_exception', 400, 'role_descriptors must be an object');
  const out: Record<string, RoleDescriptor> = {};
  for (const [n, rd] of Object.entries(v)) out[n] = parseRoleDescriptor(n, rd);
  return out;
}

/** True when a descriptor grants nothing (required for derived API keys). */
export const isEmptyDescriptor = (rd: RoleDescriptor) =>
  !rd.cluster.length && !rd.indices.length && !rd.applications.length && !rd.run_as.length;

/** The REST shape of a descriptor (GET role, API key `role_descriptors`, service accounts). */
export function renderRoleDescriptor(rd: RoleDescriptor): Record<string, unknown> {
  return {
    cluster: rd.cluster,
    indices: rd.indices.map((ip) => ({
      names: ip.names,
      privileges: ip.privileges,
      ...(ip.field_security !== undefined ? { field_security: ip.field_security } : {}),
      ...(ip.query !== undefined ? { query: ip.query } : {}),
      allow_restricted_indices: ip.allow_restricted_indices ?? false,
    })),
    applications: rd.applications,
    run_as: rd.run_as,
    metadata: rd.metadata,
    transient_metadata: rd.transient_metadata ?? { enabled: true },
    ...(rd.description !== undefined ? { description: rd.description } : {}),
  };
}

/** JSON with sorted keys: equal descriptors give equal strings (interning, no-op update detection). */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (isObj(v)) {
    return `{${Object.keys(v)
      .sort()
      .filter((k) => v[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}
