import { makeEnvelope, type Envelope } from '../../streams';
import { rng } from './rng';

const OWNERS = [
  { username: 'elastic', realm: 'reserved', realmType: 'reserved', full_name: null, email: null, metadata: { _reserved: true } },
  { username: 'bob', realm: 'default_native', realmType: 'native', full_name: 'Bob B.', email: 'bob@example.com', metadata: {} },
  { username: 'zoë', realm: '_es_api_key', realmType: '_es_api_key', full_name: null, email: null, metadata: { team: ['a', 'b'] } },
];
const DESCRIPTORS = [
  {},
  { r1: { cluster: ['monitor'], indices: [{ names: ['logs-*'], privileges: ['read'], allow_restricted_indices: false }], applications: [], run_as: [], metadata: {}, transient_metadata: { enabled: true } } },
  // the same descriptor with its keys in another order (interned as one)
  { r1: { indices: [{ privileges: ['read'], names: ['logs-*'], allow_restricted_indices: false }], cluster: ['monitor'], run_as: [], applications: [], metadata: {}, transient_metadata: { enabled: true } } },
  { superuser: { cluster: ['all'], indices: [{ names: ['*'], privileges: ['all'], allow_restricted_indices: true }], applications: [{ application: '*', privileges: ['*'], resources: ['*'] }], run_as: ['*'], metadata: { _reserved: true }, transient_metadata: {} } },
];
const METADATA = [{}, { purpose: 'ingest', n: 3 }, { tags: ['x', 'ÿ', '"quoted"'] }];

/**
 * A random history of `keys` API keys as the log would hold it: created, updated (descriptors,
 * metadata, expiration set / removed / kept), invalidated, expired, plus re-deliveries of an old
 * `seq` (which folds ignore) and facts of keys never created. Shared values are fresh copies, as
 * parsed JSON would give.
 */
export function apiKeyHistory(keys: number, seed: number, t0 = 1_700_000_000_000): Envelope[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => structuredClone(xs[Math.floor(r() * xs.length)]);
  const out: Envelope[] = [];
  const seqs: number[] = [];
  const ids = Array.from({ length: keys }, (_, i) => `k${i.toString(36).padStart(4, '0')}${Math.floor(r() * 1e9).toString(36)}`);
  let t = t0;
  const at = () => (t += 1 + Math.floor(r() * 1000));
  const fact = (i: number, type: string, data: unknown, seq = ++seqs[i]) =>
    out.push(makeEnvelope({ type, aggregateId: ids[i], seq, data, time: t }));
  for (let step = 0; step < keys * 3; step++) {
    const i = Math.floor(r() * keys);
    if (!seqs[i]) {
      seqs[i] = 0;
      fact(i, 'apikey.created', {
        name: `key ${i} ${r() < 0.1 ? 'ünïcødé ✓' : ''}`.trim(),
        keyType: 'rest',
        creation: at(),
        ...(r() < 0.4 ? { expiration: t + Math.floor(r() * 1e7) } : {}),
        owner: pick(OWNERS),
        hash: `{SSHA256}${Buffer.from(ids[i]).toString('base64')}`,
        roleDescriptors: pick(DESCRIPTORS),
        limitedBy: pick(DESCRIPTORS),
        metadata: pick(METADATA),
      });
      continue;
    }
    const x = r();
    if (x < 0.45) {
      const exp = r();
      fact(i, 'apikey.updated', {
        at: at(),
        limitedBy: pick(DESCRIPTORS),
        ...(r() < 0.5 ? { roleDescriptors: pick(DESCRIPTORS) } : {}),
        ...(r() < 0.5 ? { metadata: pick(METADATA) } : {}),
        ...(exp < 0.3 ? { expiration: null } : exp < 0.6 ? { expiration: t + Math.floor(r() * 1e7) } : {}),
      });
    } else if (x < 0.6) fact(i, 'apikey.invalidated', { invalidation: at() });
    else if (x < 0.75) fact(i, 'apikey.expired', {});
    else if (x < 0.85) fact(i, 'apikey.updated', { at: at(), limitedBy: pick(DESCRIPTORS) }, Math.max(1, seqs[i] - 1)); // an old seq again
    else out.push(makeEnvelope({ type: 'apikey.invalidated', aggregateId: `never-created-${i}`, seq: 2, data: { invalidation: at() }, time: t }));
  }
  return out;
}
