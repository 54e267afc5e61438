import type { NodeContext } from '../nodeContext';
import type { EsRequest } from '../wire/rest';
import { EsError } from '../wire/esErrors';
import type { ApiKeyService } from './apiKeys';
import type { FactLog } from './factLog';
import type { HashAlgorithm } from './hashing';
import type { TokenService } from './oauth2Tokens';
import type { RealmChain } from './realms/realmChain';
import type { RoleStore } from './roleStore';
import type { ServiceAccountService } from './serviceAccounts';
import type { Authentication, RoleDescriptor } from '../wire/security';
import type { UserStore } from './userStore';

/** Everything the security REST handlers use (built once by startSecurity). */
export interface SecurityServices {
  ctx: NodeContext;
  facts: FactLog;
  users: UserStore;
  roles: RoleStore;
  realms: RealmChain;
  tokens: TokenService;
  apiKeys: ApiKeyService;
  serviceAccounts: ServiceAccountService;
  tokensEnabled: boolean;
  apiKeysEnabled: boolean;
  passwordAlgorithm: HashAlgorithm;
  /** Default `WWW-Authenticate` challenges. */
  challenges: string[];
  now(): number;
}

/** The role descriptors `auth` acts with (the `limited_by` snapshot of keys it creates). */
export function descriptorsOf(s: SecurityServices, auth: Authentication): Record<string, RoleDescriptor> {
  if (auth.apiKey) return s.apiKeys.records.get(auth.apiKey.id)?.limitedBy ?? {};
  if (auth.authenticationRealm.type === '_service_account') return s.serviceAccounts.descriptorsOf(auth.user.username);
  return s.roles.descriptorsFor(auth.user.roles);
}

/** The authentication the edge attached. */
export const authOf = (req: EsRequest): Authentication => req.auth!; // security on: the gate set it

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** The JSON body as an object ({} when absent); ES's 400 when it is not an object. */
export function bodyOf(req: EsRequest): Record<string, unknown> {
  const b = req.json();
  if (b === undefined) return {};
  if (!isObj(b)) throw new EsError('parse_exception', 400, 'request body is required to be a JSON object');
  return b;
}

/** Comma-separated names of a path parameter. */
export const namesOf = (v: string | undefined) => (v ? v.split(',').map((x) => x.trim()).filter(Boolean) : []);
