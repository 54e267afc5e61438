import { v5 as uuidv5 } from 'uuid';
import type { Envelope } from '../../streams';
import { SECURITY_NS } from './roleStore';

/** Aggregate id of a user by name (the same on every node). */
export const userAggregateId = (username: string) => uuidv5(`user:${username}`, SECURITY_NS);

export type UserRealmType = 'native' | 'reserved';

/** A native user, or a reserved user whose password/enabled state was changed. Holds a hash only. */
export interface StoredUser {
  username: string;
  realm: UserRealmType;
  roles: string[];
  full_name: string | null;
  email: string | null;
  metadata: Record<string, unknown>;
  enabled: boolean;
  passwordHash?: string;
  /** The password was generated at first start (reserved `elastic`). */
  generated?: boolean;
}

export interface UserSaved {
  username: string;
  realm: 'native';
  roles: string[];
  full_name: string | null;
  email: string | null;
  metadata: Record<string, unknown>;
  enabled: boolean;
  /** Present when the request set a password (hash only). */
  passwordHash?: string;
}

export type UserFact =
  | Envelope<'user.created' | 'user.updated', UserSaved>
  | Envelope<'user.password_changed', { username: string; realm: UserRealmType; passwordHash: string; generated?: boolean }>
  | Envelope<'user.enabled' | 'user.disabled' | 'user.deleted', { username: string; realm: UserRealmType }>;

/** Native users and reserved-user overrides, folded from `user.*` facts. */
export class UserStore {
  private readonly users = new Map<string, StoredUser>();
  private readonly seqs = new Map<string, number>();
  private readonly listeners: Array<(username: string) => void> = [];

  /** Called with the username after every change (caches drop that user). */
  onChange(f: (username: string) => void): void {
    this.listeners.push(f);
  }

  get(username: string): StoredUser | undefined {
    return this.users.get(username);
  }

  /** Native users by name. */
  native(): StoredUser[] {
    return [...this.users.values()].filter((u) => u.realm === 'native').sort((a, b) => (a.username < b.username ? -1 : 1));
  }

  /** Native users in the order they were created (the order of a query without a sort). */
  nativeInCreationOrder(): StoredUser[] {
    return [...this.users.values()].filter((u) => u.realm === 'native');
  }

  seqOf(username: string): number {
    return this.seqs.get(userAggregateId(username)) ?? 0;
  }

  /** Folds one `user.*` fact (idempotent by seq). */
  apply(e: Envelope): void {
    const prevSeq = this.seqs.get(e.aggregateId) ?? 0;
    if (e.seq <= prevSeq) return;
    this.seqs.set(e.aggregateId, e.seq);
    const f = e as UserFact;
    const name = f.data.username;
    const cur = this.users.get(name);
    switch (f.type) {
      case 'user.created':
      case 'user.updated': {
        const { passwordHash, ...rest } = f.data;
        this.users.set(name, { ...rest, passwordHash: passwordHash ?? cur?.passwordHash });
        break;
      }
      case 'user.password_changed':
        this.users.set(name, {
          ...(cur ?? { username: name, realm: f.data.realm, roles: [], full_name: null, email: null, metadata: {}, enabled: true }),
          passwordHash: f.data.passwordHash,
          generated: f.data.generated,
        });
        break;
      case 'user.enabled':
      case 'user.disabled':
        this.users.set(name, {
          ...(cur ?? { username: name, realm: f.data.realm, roles: [], full_name: null, email: null, metadata: {}, enabled: true }),
          enabled: f.type === 'user.enabled',
        });
        break;
      case 'user.deleted':
        this.users.delete(name);
        break;
      default:
        return;
    }
    for (const l of this.listeners) l(name);
  }
}
