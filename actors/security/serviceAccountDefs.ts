import { kibanaSystemDescriptor } from './builtinRoles';
import type { RoleDescriptor } from '../wire/security';

/**
 * Built-in service accounts (ES ElasticServiceAccounts): namespace `elastic` only, each with one role
 * descriptor named after its principal. No passwords; they authenticate with service tokens only.
 */

const rd = (d: Partial<RoleDescriptor>): RoleDescriptor => ({
  cluster: [],
  indices: [],
  applications: [],
  run_as: [],
  metadata: {},
  transient_metadata: { enabled: true },
  ...d,
});

const idx = (names: string[], privileges: string[], allow_restricted_indices = false) => ({ names, privileges, allow_restricted_indices });

export const SERVICE_ACCOUNTS: Record<string, RoleDescriptor> = {
  'elastic/auto-ops': rd({
    cluster: ['monitor', 'read_ilm', 'read_slm'],
    indices: [idx(['*'], ['monitor', 'view_index_metadata'], true)],
  }),
  'elastic/enterprise-search-server': rd({
    cluster: ['manage', 'manage_security'],
    indices: [idx(['search-*', '.elastic-analytics-collections', '.ent-search-*', '.monitoring-ent-search-*', 'metricbeat-ent-search-*', 'enterprise-search-*', 'logs-app_search.analytics-default', 'logs-elastic_analytics.events-*', 'logs-enterprise_search.api-default', 'logs-enterprise_search.audit-default', 'logs-app_search.search_relevance_suggestions-default', 'logs-crawler-default', 'logs-elastic_crawler-default', 'logs-workplace_search.analytics-default', 'logs-workplace_search.content_events-default', '.elastic-connectors*'], ['manage', 'read', 'write'])],
  }),
  'elastic/fleet-server': rd({
    cluster: ['monitor', 'manage_own_api_key', 'read_fleet_secrets'],
    indices: [
      idx(['logs-*', 'metrics-*', 'traces-*', '.logs-endpoint.diagnostic.collection-*', '.logs-endpoint.action.responses-*'], ['write', 'create_index', 'auto_configure']),
      idx(['profiling-*'], ['read', 'write', 'auto_configure']),
      idx(['traces-apm.sampled-*'], ['read', 'monitor', 'maintenance']),
      idx(['.fleet-secrets*'], ['read'], true),
      idx(['.fleet-*'], ['read', 'write', 'monitor', 'create_index', 'auto_configure', 'maintenance'], true),
      idx(['synthetics-*'], ['read', 'write', 'create_index', 'auto_configure']),
    ],
    applications: [{ application: 'kibana-*', resources: ['*'], privileges: ['reserved_fleet-setup'] }],
  }),
  'elastic/fleet-server-remote': rd({
    cluster: ['monitor', 'manage_own_api_key'],
    indices: [idx(['logs-*', 'metrics-*', 'traces-*'], ['write', 'create_index', 'auto_configure'])],
  }),
  'elastic/kibana': kibanaSystemDescriptor(),
};

export const isServiceAccount = (principal: string) => Object.hasOwn(SERVICE_ACCOUNTS, principal);
