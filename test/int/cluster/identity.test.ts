/**
 * The cluster identity (uuid and id-signing keys) is created once for every node on a NATS
 * cluster: three nodes bootstrapping at the same moment through three different servers, on a
 * bucket whose R3 stream has only just been created, all come back with the same values; rotations
 * racing each other each add their own key. Real 3-server nats cluster on loopback.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startNatsCluster, type NatsCluster } from '../../../actors/natsCluster';
import { Kvm } from '@nats-io/kv';
import { clusterIdentity, rotateIdKey, CLUSTER_BUCKET } from '../../../actors/cluster/identity';
import { startNats } from '../../support/natsServer';

let nats: NatsCluster;
let dir: string;
let conns: NatsConnection[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'es-identity-'));
  nats = await startNatsCluster({ dir });
  conns = await Promise.all(nats.servers.map((s) => connect({ servers: s.url })));
}, 60_000);
afterAll(async () => {
  await Promise.all(conns.map((nc) => nc.close()));
  await nats?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const keyText = (keys: Array<{ kid: number; key: Buffer }>) => keys.map((k) => `${k.kid}:${k.key.toString('base64')}`).join(',');

describe('the cluster identity on a 3-server NATS cluster', () => {
  it('is the same for three nodes bootstrapping at once through different servers', async () => {
    const ids = await Promise.all(conns.map((nc) => clusterIdentity(nc, { replicas: 3 })));
    expect(new Set(ids.map((i) => i.uuid)).size).toBe(1);
    expect(new Set(ids.map((i) => keyText(i.keys))).size).toBe(1);
    expect(ids[0].keys).toHaveLength(1);
    expect(ids[0].keys[0].key).toHaveLength(32);
    // a node starting later reads the same values
    const late = await clusterIdentity(conns[2], { replicas: 3 });
    expect(late.uuid).toBe(ids[0].uuid);
    expect(keyText(late.keys)).toBe(keyText(ids[0].keys));
  }, 60_000);

  it('keeps every key of rotations racing each other', async () => {
    const before = await clusterIdentity(conns[0], { replicas: 3 });
    const kids = await Promise.all(conns.map((nc) => rotateIdKey(nc)));
    expect(new Set(kids).size).toBe(3);
    const after = await clusterIdentity(conns[1], { replicas: 3 });
    expect(after.uuid).toBe(before.uuid);
    expect(after.keys.map((k) => k.kid).sort()).toEqual([...before.keys.map((k) => k.kid), ...kids].sort());
    expect(keyText(after.keys).startsWith(keyText(before.keys))).toBe(true);
  }, 60_000);

  it('reads the id keys a store of the older layout holds (one `idkeys` array) and rotates on from them', async () => {
    const one = await startNats();
    const nc = await one.connect();
    try {
      const kv = await new Kvm(nc).create(CLUSTER_BUCKET, { history: 5 });
      const old = [{ kid: 1, key: Buffer.alloc(32, 1).toString('base64') }, { kid: 2, key: Buffer.alloc(32, 2).toString('base64') }];
      await kv.put('uuid', 'old-uuid');
      await kv.put('idkeys', JSON.stringify(old));
      const id = await clusterIdentity(nc);
      expect(id.uuid).toBe('old-uuid');
      expect(keyText(id.keys)).toBe(old.map((k) => `${k.kid}:${k.key}`).join(','));
      expect(await rotateIdKey(nc)).toBe(3);
      expect((await clusterIdentity(nc)).keys.map((k) => k.kid)).toEqual([1, 2, 3]);
    } finally {
      await nc.close();
      await one.stop();
    }
  });
});
