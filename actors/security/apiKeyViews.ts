import { EsError, validationFailed } from '../wire/esErrors';
import type { ApiKeyRecord } from '../../machines/apiKey.machine';
import { API_KEY_REALM, apiKeyOwnerOf } from './apiKeys';
import { indexNamesRegExp } from './permission';
import { renderRoleDescriptor } from './roleDescriptor';
import type { Authentication, RoleDescriptor } from './types';

/** Selectors of GET/DELETE /_security/api_key (query params or body). */
export interface KeySelector {
  ids?: string[];
  name?: string;
  username?: string;
  realmName?: string;
  owner: boolean;
  activeOnly?: boolean;
}

/** ES GetApiKeyRequest / InvalidateApiKeyRequest validation. */
export function validateSelector(s: KeySelector, verb: 'retrieving' | 'invalidating'): void {
  const errors: string[] = [];
  const plural = verb === 'invalidating';
  if (verb === 'invalidating' && !s.realmName && !s.username && !s.ids && !s.name && !s.owner) {
    errors.push('One of [api key id(s), api key name, username, realm name] must be specified if [owner] flag is false');
  }
  if ((s.ids || s.name) && (s.realmName || s.username)) {
    errors.push(
      plural
        ? 'username or realm name must not be specified when the api key id(s) or api key name are specified'
        : 'username or realm name must not be specified when the api key id or api key name is specified',
    );
  }
  if (s.owner && (s.realmName || s.username)) errors.push(`neither username nor realm-name may be specified when ${verb} owned API keys`);
  if (s.ids && s.name) errors.push(plural ? 'only one of [api key id(s), api key name] can be specified' : 'only one of [api key id, api key name] can be specified');
  if (errors.length) throw validationFailed(errors);
}

/**
 * Is the request about the caller's own keys (what `manage_own_api_key` allows)? An API key may always
 * address its own id.
 */
export function isOwnRequest(s: KeySelector, caller: Authentication): boolean {
  if (caller.apiKey && caller.authenticationType === 'api_key' && s.ids?.length === 1 && s.ids[0] === caller.apiKey.id && !s.name) return true;
  if (s.owner) return true;
  if (caller.authenticationType === 'api_key') return false;
  return !!s.username && !!s.realmName && s.username === caller.user.username && s.realmName === caller.authenticationRealm.name;
}

/** Keys matching a selector (the caller's own when `owner`). */
export function selectKeys(all: Iterable<ApiKeyRecord>, s: KeySelector, caller: Authentication, now: number): ApiKeyRecord[] {
  const owner = s.owner ? apiKeyOwnerOf(caller) : undefined;
  const nameRe = s.name && s.name !== '*' ? indexNamesRegExp([s.name]) : undefined;
  const ids = s.ids ? new Set(s.ids) : undefined;
  const out: ApiKeyRecord[] = [];
  for (const r of all) {
    if (ids && !ids.has(r.keyId)) continue;
    if (nameRe && !nameRe.test(r.name)) continue;
    if (s.username && r.owner.username !== s.username) continue;
    if (s.realmName && r.owner.realm !== s.realmName) continue;
    if (owner && (r.owner.username !== owner.username || r.owner.realm !== owner.realm)) continue;
    if (s.activeOnly && (r.status !== 'active' || (r.expiration !== undefined && r.expiration <= now))) continue;
    out.push(r);
  }
  return out;
}

const renderDescriptors = (d: Record<string, RoleDescriptor>) =>
  Object.fromEntries(Object.entries(d).map(([n, rd]) => [n, renderRoleDescriptor(rd)]));

/** The GET view of a key. */
export function renderKey(r: ApiKeyRecord, opts: { withLimitedBy?: boolean } = {}): Record<string, unknown> {
  return {
    id: r.keyId,
    name: r.name,
    type: r.keyType,
    creation: r.creation,
    ...(r.expiration !== undefined ? { expiration: r.expiration } : {}),
    invalidated: r.status === 'invalidated',
    ...(r.invalidation !== undefined ? { invalidation: r.invalidation } : {}),
    username: r.owner.username,
    realm: r.owner.realm,
    realm_type: r.owner.realmType,
    metadata: r.metadata,
    role_descriptors: renderDescriptors(r.roleDescriptors),
    ...(opts.withLimitedBy && r.owner.realm !== API_KEY_REALM ? { limited_by: [renderDescriptors(r.limitedBy)] } : {}),
  };
}

// ---- _query/api_key: a subset of the query DSL over the key fields ES exposes ----

type Doc = Record<string, unknown>;

function field(r: ApiKeyRecord, name: string): unknown {
  switch (name) {
    case 'id':
      return r.keyId;
    case 'name':
      return r.name;
    case 'username':
      return r.owner.username;
    case 'realm_name':
      return r.owner.realm;
    case 'type':
      return r.keyType;
    case 'creation':
      return r.creation;
    case 'expiration':
      return r.expiration;
    case 'invalidated':
      return r.status === 'invalidated';
    case 'invalidation':
      return r.invalidation;
    default:
      return name.startsWith('metadata.') ? r.metadata[name.slice('metadata.'.length)] : undefined;
  }
}

