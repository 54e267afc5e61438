import { randomInt } from 'node:crypto';
import { Aggregate } from '../../streams';
import type { Settings } from '../config';
import type { FactLog } from './factLog';
import { hashSecret, type HashAlgorithm } from './hashing';
import { userAggregateId, type UserStore } from './userStore';

const CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_*-=+';

/** A random password of ES's auto-configuration kind (20 chars). */
export function generatePassword(length = 20): string {
  let out = '';
  for (let i = 0; i < length; i++) out += CHARS[randomInt(CHARS.length)];
  return out;
}

/** What the node prints once when it generated the `elastic` password (ES 8 auto-configuration). */
export function bootstrapBanner(password: string): string {
  const line = '━'.repeat(78);
  return `\n${line}\n✅ Elasticsearch security features have been automatically configured!\n✅ Authentication is enabled.\n\nℹ️  Password for the elastic user (change it with \`PUT /_security/user/elastic/_password\`):\n  ${password}\n\n${line}\n\n`;
}

/**
 * Sets up the `elastic` password at start (after the log was replayed):
 * - a password stored in the log (changed through the API, or generated earlier) wins;
 * - else `bootstrap.password` (ELASTIC_PASSWORD) is used, hashed in memory only;
 * - else one is generated, persisted hashed as `user.password_changed {generated:true}` and printed
 *   once. The fact's id is derived from (aggregate, seq), so when two nodes start together JetStream
 *   keeps one and the loser adopts it (and prints nothing).
 * @returns the hash of `bootstrap.password`, if that is what `elastic` uses.
 */
export async function bootstrapElastic(
  users: UserStore,
  facts: FactLog,
  settings: Settings,
  algorithm: HashAlgorithm,
  print: (text: string) => void,
): Promise<string | undefined> {
  if (users.get('elastic')?.passwordHash) return undefined;
  const bootstrap = settings.get<unknown>('bootstrap.password', undefined);
  if (bootstrap !== undefined && bootstrap !== null && String(bootstrap) !== '') return hashSecret(String(bootstrap), algorithm);
  const password = generatePassword();
  const passwordHash = await hashSecret(password, algorithm);
  const appended = await facts.append(
    Aggregate.User,
    userAggregateId('elastic'),
    users.seqOf('elastic'),
    [{ type: 'user.password_changed', username: 'elastic', realm: 'reserved', passwordHash, generated: true }],
    { dedupe: true },
  );
  if (appended.length) print(bootstrapBanner(password));
  return undefined;
}
