/**
 * `GET|POST /_security/_query/user` and `/_security/_query/role` (ES TransportQueryUserAction,
 * TransportQueryRoleAction): the query DSL subset of queryDsl.ts over ES's allowed fields
 * (FieldNameTranslators.USER_FIELD_NAME_TRANSLATORS, ROLE_FIELD_NAME_TRANSLATORS), with `from`/`size`,
 * `sort` and `search_after`. Only native users and roles are searched, as ES searches `.security`
 * (reserved and file-realm users, built-in roles are not documents there).
 */
import type { RoleDescriptor, User } from '../wire/security';
import { compileQuery, fieldTable, type FieldTable } from './queryDsl';
import { checkBodyFields, pageOf } from './queryPaging';
import { renderRoleDescriptor } from './roleDescriptor';

const BODY_FIELDS = ['query', 'from', 'size', 'sort', 'search_after'] as const;

/** The user fields ES lets a query name; `full_name` and `email` are text fields, not sortable. */
export const USER_FIELDS = fieldTable<User>(
  [
    { name: 'username', kind: 'keyword', sortable: true, values: (u) => [u.username] },
    { name: 'roles', kind: 'keyword', sortable: true, values: (u) => u.roles },
    { name: 'enabled', kind: 'boolean', sortable: true, values: (u) => [u.enabled] },
    { name: 'full_name', kind: 'text', sortable: false, values: (u) => (u.full_name === null ? [] : [u.full_name]) },
    { name: 'email', kind: 'text', sortable: false, values: (u) => (u.email === null ? [] : [u.email]) },
  ],
  [],
  (u) => u.username,
);

export interface NamedRole {
  name: string;
  descriptor: RoleDescriptor;
}

const apps = (r: NamedRole, key: 'application' | 'resources' | 'privileges') => r.descriptor.applications.flatMap((a) => a[key]);

/** The role fields ES lets a query name (`description` is text; `metadata.*` flattened). */
export const ROLE_FIELDS = fieldTable<NamedRole>(
  [
    { name: 'name', kind: 'keyword', sortable: true, values: (r) => [r.name] },
    { name: 'description', kind: 'text', sortable: true, values: (r) => (r.descriptor.description === undefined ? [] : [r.descriptor.description]) },
    { name: 'applications.application', kind: 'keyword', sortable: true, values: (r) => apps(r, 'application') },
    { name: 'applications.resources', kind: 'keyword', sortable: true, values: (r) => apps(r, 'resources') },
    { name: 'applications.privileges', kind: 'keyword', sortable: true, values: (r) => apps(r, 'privileges') },
  ],
  [{ name: 'metadata', object: (r) => r.descriptor.metadata }],
  (r) => r.name,
);

function run<T>(docs: T[], body: Record<string, unknown>, fields: FieldTable<T>, payload: string, now: number) {
  checkBodyFields(body, BODY_FIELDS, payload);
  const matched = body.query !== undefined && body.query !== null ? docs.filter(compileQuery(body.query, fields, now)) : docs;
  return pageOf(matched, new Map(docs.map((d, i) => [d, i])), body, fields, payload, now);
}

/** `_security/_query/user` over native users. */
export function queryUsers(users: User[], body: Record<string, unknown>, now = Date.now()): Record<string, unknown> {
  const page = run(users, body, USER_FIELDS, 'query_user_request_payload', now);
  const render = (u: User) => ({ username: u.username, roles: u.roles, full_name: u.full_name, email: u.email, metadata: u.metadata, enabled: u.enabled });
  return { total: page.total, count: page.hits.length, users: page.hits.map(({ doc, sort }) => ({ ...render(doc), ...(sort ? { _sort: sort } : {}) })) };
}

/** `_security/_query/role` over native roles. */
export function queryRoles(roles: NamedRole[], body: Record<string, unknown>, now = Date.now()): Record<string, unknown> {
  const page = run(roles, body, ROLE_FIELDS, 'query_role_request_payload', now);
  return {
    total: page.total,
    count: page.hits.length,
    roles: page.hits.map(({ doc, sort }) => ({ name: doc.name, ...renderRoleDescriptor(doc.descriptor), ...(sort ? { _sort: sort } : {}) })),
  };
}

