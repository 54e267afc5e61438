import { Aggregate } from '../../../streams';
import type { Routes } from '../../wire/rest';
import type { EsRequest } from '../../wire/rest';
import { EsError, illegalArgument, validationFailed } from '../../wire/esErrors';
import { applicationNameError, privilegeNameError, privilegeOrActionNameError, type AppPrivilegeDescriptor } from '../appPrivileges';
import { CLUSTER_PRIVILEGES, INDEX_PRIVILEGES, patternsRegExp } from '../privileges';
import { privilegeAggregateId } from '../roleStore';
import { bodyOf, namesOf, type SecurityServices } from '../services';

const A = 'cluster:admin/xpack/security/privilege/';
const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
const FIELDS = new Set(['application', 'name', 'actions', 'metadata']);

/**
 * ES PutPrivilegesRequestBuilder.source + PutPrivilegesRequest.validate: `{app: {name: {actions, metadata}}}`;
 * `application`/`name` in a privilege must match their keys.
 */
function parsePutPrivileges(body: Record<string, unknown>): AppPrivilegeDescriptor[] {
  const out: AppPrivilegeDescriptor[] = [];
  for (const [application, privs] of Object.entries(body)) {
    if (!isObj(privs)) throw new EsError('parse_exception', 400, `expected the value for [${application}] to be an object, but found [${Array.isArray(privs) ? 'START_ARRAY' : 'VALUE'}] instead`);
    for (const [name, p] of Object.entries(privs)) {
      if (!isObj(p)) throw new EsError('parse_exception', 400, `expected the value for [${name}] to be an object, but found [${Array.isArray(p) ? 'START_ARRAY' : 'VALUE'}] instead`);
      for (const k of Object.keys(p)) if (!FIELDS.has(k)) throw new EsError('x_content_parse_exception', 400, `[1:1] [application_privilege] unknown field [${k}]`);
      if (p.application !== undefined && p.application !== application) {
        throw illegalArgument(`privilege application [${String(p.application)}] in source does not match the provided application [${application}]`);
      }
      if (p.name !== undefined && p.name !== name) throw illegalArgument(`privilege name [${String(p.name)}] in source does not match the provided name [${name}]`);
      const actions = p.actions === undefined ? [] : p.actions;
      if (!Array.isArray(actions) || !actions.every((a) => typeof a === 'string')) {
        throw new EsError('x_content_parse_exception', 400, '[1:1] [application_privilege] failed to parse field [actions]');
      }
      if (p.metadata !== undefined && p.metadata !== null && !isObj(p.metadata)) {
        throw new EsError('x_content_parse_exception', 400, '[1:1] [application_privilege] failed to parse field [metadata]');
      }
      out.push({ application, name, actions: actions as string[], metadata: isObj(p.metadata) ? p.metadata : {} });
    }
  }
  const errors: string[] = [];
  if (!out.length) errors.push('At least one application privilege must be provided');
  for (const p of out) {
    const appError = applicationNameError(p.application, false);
    if (appError) errors.push(appError);
    const nameError = privilegeNameError(p.name);
    if (nameError) errors.push(nameError);
    if (!p.actions.length) errors.push('Application privileges must have at least one action');
    for (const a of p.actions) {
      if (!/[/*:]/.test(a)) errors.push(`action [${a}] must contain one of [/ , * , :]`);
      const e = privilegeOrActionNameError(a);
      if (e) errors.push(e);
    }
    if (Object.keys(p.metadata).some((k) => k.startsWith('_'))) errors.push(`metadata keys may not start with [_] (in privilege ${p.application} ${p.name})`);
  }
  if (errors.length) throw validationFailed(errors);
  return out;
}

async function privilegeFact(s: SecurityServices, req: EsRequest, application: string, name: string, type: string, data: Record<string, unknown>) {
  const id = privilegeAggregateId(application, name);
  await s.facts.exclusive(`privilege:${application}/${name}`, () =>
    s.facts.append(Aggregate.Role, id, s.roles.seqOf(id), [{ type, application, name, ...data }], { correlationId: req.opaqueId }),
  );
  s.facts.broadcastInvalidate('role', [`${application}/${name}`]);
}

/** Application privileges: PUT/GET/DELETE /_security/privilege, and GET /_security/privilege/_builtin. */
export function privilegeRoutes(router: Routes, s: SecurityServices): void {
  const put = async (req: EsRequest) => {
    const privileges = parsePutPrivileges(bodyOf(req));
    const result: Record<string, Record<string, { created: boolean }>> = {};
    for (const p of privileges) {
      const existed = s.roles.privileges.get(p.application)?.has(p.name) ?? false;
      await privilegeFact(s, req, p.application, p.name, existed ? 'role.privilege_updated' : 'role.privilege_created', { actions: p.actions, metadata: p.metadata });
      (result[p.application] ??= {})[p.name] = { created: !existed };
    }
    return { body: result };
  };
  router.add(['PUT', 'POST'], '/_security/privilege', put, { kind: 'cluster', action: `${A}put` });

  // ES RestGetPrivilegesAction: 404 (with `{}`) only when names were asked for and none found.
  const get = (req: EsRequest) => {
    const app = req.params.application;
    const names = namesOf(req.params.name);
    const apps = app === undefined ? null : patternsRegExp(namesOf(app));
    const body: Record<string, Record<string, AppPrivilegeDescriptor>> = {};
    for (const [application, privs] of [...s.roles.privileges.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (apps && !apps.test(application)) continue;
      for (const [name, p] of [...privs.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
        if (names.length && !names.includes(name)) continue;
        (body[application] ??= {})[name] = { application: p.application, name: p.name, actions: p.actions, metadata: p.metadata };
      }
    }
    return { status: names.length && !Object.keys(body).length ? 404 : 200, body };
  };
  router.add('GET', '/_security/privilege', get, { kind: 'cluster', action: `${A}get` });
  router.add('GET', '/_security/privilege/{application}', get, { kind: 'cluster', action: `${A}get` });
  router.add('GET', '/_security/privilege/{application}/{name}', get, { kind: 'cluster', action: `${A}get` });

  router.add(
    'DELETE',
    '/_security/privilege/{application}/{name}',
    async (req) => {
      const application = req.params.application;
      const names = namesOf(req.params.name);
      if (!names.length) throw validationFailed(['privileges are missing']);
      const result: Record<string, { found: boolean }> = {};
      for (const name of names) {
        const found = s.roles.privileges.get(application)?.has(name) ?? false;
        if (found) await privilegeFact(s, req, application, name, 'role.privilege_deleted', {});
        result[name] = { found };
      }
      const anyFound = Object.values(result).some((r) => r.found);
      return { status: anyFound ? 200 : 404, body: { [application]: result } };
    },
    { kind: 'cluster', action: `${A}delete` },
  );

  router.add(
    'GET',
    '/_security/privilege/_builtin',
    () => ({ body: { cluster: Object.keys(CLUSTER_PRIVILEGES).sort(), index: Object.keys(INDEX_PRIVILEGES).sort(), remote_cluster: [] } }),
    { kind: 'cluster', action: `${A}builtin/get` },
  );
}
