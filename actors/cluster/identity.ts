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

/** KV key of id-signing key `kid` (one key per entry; `idkeys`, a JSON array, is the older layout, still read). */
const idKeyName = (kid: number) => `idkey.${kid}`;
/** What a node watches for rotated keys (`idkeys` is never written any more; one subject, as nats-server 2.9 filters consumers by one). */
export const ID_KEYS_WATCH = 'idkey.>';
const LEGACY_ID_KEYS = 'idkeys';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The value of `key` as its first revision wrote it. On nats-server 2.9 a KV `create` is not a
 * compare-and-set on a replicated bucket: creates racing each other can all be stored
 * (nats-io/nats-server#4320), so every node takes the first revision JetStream kept, which all of
 * them see alike. Read through a consumer on the stream leader, not a direct get a lagging replica
 * may answer.
 */
async function firstRevision(kv: KV, key: string): Promise<string | undefined> {
  for await (const e of await kv.history({ key })) {
    if (e.operation === 'PUT') return dec.decode(e.value);
  }
  return undefined;
}

/**
 * Creates `key` with `value` unless some node already did, and returns the value every node agrees
 * on (the first revision) and whether it is ours. A bucket just created on a NATS cluster may not
 * have elected its stream leader yet, so this tries again until `deadlineMs` has passed.
 */
async function createOnce(kv: KV, key: string, value: string, deadlineMs = 30_000): Promise<{ value: string; ours: boolean }> {
  const deadline = Date.now() + deadlineMs;
  let last: unknown;
  for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
    try {
      const before = await firstRevision(kv, key);
      if (before !== undefined) return { value: before, ours: false };
      await kv.create(key, enc.encode(value)).catch((e: unknown) => {
        last = e; /* another node came first, or the stream is not ready: read again */
      });
      const got = await firstRevision(kv, key);
      if (got !== undefined) return { value: got, ours: got === value };
    } catch (e) {
      last = e;
    }
    if (Date.now() + wait > deadline) {
      const why = last instanceof Error ? `: ${last.message}` : '';
      throw new Error(`cluster identity key [${key}] could not be created${why}`);
    }
    await pause(wait);
  }
}

/** Every id-signing key in the bucket, oldest kid first. */
export async function readIdKeys(kv: KV): Promise<IdKey[]> {
  const byKid = new Map<number, Buffer>();
  const legacy = await kv.get(LEGACY_ID_KEYS);
  if (legacy && legacy.operation === 'PUT') {
    for (const k of JSON.parse(dec.decode(legacy.value)) as Array<{ kid: number; key: string }>) byKid.set(k.kid, Buffer.from(k.key, 'base64'));
  }
  const names: string[] = [];
  for await (const k of await kv.keys('idkey.>')) names.push(k);
  for (const name of names) {
    const kid = Number(name.slice('idkey.'.length));
    const v = await firstRevision(kv, name);
    if (Number.isInteger(kid) && v !== undefined && !byKid.has(kid)) byKid.set(kid, Buffer.from(v, 'base64'));
  }
  return [...byKid].sort((a, b) => a[0] - b[0]).map(([kid, key]) => ({ kid, key }));
}

const newKey = () => randomBytes(32).toString('base64');

/**
 * Bootstraps the cluster identity exactly once for every node on this NATS: the first node to write
 * the uuid and the first id key wins, the others read its values. `cluster.uuid` and
 * `cluster.id_signing_key` (base64, 32 bytes) in the node settings take precedence, for clusters
 * that keep the key out of JetStream.
 */
export async function clusterIdentity(nc: NatsConnection, opts: { replicas?: number; uuid?: string; signingKey?: string } = {}): Promise<ClusterIdentity> {
  const kv = await openClusterBucket(nc, opts.replicas ?? 1);
  const uuid = opts.uuid ?? (await createOnce(kv, 'uuid', randomBytes(16).toString('base64url').slice(0, 22))).value;
  if (opts.signingKey) return { uuid, keys: [{ kid: 0, key: Buffer.from(opts.signingKey, 'base64') }] };
  let keys = await readIdKeys(kv);
  if (!keys.length) {
    await createOnce(kv, idKeyName(1), newKey());
    keys = await readIdKeys(kv);
  }
  return { uuid, keys };
}

/** Creates the bucket (or opens it), again while a new NATS cluster elects its leaders. */
async function openClusterBucket(nc: NatsConnection, replicas: number, deadlineMs = 30_000): Promise<KV> {
  const deadline = Date.now() + deadlineMs;
  for (let wait = 100; ; wait = Math.min(wait * 2, 1000)) {
    try {
      return await new Kvm(nc).create(CLUSTER_BUCKET, { history: 5, replicas });
    } catch (e) {
      if (Date.now() + wait > deadline) throw e;
    }
    await pause(wait);
  }
}

/**
 * Adds a new signing key (ids signed with older keys keep verifying); returns its kid. Rotations
 * racing each other each end with a kid of their own.
 */
export async function rotateIdKey(nc: NatsConnection): Promise<number> {
  const kv = await new Kvm(nc).open(CLUSTER_BUCKET);
  for (;;) {
    const keys = await readIdKeys(kv);
    if (!keys.length) throw new Error('no id keys to rotate');
    const kid = keys[keys.length - 1].kid + 1;
    if ((await createOnce(kv, idKeyName(kid), newKey())).ours) return kid;
  }
}
