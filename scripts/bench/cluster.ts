/**
 * Issue 11, a cluster of nodes: side by side in one run, on three deployments that live together
 * (each a 3-server NATS cluster on loopback with its own node processes, clusterDeploy.ts):
 *
 * - `one`: 1 node, streams R1;  `two`: 2 nodes, streams R1;  `r3`: 1 node, streams R3.
 * - bulk ingest (an index of 4 shards, no replicas): `two` / `one` (2 nodes vs 1 on the same kind of
 *   NATS) and `r3` / `one` (R3 vs R1 streams), interleaved rounds, paired medians. The load always
 *   comes from two child loaders (each half the documents): on `one` and `r3` both send to the one
 *   node, on `two` each sends to its own node, so the client side costs the same everywhere.
 * - search rate (`match` top 10, an index of 3 shards with 1 replica): `two` / `one`, again from two
 *   child loaders with 8 connections each; with the CPU time the deployment's processes (nodes and
 *   nats-servers, from /proc) spent per search, which tells a slower cluster from a starved one.
 * - failover on `two`: an index of 1 shard and 1 replica; the node holding the primary is killed with
 *   SIGKILL while writers keep writing through the other node; the figure is the time from the kill to
 *   the first acknowledged write sent after it (nodes leave after `cluster.node_timeout_ms`, 5 s).
 *
 * Targets (informative): R3 ingest ≥ 0.6× R1; 2 nodes ≥ 1.25× one node's search rate.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, startDeployment, type Deployment } from './clusterDeploy';
import { onAbort } from './cleanup';
import { httpRate, portOf, runLoader } from './load';
import { median, pairedRatio, row } from './stats';
import type { BenchOptions, Row } from './types';

const S = 'cluster';
const MAPPINGS = { properties: { id: { type: 'long' }, n: { type: 'long' }, ts: { type: 'date' }, tag: { type: 'keyword' }, title: { type: 'text' } } };
const QUERY = JSON.stringify({ query: { match: { title: 'alpha bravo' } }, size: 10 });

type Bulk = { docs: number; ms: number; bytes: number; errorBatches: number };

/** Two loaders, each half of `docs` (ids from `from`), to the deployment's first two nodes (or twice its one node). */
async function ingest(d: Deployment, index: string, from: number, docs: number): Promise<number> {
  const half = Math.floor(docs / 2);
  const targets = [d.nodes[0], d.nodes[1] ?? d.nodes[0]];
  const got = await Promise.all(
    targets.map((n, k) => runLoader<Bulk>({ mode: 'bulk', port: portOf(n.url), index, from: from + k * half, docs: k ? docs - half : half, batch: 5000, conc: 2, seed: 42 + k })),
  );
  const bad = got.reduce((a, g) => a + g.errorBatches, 0);
  if (bad) throw new Error(`${d.name}: ${bad} bulk batches had item errors`);
  return (docs / Math.max(...got.map((g) => g.ms))) * 1000;
}

/**
 * Search requests/s from two loaders of 8 connections, to the first two nodes (or twice the one
 * node), and the CPU ms its nodes and nats-servers spent per search meanwhile.
 */
async function searchRate(d: Deployment, index: string, seconds: number): Promise<{ rate: number; cpuPerReq: number }> {
  const targets = [d.nodes[0], d.nodes[1] ?? d.nodes[0]];
  const cpu0 = d.cpuMs();
  const got = await Promise.all(targets.map((n) => httpRate(portOf(n.url), { method: 'POST', path: `/${index}/_search`, body: QUERY, seconds, conc: 8 })));
  const cpu = d.cpuMs() - cpu0;
  const bad = got.reduce((a, g) => a + g.bad, 0);
  if (bad) throw new Error(`${d.name}: ${bad} searches did not answer 200`);
  const n = got.reduce((a, g) => a + g.n, 0);
  return { rate: n / (Math.max(...got.map((g) => g.ms)) / 1000), cpuPerReq: cpu / n };
}

