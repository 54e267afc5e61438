import { EsError, illegalArgument, validationFailed } from '../../wire/esErrors';
import { parseBool, type Routes } from '../../wire/rest';
import type { EsRequest } from '../../wire/rest';
import { Aggregate } from '../../../streams';
import { authorize } from '../authorization';
import { hashSecret, isSupportedHash, STORED_HASH_ALGORITHMS } from '../hashing';
import { toUser } from '../realms/native';
import { isReservedUser, RESERVED_USERS, reservedUser } from '../realms/reserved';
import { authOf, bodyOf, namesOf, type SecurityServices } from '../services';
import type { User } from '../../wire/security';
import { userAggregateId, type UserSaved } from '../userStore';
import { queryUsers } from '../userRoleQuery';

const A = 'cluster:admin/xpack/security/user/';
const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** ES Validation.Users: printable, 1–507 chars, no leading/trailing whitespace. */
function validateUsername(name: string): string | undefined {
  if (!name || name.length > 507 || name !== name.trim() || /[\u0000-\u001f]/.test(name)) {
    return 'Validation Failed: 1: Invalid username. Usernames must be at least 1 and no more than 507 characters. They can contain alphanumeric characters (a-z, A-Z, 0-9), spaces, punctuation, and printable symbols in the Basic Latin (ASCII) block. Leading or trailing whitespace is not allowed.;';
  }
  return undefined;
}

function passwordErrors(body: Record<string, unknown>): string[] {
  const e: string[] = [];
  if (body.password !== undefined && (typeof body.password !== 'string' || body.password.length < 6)) e.push('passwords must be at least [6] characters long');
  if (body.password_hash !== undefined && (typeof body.password_hash !== 'string' || !isSupportedHash(body.password_hash))) {
    // ES TransportPutUserAction / ChangePasswordRequestBuilder: an IllegalArgumentException, not a validation error
    throw illegalArgument(
      `The provided password hash is not a hash or it could not be resolved to a supported hash algorithm. The supported password hash algorithms are [${STORED_HASH_ALGORITHMS.join(', ')}]`,
    );
  }
  if (body.password !== undefined && body.password_hash !== undefined) e.push('only one of [password, passwordHash] can be provided');
  return e;
}

const PUT_USER_FIELDS = new Set(['username', 'password', 'password_hash', 'roles', 'full_name', 'email', 'metadata', 'enabled']);

/** ES PutUserRequestBuilder.source: unknown fields and a different `username` in the body are refused. */
function checkPutUserBody(username: string, body: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(body)) {
    if (!PUT_USER_FIELDS.has(k)) throw new EsError('parse_exception', 400, `failed to parse add user request. unexpected field [${k}]`);
    if (k === 'username') {
      if (typeof v !== 'string') throw new EsError('parse_exception', 400, `expected field [username] to be of type string, but found [${jsonToken(v)}] instead`);
      if (v !== username) throw illegalArgument(`[username] in source does not match the username provided [${username}]`);
    }
  }
}

/** The XContent token name ES prints for a JSON value. */
function jsonToken(v: unknown): string {
  if (v === null) return 'VALUE_NULL';
  if (Array.isArray(v)) return 'START_ARRAY';
  if (typeof v === 'object') return 'START_OBJECT';
  if (typeof v === 'boolean') return 'VALUE_BOOLEAN';
  if (typeof v === 'number' || typeof v === 'bigint') return 'VALUE_NUMBER';
  return 'VALUE_STRING';
}

async function hashFrom(s: SecurityServices, body: Record<string, unknown>): Promise<string | undefined> {
  if (typeof body.password_hash === 'string') return body.password_hash;
  if (typeof body.password === 'string') return hashSecret(body.password, s.passwordAlgorithm);
  return undefined;
}

/** Appends one `user.*` fact and tells other nodes to forget cached verifications of that user. */
async function userFact(s: SecurityServices, req: EsRequest, username: string, type: string, data: Record<string, unknown>) {
  await s.facts.exclusive(`user:${username}`, () =>
    s.facts.append(Aggregate.User, userAggregateId(username), s.users.seqOf(username), [{ type, username, ...data }], { correlationId: req.opaqueId }),
  );
  s.realms.forget(username);
  s.facts.broadcastInvalidate('user', [username]);
}

function renderUser(u: User) {
  return { username: u.username, roles: u.roles, full_name: u.full_name, email: u.email, metadata: u.metadata, enabled: u.enabled };
}

