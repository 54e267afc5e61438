/**
 * Issue 12, contexts survive the loss of their node: three node processes on a real 3-server NATS
 * cluster; 20 scrolls and 10 PITs are opened through A (A owns them), A is killed with SIGKILL, and
 * each scroll continues through B and C with the next page (no gap, no repeat), each PIT returns
 * the same hits as before; after their keep-alive each context expires exactly once (one
 * `expired` fact), and the log replays without divergence.
 */
import { connect } from '@nats-io/transport-node';
import { startTestCluster, until, type TestCluster } from '../../support/cluster';
import { EVENT_STREAM, readStream } from '../../../streams';
import { factSource, replayLog } from '../../../streams/replayLog';

let c: TestCluster;
const [A, B, C] = [0, 1, 2];
const es = (i: number) => c.nodes[i].es;
const INDEX = 'ctx';
const DOCS = 300;
const PAGE = 10;
const KEEP_ALIVE = '20s';

beforeAll(async () => {
  c = await startTestCluster({ nodes: 3, process: true, settings: { 'cluster.node_timeout_ms': 3_000 } });
  await es(A).indices.create({
    index: INDEX,
    settings: { number_of_shards: 3, number_of_replicas: 1, 'unassigned.node_left.delayed_timeout': '0s' },
    mappings: { properties: { n: { type: 'long' } } },
  });
  const ops = Array.from({ length: DOCS }, (_, n) => [{ index: { _index: INDEX, _id: `d${n}` } }, { n }]).flat();
  expect((await es(B).bulk({ operations: ops, refresh: true })).errors).toBe(false);
  await until(async () => (await es(C).cluster.health({ index: INDEX })).status === 'green', 60_000, 'green');
}, 180_000);
afterAll(async () => {
  await c?.stop();
}, 120_000);

const ns = (hits: Array<{ _source?: unknown }>) => hits.map((h) => (h._source as { n: number }).n);
const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);
/** A context listing (`GET /_scroll`, `GET /_pit`) through one node. */
const listing = async (i: number, what: 'scroll' | 'pit') =>
  (await (await fetch(`${c.nodes[i].url}/_${what}`)).json()) as { count: number; scrolls: Array<{ node: string }> };

/** Every fact of the lifecycle log, as {type, aggregateId}. */
async function facts(): Promise<Array<{ type: string; aggregateId: string; node?: string }>> {
  const nc = await connect({ servers: c.nats.url.split(',') });
  const out = [];
  try {
    for await (const m of readStream(nc, EVENT_STREAM)) out.push(JSON.parse(new TextDecoder().decode(m.data)));
  } finally {
    await nc.close();
  }
  return out;
}

describe('contexts whose owner node dies', () => {
  const scrolls: Array<{ id: string; next: number }> = [];
  const pits: Array<{ id: string; first: number[] }> = [];
  let killedAt = 0;

  it('opens 20 scrolls and 10 PITs through A, which owns them', async () => {
    for (let k = 0; k < 20; k++) {
      const r = await es(A).search({ index: INDEX, scroll: KEEP_ALIVE, size: PAGE, sort: [{ n: 'asc' }] });
      expect(ns(r.hits.hits)).toEqual(range(0, PAGE));
      scrolls.push({ id: r._scroll_id!, next: PAGE });
    }
    for (let k = 0; k < 10; k++) {
      const pit = await es(A).openPointInTime({ index: INDEX, keep_alive: KEEP_ALIVE });
      const r = await es(A).search({ pit: { id: pit.id }, size: 50, sort: [{ n: 'asc' }] });
      pits.push({ id: pit.id, first: ns(r.hits.hits) });
    }
    // Documents written after the PITs opened are not in them.
    const more = Array.from({ length: 20 }, (_, i) => [{ index: { _index: INDEX, _id: `new${i}` } }, { n: -1 - i }]).flat();
    await es(C).bulk({ operations: more, refresh: true });
    const listed = await listing(B, 'scroll');
    expect(listed.count).toBe(20);
    expect(new Set(listed.scrolls.map((s: { node: string }) => s.node)).size).toBe(1);
  }, 60_000);

  it('continues every scroll through B and C after A is killed: the next page, no gap, no repeat; PITs give the same hits', async () => {
    await c.nodes[A].kill();
    killedAt = Date.now();
    let firstPageMs = 0;
    for (const [k, s] of scrolls.entries()) {
      const r = await es(k % 2 ? B : C).scroll({ scroll_id: s.id, scroll: KEEP_ALIVE });
      if (!firstPageMs) firstPageMs = Date.now() - killedAt;
      expect(ns(r.hits.hits)).toEqual(range(s.next, PAGE));
      s.next += PAGE;
      s.id = r._scroll_id!;
    }
    // And once more through the other node.
    for (const [k, s] of scrolls.entries()) {
      const r = await es(k % 2 ? C : B).scroll({ scroll_id: s.id, scroll: KEEP_ALIVE });
      expect(ns(r.hits.hits)).toEqual(range(s.next, PAGE));
      s.next += PAGE;
    }
    for (const [k, p] of pits.entries()) {
      const r = await es(k % 2 ? B : C).search({ pit: { id: p.id }, size: 50, sort: [{ n: 'asc' }], track_total_hits: true });
      expect(ns(r.hits.hits)).toEqual(p.first);
      expect(r.hits.total).toEqual({ value: DOCS, relation: 'eq' });
    }
    console.log(`first page through an adopter ${firstPageMs} ms after the owner was killed`);
    const f = await facts();
    const adopted = f.filter((x) => x.type.endsWith('.adopted'));
    expect(new Set(adopted.map((x) => x.aggregateId)).size).toBe(30);
    expect(adopted).toHaveLength(30); // exactly one adopter each
  }, 120_000);

  it('expires each of them exactly once after its keep-alive', async () => {
    await until(async () => {
      const f = await facts();
      return f.filter((x) => x.type === 'scroll.expired' || x.type === 'pit.expired').length >= 30;
    }, 90_000, 'every context expired');
    await new Promise((r) => setTimeout(r, 2_000));
    const f = await facts();
    const expired = f.filter((x) => x.type === 'scroll.expired' || x.type === 'pit.expired');
    expect(expired).toHaveLength(30);
    expect(new Set(expired.map((x) => x.aggregateId)).size).toBe(30);
    for (const i of [B, C]) {
      expect((await listing(i, 'scroll')).count).toBe(0);
      expect((await listing(i, 'pit')).count).toBe(0);
    }
    const gone = await fetch(`${c.nodes[B].url}/_search/scroll`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ scroll_id: scrolls[0].id }) });
    expect(gone.status).toBe(404);
  }, 120_000);

  it('replays the whole log without divergence, also after A comes back (it revives none of its old contexts)', async () => {
    await c.nodes[A].start();
    await until(async () => (await es(A).cluster.health()).number_of_nodes === 3, 60_000, 'A back');
    expect((await listing(A, 'scroll')).count).toBe(0);
    const nc = await connect({ servers: c.nats.url.split(',') });
    try {
      const out = await replayLog(factSource({ nc }, {}), { timeline: true });
      expect(out.divergences).toEqual([]);
    } finally {
      await nc.close();
    }
    const expired = (await facts()).filter((x) => x.type.endsWith('.expired'));
    expect(expired).toHaveLength(30);
  }, 120_000);
});
