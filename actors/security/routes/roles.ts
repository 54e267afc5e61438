import { EsError, illegalArgument, validationFailed } from '../../wire/esErrors';
import type { Routes } from '../../wire/rest';
import type { EsRequest } from '../../wire/rest';
import { Aggregate } from '../../../streams';
import { applicationNameError } from '../appPrivileges';
import { hasApplicationPrivilege, hasClusterPrivilege, hasIndexPrivilege } from '../permission';
import { resolvePrivilege, unknownPrivilegeMessage } from '../privileges';
import { canonicalJson, parseRoleDescriptor, renderRoleDescriptor } from '../roleDescriptor';
import { parseRoleMapping } from '../roleMappings';
import { roleAggregateId } from '../roleStore';
import { queryRoles } from '../userRoleQuery';
import { authOf, bodyOf, descriptorsOf, namesOf, type SecurityServices } from '../services';
import type { RoleDescriptor } from '../../wire/security';

const A = 'cluster:admin/xpack/security/';

async function roleFact(s: SecurityServices, req: EsRequest, kind: 'role' | 'rolemapping', name: string, type: string, data: Record<string, unknown>) {
  const id = roleAggregateId(kind, name);
  await s.facts.exclusive(`${kind}:${name}`, () =>
    s.facts.append(Aggregate.Role, id, s.roles.seqOf(id), [{ type, name, ...data }], { correlationId: req.opaqueId }),
  );
  s.facts.broadcastInvalidate('role', [name]);
}

/** Roles, role mappings, and the caller's own privileges. */
export function roleRoutes(router: Routes, s: SecurityServices): void {
  router.add(
    ['PUT', 'POST'],
    '/_security/role/{name}',
    async (req) => {
      const name = req.params.name;
      if (s.roles.isReserved(name)) throw illegalArgument(`role [${name}] is reserved and cannot be modified.`);
      const descriptor = parseRoleDescriptor(name, bodyOf(req));
      const existed = s.roles.get(name) !== undefined;
      await roleFact(s, req, 'role', name, existed ? 'role.updated' : 'role.created', { descriptor });
      return { body: { role: { created: !existed } } };
    },
    { kind: 'cluster', action: `${A}role/put` },
  );
  const getRoles = (req: EsRequest) => {
    const names = namesOf(req.params.name);
    const all = s.roles.all();
    const picked = names.length ? names.filter((n) => all[n]) : Object.keys(all);
    return {
      status: names.length && !picked.length ? 404 : 200,
      body: Object.fromEntries(picked.map((n) => [n, renderRoleDescriptor(all[n])])),
    };
  };
  router.add('GET', '/_security/role', getRoles, { kind: 'cluster', action: `${A}role/get` });
  // ES RestQueryRoleAction: native roles (built-in ones are not documents of `.security`).
  router.add(['GET', 'POST'], '/_security/_query/role', (req) => ({ body: queryRoles(s.roles.native(), bodyOf(req), s.now()) }), {
    kind: 'cluster',
    action: `${A}role/query`,
  });
  router.add('GET', '/_security/role/{name}', getRoles, { kind: 'cluster', action: `${A}role/get` });
  router.add(
    'DELETE',
    '/_security/role/{name}',
    async (req) => {
      const name = req.params.name;
      if (s.roles.isReserved(name)) throw illegalArgument(`role [${name}] is reserved and cannot be deleted`);
      if (!s.roles.get(name)) return { status: 404, body: { found: false } };
      await roleFact(s, req, 'role', name, 'role.deleted', {});
      return { body: { found: true } };
    },
    { kind: 'cluster', action: `${A}role/delete` },
  );

  router.add(
    ['PUT', 'POST'],
    '/_security/role_mapping/{name}',
    async (req) => {
      const name = req.params.name;
      const mapping = parseRoleMapping(bodyOf(req));
      const existed = s.roles.mappings.has(name);
      await roleFact(s, req, 'rolemapping', name, existed ? 'role.mapping_updated' : 'role.mapping_created', { mapping });
      return { body: { role_mapping: { created: !existed } } };
    },
    { kind: 'cluster', action: `${A}role_mapping/put` },
  );
  const getMappings = (req: EsRequest) => {
    const names = namesOf(req.params.name);
    const picked = [...s.roles.mappings.keys()].filter((n) => !names.length || names.includes(n)).sort();
    return {
      status: names.length && !picked.length ? 404 : 200,
      body: Object.fromEntries(picked.map((n) => [n, s.roles.mappings.get(n)])),
    };
  };
  router.add('GET', '/_security/role_mapping', getMappings, { kind: 'cluster', action: `${A}role_mapping/get` });
  router.add('GET', '/_security/role_mapping/{name}', getMappings, { kind: 'cluster', action: `${A}role_mapping/get` });
  router.add(
    'DELETE',
    '/_security/role_mapping/{name}',
    async (req) => {
      const name = req.params.name;
      if (!s.roles.mappings.has(name)) return { status: 404, body: { found: false } };
      await roleFact(s, req, 'rolemapping', name, 'role.mapping_deleted', {});
      return { body: { found: true } };
    },
    { kind: 'cluster', action: `${A}role_mapping/delete` },
  );

  router.add('GET', '/_security/user/_privileges', (req) => ({ body: userPrivileges(s, req) }), { kind: 'none' });
  router.add(['GET', 'POST'], '/_security/user/_has_privileges', (req) => ({ body: hasPrivileges(s, req) }), { kind: 'none' });
}