/** Users: PUT/GET/DELETE /_security/user, change password, enable/disable (native and reserved realms). */
export function userRoutes(router: Routes, s: SecurityServices): void {
  router.add(
    ['PUT', 'POST'],
    '/_security/user/{username}',
    async (req) => {
      const username = req.params.username;
      const body = bodyOf(req);
      checkPutUserBody(username, body);
      const nameError = validateUsername(username);
      if (nameError) throw new EsError('action_request_validation_exception', 400, nameError);
      if (isReservedUser(username)) throw illegalArgument(`user [${username}] is reserved and only the password can be changed`);
      const existing = s.users.get(username);
      const errors = passwordErrors(body);
      // ES reads `roles` as an array or a comma-separated string
      if (typeof body.roles === 'string') body.roles = body.roles.split(',').map((r) => r.trim()).filter(Boolean);
      if (!Array.isArray(body.roles)) errors.push('roles are missing');
      if (isObj(body.metadata) && Object.keys(body.metadata).some((k) => k.startsWith('_'))) errors.push('metadata keys may not start with [_]');
      if (!existing && body.password === undefined && body.password_hash === undefined) errors.push('password must be specified unless you are updating an existing user');
      if (errors.length) throw validationFailed(errors);
      const passwordHash = await hashFrom(s, body);
      const data: Omit<UserSaved, 'username'> = {
        realm: 'native',
        roles: (body.roles as unknown[]).map(String),
        full_name: typeof body.full_name === 'string' ? body.full_name : null,
        email: typeof body.email === 'string' ? body.email : null,
        metadata: isObj(body.metadata) ? body.metadata : {},
        enabled: body.enabled !== false,
        ...(passwordHash ? { passwordHash } : {}),
      };
      await userFact(s, req, username, existing ? 'user.updated' : 'user.created', data);
      return { body: { created: !existing } };
    },
    { kind: 'cluster', action: `${A}put` },
  );

  const getUsers = (req: EsRequest) => {
    const names = namesOf(req.params.username);
    const all: User[] = [
      ...Object.keys(RESERVED_USERS).map((n) => reservedUser(n, s.users.get(n)?.enabled ?? true)),
      ...s.users.native().map(toUser),
    ];
    const picked = names.length ? all.filter((u) => names.includes(u.username)) : all;
    const body = Object.fromEntries(picked.map((u) => [u.username, renderUser(u)]));
    return { status: names.length && !picked.length ? 404 : 200, body };
  };
  router.add('GET', '/_security/user', getUsers, { kind: 'cluster', action: `${A}get` });
  // ES RestQueryUserAction: native users only; `with_profile_uid` is accepted (no profiles here).
  router.add(
    ['GET', 'POST'],
    '/_security/_query/user',
    (req) => {
      parseBool(req.query.with_profile_uid, false);
      return { body: queryUsers(s.users.nativeInCreationOrder().map(toUser), bodyOf(req), s.now()) };
    },
    { kind: 'cluster', action: `${A}query` },
  );
  router.add('GET', '/_security/user/{username}', getUsers, { kind: 'cluster', action: `${A}get` });

  router.add(
    'DELETE',
    '/_security/user/{username}',
    async (req) => {
      const username = req.params.username;
      if (isReservedUser(username)) throw illegalArgument(`user [${username}] is reserved and cannot be deleted`);
      const u = s.users.get(username);
      if (!u || u.realm !== 'native') return { status: 404, body: { found: false } };
      await userFact(s, req, username, 'user.deleted', { realm: 'native' });
      return { body: { found: true } };
    },
    { kind: 'cluster', action: `${A}delete` },
  );

  const changePassword = async (req: EsRequest) => {
    const caller = authOf(req);
    const username = req.params.username ?? caller.user.username;
    const self = username === caller.user.username && !caller.apiKey && !caller.runAs && ['native', 'reserved'].includes(caller.authenticationRealm.type);
    if (!self) authorize(caller, `${A}change_password`);
    const body = bodyOf(req);
    const errors = passwordErrors(body);
    if (body.password === undefined && body.password_hash === undefined) errors.push('password is missing');
    if (errors.length) throw validationFailed(errors);
    const u = s.users.get(username);
    if (!isReservedUser(username) && (!u || u.realm !== 'native')) {
      throw new EsError('resource_not_found_exception', 404, `user [${username}] does not exist`);
    }
    const passwordHash = (await hashFrom(s, body))!;
    await userFact(s, req, username, 'user.password_changed', { realm: isReservedUser(username) ? 'reserved' : 'native', passwordHash });
    return { body: {} };
  };
  router.add(['PUT', 'POST'], '/_security/user/{username}/_password', changePassword, { kind: 'handler' });
  router.add(['PUT', 'POST'], '/_security/user/_password', changePassword, { kind: 'handler' });

  for (const verb of ['_enable', '_disable'] as const) {
    router.add(
      ['PUT', 'POST'],
      `/_security/user/{username}/${verb}`,
      async (req) => {
        const username = req.params.username;
        if (username === authOf(req).user.username) throw illegalArgument('users may not update the enabled status of their own account');
        const u = s.users.get(username);
        if (!isReservedUser(username) && (!u || u.realm !== 'native')) {
          throw new EsError('resource_not_found_exception', 404, `user [${username}] does not exist`);
        }
        await userFact(s, req, username, verb === '_enable' ? 'user.enabled' : 'user.disabled', { realm: isReservedUser(username) ? 'reserved' : 'native' });
        return { body: {} };
      },
      { kind: 'cluster', action: `${A}set_enabled` },
    );
  }
}
