import { readFile } from 'node:fs/promises';
import { unwatchFile, watchFile } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { EsRequest } from '../../wire/rest';
import type { CredentialCache } from '../credentialCache';
import { verifySecret } from '../hashing';
import { parseNameHashFile } from '../nameHashFile';
import type { User } from '../../wire/security';
import { basicToken, type Realm, type RealmResult, type RealmToken } from './realm';

/** Parses ES's `users_roles` file: `role:user1,user2` lines → user → roles. */
export function parseUsersRolesFile(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const i = line.indexOf(':');
    if (i <= 0) continue;
    const role = line.slice(0, i).trim();
    for (const u of line.slice(i + 1).split(',').map((x) => x.trim()).filter(Boolean)) out.set(u, [...(out.get(u) ?? []), role]);
  }
  return out;
}

const CONTINUE: RealmResult = Object.freeze({ status: 'continue' });

/**
 * The file realm (ES FileRealm): `<configDir>/users` and `<configDir>/users_roles`, reloaded when their
 * mtime changes (cheap stat poll). Hashes as ES's `elasticsearch-users` writes them: bcrypt
 * (`$2a$`, also `$2b$`/`$2y$`), `{PBKDF2}`, `{PBKDF2_STRETCH}`, `{SSHA256}`, `{SHA}`, `{MD5}`; a line
 * whose hash has no known format never logs in (ES would compare it as clear text).
 */
export class FileRealm implements Realm {
  readonly type = 'file';
  private users = new Map<string, string>();
  private roles = new Map<string, string[]>();
  private readonly files: string[];

  constructor(
    readonly name: string,
    readonly order: number,
    private readonly configDir: string,
    private readonly cache: CredentialCache<User>,
    private readonly log: Logger,
    private readonly pollMs = 1_000,
  ) {
    this.files = [join(configDir, 'users'), join(configDir, 'users_roles')];
  }

  /** Loads both files and starts watching them. */
  async start(): Promise<void> {
    await this.reload();
    for (const f of this.files) watchFile(f, { interval: this.pollMs, persistent: false }, () => void this.reload());
  }

  async reload(): Promise<void> {
    const read = (f: string) => readFile(f, 'utf8').catch(() => '');
    const [u, r] = await Promise.all(this.files.map(read));
    this.users = parseNameHashFile(u);
    this.roles = parseUsersRolesFile(r);
    this.cache.deleteWhere((_v, id) => id.startsWith(`${this.name}\u0000`));
    this.log.debug({ realm: this.name, users: this.users.size }, 'file realm loaded');
  }

  token(req: EsRequest): RealmToken | undefined {
    return basicToken(req);
  }

  supports(t: RealmToken): boolean {
    return t.kind === 'basic';
  }

  cached(t: RealmToken): RealmResult | undefined {
    if (t.kind !== 'basic' || !this.users.get(t.username)) return CONTINUE;
    const hit = this.cache.get(`${this.name}\u0000${t.username}`, t.password);
    return hit ? { status: 'success', user: hit } : undefined;
  }

  async authenticate(t: RealmToken): Promise<RealmResult> {
    const known = this.cached(t);
    if (known) return known;
    if (t.kind !== 'basic') return CONTINUE;
    const hash = this.users.get(t.username);
    if (!hash) return CONTINUE;
    const key = `${this.name}\u0000${t.username}`;
    if (!(await verifySecret(t.password, hash))) return { status: 'continue' };
    const user: User = { username: t.username, roles: this.roles.get(t.username) ?? [], full_name: null, email: null, metadata: {}, enabled: true };
    this.cache.set(key, t.password, user);
    return { status: 'success', user };
  }

  lookup(username: string): User | undefined {
    if (!this.users.has(username)) return undefined;
    return { username, roles: this.roles.get(username) ?? [], full_name: null, email: null, metadata: {}, enabled: true };
  }

  stop(): void {
    for (const f of this.files) unwatchFile(f);
  }
}
