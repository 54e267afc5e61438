/**
 * Issue 11, the failures a cluster must survive, with real node processes on a real 3-server NATS
 * cluster (R3 streams): a node holding primaries is killed with SIGKILL during a bulk load through
 * another node; the JetStream leader of the document log is killed during a bulk load; a node
 * with an empty data dir joins and takes replicas; every node restarts from the log. Each time:
 * every acknowledged document is there through every node, and no document whose write was
 * refused is.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { startTestCluster, until, type ClusterNode, type TestCluster } from '../../support/cluster';
import { DATA_STREAM, readStream } from '../../../streams';
import { decodeBatch } from '../../../actors/shard/opCodec';

let c: TestCluster;
const INDEX = 'load';

beforeAll(async () => {
  c = await startTestCluster({ nodes: 3, process: true, settings: { 'cluster.node_timeout_ms': 3_000 } });
  await c.nodes[0].es.indices.create({
    index: INDEX,
    settings: { number_of_shards: 3, number_of_replicas: 1, 'unassigned.node_left.delayed_timeout': '0s' },
    mappings: { properties: { seq: { type: 'long' } } },
  });
}, 180_000);
afterAll(async () => {
  await c?.stop();
}, 120_000);

const live = () => c.nodes.filter((n) => n.proc && n.proc.exitCode === null && n.proc.signalCode === null);

async function health(n: ClusterNode, nodes: number, status = 'green') {
  return until(async () => {
    const h = await n.es.cluster.health({ index: INDEX });
    return h.status === status && h.number_of_nodes === nodes && h;
  }, 90_000, `${status} with ${nodes} nodes`);
}

/** Outcome of every item a loader sent: acknowledged, refused for sure, or unknown (may have landed). */
interface Outcomes {
  acked: Set<number>;
  refused: Set<number>;
  unknown: Set<number>;
}

/** Bulk-loads docs with increasing `seq` through `via` until `stop()`; two loops in parallel. */
function load(via: ClusterNode, from: number) {
  const out: Outcomes = { acked: new Set(), refused: new Set(), unknown: new Set() };
  let next = from;
  let stopped = false;
  const loop = async () => {
    while (!stopped) {
      const ids = Array.from({ length: 100 }, () => next++);
      const body = ids.map((i) => `{"index":{"_index":"${INDEX}","_id":"d${i}"}}\n{"seq":${i}}\n`).join('');
      try {
        const r = await fetch(`${via.url}/_bulk`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body });
        const json = (await r.json()) as { items?: Array<{ index: { status: number; error?: { type: string; reason: string } } }> };
        if (!json.items) {
          for (const i of ids) out.unknown.add(i);
          continue;
        }
        json.items.forEach((it, k) => {
          const st = it.index.status;
          if (st === 200 || st === 201) out.acked.add(ids[k]);
          // A 503 whose append may have reached the log is unknown; every other refusal is definite.
          else if (st === 503 && /did not acknowledge|did not reach|timed? ?out|may have been applied/i.test(it.index.error?.reason ?? '')) out.unknown.add(ids[k]);
          else out.refused.add(ids[k]);
        });
      } catch {
        for (const i of ids) out.unknown.add(i);
      }
    }
  };
  const runs = [loop(), loop()];
  return { out, stop: async () => ((stopped = true), await Promise.all(runs)) };
}

/** Every seq present in the index, read through `via` after a refresh. */
async function present(via: ClusterNode): Promise<Set<number>> {
  await via.es.indices.refresh({ index: INDEX });
  const out = new Set<number>();
  let after: number[] | undefined;
  for (;;) {
    const r = await via.es.search<{ seq: number }>({ index: INDEX, size: 5_000, sort: [{ seq: 'asc' }], ...(after ? { search_after: after } : {}) });
    for (const h of r.hits.hits) out.add(h._source!.seq);
    if (r.hits.hits.length < 5_000) return out;
    after = r.hits.hits[r.hits.hits.length - 1].sort as number[];
  }
}

async function checkEveryNode(outcomes: Outcomes[]) {
  const acked = new Set(outcomes.flatMap((o) => [...o.acked]));
  const refused = new Set(outcomes.flatMap((o) => [...o.refused]));
  const unknown = new Set(outcomes.flatMap((o) => [...o.unknown]));
  expect(acked.size).toBeGreaterThan(500);
  // Writes whose outcome the client never learned may still land a while later (a primary's queue
  // drains once the log is back): every read must keep every acknowledged document and show no
  // refused one, and the nodes must converge on one set.
  const deadline = Date.now() + 60_000;
  let seen: Array<Set<number>>;
  for (;;) {
    seen = [];
    for (const n of live()) {
      const p = await present(n);
      const lost = [...acked].filter((i) => !p.has(i));
      const phantom = [...p].filter((i) => refused.has(i) || (!acked.has(i) && !unknown.has(i)));
      if (lost.length) console.log(JSON.stringify({ node: n.name, lost: lost.slice(0, 20), audit: await auditLog(new Set(lost.map((i) => `d${i}`))), copies: await copyStates() }));
      expect({ node: n.name, lost: lost.length, phantom: phantom.length }).toEqual({ node: n.name, lost: 0, phantom: 0 });
      seen.push(p);
    }
    if (seen.every((p) => p.size === seen[0].size && [...p].every((i) => seen[0].has(i))) || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 1_000));
  }
  if (seen.some((p) => p.size !== seen[0].size)) console.log(JSON.stringify(await copyStates()));
  for (const p of seen) expect([...p].sort((a, b) => a - b)).toEqual([...seen[0]].sort((a, b) => a - b));
  return { acked: acked.size, refused: refused.size, unknown: unknown.size };
}

