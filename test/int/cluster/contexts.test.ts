/**
 * Issue 12: scrolls, PITs and credentials across nodes, with three nodes (security on) on a real
 * 3-server NATS cluster, each node on its own server (so stopping that server cuts the node off).
 * Any node serves any context; the views answer the same through every node; refresh tokens are
 * single-use cluster-wide; an invalidation reaches every node, also one cut off while it happened;
 * and the whole log replays without divergence.
 */
import { connect } from '@nats-io/transport-node';
import { startTestCluster, until, type TestCluster } from '../../support/cluster';
import { factSource, replayLog } from '../../../streams/replayLog';

let c: TestCluster;
const [A, B, C] = [0, 1, 2];
const es = (i: number) => c.nodes[i].es;
const INDEX = 'paged';
const DOCS = 250;

beforeAll(async () => {
  c = await startTestCluster({ nodes: 3, security: true, pinNats: true });
  await es(A).indices.create({ index: INDEX, settings: { number_of_shards: 3, number_of_replicas: 1 }, mappings: { properties: { n: { type: 'long' } } } });
  const ops = Array.from({ length: DOCS }, (_, n) => [{ index: { _index: INDEX, _id: `d${n}` } }, { n }]).flat();
  const r = await es(B).bulk({ operations: ops, refresh: true });
  expect(r.errors).toBe(false);
  await until(async () => (await es(C).cluster.health({ index: INDEX })).status === 'green', 30_000, 'green');
}, 180_000);
afterAll(async () => {
  await c?.stop();
}, 120_000);

