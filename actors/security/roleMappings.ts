import { EsError, validationFailed } from '../wire/esErrors';
import { indexNamesRegExp } from './permission';

/**
 * Role mappings (PUT /_security/role_mapping/<name>): rules over what a realm knows about a user give
 * it roles. JWT realms use them to turn `groups` claims into roles. Rules: `{field:{<field>: v|[v…]}}`,
 * `{any:[…]}`, `{all:[…]}`, `{except:{…}}`; fields `username`, `dn`, `groups`, `realm.name`,
 * `metadata.<key>`; string values may hold `*` wildcards or a `/regex/`.
 */

export type Rule =
  | { any: Rule[] }
  | { all: Rule[] }
  | { except: Rule }
  | { field: Record<string, unknown> };

export interface RoleMapping {
  enabled: boolean;
  roles: string[];
  rules: Rule;
  metadata: Record<string, unknown>;
}

/** What a rule is evaluated against. */
export interface UserData {
  username: string;
  dn?: string | null;
  groups: string[];
  metadata: Record<string, unknown>;
  realm: { name: string };
}

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function parseRule(v: unknown, path: string): Rule {
  if (!isObj(v)) throw new EsError('parse_exception', 400, `failed to parse rules expression. expected an object at [${path}]`);
  const [k, ...rest] = Object.keys(v);
  if (!k || rest.length) throw new EsError('parse_exception', 400, `failed to parse rules expression. expected exactly one field at [${path}]`);
  const body = v[k];
  if (k === 'any' || k === 'all') {
    if (!Array.isArray(body)) throw new EsError('parse_exception', 400, `failed to parse rules expression. [${k}] must be an array`);
    return { [k]: body.map((r, i) => parseRule(r, `${path}.${k}[${i}]`)) } as Rule;
  }
  if (k === 'except') return { except: parseRule(body, `${path}.except`) };
  if (k === 'field') {
    if (!isObj(body) || Object.keys(body).length !== 1) throw new EsError('parse_exception', 400, 'failed to parse rules expression. [field] must name exactly one field');
    return { field: body };
  }
  throw new EsError('parse_exception', 400, `failed to parse rules expression. unknown field [${k}]`);
}

/** Parses a PUT role_mapping body. */
export function parseRoleMapping(body: unknown): RoleMapping {
  if (!isObj(body)) throw new EsError('parse_exception', 400, 'failed to parse role-mapping. expected an object');
  const errors: string[] = [];
  const roles = Array.isArray(body.roles) ? body.roles.map(String) : [];
  if (!roles.length) errors.push('a role-mapping must define roles or role_templates');
  if (body.rules === undefined) errors.push('a role-mapping must define rules');
  if (errors.length) throw validationFailed(errors);
  return {
    enabled: body.enabled !== false,
    roles,
    rules: parseRule(body.rules, 'rules'),
    metadata: isObj(body.metadata) ? body.metadata : {},
  };
}

function fieldValues(user: UserData, field: string): unknown[] {
  if (field === 'username') return [user.username];
  if (field === 'dn') return user.dn ? [user.dn] : [null];
  if (field === 'groups') return user.groups;
  if (field === 'realm.name') return [user.realm.name];
  if (field.startsWith('metadata.')) {
    const v = user.metadata[field.slice('metadata.'.length)];
    return Array.isArray(v) ? v : [v ?? null];
  }
  return [];
}

function valueMatches(want: unknown, have: unknown): boolean {
  if (typeof want === 'string') return typeof have === 'string' && indexNamesRegExp([want]).test(have);
  return want === have;
}

/** Does the rule match this user? */
export function ruleMatches(rule: Rule, user: UserData): boolean {
  if ('any' in rule) return rule.any.some((r) => ruleMatches(r, user));
  if ('all' in rule) return rule.all.every((r) => ruleMatches(r, user));
  if ('except' in rule) return !ruleMatches(rule.except, user);
  const [field, want] = Object.entries(rule.field)[0];
  const wants = Array.isArray(want) ? want : [want];
  const have = fieldValues(user, field);
  return wants.some((w) => have.some((h) => valueMatches(w, h)));
}

/** Roles that the enabled mappings give a user (sorted, unique). */
export function mappedRoles(mappings: Iterable<RoleMapping>, user: UserData): string[] {
  const out = new Set<string>();
  for (const m of mappings) if (m.enabled && ruleMatches(m.rules, user)) for (const r of m.roles) out.add(r);
  return [...out].sort();
}
