/**
 * Issue 12 item 6: node facts on a real 3-server NATS cluster. Each node appends `node.joined` once it
 * listens and `node.left {reason: 'stopped'}` on a clean stop; a node killed with SIGKILL (a process
 * node: its heartbeats stop, nothing says goodbye) is recorded `node.left {reason: 'timed_out'}` once,
 * by the allocator lease holder; its contexts are adopted (`adopted` facts); restarted on its
 * DATA_DIR it joins with the next seq. The whole log validates against streams/schemas, replays
 * without divergence with node rows and timelines, and the events CLI prints the node facts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startTestCluster, until, type ClusterNode, type TestCluster } from '../../support/cluster';
import { runCli, spawnCli } from '../../support/cli';
import { readFacts, type Envelope } from '../../../streams';
import { validateFact } from '../../../streams/eventSchemas';
import { nodeFactMsgId } from '../../../actors/cluster/nodeFacts';
import { factSource, replayLog } from '../../../streams/replayLog';
import { stateRows } from '../../../streams/stateRows';

jest.setTimeout(120_000);

let c: TestCluster;
let nc: NatsConnection;
let A: ClusterNode;
let B: ClusterNode;
let C: ClusterNode; // a process node: the one killed
const idOf = (n: ClusterNode) => (n.sys ? n.sys.ctx.node.id : (JSON.parse(readFileSync(join(n.dataDir, 'node.json'), 'utf8')) as { id: string }).id);
const INDEX = 'nodefacts';

type Fact = Envelope & { streamSeq: number };
async function allFacts(filterSubject?: string): Promise<Fact[]> {
  const out: Fact[] = [];
  for await (const f of readFacts(nc, filterSubject ? { filterSubject } : {})) out.push(f);
  return out;
}
const nodeFacts = (id: string) => allFacts(`es.v1.evt.node.${id}.>`);
/** The node facts of `id` once `ok` holds for them. */
const nodeFactsUntil = (id: string, ok: (fs: Fact[]) => boolean, what: string, timeoutMs = 30_000) =>
  until(async () => {
    const fs = await nodeFacts(id);
    return ok(fs) && fs;
  }, timeoutMs, what);
/** `npm run events -- <args>` until its stdout lines satisfy `done`; then stops it. */
async function tailLines(args: string[], env: Record<string, string>, done: (lines: string[]) => boolean): Promise<string[]> {
  const p = spawnCli('events', args, env);
  let out = '';
  p.stdout!.on('data', (d) => (out += d));
  try {
    return await until(() => {
      const lines = out.split('\n').slice(0, -1);
      return done(lines) && lines;
    }, 20_000, `events ${args.join(' ')} output; got: ${out.slice(-1000)}`);
  } finally {
    p.kill('SIGTERM');
  }
}
const brief = (fs: Fact[]) => fs.map((f) => ({ seq: f.seq, type: f.type, node: f.node, data: f.data }));

beforeAll(async () => {
  c = await startTestCluster({ nodes: 2 });
  [A, B] = c.nodes;
  C = await c.addNode({ process: true });
  nc = await connect({ servers: c.nats.url.split(',') });
  await A.es.indices.create({ index: INDEX, settings: { number_of_shards: 2, number_of_replicas: 1 } });
  await A.es.bulk({ refresh: true, operations: Array.from({ length: 40 }, (_, n) => [{ index: { _index: INDEX, _id: `d${n}` } }, { n }]).flat() });
}, 180_000);
afterAll(async () => {
  await nc?.close();
  await c?.stop();
}, 120_000);

