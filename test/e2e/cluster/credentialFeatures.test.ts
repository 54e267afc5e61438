/**
 * Issue 22's three credential "things no engine has", across a 3-node cluster (security on, each node
 * pinned to its own NATS server so stopping that server cuts the node off):
 * - refresh-token reuse detection (`revoke_family`): a spent refresh token presented after 30 s
 *   through one node revokes the whole family on every node, with `token.reuse_detected`;
 * - derived API keys: a key chain created through three nodes dies with its root, on every node;
 * - the partition policy: a node cut off from NATS answers from what it knew by default (fail_open),
 *   and with `fail_closed` (set through another node, dynamically) refuses with a 503, then logs a
 *   `partition.refused` fact once it is back.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Aggregate, readFacts, subjects, type Envelope } from '../../../streams';
import { CLUSTER_PASSWORD, startTestCluster, until, type TestCluster } from '../../support/cluster';
import { factSource, replayLog } from '../../../streams/replayLog';

let c: TestCluster;
let nc: NatsConnection;
let offset = 0;
const clock = { now: () => Date.now() + offset };
const [A, B, C] = [0, 1, 2];
const es = (i: number) => c.nodes[i].es;
const ELASTIC = `Basic ${Buffer.from(`elastic:${CLUSTER_PASSWORD}`).toString('base64')}`;
const who = (i: number, auth: string) => fetch(`${c.nodes[i].url}/_security/_authenticate`, { headers: { authorization: auth } });
const statusOf = async (i: number, auth: string) => (await who(i, auth)).status;

async function facts(filterSubject: string): Promise<Envelope[]> {
  const out: Envelope[] = [];
  for await (const e of readFacts(nc, { filterSubject })) out.push(e);
  return out;
}

beforeAll(async () => {
  c = await startTestCluster({
    nodes: 3,
    security: true,
    pinNats: true,
    clock,
    settings: { 'xpack.security.authc.token.reuse_detection': 'revoke_family', 'xpack.security.authc.api_key.derived_keys.enabled': true },
  });
  nc = await connect({ servers: c.nats.url.split(',') });
}, 180_000);
afterAll(async () => {
  await nc?.close();
  await c?.stop();
}, 120_000);

describe('refresh-token reuse detection across nodes', () => {
  it('revokes the family on every node when a spent refresh token comes back through another node', async () => {
    const first = await es(A).security.getToken({ grant_type: 'password', username: 'elastic', password: CLUSTER_PASSWORD });
    const second = await es(B).security.getToken({ grant_type: 'refresh_token', refresh_token: first.refresh_token! });
    const third = await es(C).security.getToken({ grant_type: 'refresh_token', refresh_token: second.refresh_token! });
    for (const i of [A, B, C]) for (const t of [first, second, third]) expect(await statusOf(i, `Bearer ${t.access_token}`)).toBe(200);
    offset += 31_000;
    const reuse = await fetch(`${c.nodes[B].url}/_security/oauth2/token`, {
      method: 'POST',
      headers: { authorization: ELASTIC, 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: first.refresh_token }),
    });
    expect([reuse.status, await reuse.json()]).toEqual([400, { error: 'invalid_grant', error_description: 'token has already been refreshed more than 30 seconds in the past' }]);
    for (const i of [A, B, C]) for (const t of [first, second, third]) expect(await statusOf(i, `Bearer ${t.access_token}`)).toBe(401);
    const late = await fetch(`${c.nodes[A].url}/_security/oauth2/token`, {
      method: 'POST',
      headers: { authorization: ELASTIC, 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'refresh_token', refresh_token: third.refresh_token }),
    });
    expect(await late.json()).toEqual({ error: 'invalid_grant', error_description: 'token has been invalidated' });
    const detected = (await facts(subjects.factsOfType(Aggregate.Token))).filter((f) => f.type === 'token.reuse_detected');
    expect(detected).toHaveLength(1);
  });
});

describe('derived API keys across nodes', () => {
  it('creates a chain through three nodes and invalidates it with its root, on every node', async () => {
    const root = await es(A).security.createApiKey({ name: 'root', role_descriptors: { r: { cluster: ['manage_own_api_key', 'monitor'] } } });
    const derive = async (i: number, parent: { encoded: string }, body: object) => {
      const r = await fetch(`${c.nodes[i].url}/_security/api_key`, { method: 'POST', headers: { authorization: `ApiKey ${parent.encoded}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const json = (await r.json()) as { id: string; encoded: string };
      expect([r.status, json]).toEqual([200, expect.objectContaining({ id: expect.any(String) })]);
      return json;
    };
    const kid = await derive(B, root, { name: 'kid', role_descriptors: { r: { cluster: ['manage_own_api_key'] } } });
    const grandkid = await derive(C, kid, { name: 'grandkid' });
    for (const i of [A, B, C]) expect(await statusOf(i, `ApiKey ${grandkid.encoded}`)).toBe(200);
    const r = await es(A).security.invalidateApiKey({ ids: [root.id] });
    expect(r.invalidated_api_keys).toEqual([root.id, kid.id, grandkid.id]);
    for (const i of [A, B, C]) for (const k of [root, kid, grandkid]) expect(await statusOf(i, `ApiKey ${k.encoded}`)).toBe(401);
    const cascade = (await facts(subjects.factsOfType(Aggregate.ApiKey))).filter((f) => f.type === 'apikey.invalidated' && (f.data as { cascadeOf?: string }).cascadeOf === root.id);
    expect(cascade.map((f) => f.aggregateId).sort()).toEqual([kid.id, grandkid.id].sort());
  });
});

describe('the partition policy on a node cut off from NATS', () => {
  const cutOff = async () => {
    await c.nats.servers[C].kill();
    await until(() => !c.nodes[C].sys!.services.shards.connected, 10_000, 'C disconnected');
  };
  const reconnect = async () => {
    await c.nats.servers[C].restart();
    await until(() => c.nodes[C].sys!.services.shards.connected, 30_000, 'C reconnected');
  };

  it('answers from what it knew with fail_open (the default), after its bounded wait', async () => {
    const key = await es(A).security.createApiKey({ name: 'known-to-c' });
    expect(await statusOf(C, `ApiKey ${key.encoded}`)).toBe(200);
    await cutOff();
    try {
      await es(A).security.invalidateApiKey({ ids: [key.id] });
      const t0 = Date.now();
      expect(await statusOf(C, ELASTIC)).toBe(200);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(900); // the bounded wait for the log
      expect(await statusOf(C, `ApiKey ${key.encoded}`)).toBe(200); // stale: the invalidation has not reached C
    } finally {
      await reconnect();
    }
    await until(async () => (await statusOf(C, `ApiKey ${key.encoded}`)) === 401, 15_000, 'C learns the invalidation');
  }, 90_000);

  it('refuses with a 503 under fail_closed, then logs partition.refused once back', async () => {
    await es(A).cluster.putSettings({ persistent: { 'xpack.security.authc.partition_policy': 'fail_closed' } });
    expect(c.nodes[C].sys!.ctx.settings.str('xpack.security.authc.partition_policy', '')).toBe('fail_closed');
    const refusedBefore = (await facts(subjects.factsOfType(Aggregate.Partition))).length;
    await cutOff();
    try {
      const r = await who(C, ELASTIC);
      const body = (await r.json()) as { error: { type: string; reason: string }; status: number };
      expect([r.status, body.status, body.error.type]).toEqual([503, 503, 'security_exception']);
      expect(body.error.reason).toMatch(/^unable to authenticate: this node cannot confirm the state of credentials from the security log within \[1000ms\]/);
      expect(await statusOf(C, 'Basic !!!')).toBe(503); // nothing is answered, not even a 401
      expect(await statusOf(A, ELASTIC)).toBe(200); // the rest of the cluster is not affected
    } finally {
      await reconnect();
    }
    await until(async () => (await statusOf(C, ELASTIC)) === 200, 15_000, 'C answers again');
    const refused = await until(async () => {
      const fs = await facts(subjects.factsOfType(Aggregate.Partition));
      return fs.length > refusedBefore ? fs[fs.length - 1] : undefined;
    }, 15_000, 'partition.refused');
    expect(refused).toMatchObject({ type: 'partition.refused', aggregateId: c.nodes[C].sys!.ctx.node.id, data: { policy: 'fail_closed', refused: 2 } });
    await es(A).cluster.putSettings({ persistent: { 'xpack.security.authc.partition_policy': null } });
  }, 90_000);
});

describe('the event log of all this', () => {
  it('replays through the machines without divergence (reuse_detected, cascades, partition facts)', async () => {
    const out = await replayLog(factSource({ nc }, {}), { timeline: true });
    expect(out.divergences).toEqual([]);
  }, 60_000);
});
