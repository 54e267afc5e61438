import type { RoleDescriptor } from '../wire/security';

/**
 * Reserved roles (ES ReservedRolesStore), condensed to the privileges this service has. They cannot be
 * changed or deleted. `viewer`/`editor` read every index not starting with `.` or `ilm-history-`, as ES.
 */

const reserved = { _reserved: true };
const NON_SYSTEM = '/~(([.]|ilm-history-).*)/';

const rd = (d: Partial<RoleDescriptor>): RoleDescriptor => ({
  cluster: [],
  indices: [],
  applications: [],
  run_as: [],
  metadata: reserved,
  transient_metadata: { enabled: true },
  ...d,
});

const kibanaSystem = (metadata: Record<string, unknown>): RoleDescriptor =>
  rd({
    cluster: ['monitor', 'manage_index_templates', 'manage_token', 'manage_own_api_key', 'grant_api_key', 'cancel_task', 'cluster:admin/xpack/security/api_key/invalidate'],
    indices: [
      { names: ['.kibana*', '.reporting-*', '.apm-agent-configuration', '.apm-custom-link', '.alerts*', '.internal.alerts*', '.fleet-*'], privileges: ['all'], allow_restricted_indices: true },
      { names: ['.monitoring-*'], privileges: ['read'], allow_restricted_indices: false },
      { names: ['logs-*', 'metrics-*', 'traces-*', 'synthetics-*'], privileges: ['read', 'view_index_metadata', 'monitor'], allow_restricted_indices: false },
    ],
    metadata,
  });

/** Built-in roles by name. */
export const BUILTIN_ROLES: Record<string, RoleDescriptor> = {
  superuser: rd({
    cluster: ['all'],
    indices: [
      { names: ['*'], privileges: ['all'], allow_restricted_indices: false },
      { names: ['*'], privileges: ['monitor', 'read', 'view_index_metadata'], allow_restricted_indices: true },
    ],
    applications: [{ application: '*', privileges: ['*'], resources: ['*'] }],
    run_as: ['*'],
  }),
  viewer: rd({
    indices: [
      { names: [NON_SYSTEM], privileges: ['read', 'view_index_metadata'], allow_restricted_indices: false },
      { names: ['.siem-signals*', '.lists-*', '.items-*', '.alerts*', '.preview.alerts*'], privileges: ['read', 'view_index_metadata'], allow_restricted_indices: false },
    ],
    applications: [{ application: 'kibana-.kibana', privileges: ['read'], resources: ['*'] }],
  }),
  editor: rd({
    indices: [
      { names: [NON_SYSTEM], privileges: ['read', 'view_index_metadata'], allow_restricted_indices: false },
      { names: ['observability-annotations'], privileges: ['read', 'view_index_metadata', 'write'], allow_restricted_indices: false },
      { names: ['.siem-signals*', '.lists-*', '.items-*', '.alerts*', '.preview.alerts*'], privileges: ['read', 'view_index_metadata', 'write', 'maintenance'], allow_restricted_indices: false },
    ],
    applications: [{ application: 'kibana-.kibana', privileges: ['all'], resources: ['*'] }],
  }),
  kibana_system: kibanaSystem(reserved),
  monitoring_user: rd({ cluster: ['monitor'], indices: [{ names: ['.monitoring-*', '/metrics-.*/'], privileges: ['read'], allow_restricted_indices: false }] }),
};

/** The kibana_system descriptor under another name (the `elastic/kibana` service account). */
export const kibanaSystemDescriptor = (): RoleDescriptor => kibanaSystem({});
