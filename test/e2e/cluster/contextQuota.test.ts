/**
 * Issue 22 item 4, per-principal context quotas on a 3-node cluster: `search.max_open_contexts_per_user`
 * (dynamic) counts one principal's scrolls + PITs + async searches opened through any node; the next
 * one is a 429 with `Retry-After` naming that principal's open contexts, a `quota.rejected` fact is
 * logged, and another user is never starved by the first one's leak.
 */
import { Client } from 'es8';
import { startTestCluster, until, CLUSTER_PASSWORD, type TestCluster } from '../../support/cluster';
import { allFacts } from '../search/helpers';

let c: TestCluster;
const url = (i: number) => c.nodes[i].url;
const as = (i: number, user: string) => new Client({ node: url(i), auth: { username: user, password: `${user}-password` } });

beforeAll(async () => {
  c = await startTestCluster({ nodes: 3, security: true });
  const es = c.nodes[0].es;
  await es.indices.create({ index: 'q', settings: { number_of_shards: 2, number_of_replicas: 0 } });
  await es.bulk({ refresh: true, operations: Array.from({ length: 20 }, (_, i) => [{ index: { _index: 'q' } }, { n: i }]).flat() });
  await es.security.putRole({ name: 'reader', indices: [{ names: ['q'], privileges: ['read'] }] });
  for (const u of ['alice', 'bob']) await es.security.putUser({ username: u, password: `${u}-password`, roles: ['reader'] });
  await es.cluster.putSettings({ persistent: { 'search.max_open_contexts_per_user': 3 } });
}, 180_000);
afterAll(async () => {
  await c?.stop();
}, 120_000);

async function call(i: number, user: string, method: string, path: string, body?: unknown) {
  const r = await fetch(`${url(i)}${path}`, {
    method,
    headers: { authorization: `Basic ${Buffer.from(`${user}:${user}-password`).toString('base64')}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: r.status, headers: r.headers, json: (await r.json()) as any };
}

describe('search.max_open_contexts_per_user', () => {
  it("counts a principal's contexts opened through every node and refuses the next with 429 + Retry-After", async () => {
    const p1 = await as(0, 'alice').openPointInTime({ index: 'q', keep_alive: '1m' });
    const p2 = await as(1, 'alice').openPointInTime({ index: 'q', keep_alive: '2m' });
    const sc = await as(2, 'alice').search({ index: 'q', scroll: '1m', size: 5 });
    // every node's fold has seen her three contexts before the fourth is asked
    const refused = await until(async () => {
      const r = await call(2, 'alice', 'POST', '/q/_async_search?keep_on_completion=true', {});
      if (r.status === 200) await call(2, 'alice', 'DELETE', `/_async_search/${r.json.id}`);
      return r.status === 429 ? r : undefined;
    }, 20_000, 'the quota on node 2');
    expect(refused.json.error.type).toBe('too_many_open_contexts_exception');
    expect(refused.json.error.reason).toContain('for user [alice] who holds [3] open search contexts (scroll [1], point in time [2], async search [0]); the limit is [3]');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    const pit = await call(0, 'alice', 'POST', '/q/_pit?keep_alive=1m');
    expect(pit.status).toBe(429);
    // a leak of alice's never starves bob
    const bob = await call(1, 'bob', 'POST', '/q/_pit?keep_alive=1m');
    expect(bob.status).toBe(200);
    // clearing one frees a place, through any node
    await as(1, 'alice').closePointInTime({ id: p1.id });
    await until(async () => (await call(2, 'alice', 'POST', '/q/_pit?keep_alive=1m')).status === 200, 20_000, 'a freed place');
    await as(0, 'alice').clearScroll({ scroll_id: sc._scroll_id! });
    void p2;
    const facts = await allFacts(c.nodes[0].sys!.ctx.nc);
    const rejected = facts.filter((f) => f.type === 'quota.rejected');
    expect(rejected.length).toBeGreaterThanOrEqual(2);
    expect(rejected[0].data).toMatchObject({ owner: { username: 'alice' }, limit: 3, open: 3 });
  });

  it('is off with 0 (the default) and dynamic', async () => {
    await c.nodes[0].es.cluster.putSettings({ persistent: { 'search.max_open_contexts_per_user': null } });
    await until(async () => (await call(2, 'alice', 'POST', '/q/_pit?keep_alive=1m')).status === 200, 20_000, 'quota off');
  });
});
void CLUSTER_PASSWORD;
