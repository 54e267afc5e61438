import { BUILTIN_ROLES } from '../../../actors/security/builtinRoles';
import { checkCluster, checkIndex, checkIndicesAction, compileRoles, hasClusterPrivilege, hasIndexPrivilege, indexNamesRegExp, limitPermission } from '../../../actors/security/permission';
import { clusterPrivilegesThatGrant, indexPrivilegesThatGrant, patternCovers } from '../../../actors/security/privileges';
import type { RoleDescriptor } from '../../../actors/security/types';

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
