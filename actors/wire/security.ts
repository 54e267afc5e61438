/**
 * The security vocabulary every room speaks (types only): who is calling (`Authentication`, which
 * the edge carries on `req.auth`), the role descriptors roles and API keys are made of, and the
 * compiled permission authorization checks. actors/security builds and checks them; the search
 * service, the console and the machines read them.
 */

/** A user as `_authenticate` shows it. */
export interface User {
  username: string;
  roles: string[];
  full_name: string | null;
  email: string | null;
  metadata: Record<string, unknown>;
  enabled: boolean;
}

export interface RealmRef {
  name: string;
  type: string;
}

export type AuthenticationType = 'realm' | 'token' | 'api_key' | 'anonymous' | 'internal';

/**
 * Who is calling (the edge stores it on `req.auth`). Never holds a secret. `permission` is resolved when
 * the request is authenticated (role changes reach the next request).
 */
export interface Authentication {
  user: User;
  authenticationRealm: RealmRef;
  lookupRealm: RealmRef;
  authenticationType: AuthenticationType;
  /** Set for API key authentication (`_es_api_key`), also for tokens created by an API key. */
  apiKey?: { id: string; name: string | null };
  /** Service account token (`name`, `type` `_service_account_index` / `_service_account_file`). */
  token?: { name: string; type: string };
  /** Access token id when authenticated by an OAuth2 access token. */
  tokenId?: string;
  /** What the caller may do. */
  permission: Permission;
  /**
   * Set when the request runs as another user (`es-security-runas-user`, ES run-as): `user`,
   * `lookupRealm` and `permission` above are that user's (the effective subject); this is who
   * authenticated (the authenticating subject).
   */
  runAs?: RunAsSubject;
}

/** The authenticating subject of a run-as request. */
export interface RunAsSubject {
  user: User;
  /** Set when an API key authenticated. */
  apiKey?: { id: string; name: string | null };
  permission: Permission;
  /**
   * The authenticating subject may not run as the user (no `run_as` privilege for it, no such user,
   * an empty name): every action is refused with ES's run-as 403.
   */
  denied: boolean;
  /** Writes the run-as audit line, once, for the first action authorized (set when the audit log is on). */
  audit?: (action: string, indices?: string[]) => void;
  /** Writes an access_granted / access_denied line for each action authorized as the user (audit log on). */
  auditAccess?: (action: string, indices: string[] | undefined, granted: boolean) => void;
}

/** The owner of a context or credential (ES `canAccessResourcesOf` compares these). */
export interface Principal {
  username: string;
  realm: string;
}

/** One `indices` entry of a role descriptor (ES `IndicesPrivileges`). */
export interface IndicesPrivileges {
  names: string[];
  privileges: string[];
  allow_restricted_indices?: boolean;
  field_security?: unknown;
  query?: unknown;
}

/** An application privilege entry: privilege names or action patterns granted on resources (patterns). */
export interface ApplicationPrivileges {
  application: string;
  privileges: string[];
  resources: string[];
}

/** ES role descriptor as PUT /_security/role and API keys' `role_descriptors` carry it. */
export interface RoleDescriptor {
  cluster: string[];
  indices: IndicesPrivileges[];
  applications: ApplicationPrivileges[];
  run_as: string[];
  metadata: Record<string, unknown>;
  transient_metadata?: { enabled: boolean };
  description?: string;
}

/** `include` minus `exclude`. */
export interface ActionSet {
  include: readonly string[];
  exclude?: readonly string[];
}

/** A privilege: action patterns it grants (`*` matches any run of characters), minus `exclude`. */
export interface PrivilegeDef extends ActionSet {
  /** manage_own_api_key: API key actions only on the caller's own keys (request-dependent). */
  ownApiKeysOnly?: boolean;
}

/** An application privilege resolved for one application: its names and the action patterns they stand for. */
export interface ResolvedAppPrivilege {
  application: string;
  names: string[];
  patterns: string[];
}

/** One permission entry of a role: a resolved privilege and the resources it is granted on. */
export interface AppEntry {
  privilege: ResolvedAppPrivilege;
  application: RegExp;
  resources: string[];
}

export interface ClusterGrant {
  def: PrivilegeDef;
  include: RegExp;
  exclude: RegExp;
}

/** One `indices` entry compiled. */
export interface IndexGroup {
  namePatterns: string[];
  names: RegExp;
  privileges: string[];
  defs: PrivilegeDef[];
  actions: RegExp;
}

export interface RolePermission {
  kind: 'role';
  /** Names of the roles found (sorted), for 403 texts. */
  roleNames: string[];
  clusterNames: string[];
  cluster: ClusterGrant[];
  groups: IndexGroup[];
  /** Application privileges, resolved against the stored ones when compiled. */
  apps: AppEntry[];
  /** The descriptors it was built from (for `_privileges` and API key `limited_by`). */
  descriptors: Record<string, RoleDescriptor>;
  /** Memo of index checks: action → index → allowed (`\0` = on any index). */
  memo: Map<string, Map<string, boolean>>;
  /** The users the roles may run as (their `run_as` patterns). */
  runAs: RegExp;
}

export interface LimitedPermission {
  kind: 'limited';
  /** The key's own descriptors (absent: the snapshot alone applies). */
  own?: RolePermission;
  limitedBy: RolePermission;
  memo: Map<string, Map<string, boolean>>;
}

export type Permission = RolePermission | LimitedPermission;