/**
 * Reads the document log as every copy folds it (a batch applies only if its `after` is the
 * shard's max seqNo so far) and tells, for the given doc ids, in which batches they are and
 * whether each batch applied: where a lost document went.
 */
async function auditLog(ids: Set<string>) {
  const nc = await connect({ servers: c.nats.url.split(',') });
  const max = new Map<string, number>();
  const out: unknown[] = [];
  let prev = new Map<string, unknown>();
  for await (const m of readStream(nc, DATA_STREAM, { filterSubject: 'es.v1.data.shard.>' })) {
    const items = decodeBatch<{ batch?: { after: number }; id?: string; seqNo?: number }>(new TextDecoder().decode(m.data));
    const head = items.length && items[0].batch ? items.shift()!.batch : undefined;
    const at = max.get(m.subject) ?? -1;
    const applies = !head || head.after === at;
    const seqNos = items.map((o) => o.seqNo!);
    const row = { seq: m.seq, subject: m.subject.split('.').pop(), msgId: m.msgId, after: head?.after, at, applies, seqNos: [Math.min(...seqNos), Math.max(...seqNos)], n: items.length };
    if (applies) max.set(m.subject, Math.max(at, ...seqNos));
    if (items.some((o) => ids.has(o.id!))) out.push({ prev: prev.get(m.subject), row, lost: items.filter((o) => ids.has(o.id!)).length });
    prev.set(m.subject, row);
  }
  await nc.close();
  return out;
}

/** Every copy's own figures (asked copy by copy over NATS), to tell which one differs. */
async function copyStates() {
  const nc = await connect({ servers: c.nats.url.split(',') });
  const state = (await live()[0].es.cluster.state({ metric: 'routing_table', index: INDEX })) as any;
  const uuid = (await live()[0].es.indices.getSettings({ index: INDEX }))[INDEX].settings!.index!.uuid!;
  const out: unknown[] = [];
  for (const [n, copies] of Object.entries(state.routing_table.indices[INDEX].shards as Record<string, Array<{ node: string | null; primary: boolean }>>)) {
    for (const cp of copies) {
      if (!cp.node) continue;
      try {
        const m = await nc.request(`es.v1.shard.${uuid}.${n}.c.${cp.node}.stats`, new TextEncoder().encode('{}'), { timeout: 3000 });
        out.push({ n, primary: cp.primary, node: cp.node, ...JSON.parse(new TextDecoder().decode(m.data)).result });
      } catch (e) {
        out.push({ n, node: cp.node, err: String(e) });
      }
    }
  }
  await nc.close();
  return out;
}

/** A node holding at least one primary of the index, other than `not`. */
async function primaryHolder(not: ClusterNode): Promise<ClusterNode> {
  const rows = (await not.es.cat.shards({ index: INDEX, format: 'json', h: 'prirep,node,state' })) as Array<{ prirep: string; node: string; state: string }>;
  const names = new Set(rows.filter((r) => r.prirep === 'p' && r.state === 'STARTED').map((r) => r.node));
  const n = live().find((x) => x !== not && names.has(x.name));
  if (!n) throw new Error(`no other node holds a primary: ${JSON.stringify(rows)}`);
  return n;
}

const outcomes: Outcomes[] = [];

describe('a cluster losing nodes and NATS servers', () => {
  it('keeps every acknowledged document when the node of a primary is killed during a bulk load through another node', async () => {
    await health(c.nodes[0], 3);
    const via = c.nodes[0];
    const victim = await primaryHolder(via);
    const l = load(via, 0);
    await new Promise((r) => setTimeout(r, 1_500));
    await victim.kill();
    await new Promise((r) => setTimeout(r, 8_000));
    await l.stop();
    outcomes.push(l.out);
    // The two nodes left hold a primary and a replica of every shard again.
    await health(via, 2);
    await checkEveryNode(outcomes);
    // The killed node comes back on its data dir and takes its share again: green with 3 nodes.
    await victim.start();
    await health(via, 3);
    await checkEveryNode(outcomes);
  }, 240_000);

  it('keeps every acknowledged document when the JetStream leader of the document log is killed during a bulk load', async () => {
    const nc = await connect({ servers: c.nats.url.split(',') });
    const jsm = await jetstreamManager(nc);
    const leader = (await jsm.streams.info(DATA_STREAM)).cluster?.leader;
    await nc.close();
    const server = c.nats.servers.find((s) => s.name === leader);
    expect(server).toBeDefined();
    const via = live()[1];
    const l = load(via, 100_000);
    await new Promise((r) => setTimeout(r, 1_500));
    await server!.kill(true);
    await new Promise((r) => setTimeout(r, 10_000));
    await l.stop();
    outcomes.push(l.out);
    await server!.restart();
    await health(via, 3);
    const figures = await checkEveryNode(outcomes);
    expect(figures.acked).toBeGreaterThan(1_000);
  }, 240_000);

  it('gives replicas to a node started with an empty data dir, which then serves the same documents', async () => {
    const fresh = await c.addNode({ process: true });
    await health(fresh, 4);
    await until(async () => {
      const rows = (await fresh.es.cat.shards({ index: INDEX, format: 'json', h: 'node,state' })) as Array<{ node: string; state: string }>;
      return rows.some((r) => r.node === fresh.name && r.state === 'STARTED');
    }, 90_000, 'a started copy on the new node');
    await checkEveryNode(outcomes);
  }, 240_000);

  it('restarts every node from the shared log with the same documents', async () => {
    const before = await present(live()[0]);
    for (const n of live()) await n.stop();
    for (const n of c.nodes) await n.start();
    await health(c.nodes[0], c.nodes.length);
    for (const n of live()) expect((await present(n)).size).toBe(before.size);
    await checkEveryNode(outcomes);
  }, 300_000);
});