/** GET /_security/user/_privileges: the union of the caller's role descriptors. */
function userPrivileges(s: SecurityServices, req: EsRequest) {
  const auth = authOf(req);
  if (auth.apiKey) {
    const rec = s.apiKeys.records.get(auth.apiKey.id);
    if (rec && Object.keys(rec.roleDescriptors).length) {
      throw illegalArgument('Cannot retrieve privileges for API keys with assigned role descriptors. Please use the Get API key information API https://ela.st/es-api-get-api-key');
    }
  }
  const ds: RoleDescriptor[] = Object.values(descriptorsOf(s, auth));
  const seen = new Set<string>();
  const indices = ds
    .flatMap((d) => d.indices)
    .map((ip) => ({ names: [...ip.names].sort(), privileges: [...ip.privileges].sort(), allow_restricted_indices: ip.allow_restricted_indices ?? false }))
    .filter((ip) => {
      const k = canonicalJson(ip);
      return seen.has(k) ? false : (seen.add(k), true);
    });
  return {
    cluster: [...new Set(ds.flatMap((d) => d.cluster))].sort(),
    global: [],
    indices,
    applications: ds.flatMap((d) => d.applications),
    run_as: [...new Set(ds.flatMap((d) => d.run_as))].sort(),
  };
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

/** A field of a has_privileges entry as a list of strings (ES reads a single string as one). */
function stringList(v: unknown, field: string, what: string): string[] {
  if (v === undefined || v === null) return [];
  const arr = Array.isArray(v) ? v : [v];
  if (!arr.every((x) => typeof x === 'string')) throw new EsError('parse_exception', 400, `failed to parse ${what}. [${field}] must be a string or an array of strings`);
  return arr as string[];
}

/** GET|POST /_security/user/_has_privileges for the caller (ES RBACEngine.checkPrivileges). */
function hasPrivileges(s: SecurityServices, req: EsRequest) {
  const auth = authOf(req);
  const body = bodyOf(req);
  for (const k of Object.keys(body)) {
    if (!['cluster', 'index', 'application'].includes(k)) throw new EsError('parse_exception', 400, `failed to parse privileges check. unexpected field [${k}]`);
  }
  checkPrivilegesShape(body, auth.user.username);
  const p = auth.permission;
  const clusterNames = stringList(body.cluster, 'cluster', 'privileges check');
  const indexEntries = body.index === undefined || body.index === null ? [] : Array.isArray(body.index) ? body.index : [body.index];
  const appEntries = body.application === undefined || body.application === null ? [] : Array.isArray(body.application) ? body.application : [body.application];
  const apps = appEntries.map((a) => {
    if (!isObj(a)) throw new EsError('parse_exception', 400, 'failed to parse privileges check. [application] entries must be objects');
    const application = typeof a.application === 'string' ? a.application : '';
    const privileges = stringList(a.privileges, 'privileges', 'application privileges');
    const resources = stringList(a.resources, 'resources', 'application privileges');
    if (!privileges.length) throw illegalArgument('application privileges must define at least one privilege');
    if (!resources.length) throw illegalArgument('application privileges must refer to at least one resource');
    return { application, privileges, resources };
  });
  // ES HasPrivilegesRequest.validate
  const errors: string[] = [];
  for (const a of apps) {
    const e = applicationNameError(a.application, false);
    if (e) errors.push(e);
  }
  if (!clusterNames.length && !indexEntries.length && !apps.length) errors.push('must specify at least one privilege');
  if (errors.length) throw validationFailed(errors);

  let all = true;
  const cluster: Record<string, boolean> = {};
  for (const name of clusterNames) {
    if (!resolvePrivilege('cluster', name)) throw illegalArgument(unknownPrivilegeMessage('cluster', name));
    cluster[name] = hasClusterPrivilege(p, name);
    all = all && cluster[name];
  }
  const index: Record<string, Record<string, boolean>> = {};
  for (const entry of indexEntries) {
    if (!isObj(entry)) throw new EsError('parse_exception', 400, 'failed to parse privileges check. [index] entries must be objects');
    for (const n of stringList(entry.names, 'names', 'indices privileges')) {
      for (const priv of stringList(entry.privileges, 'privileges', 'indices privileges')) {
        if (!resolvePrivilege('index', priv)) throw illegalArgument(unknownPrivilegeMessage('index', priv));
        const ok = hasIndexPrivilege(p, n, priv);
        (index[n] ??= {})[priv] = ok;
        all = all && ok;
      }
    }
  }
  const application: Record<string, Record<string, Record<string, boolean>>> = {};
  const stored = s.roles.privileges;
  for (const a of apps) {
    for (const r of a.resources) {
      for (const priv of a.privileges) {
        const ok = hasApplicationPrivilege(p, a.application, r, priv, stored);
        ((application[a.application] ??= {})[r] ??= {})[priv] = ok;
        all = all && ok;
      }
    }
  }
  return { username: auth.user.username, has_all_requested: all, cluster, index, application };
}

/** Bad shapes in a privileges check are ES's 400 parse error, never a TypeError (fuzz, issue 10). */
function checkPrivilegesShape(body: Record<string, unknown>, user: string): void {
  const token = (v: unknown) => (v === null ? 'VALUE_NULL' : Array.isArray(v) ? 'START_ARRAY' : typeof v === 'object' ? 'START_OBJECT' : typeof v === 'string' ? 'VALUE_STRING' : typeof v === 'boolean' ? 'VALUE_BOOLEAN' : 'VALUE_NUMBER');
  const fail = (field: string, v: unknown, want: string) =>
    new EsError('parse_exception', 400, `failed to parse privileges check [${user}]. could not parse [${field}] field. expected ${want} but found [${token(v)}] instead`);
  const strings = (field: string, v: unknown) => {
    if (v !== undefined && !(Array.isArray(v) && v.every((x) => typeof x === 'string'))) throw fail(field, v, 'a string array');
  };
  strings('cluster', body.cluster);
  for (const [field, keys] of [['index', ['names', 'privileges']], ['application', ['resources', 'privileges']]] as const) {
    const v = body[field];
    if (v === undefined) continue;
    if (!Array.isArray(v) || !v.every((e) => e !== null && typeof e === 'object' && !Array.isArray(e))) throw fail(field, v, 'an array of objects');
    for (const e of v as Array<Record<string, unknown>>) {
      for (const k of keys) if (!(k === 'names' && typeof e[k] === 'string')) strings(`${field}.${k}`, e[k]);
      if (field === 'application' && typeof e.application !== 'string') throw fail('application.application', e.application, 'a string');
    }
  }
}
