import type { EsError } from '../wire/esErrors';
import type { Authentication } from '../wire/security';

/** Result of one authenticator (STYLE.md "Security: a chain of authenticators"). */
export type AuthResult =
  | { status: 'success'; authentication: Authentication }
  /** `unknown`: no such credential here (yet: it may have been created on another node a moment ago). */
  | { status: 'continue'; message?: string; unknown?: boolean }
  | { status: 'terminate'; error: EsError };
