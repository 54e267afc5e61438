import { actionDenied, allowedIndices, authorize, authorizeScroll, checkContextOwner, mayFreeContext } from '../../../actors/security/authorization';
import { ownerOf, sameOwner } from '../../../actors/security/ownership';
import { compileRoles, limitPermission } from '../../../actors/security/permission';
import { mappedRoles, parseRoleMapping, ruleMatches } from '../../../actors/security/roleMappings';
import type { Authentication, RoleDescriptor } from '../../../actors/wire/security';

const rd = (d: Partial<RoleDescriptor>): RoleDescriptor => ({ cluster: [], indices: [], applications: [], run_as: [], metadata: {}, ...d });
const reader = compileRoles({ reader: rd({ indices: [{ names: ['ab*'], privileges: ['read'] }] }) });
const realm = { name: 'native1', type: 'native' };
const user = (username: string, roles: string[]) => ({ username, roles, full_name: null, email: null, metadata: {}, enabled: true });

const bob: Authentication = { user: user('bob', ['reader']), authenticationRealm: realm, lookupRealm: realm, authenticationType: 'realm', permission: reader };
const bobToken: Authentication = { ...bob, authenticationType: 'token', tokenId: 't1' };
const keyRealm = { name: '_es_api_key', type: '_es_api_key' };
const bobKey: Authentication = {
  user: user('bob', []),
  authenticationRealm: keyRealm,
  lookupRealm: keyRealm,
  authenticationType: 'api_key',
  apiKey: { id: 'K1', name: 'k' },
  permission: limitPermission(undefined, reader),
};

describe('authorize', () => {
  it('passes wildcard expressions and refuses explicit names not granted, listing only those', () => {
    expect(() => authorize(bob, 'indices:data/read/search', ['ab*', 'ab1'])).not.toThrow();
    expect(() => authorize(bob, 'indices:data/read/search', ['ab1,ac1', 'ad1'])).toThrow(
      'action [indices:data/read/search] is unauthorized for user [bob] with effective roles [reader] on indices [ac1,ad1], this action is granted by the index privileges [read,all]',
    );
  });

  it('names the API key and its owner', () => {
    expect(actionDenied(bobKey, 'cluster:monitor/main').message).toBe(
      'action [cluster:monitor/main] is unauthorized for API key id [K1] of user [bob], this action is granted by the cluster privileges [monitor,manage,all]',
    );
  });

  it('filters concrete names for wildcard expansion; everything when security is off', () => {
    expect(allowedIndices(bob, 'indices:data/read/search', ['ab1', 'ac1', 'abc'])).toEqual(['ab1', 'abc']);
    expect(allowedIndices(undefined, 'indices:data/read/search', ['ac1'])).toEqual(['ac1']);
  });
});

describe('ownership of contexts (scroll, PIT)', () => {
  it('makes a user and its access token the same owner; an API key only its own', () => {
    expect(sameOwner(ownerOf(bob), ownerOf(bobToken))).toBe(true);
    expect(ownerOf(bobKey)).toEqual({ username: 'bob', realm: '_es_api_key/K1' });
    expect(sameOwner(ownerOf(bob), ownerOf(bobKey))).toBe(false);
    expect(sameOwner(undefined, undefined)).toBe(true);
    expect(sameOwner(ownerOf(bob), undefined)).toBe(false);
  });

  it('answers 404 search_context_missing to another user continuing a scroll', () => {
    const alice: Authentication = { ...bob, user: user('alice', ['reader']) };
    expect(() => authorizeScroll(bob, ownerOf(bob), 'S1')).not.toThrow();
    try {
      authorizeScroll(alice, ownerOf(bob), 'S1');
      throw new Error('not refused');
    } catch (e) {
      expect(e).toMatchObject({ type: 'search_context_missing_exception', status: 404, message: 'No search context found for id [S1]' });
    }
    expect(() => checkContextOwner(undefined, undefined, 'S1')).not.toThrow();
  });

  it('refuses scroll with 403 when no role grants indices:data/read/scroll anywhere', () => {
    const none: Authentication = { ...bob, permission: compileRoles({}), user: user('bob', []) };
    expect(() => authorizeScroll(none, ownerOf(none), 'S1')).toThrow('action [indices:data/read/scroll] is unauthorized for user [bob] with effective roles [], this action is granted by the index privileges [read,all]');
  });

  it('frees only the caller own contexts on clear scroll / close PIT', () => {
    expect(mayFreeContext(bob, ownerOf(bob))).toBe(true);
    expect(mayFreeContext(bobKey, ownerOf(bob))).toBe(false);
  });
});

describe('role mappings', () => {
  const data = { username: 'alice', groups: ['admins', 'dev'], metadata: { jwt_claim_iss: 'x' }, realm: { name: 'jwt1' } };

  it('matches any/all/except/field rules with wildcards', () => {
    expect(ruleMatches({ all: [{ field: { 'realm.name': 'jwt*' } }, { field: { groups: ['ops', 'admins'] } }] }, data)).toBe(true);
    expect(ruleMatches({ except: { field: { username: 'alice' } } }, data)).toBe(false);
    expect(ruleMatches({ any: [{ field: { 'metadata.jwt_claim_iss': 'y' } }, { field: { dn: null } }] }, data)).toBe(true);
  });

  it('collects roles of enabled mappings only', () => {
    const on = parseRoleMapping({ roles: ['a', 'b'], rules: { field: { groups: 'dev' } } });
    const off = parseRoleMapping({ roles: ['c'], enabled: false, rules: { field: { username: '*' } } });
    expect(mappedRoles([on, off], data)).toEqual(['a', 'b']);
  });

  it('requires roles and rules', () => {
    expect(() => parseRoleMapping({})).toThrow('Validation Failed: 1: a role-mapping must define roles or role_templates;2: a role-mapping must define rules;');
  });
});
