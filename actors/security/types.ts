import type { EsError } from '../wire/esErrors';
import type { Permission } from './permission';

export type { IndicesPrivileges, ApplicationPrivileges, RoleDescriptor } from './roleDescriptor';

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
}

/** Result of one authenticator (STYLE.md "Security: a chain of authenticators"). */
export type AuthResult =
  | { status: 'success'; authentication: Authentication }
  /** `unknown`: no such credential here (yet: it may have been created on another node a moment ago). */
  | { status: 'continue'; message?: string; unknown?: boolean }
  | { status: 'terminate'; error: EsError };

/** The owner of a context or credential (ES `canAccessResourcesOf` compares these). */
export interface Principal {
  username: string;
  realm: string;
}
