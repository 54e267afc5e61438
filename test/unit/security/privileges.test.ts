import { BUILTIN_ROLES } from '../../../actors/security/builtinRoles';
import { checkCluster, checkIndex, checkIndicesAction, compileRoles, hasClusterPrivilege, hasIndexPrivilege, indexNamesRegExp, limitPermission } from '../../../actors/security/permission';
import { subsetOf } from '../../../actors/security/actionSets';
import { CLUSTER_PRIVILEGES, clusterPrivilegesThatGrant, implies, INDEX_PRIVILEGES, indexPrivilegesThatGrant, patternCovers } from '../../../actors/security/privileges';
import type { RoleDescriptor } from '../../../actors/wire/security';

const rd = (d: Partial<RoleDescriptor>): RoleDescriptor => ({ cluster: [], indices: [], applications: [], run_as: [], metadata: {}, ...d });

describe('privileges that grant an action, least privileged first (ES 403 texts)', () => {
  it.each([
    ['cluster:monitor/nodes/stats', ['monitor', 'manage', 'all']],
    ['cluster:monitor/main', ['monitor', 'manage', 'all']],
    ['cluster:admin/xpack/security/token/create', ['manage_token', 'manage_security', 'all']],
    ['cluster:admin/xpack/security/user/delete', ['manage_security', 'all']],
    ['cluster:admin/xpack/security/api_key/get', ['read_security', 'manage_api_key', 'manage_security', 'all']],
    ['cluster:admin/settings/update', ['manage', 'all']],
  ])('%s → %j', (action, want) => {
    expect(clusterPrivilegesThatGrant(action)).toEqual(want);
  });

  it('counts manage_own_api_key only for requests about the caller own keys', () => {
    expect(clusterPrivilegesThatGrant('cluster:admin/xpack/security/api_key/create', true)).toEqual(['manage_own_api_key', 'manage_api_key', 'manage_security', 'all']);
  });

  it.each([
    ['indices:data/read/search', ['read', 'all']],
    ['indices:data/read/scroll', ['read', 'all']],
    ['indices:admin/create', ['create_index', 'manage', 'all']],
    ['indices:monitor/stats', ['monitor', 'manage', 'all']],
    ['indices:admin/refresh', ['maintenance', 'manage', 'all']],
  ])('%s → %j', (action, want) => {
    expect(indexPrivilegesThatGrant(action)).toEqual(want);
  });

  it('grants write sub-privileges on bulk', () => {
    expect(indexPrivilegesThatGrant('indices:data/write/bulk')).toEqual(expect.arrayContaining(['create_doc', 'create', 'index', 'delete', 'write', 'all']));
    expect(indexPrivilegesThatGrant('indices:data/write/bulk').at(-1)).toBe('all');
  });
});

describe('compiled permissions', () => {
  const p = compileRoles({
    r1: rd({ cluster: ['manage'], indices: [{ names: ['logs-*', 'books'], privileges: ['read'] }] }),
    r2: rd({ indices: [{ names: ['/~(([.]|ilm-history-).*)/'], privileges: ['view_index_metadata'] }] }),
  });

  it('excludes security actions from manage', () => {
    expect(checkCluster(p, 'cluster:monitor/health')).toBe(true);
    expect(checkCluster(p, 'cluster:admin/settings/update')).toBe(true);
    expect(checkCluster(p, 'cluster:admin/xpack/security/user/put')).toBe(false);
  });

  it('matches index names by wildcard and Lucene complement regex', () => {
    expect(checkIndex(p, 'indices:data/read/search', 'logs-2024')).toBe(true);
    expect(checkIndex(p, 'indices:data/read/search', 'books')).toBe(true);
    expect(checkIndex(p, 'indices:data/read/search', 'bookshelf')).toBe(false);
    expect(checkIndex(p, 'indices:admin/mappings/get', 'anything')).toBe(true);
    expect(checkIndex(p, 'indices:admin/mappings/get', '.security')).toBe(false);
    expect(checkIndicesAction(p, 'indices:data/write/index')).toBe(false);
  });

  it('intersects an API key with its limited_by snapshot', () => {
    const key = limitPermission(compileRoles({ k: rd({ indices: [{ names: ['a*'], privileges: ['read'] }] }) }), compileRoles({ o: rd({ indices: [{ names: ['ab*'], privileges: ['all'] }] }) }));
    expect(checkIndex(key, 'indices:data/read/search', 'ab1')).toBe(true);
    expect(checkIndex(key, 'indices:data/read/search', 'ac1')).toBe(false);
    expect(checkIndex(key, 'indices:data/write/index', 'ab1')).toBe(false);
  });

  it('lets superuser do everything', () => {
    const su = compileRoles({ superuser: BUILTIN_ROLES.superuser });
    expect(checkCluster(su, 'cluster:admin/xpack/security/api_key/invalidate')).toBe(true);
    expect(checkIndex(su, 'indices:admin/delete', 'x')).toBe(true);
    expect(hasClusterPrivilege(su, 'all')).toBe(true);
  });

  it('answers has_privileges by implication, also for index patterns', () => {
    expect(hasClusterPrivilege(p, 'monitor')).toBe(true);
    expect(hasClusterPrivilege(p, 'manage_security')).toBe(false);
    expect(hasIndexPrivilege(p, 'logs-*', 'read')).toBe(true);
    expect(hasIndexPrivilege(p, 'log*', 'read')).toBe(false);
    expect(hasIndexPrivilege(p, 'logs-x', 'write')).toBe(false);
  });

  it('knows when a prefix pattern covers another', () => {
    expect(patternCovers('cluster:*', 'cluster:monitor/*')).toBe(true);
    expect(patternCovers('cluster:monitor/*', 'cluster:*')).toBe(false);
    expect(indexNamesRegExp(['a?c']).test('abc')).toBe(true);
  });
});