describe('node facts', () => {
  it('has every node append node.joined once it listens, with its name, HTTP address and version', async () => {
    for (const [i, n] of [A, B, C].entries()) {
      const id = idOf(n);
      const [f] = await nodeFactsUntil(id, (fs) => fs.length >= 1, `${n.name} joined`);
      expect(f).toMatchObject({ type: 'node.joined', seq: 1, aggregateId: id, node: id, id: nodeFactMsgId(id, 1) });
      expect(f.data).toEqual({ name: `node-${i}`, host: '127.0.0.1', http_address: new URL(n.url).host, version: expect.any(String), started_at: expect.any(Number) });
    }
  });

  it('records a killed node as timed out once, by the allocator lease holder, and its contexts are adopted', async () => {
    const cId = idOf(C);
    // Contexts owned by C, so that its death leaves them to adopt.
    const scroll = await C.es.search({ index: INDEX, scroll: '5m', size: 5, sort: ['_doc'] });
    const pit = await C.es.openPointInTime({ index: INDEX, keep_alive: '5m' });
    const opened = await until(async () => {
      const fs = (await allFacts()).filter((f) => f.type.endsWith('.opened') && f.node === cId);
      return fs.length === 2 && fs;
    }, 10_000, 'opened facts of C');
    for (const f of opened) expect(f.data).toMatchObject({ node: cId });

    await C.kill();
    const leader = await until(() => [A, B].find((n) => n.sys!.allocator.leader), 10_000, 'a lease holder');
    const facts = await nodeFactsUntil(cId, (fs) => fs.some((f) => f.type === 'node.left'), 'C recorded as gone');
    expect(brief(facts).slice(1)).toEqual([
      { seq: 2, type: 'node.left', node: idOf(leader), data: { reason: 'timed_out', by: idOf(leader), silent_ms: expect.any(Number) } },
    ]);
    expect((facts[1].data as { silent_ms: number }).silent_ms).toBeGreaterThanOrEqual(0);
    expect(facts[1].id).toBe(nodeFactMsgId(cId, 2));

    const adopted = await until(async () => {
      const fs = (await allFacts()).filter((f) => f.type.endsWith('.adopted'));
      return fs.length === 2 && fs;
    }, 30_000, 'scroll.adopted and pit.adopted');
    expect(adopted.map((f) => f.type).sort()).toEqual(['pit.adopted', 'scroll.adopted']);
    for (const f of adopted) {
      expect(f.data).toEqual({ from: cId, to: f.node });
      expect([idOf(A), idOf(B)]).toContain(f.node);
    }
    // The adopted scroll goes on through any node.
    expect((await B.es.scroll({ scroll_id: scroll._scroll_id!, scroll: '5m' })).hits.hits).toHaveLength(5);
    await A.es.clearScroll({ scroll_id: scroll._scroll_id! });
    await B.es.closePointInTime({ id: pit.id });
  });

  it('has a node restarted on its DATA_DIR join with the next seq, and no second timed_out', async () => {
    const cId = idOf(C);
    await C.start();
    expect(idOf(C)).toBe(cId);
    const facts = await nodeFactsUntil(cId, (fs) => fs.length >= 3, 'C joined again');
    expect(brief(facts).map((f) => [f.seq, f.type, f.node])).toEqual([
      [1, 'node.joined', cId],
      [2, 'node.left', expect.any(String)],
      [3, 'node.joined', cId],
    ]);
    expect(facts[2].id).toBe(nodeFactMsgId(cId, 3));
  });

  it('has a node append node.left {reason: stopped} on a clean stop, and nobody else a leave for it', async () => {
    const bId = idOf(B);
    await B.stop();
    const facts = await nodeFactsUntil(bId, (fs) => fs.length >= 2, 'B left');
    expect(brief(facts)[1]).toEqual({ seq: 2, type: 'node.left', node: bId, data: { reason: 'stopped' } });
    // Started again: it joins as #3, so nothing was appended for it in between.
    await B.start();
    const again = await nodeFactsUntil(bId, (fs) => fs.length >= 3, 'B joined again');
    expect(brief(again).map((f) => [f.seq, f.type])).toEqual([[1, 'node.joined'], [2, 'node.left'], [3, 'node.joined']]);
  });
});