interface Failover {
  /** Kill -> first acknowledged write among those sent after the kill. */
  ms: number;
  /** Writes sent after the kill that failed before that first acknowledgement. */
  failed: number;
  /** Writes in flight at the kill: how many were acknowledged, failed, or still unanswered after 30 s; the slowest's time. */
  inFlight: { n: number; acked: number; failed: number; unanswered: number; slowestMs: number };
}

/**
 * Kills the node holding the primary of `index` (1 shard) with SIGKILL while a write goes to the
 * other node every 25 ms whatever the earlier ones do (an open loop, so a write stuck on the dead
 * primary delays nothing), and times the first write sent after the kill that is acknowledged.
 * Four writes are sent 3 ms before the kill; the writes in flight at the kill are followed for up
 * to 30 s more, then abandoned.
 */
async function failover(d: Deployment, index: string, note: (l: string) => void): Promise<Failover> {
  const shards = await call<Array<{ prirep: string; node: string | null; state: string }>>(d.nodes[0].url, 'GET', `/_cat/shards/${index}?format=json`);
  const holder = shards.find((s) => s.prirep === 'p' && s.state === 'STARTED')?.node;
  const victim = d.nodes.find((n) => n.name === holder);
  const survivor = d.nodes.find((n) => n !== victim);
  if (!victim || !survivor) throw new Error(`${d.name}: no started primary of [${index}] on a bench node: ${JSON.stringify(shards)}`);
  const abort = new AbortController();
  let seq = 0;
  let killedAt = Infinity;
  let firstAck: number | undefined;
  let failed = 0;
  let warm = 0;
  let broken: string | undefined;
  const inFlight: Array<Promise<{ ok: boolean; ms: number }>> = [];
  const pending = new Set<Promise<unknown>>();
  const write = () => {
    const sentAt = performance.now();
    const p = fetch(`${survivor.url}/${index}/_doc/w${seq++}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{"title":"failover write"}',
      signal: abort.signal,
    })
      .then(async (r) => (await r.arrayBuffer(), r.ok), () => false)
      .then((ok) => {
        const at = performance.now();
        if (ok && sentAt >= killedAt) firstAck ??= at;
        else if (ok) warm++;
        else if (sentAt >= killedAt) failed += firstAck === undefined ? 1 : 0;
        else if (killedAt === Infinity && !abort.signal.aborted) broken ??= 'a write failed before the kill';
        return { ok, ms: at - Math.max(sentAt, killedAt) };
      });
    pending.add(p);
    void p.finally(() => pending.delete(p));
    return p;
  };
  const tick = () => new Promise((r) => setTimeout(r, 25));
  const deadline = Date.now() + 60_000;
  while (warm < 20 && !broken && Date.now() < deadline) {
    write();
    await tick();
  }
  if (broken || warm < 20) {
    abort.abort();
    throw new Error(`${d.name}: ${broken ?? 'writes were not acknowledged before the kill'}`);
  }
  note(`cluster: SIGKILL to ${victim.name} (primary of [${index}]) while a write goes through ${survivor.name} every 25 ms ...`);
  // A few writes on their way to the primary when it dies (what a client in the middle of a bulk sees).
  for (let i = 0; i < 4; i++) write();
  await new Promise((r) => setTimeout(r, 3));
  inFlight.push(...([...pending] as Array<Promise<{ ok: boolean; ms: number }>>));
  killedAt = performance.now();
  await victim.kill();
  while (firstAck === undefined && performance.now() - killedAt < 120_000) {
    write();
    await tick();
  }
  // The writes in flight at the kill: how long they take to end (a 503 or a late acknowledgement).
  let capTimer: NodeJS.Timeout | undefined;
  const cap = new Promise<'cap'>((r) => (capTimer = setTimeout(() => r('cap'), 30_000)));
  const ended = await Promise.all(inFlight.map((p) => Promise.race([p, cap])));
  clearTimeout(capTimer);
  abort.abort();
  await Promise.allSettled([...pending]);
  if (firstAck === undefined) throw new Error(`${d.name}: no write was acknowledged within 120 s of the kill (${failed} failed)`);
  const result: Failover = {
    ms: firstAck - killedAt,
    failed,
    // Infinity: one was still running when the follow-up ended (30 s).
    inFlight: {
      n: inFlight.length,
      acked: ended.filter((e) => e !== 'cap' && e.ok).length,
      failed: ended.filter((e) => e !== 'cap' && !e.ok).length,
      unanswered: ended.filter((e) => e === 'cap').length,
      slowestMs: Math.max(0, ...ended.map((e) => (e === 'cap' ? Infinity : e.ms))),
    },
  };
  // Back to two nodes for the next round.
  await victim.start();
  await d.health('green', d.nodes.length, 180);
  return result;
}

export async function run(o: BenchOptions): Promise<Row[]> {
  const rows: Row[] = [];
  const root = await mkdtemp(join(tmpdir(), 'bench-cluster-'));
  const offRoot = onAbort(() => rm(root, { recursive: true, force: true }));
  const deps: Deployment[] = [];
  try {
    o.note('cluster: three deployments, each a 3-server NATS cluster: one (1 node, R1), two (2 nodes, R1), r3 (1 node, R3) ...');
    const started = await Promise.allSettled([
      startDeployment({ root, name: 'one', nodes: 1, replicas: 1 }),
      startDeployment({ root, name: 'two', nodes: 2, replicas: 1 }),
      startDeployment({ root, name: 'r3', nodes: 1, replicas: 3 }),
    ]);
    for (const s of started) if (s.status === 'fulfilled') deps.push(s.value);
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    const [one, two, r3] = deps;

    // ---- bulk ingest, interleaved rounds (the order rotates so no setup always goes first) ----
    const chunk = Math.max(10_000, Math.min(o.quick ? 20_000 : 50_000, Math.floor(o.docs / 5)));
    const setups = { one, two, r3 } as const;
    for (const d of deps) await call(d.nodes[0].url, 'PUT', '/ingest', { settings: { number_of_shards: 4, number_of_replicas: 0 }, mappings: MAPPINGS });
    for (const d of deps) await d.health('green');
    const rates: Record<keyof typeof setups, number[]> = { one: [], two: [], r3: [] };
    const order = Object.keys(setups) as Array<keyof typeof setups>;
    o.note(`cluster: bulk ingest, ${o.rounds} rounds of ${chunk.toLocaleString('en-US')} docs on each deployment ...`);
    for (let r = 0; r < o.rounds; r++) {
      for (let k = 0; k < order.length; k++) {
        const name = order[(r + k) % order.length];
        rates[name].push(await ingest(setups[name], 'ingest', r * chunk, chunk));
      }
    }
    rows.push(
      row(S, 'bulk ingest, 1 node, R1 streams (4 shards, 0 replicas; 2 loaders)', median(rates.one), 'docs/s'),
      row(S, 'bulk ingest, 2 nodes, R1 streams (one loader per node)', median(rates.two), 'docs/s'),
      row(S, 'bulk ingest, 1 node, R3 streams', median(rates.r3), 'docs/s'),
      row(S, 'bulk ingest 2 nodes / 1 node', pairedRatio(rates.two, rates.one), 'ratio'),
      row(S, 'bulk ingest R3 / R1 streams', pairedRatio(rates.r3, rates.one), 'ratio', { min: 0.6 }),
    );
    await Promise.all([one, two].map((d) => call(d.nodes[0].url, 'DELETE', '/ingest')));
    await r3.stop();
    deps.splice(deps.indexOf(r3), 1);

    // ---- search rate: 2 nodes serving vs 1 ----
    const searchDocs = Math.max(10_000, Math.min(o.docs, o.quick ? 50_000 : 200_000));
    o.note(`cluster: search index of ${searchDocs.toLocaleString('en-US')} docs (3 shards, 1 replica) on one and two ...`);
    for (const d of [one, two]) {
      await call(d.nodes[0].url, 'PUT', '/search', { settings: { number_of_shards: 3, number_of_replicas: 1 }, mappings: MAPPINGS });
      await ingest(d, 'search', 0, searchDocs);
      await call(d.nodes[0].url, 'POST', '/search/_refresh');
    }
    await one.health('yellow');
    await two.health('green', 2, 180);
    const seconds = o.quick ? 3 : 5;
    const search: Record<'one' | 'two', number[]> = { one: [], two: [] };
    const cpu: Record<'one' | 'two', number[]> = { one: [], two: [] };
    o.note(`cluster: search rate, ${o.rounds} interleaved rounds of ${seconds} s ...`);
    await searchRate(one, 'search', 1); // warm-up
    await searchRate(two, 'search', 1);
    for (let r = 0; r < o.rounds; r++) {
      for (const name of r % 2 ? (['two', 'one'] as const) : (['one', 'two'] as const)) {
        const got = await searchRate(name === 'one' ? one : two, 'search', seconds);
        search[name].push(got.rate);
        cpu[name].push(got.cpuPerReq);
      }
    }
    rows.push(
      row(S, 'search rate, match top-10, 1 node (2 loaders x 8 connections)', median(search.one), 'req/s'),
      row(S, 'search rate, 2 nodes serving (one loader per node)', median(search.two), 'req/s'),
      row(S, 'search rate 2 nodes / 1 node', pairedRatio(search.two, search.one), 'ratio', { min: 1.25 }),
      row(S, 'CPU per search (nodes + nats-servers), 1 node', median(cpu.one), 'ms'),
      row(S, 'CPU per search (nodes + nats-servers), 2 nodes', median(cpu.two), 'ms'),
      row(S, 'CPU used by the deployment while searching, 1 node', (median(cpu.one) * median(search.one)) / 1000, 'cores'),
      row(S, 'CPU used by the deployment while searching, 2 nodes', (median(cpu.two) * median(search.two)) / 1000, 'cores'),
    );
    await one.stop();
    deps.splice(deps.indexOf(one), 1);

    // ---- failover on two: primary's node killed -> first acknowledged write ----
    await call(two.nodes[0].url, 'PUT', '/failover', { settings: { number_of_shards: 1, number_of_replicas: 1 } });
    await two.health('green', 2, 180);
    const fo: Failover[] = [];
    for (let r = 0; r < (o.quick ? 1 : 3); r++) fo.push(await failover(two, 'failover', o.note));
    const slowest = Math.max(...fo.map((f) => f.inFlight.slowestMs));
    rows.push(
      row(S, `failover: primary's node SIGKILLed -> first acknowledged write sent after it (median of ${fo.length}; node_timeout_ms 5000)`, median(fo.map((f) => f.ms)), 'ms'),
      row(S, 'failover: writes sent after the kill that failed before that (one every 25 ms, median)', median(fo.map((f) => f.failed)), 'requests'),
      row(
        S,
        `failover: writes in flight at the kill (${fo.map((f) => `${f.inFlight.n}: ${f.inFlight.acked} acknowledged, ${f.inFlight.failed} failed, ${f.inFlight.unanswered} unanswered after 30 s`).join('; ')}): the slowest took`,
        Number.isFinite(slowest) ? slowest : 30_000,
        Number.isFinite(slowest) ? 'ms' : 'ms (≥, cut)',
      ),
    );
  } catch (e) {
    for (const r of rows) o.note(`measured before the failure: ${r.metric} = ${r.value} ${r.unit}`);
    throw e;
  } finally {
    for (const d of deps.reverse()) await d.stop().catch(() => undefined);
    offRoot();
    await rm(root, { recursive: true, force: true });
  }
  return rows;
}