const one = (q: unknown) => Object.entries(q as Doc)[0] as [string, unknown];
const valueOf = (v: unknown) => (v && typeof v === 'object' && 'value' in (v as Doc) ? (v as Doc).value : v);

function matches(q: Doc, r: ApiKeyRecord): boolean {
  // a clause is an object with one query and an object body; anything else is ES's 400, not a TypeError
  if (q === null || typeof q !== 'object' || Array.isArray(q) || Object.keys(q).length !== 1) {
    throw new EsError('parsing_exception', 400, '[_na] query malformed, must start with start_object');
  }
  const [kind, body] = one(q);
  if (kind !== 'match_all' && (body === null || typeof body !== 'object' || Array.isArray(body) || (kind !== 'exists' && kind !== 'ids' && kind !== 'bool' && Object.keys(body).length === 0))) {
    throw new EsError('parsing_exception', 400, `[${kind}] query malformed, no start_object after query name`);
  }
  const b = body as Doc;
  switch (kind) {
    case 'match_all':
      return true;
    case 'ids':
      return ((b.values as string[]) ?? []).includes(r.keyId);
    case 'term': {
      const [f, v] = one(b);
      return field(r, f) === valueOf(v);
    }
    case 'terms': {
      const [f, vs] = one(b);
      return (vs as unknown[]).includes(field(r, f));
    }
    case 'prefix': {
      const [f, v] = one(b);
      return String(field(r, f) ?? '').startsWith(String(valueOf(v)));
    }
    case 'wildcard': {
      const [f, v] = one(b);
      return indexNamesRegExp([String(valueOf(v))]).test(String(field(r, f) ?? ''));
    }
    case 'exists':
      return field(r, String(b.field)) !== undefined;
    case 'range': {
      const [f, c] = one(b);
      const x = field(r, f) as number | undefined;
      const cond = c as Doc;
      if (x === undefined) return false;
      return (
        (cond.gt === undefined || x > Number(cond.gt)) &&
        (cond.gte === undefined || x >= Number(cond.gte)) &&
        (cond.lt === undefined || x < Number(cond.lt)) &&
        (cond.lte === undefined || x <= Number(cond.lte))
      );
    }
    case 'bool': {
      const list = (k: string) => (b[k] === undefined ? [] : Array.isArray(b[k]) ? (b[k] as Doc[]) : [b[k] as Doc]);
      const should = list('should');
      return (
        [...list('must'), ...list('filter')].every((x) => matches(x, r)) &&
        !list('must_not').some((x) => matches(x, r)) &&
        (!should.length || should.some((x) => matches(x, r)))
      );
    }
    default:
      throw new EsError('illegal_argument_exception', 400, `Query type [${kind}] is not supported for API Key query`);
  }
}

/** GET|POST /_security/_query/api_key over already-visible keys. */
export function queryKeys(keys: ApiKeyRecord[], body: Doc): { total: number; count: number; api_keys: unknown[] } {
  const hits = body.query ? keys.filter((r) => matches(body.query as Doc, r)) : keys;
  const sorts = (Array.isArray(body.sort) ? body.sort : body.sort ? [body.sort] : []).map((s) => {
    if (typeof s === 'string') return { f: s, desc: false };
    if (s === null || typeof s !== 'object' || Array.isArray(s) || !Object.keys(s).length) throw validationFailed(['malformed sort format']);
    return { f: one(s)[0], desc: String(JSON.stringify(one(s)[1], (_k, v) => (typeof v === 'bigint' ? String(v) : v))).includes('desc') };
  });
  if (sorts.length) {
    hits.sort((a, b) => {
      for (const s of sorts) {
        const x = field(a, s.f) as string | number;
        const y = field(b, s.f) as string | number;
        if (x !== y) return (x < y ? -1 : 1) * (s.desc ? -1 : 1);
      }
      return 0;
    });
  }
  const from = Number(body.from ?? 0);
  const size = Number(body.size ?? 10);
  if (!Number.isSafeInteger(from) || from < 0) throw new EsError('illegal_argument_exception', 400, `[from] parameter cannot be negative, found [${String(body.from)}]`);
  if (!Number.isSafeInteger(size) || size < 0) throw new EsError('illegal_argument_exception', 400, `[size] parameter cannot be negative, found [${String(body.size)}]`);
  const page = hits.slice(from, from + size);
  return {
    total: hits.length,
    count: page.length,
    api_keys: page.map((r) => ({ ...renderKey(r), ...(sorts.length ? { _sort: sorts.map((s) => field(r, s.f)) } : {}) })),
  };
}