/** A raw call through node i (the official client hides 404 bodies of DELETE /_pit behind throws). */
async function raw(i: number, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const r = await fetch(`${c.nodes[i].url}${path}`, {
    method,
    headers: { authorization: `Basic ${Buffer.from('elastic:cluster-test-pw').toString('base64')}`, 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: r.status, json: (await r.json()) as any };
}

describe('any node serves any context', () => {
  it('walks a scroll opened through A to the end alternating B, C, A: every document exactly once', async () => {
    const first = await es(A).search({ index: INDEX, scroll: '1m', size: 17, sort: ['_doc'] });
    const seen = first.hits.hits.map((h) => h._id!);
    let id = first._scroll_id!;
    for (let k = 0; ; k++) {
      const page = await es([B, C, A][k % 3]).scroll({ scroll_id: id, scroll: '1m' });
      if (!page.hits.hits.length) break;
      seen.push(...page.hits.hits.map((h) => h._id!));
      id = page._scroll_id!;
    }
    expect(seen).toHaveLength(DOCS);
    expect(new Set(seen).size).toBe(DOCS);
    expect(await es(C).clearScroll({ scroll_id: id })).toEqual({ succeeded: true, num_freed: 3 });
  });

  it('pages a PIT opened through B through C, closes it through A, then answers 404 through every node', async () => {
    const pit = await es(B).openPointInTime({ index: INDEX, keep_alive: '1m' });
    const ids: string[] = [];
    let after: unknown[] | undefined;
    for (let k = 0; ; k++) {
      const r = await es([C, A, B][k % 3]).search({ pit: { id: pit.id, keep_alive: '1m' }, size: 40, sort: [{ n: 'asc' }], ...(after ? { search_after: after as never } : {}) });
      if (!r.hits.hits.length) break;
      ids.push(...r.hits.hits.map((h) => h._id!));
      after = r.hits.hits[r.hits.hits.length - 1].sort;
    }
    expect(ids).toEqual(Array.from({ length: DOCS }, (_, n) => `d${n}`));
    expect(await es(A).closePointInTime({ id: pit.id })).toEqual({ succeeded: true, num_freed: 3 });
    for (const i of [A, B, C]) {
      const r = await raw(i, 'POST', '/_search', { pit: { id: pit.id }, size: 1 });
      expect(r.status).toBe(404);
      expect(r.json.error.root_cause[0].type).toBe('search_context_missing_exception');
      expect(await raw(i, 'DELETE', '/_pit', { id: pit.id })).toEqual({ status: 404, json: { succeeded: false, num_freed: 0 } });
    }
  });

  it('answers GET /_scroll, GET /_pit and GET /_contexts/<id> the same through every node; _nodes/stats counts each node its own', async () => {
    const s = await es(A).search({ index: INDEX, scroll: '1m', size: 5 });
    const pit = await es(B).openPointInTime({ index: INDEX, keep_alive: '1m' });
    const scrollCtx = (await raw(A, 'GET', '/_scroll')).json.scrolls[0];
    for (const i of [A, B, C]) {
      const scrolls = (await raw(i, 'GET', '/_scroll')).json;
      const pits = (await raw(i, 'GET', '/_pit')).json;
      expect(scrolls.count).toBe(1);
      expect(pits.count).toBe(1);
      expect(scrolls.scrolls[0]).toMatchObject({ id: scrollCtx.id, node: c.nodes[A].sys!.ctx.node.id, shards: 3 });
      expect(pits.pits[0]).toMatchObject({ id: pit.id, node: c.nodes[B].sys!.ctx.node.id });
      // The expiry comes from the owner node, whichever node is asked.
      expect(scrolls.scrolls[0].expires_at).toBe(scrollCtx.expires_at);
      const ctx = (await raw(i, 'GET', `/_contexts/${encodeURIComponent(s._scroll_id!)}`)).json;
      expect(ctx).toMatchObject({ id: scrollCtx.id, kind: 'scroll', status: 'open', node: c.nodes[A].sys!.ctx.node.id, expires_at: scrollCtx.expires_at });
    }
    const stats = await es(C).nodes.stats({ metric: 'indices', index_metric: 'search' });
    const open = (i: number) => (stats.nodes[c.nodes[i].sys!.ctx.node.id].indices as any).search.open_contexts;
    expect([open(A), open(B), open(C)]).toEqual([3, 3, 0]);
    const all = await es(B).indices.stats({ index: INDEX, metric: 'search' });
    expect((all._all.primaries as any).search.open_contexts + 0).toBeGreaterThan(0);
    // _all through C clears A's scroll (ES counts the nodes that acknowledged).
    expect(await raw(C, 'DELETE', '/_search/scroll/_all')).toEqual({ status: 200, json: { succeeded: true, num_freed: 3 } });
    expect((await raw(A, 'POST', '/_search/scroll', { scroll_id: s._scroll_id })).status).toBe(404);
    expect((await raw(B, 'GET', '/_scroll')).json.count).toBe(0);
    await es(C).closePointInTime({ id: pit.id });
  });
});

describe('credentials across nodes', () => {
  it('answers 50 concurrent refreshes of one refresh token over 3 nodes with one new pair', async () => {
    const t = await es(A).security.getToken({ grant_type: 'password', username: 'elastic', password: 'cluster-test-pw' });
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, k) => es(k % 3).security.getToken({ grant_type: 'refresh_token', refresh_token: t.refresh_token! })),
    );
    expect(new Set(answers.map((a) => a.access_token)).size).toBe(1);
    expect(new Set(answers.map((a) => a.refresh_token)).size).toBe(1);
    expect(answers[0].access_token).not.toBe(t.access_token);
    // The pair works on every node; the old access token still works until it is invalidated (ES).
    for (const i of [A, B, C]) {
      const who = await fetch(`${c.nodes[i].url}/_security/_authenticate`, { headers: { authorization: `Bearer ${answers[0].access_token}` } });
      expect(who.status).toBe(200);
    }
  });

  it('refuses an API key invalidated through A through B and C on the next request', async () => {
    const key = await es(A).security.createApiKey({ name: 'k1' });
    const use = (i: number) => fetch(`${c.nodes[i].url}/_security/_authenticate`, { headers: { authorization: `ApiKey ${key.encoded}` } }).then((r) => r.status);
    // A key created through A a moment ago works through C at once.
    expect(await use(C)).toBe(200);
    expect(await use(B)).toBe(200);
    await es(A).security.invalidateApiKey({ ids: [key.id] });
    expect(await use(B)).toBe(401);
    expect(await use(C)).toBe(401);
  });

  it('refuses it through C when C was cut off from NATS while it was invalidated', async () => {
    const key = await es(A).security.createApiKey({ name: 'k2' });
    const use = (i: number) => fetch(`${c.nodes[i].url}/_security/_authenticate`, { headers: { authorization: `ApiKey ${key.encoded}` } }).then((r) => r.status);
    expect(await use(C)).toBe(200);
    const server = c.nats.servers[C];
    await server.kill();
    await until(() => !c.nodes[C].sys!.services.shards.connected, 10_000, 'C disconnected');
    await es(A).security.invalidateApiKey({ ids: [key.id] });
    expect(await use(A)).toBe(401);
    await server.restart();
    await until(() => c.nodes[C].sys!.services.shards.connected, 30_000, 'C reconnected');
    expect(await use(C)).toBe(401);
  }, 120_000);
});

describe('the event log of all this', () => {
  it('replays without divergence', async () => {
    const nc = await connect({ servers: c.nats.url.split(',') });
    try {
      const out = await replayLog(factSource({ nc }, {}), { timeline: true });
      expect(out.divergences).toEqual([]);
    } finally {
      await nc.close();
    }
  }, 60_000);
});