describe('the log of all this', () => {
  it('validates every fact against its schema', async () => {
    const invalid = (await allFacts()).map(({ streamSeq: _s, ...f }) => ({ type: f.type, errors: validateFact(f) })).filter((x) => x.errors.length);
    expect(invalid).toEqual([]);
  });

  it('replays without divergence, with a row and a timeline per node, and the owner node of each context', async () => {
    const out = await replayLog(factSource({ nc }, {}), { timeline: true });
    expect(out.divergences).toEqual([]);
    expect(out.world.unknown).toBe(0);
    const rows = stateRows(out.world, { machines: out.actors });
    const nodeRows = rows.filter((r) => r.aggregate === 'node');
    const [aId, bId, cId] = [A, B, C].map(idOf);
    expect(Object.fromEntries(nodeRows.map((r) => [r.id, [r.status, r.fields.joins, r.machine]]))).toEqual({
      [aId]: ['joined', 1, undefined],
      [bId]: ['joined', 2, undefined],
      [cId]: ['joined', 2, undefined],
    });
    const cTimeline = out.actors.find((a) => a.aggregate === 'node' && a.id === cId)!.timeline!;
    expect(cTimeline.map((s) => [s.type, s.state])).toEqual([['node.joined', 'joined'], ['node.left', 'left'], ['node.joined', 'joined']]);
    expect(cTimeline[1].detail).toMatch(new RegExp(`^reason=timed_out by=(${aId}|${bId}) silent=\\d+\\.\\ds$`));
    const scrollRow = rows.find((r) => r.aggregate === 'scroll' && r.status === 'cleared')!;
    expect([aId, bId]).toContain(scrollRow.fields.node);
    const scrollTimeline = out.actors.find((a) => a.aggregate === 'scroll' && a.id === scrollRow.id)!.timeline!;
    expect(scrollTimeline.map((s) => s.type)).toEqual(expect.arrayContaining(['scroll.opened', 'scroll.adopted', 'scroll.cleared']));
    expect(scrollTimeline.find((s) => s.type === 'scroll.adopted')!.detail).toBe(`from=${cId} to=${scrollRow.fields.node}`);
  });

  it('shows the node facts through npm run replay and npm run events (filtered by aggregate node)', async () => {
    const env = { NATS_URL: c.nats.url }; // every server, as `npm run cluster` prints it
    const cId = idOf(C);
    const r = await runCli('replay', ['node'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`node ${cId}`);
    expect(r.stdout).toMatch(new RegExp(`#2 +node\\.left +-> left  reason=timed_out by=\\S+ silent=`));
    expect(r.stdout).toMatch(new RegExp(`node +${cId}  joined +name=node-2 http=127\\.0\\.0\\.1:\\d+ version=\\S+ joins=2`));
    expect(r.stdout).toContain('== divergences (0) ==');

    const whole = await runCli('replay', [], env);
    expect(whole.code).toBe(0);
    expect(whole.stdout).toMatch(/scroll +\S+  cleared .* node=\S+/);

    const tail = await tailLines(['tail', 'node', '--all'], env, (ls) => ls.some((l) => l.includes(' node.joined ') && l.includes(cId) && l.includes('#3')));
    const left = tail.find((l) => l.includes(' node.left ') && l.includes(cId))!;
    expect(left).toMatch(new RegExp(`^\\S+Z  node\\.left +${cId}  #2  node=(\\S+) reason=timed_out by=\\1 silent=\\d+\\.\\ds$`));
    expect(tail.find((l) => l.includes(' node.joined ') && l.includes(cId) && l.includes('#3'))).toContain(`node=${cId} name=node-2 http=127.0.0.1:`);
    expect(tail.every((l) => / node\.(joined|left) /.test(l))).toBe(true);

    const adopted = await tailLines(['tail', '*.*.adopted', '--all'], env, (ls) => ls.some((l) => l.includes('scroll.adopted')));
    expect(adopted.find((l) => l.includes('scroll.adopted'))).toMatch(new RegExp(`#\\d+  node=(\\S+) from=${cId} to=\\1$`));
  });
});

describe('a lease holder paused and taken for gone', () => {
  let p: TestCluster;
  let pnc: NatsConnection;
  beforeAll(async () => {
    // Process nodes, so one can be paused for real (SIGSTOP): its heartbeats stop, its connection stays.
    p = await startTestCluster({ nodes: 2, process: true });
    pnc = await connect({ servers: p.nats.url.split(',') });
  }, 180_000);
  afterAll(async () => {
    p?.nodes[0].proc?.kill('SIGCONT');
    await pnc?.close();
    await p?.stop();
  }, 120_000);

  const factsOf = async (id: string) => {
    const out: Fact[] = [];
    for await (const f of readFacts(pnc, { filterSubject: `es.v1.evt.node.${id}.>` })) out.push(f);
    return out;
  };
  const holder = async (n: ClusterNode) => ((await n.es.cluster.state({ metric: 'master_node' })) as { master_node?: string }).master_node;

  it('is recorded timed out by the next holder, joins again when it resumes, and records no false leave for the others', async () => {
    const [n0, n1] = p.nodes;
    const [id0, id1] = [idOf(n0), idOf(n1)];
    await until(async () => (await factsOf(id1)).length === 1 && (await factsOf(id0)).length === 1, 20_000, 'both joined');
    expect(await holder(n1)).toBe(id0); // the first node holds the allocator lease
    n0.proc!.kill('SIGSTOP');
    try {
      // Node 1 takes the lease once it ages out, and records node 0 as gone.
      const left = await until(async () => {
        const fs = await factsOf(id0);
        return fs.length >= 2 && fs;
      }, 30_000, 'node 0 recorded as gone');
      expect(left[1]).toMatchObject({ seq: 2, type: 'node.left', data: { reason: 'timed_out', by: id1 }, node: id1 });
    } finally {
      n0.proc!.kill('SIGCONT');
    }
    // Resumed, node 0 reads the `left` recorded for it and joins again.
    const back = await until(async () => {
      const fs = await factsOf(id0);
      return fs.length >= 3 && fs;
    }, 30_000, 'node 0 joined again');
    expect(brief(back).map((f) => [f.seq, f.type, f.node])).toEqual([[1, 'node.joined', id0], [2, 'node.left', id1], [3, 'node.joined', id0]]);
    // On waking, node 0's membership takes node 1 for gone (no heartbeat heard for the whole pause)
    // while it may still believe it holds the lease: it must not record that. It waits one node
    // timeout (2 s) of steady listening; give it that and some heartbeats more, then look.
    const backAt = Date.now();
    await until(() => Date.now() - backAt > 3_000, 5_000, 'a node timeout after the rejoin');
    expect(brief(await factsOf(id1)).map((f) => [f.seq, f.type])).toEqual([[1, 'node.joined']]);
    expect(await factsOf(id0)).toHaveLength(3);
  });
});
