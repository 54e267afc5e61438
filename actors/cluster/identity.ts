import { randomBytes } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { Kvm, type KV } from '@nats-io/kv';

/** Cluster-wide identity: one uuid, and the keys that sign scroll and PIT ids. */
export const CLUSTER_BUCKET = 'ES_CLUSTER';

/** One id-signing key; ids carry its `kid`, so a key can be rotated while older ids still verify. */
export interface IdKey {
  kid: number;
  key: Buffer;
}

export interface ClusterIdentity {
  uuid: string;
  /** Oldest first; the last one signs new ids. */
  keys: IdKey[];
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Creates `key` with `make()` unless some node already did (first writer wins), and returns its value. */
async function createOnce(kv: KV, key: string, make: () => string): Promise<string> {
  const cur = await kv.get(key);
  if (cur && cur.operation === 'PUT') return dec.decode(cur.value);
  try {
    await kv.create(key, enc.encode(make()));
  } catch {
    /* another node won the race: read its value */
  }
  const got = await kv.get(key);
  if (!got || got.operation !== 'PUT') throw new Error(`cluster identity key [${key}] could not be created`);
  return dec.decode(got.value);
}

/**
 * Bootstraps the cluster identity exactly once for every node on this NATS (a KV `create` is an
 * expected-sequence append: the first node wins, the others read its values). `cluster.uuid` and
 * `cluster.id_signing_key` (base64, 32 bytes) in the node settings take precedence, for clusters
 * that keep the key out of JetStream.
 */
export async function clusterIdentity(nc: NatsConnection, opts: { replicas?: number; uuid?: string; signingKey?: string } = {}): Promise<ClusterIdentity> {
  const kv = await new Kvm(nc).create(CLUSTER_BUCKET, { history: 5, replicas: opts.replicas ?? 1 });
  const uuid = opts.uuid ?? (await createOnce(kv, 'uuid', () => randomBytes(16).toString('base64url').slice(0, 22)));
  if (opts.signingKey) return { uuid, keys: [{ kid: 0, key: Buffer.from(opts.signingKey, 'base64') }] };
  const raw = await createOnce(kv, 'idkeys', () => JSON.stringify([{ kid: 1, key: randomBytes(32).toString('base64') }]));
  const keys = (JSON.parse(raw) as Array<{ kid: number; key: string }>).map((k) => ({ kid: k.kid, key: Buffer.from(k.key, 'base64') }));
  return { uuid, keys };
}

/** Adds a new signing key (ids signed with older keys keep verifying); returns its kid. */
export async function rotateIdKey(nc: NatsConnection): Promise<number> {
  const kv = await new Kvm(nc).open(CLUSTER_BUCKET);
  for (;;) {
    const cur = await kv.get('idkeys');
    if (!cur || cur.operation !== 'PUT') throw new Error('no id keys to rotate');
    const keys = JSON.parse(dec.decode(cur.value)) as Array<{ kid: number; key: string }>;
    const kid = Math.max(...keys.map((k) => k.kid)) + 1;
    keys.push({ kid, key: randomBytes(32).toString('base64') });
    try {
      await kv.update('idkeys', enc.encode(JSON.stringify(keys)), cur.revision);
      return kid;
    } catch {
      /* concurrent rotation: read again */
    }
  }
}