describe('has_privileges for named privileges with exclusions (item 3)', () => {
  it.each(Object.keys(CLUSTER_PRIVILEGES))('a role holding cluster privilege %s has it', (name) => {
    expect(hasClusterPrivilege(compileRoles({ r: rd({ cluster: [name] }) }), name)).toBe(true);
    expect(implies(CLUSTER_PRIVILEGES[name], CLUSTER_PRIVILEGES[name])).toBe(true);
  });

  it.each(Object.keys(INDEX_PRIVILEGES))('a role holding index privilege %s on logs-* has it on logs-* and logs-1', (name) => {
    const p = compileRoles({ r: rd({ indices: [{ names: ['logs-*'], privileges: [name] }] }) });
    expect(hasIndexPrivilege(p, 'logs-*', name)).toBe(true);
    expect(hasIndexPrivilege(p, 'logs-1', name)).toBe(true);
  });

  it('manage implies manage and monitor, not all nor manage_security (security actions are excluded)', () => {
    const p = compileRoles({ r: rd({ cluster: ['manage'] }) });
    expect(hasClusterPrivilege(p, 'manage')).toBe(true);
    expect(hasClusterPrivilege(p, 'monitor')).toBe(true);
    expect(hasClusterPrivilege(p, 'cluster:admin/settings/update')).toBe(true);
    expect(hasClusterPrivilege(p, 'all')).toBe(false);
    expect(hasClusterPrivilege(p, 'manage_security')).toBe(false);
    expect(hasClusterPrivilege(p, 'manage_token')).toBe(false);
    expect(hasClusterPrivilege(p, 'cluster:admin/xpack/security/user/get')).toBe(false);
    expect(hasClusterPrivilege(p, 'cluster:admin/*')).toBe(false);
  });

  it('manage_security excludes delegate_pki; the union of a role decides, as ES merges a role\'s privileges', () => {
    expect(hasClusterPrivilege(compileRoles({ r: rd({ cluster: ['manage_security'] }) }), 'manage_security')).toBe(true);
    expect(hasClusterPrivilege(compileRoles({ r: rd({ cluster: ['manage_security'] }) }), 'delegate_pki')).toBe(false);
    expect(hasClusterPrivilege(compileRoles({ r: rd({ cluster: ['manage', 'manage_security'] }) }), 'all')).toBe(false);
    expect(hasClusterPrivilege(compileRoles({ a: rd({ cluster: ['manage', 'manage_security'] }), b: rd({ cluster: ['delegate_pki'] }) }), 'all')).toBe(true);
  });

  it('manage_own_api_key is implied only by itself (ES ManageOwnClusterPermissionCheck)', () => {
    expect(hasClusterPrivilege(compileRoles({ r: rd({ cluster: ['manage_api_key'] }) }), 'manage_own_api_key')).toBe(false);
    expect(hasClusterPrivilege(compileRoles({ r: rd({ cluster: ['manage_own_api_key'] }) }), 'manage_api_key')).toBe(false);
    expect(hasClusterPrivilege(compileRoles({ r: rd({ cluster: ['manage_own_api_key'] }) }), 'manage_own_api_key')).toBe(true);
  });

  it('an API key has a privilege only if both its descriptors and its owner have it', () => {
    const key = limitPermission(compileRoles({ k: rd({ cluster: ['manage'] }) }), compileRoles({ o: rd({ cluster: ['all'] }) }));
    expect(hasClusterPrivilege(key, 'manage')).toBe(true);
    expect(hasClusterPrivilege(key, 'all')).toBe(false);
    const narrow = limitPermission(compileRoles({ k: rd({ cluster: ['all'] }) }), compileRoles({ o: rd({ cluster: ['monitor'] }) }));
    expect(hasClusterPrivilege(narrow, 'manage')).toBe(false);
    expect(hasClusterPrivilege(narrow, 'monitor')).toBe(true);
  });

  it('decides subsets of prefix patterns with exclusions exactly, and odd patterns conservatively', () => {
    const manage = { include: ['cluster:*'], exclude: ['cluster:admin/xpack/security/*'] };
    expect(subsetOf({ include: ['cluster:admin/*'], exclude: ['cluster:admin/xpack/security/*'] }, [manage])).toBe(true);
    expect(subsetOf({ include: ['cluster:admin/*'], exclude: ['cluster:admin/xpack/security/user/*'] }, [manage])).toBe(false);
    expect(subsetOf({ include: ['cluster:admin/xpack/securit*'] }, [manage])).toBe(false);
    expect(subsetOf({ include: ['cluster:admin/xpack/security'] }, [manage])).toBe(true);
    expect(subsetOf({ include: ['a*'] }, [{ include: ['a', 'ab*'] }])).toBe(false);
    expect(subsetOf({ include: ['a*'] }, [{ include: ['a'] }, { include: ['a*'], exclude: ['a'] }])).toBe(true);
    expect(subsetOf({ include: [] }, [])).toBe(true);
    // a middle wildcard in a grant is not trusted to cover anything; in a request it widens
    expect(subsetOf({ include: ['cluster:admin/x'] }, [{ include: ['cluster:*/x'] }])).toBe(false);
    expect(subsetOf({ include: ['cluster:*/x'] }, [{ include: ['cluster:*'] }])).toBe(true);
    expect(subsetOf({ include: ['cluster:*/x'] }, [{ include: ['cluster:admin/*'] }])).toBe(false);
  });
});
