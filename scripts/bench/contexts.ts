/**
 * Issue 12, scroll and PIT contexts across nodes: side by side in one run, on one deployment of two
 * node processes (A and B) on a 3-server NATS cluster on loopback (clusterDeploy.ts), an index of
 * 2 shards with 1 replica so that each node holds a full copy:
 *
 * - sliced scroll with max 2, served by 2 nodes vs 1: two child loaders each walk one slice to the
 *   end with the scroll API; config `one`: both slices opened and paged through A; config `two`:
 *   slice 0 through A, slice 1 through B. Interleaved rounds (the order alternates), paired medians
 *   of docs/s, with the CPU each node process, the nats-servers, the loaders and the whole machine
 *   spent meanwhile (from /proc), which tells a slower setup from a starved one: on a 2-core machine
 *   both nodes, the nats-servers and the loaders share the same two cores with any other work.
 * - a scroll page served by a non-owner vs the owner: scrolls opened through A, next pages fetched
 *   through B vs through A (one request in flight, size 1,000), interleaved rounds, paired medians.
 * - owner death to the first page by the adopter: a small index; N scrolls opened through A (their
 *   owner), A's process killed with SIGKILL, and a continuation of one of those scrolls sent through
 *   B every 50 ms (each time one with no request in flight); the figure is the first 200, and the
 *   polling goes on until all N were continued. Every page so served is checked to be the next one
 *   (full, none of its documents on the first page). A is restarted between rounds.
 *
 * Targets (informative): 2 nodes ≥ 1.25× one node's sliced scroll rate; non-owner page ≤ 1.1× the
 * owner's; owner death to the adopter's first page ≤ 5 s.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, startDeployment, type BenchNode, type Deployment } from './clusterDeploy';
import { onAbort } from './cleanup';
import { portOf, runLoader, scrollAll, scrollPages } from './load';
import { median, pairedRatio, percentile, row } from './stats';
import type { BenchOptions, Row } from './types';

const S = 'contexts';
const MAPPINGS = { properties: { id: { type: 'long' }, n: { type: 'long' }, ts: { type: 'date' }, tag: { type: 'keyword' }, title: { type: 'text' } } };
const BIG = 'paging';
const SMALL = 'adopt';
/** Page size of the scrolls opened before the owner dies. */
const PAGE = 100;

type Bulk = { docs: number; ms: number; bytes: number; errorBatches: number };

let ticks: number | undefined;
/** Clock ticks per second of /proc times. */
const clk = () => (ticks ??= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100);

/** CPU ms of this process's children that have exited (the loaders, once done): cutime + cstime. */
function reapedChildrenCpuMs(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from 3 (state) on
    return ((Number(f[13]) + Number(f[14])) / clk()) * 1000; // cutime (16), cstime (17)
  } catch {
    return 0;
  }
}

/** CPU ms the whole machine spent busy (every process, other users' work included), from /proc/stat. */
function machineBusyMs(): number {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = f;
    return ((user + nice + system + irq + softirq + (steal ?? 0)) / clk()) * 1000;
  } catch {
    return 0;
  }
}

/** Two loaders, each half of `docs`, one per node; then a refresh. */
async function ingest(d: Deployment, index: string, docs: number): Promise<void> {
  const half = Math.floor(docs / 2);
  const got = await Promise.all(
    d.nodes.slice(0, 2).map((n, k) => runLoader<Bulk>({ mode: 'bulk', port: portOf(n.url), index, from: k * half, docs: k ? docs - half : half, batch: 5000, conc: 2, seed: 42 + k })),
  );
  const bad = got.reduce((a, g) => a + g.errorBatches, 0);
  if (bad) throw new Error(`${index}: ${bad} bulk batches had item errors`);
  await call(d.nodes[0].url, 'POST', `/${index}/_refresh`);
}

/** Cores used while the slices ran (CPU ms / wall ms), by whom. */
interface Cores {
  a: number;
  b: number;
  nats: number;
  loaders: number;
  /** The whole machine, other work included. */
  machine: number;
}
interface Sliced {
  rate: number;
  cores: Cores;
}

/** Both slices of max 2 walked at once by two loaders, slice `k` opened and paged through `via[k]`. */
async function sliced(d: Deployment, index: string, docs: number, via: [BenchNode, BenchNode]): Promise<Sliced> {
  const [a, b] = d.nodes;
  const cpu = () => ({ a: a.cpuMs(), b: b.cpuMs(), all: d.cpuMs(), loaders: reapedChildrenCpuMs(), machine: machineBusyMs() });
  const c0 = cpu();
  const t0 = performance.now();
  const got = await Promise.all(via.map((n, id) => scrollAll(portOf(n.url), { index, size: 1000, max: 2, sliceIds: [id], keepAlive: '1m' })));
  const wall = performance.now() - t0;
  const c1 = cpu();
  const walked = got.reduce((s, g) => s + g.docs, 0);
  if (walked !== docs) throw new Error(`sliced scroll (max 2) returned ${walked} documents, expected ${docs}`);
  const per = (x: number) => x / wall;
  return {
    rate: (docs / Math.max(...got.map((g) => g.ms))) * 1000,
    cores: {
      a: per(c1.a - c0.a),
      b: per(c1.b - c0.b),
      nats: per(c1.all - c0.all - (c1.a - c0.a) - (c1.b - c0.b)),
      loaders: per(c1.loaders - c0.loaders),
      machine: per(c1.machine - c0.machine),
    },
  };
}

/** `node A 0.64, node B 0.06, …` of the per-round medians. */
function coresText(all: Cores[]): string {
  const m = (k: keyof Cores) => median(all.map((c) => c[k])).toFixed(2);
  return `node A ${m('a')}, node B ${m('b')}, 3 nats-servers ${m('nats')}, 2 loaders ${m('loaders')}; whole machine busy ${m('machine')} of 2`;
}

interface Adoption {
  /** Kill -> the first continuation through B that answered 200 (a full next page). */
  firstMs: number;
  /** Kill -> every one of the N scrolls continued through B. */
  allMs: number;
  /** Continuations answered otherwise before that (status -> count; `error`: no answer). */
  refused: Record<string, number>;
}

type Page = { _scroll_id: string; hits: { hits: Array<{ _id: string }> } };

/**
 * Opens `n` scrolls through `a` (their owner), kills `a` with SIGKILL and continues them through
 * `b`: every 50 ms one whose continuation is not in flight is sent, until each answered 200 (or
 * 60 s passed). Every page served must be the next one: `PAGE` hits, none of them on the first.
 */
async function ownerDeath(a: BenchNode, b: BenchNode, n: number): Promise<Adoption> {
  const ids: string[] = [];
  const first: Array<Set<string>> = [];
  for (let i = 0; i < n; i++) {
    const p = await call<Page>(a.url, 'POST', `/${SMALL}/_search?scroll=5m`, { size: PAGE, sort: ['_doc'] });
    ids.push(p._scroll_id);
    first.push(new Set(p.hits.hits.map((h) => h._id)));
  }
  const abort = new AbortController();
  const served = new Map<number, number>();
  const busy = new Set<number>();
  const pending = new Set<Promise<void>>();
  const refused: Record<string, number> = {};
  let broken: string | undefined;
  let next = 0;
  const send = (i: number, t0: number) => {
    busy.add(i);
    const p = fetch(`${b.url}/_search/scroll`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ scroll: '5m', scroll_id: ids[i] }),
      signal: abort.signal,
    })
      .then(async (r) => {
        const text = await r.text();
        if (r.status !== 200) return void (refused[r.status] = (refused[r.status] ?? 0) + 1);
        const page = JSON.parse(text) as Page;
        const repeated = page.hits.hits.filter((h) => first[i].has(h._id)).length;
        if (page.hits.hits.length !== PAGE || repeated) broken ??= `scroll ${i} continued through ${b.name}: ${page.hits.hits.length} hits, ${repeated} of them already on its first page`;
        ids[i] = page._scroll_id ?? ids[i];
        served.set(i, performance.now() - t0);
      })
      .catch(() => void (abort.signal.aborted || (refused.error = (refused.error ?? 0) + 1)))
      .finally(() => busy.delete(i));
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };
  const t0 = performance.now();
  const killed = a.kill();
  while (served.size < n && performance.now() - t0 < 60_000) {
    for (let k = 0; k < n; k++) {
      const i = (next + k) % n;
      if (busy.has(i) || served.has(i)) continue;
      next = i + 1;
      send(i, t0);
      break;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  await killed;
  abort.abort();
  await Promise.allSettled([...pending]);
  // Tidy up what B now owns (best effort: the keep-alive would end them anyway).
  await call(b.url, 'DELETE', '/_search/scroll', { scroll_id: ids }).catch(() => undefined);
  if (broken) throw new Error(broken);
  if (served.size < n) throw new Error(`only ${served.size} of ${n} scrolls were continued through ${b.name} within 60 s of killing ${a.name} (${JSON.stringify(refused)})`);
  const times = [...served.values()];
  return { firstMs: Math.min(...times), allMs: Math.max(...times), refused };
}

export async function run(o: BenchOptions): Promise<Row[]> {
  const rows: Row[] = [];
  const root = await mkdtemp(join(tmpdir(), 'bench-contexts-'));
  const offRoot = onAbort(() => rm(root, { recursive: true, force: true }));
  let d: Deployment | undefined;
  try {
    o.note('contexts: a deployment of 2 nodes (A, B) on a 3-server NATS cluster ...');
    d = await startDeployment({ root, name: 'ctx', nodes: 2, replicas: 1 });
    const [a, b] = d.nodes;

    // ---- sliced scroll, max 2: both slices through A vs one slice through each node ----
    const docs = o.quick ? 500_000 : 1_000_000; // a slice takes ~1–3 s to walk
    o.note(`contexts: index [${BIG}] of ${docs.toLocaleString('en-US')} docs (2 shards, 1 replica: a full copy on each node) ...`);
    await call(a.url, 'PUT', `/${BIG}`, { settings: { number_of_shards: 2, number_of_replicas: 1 }, mappings: MAPPINGS });
    await d.health('green', 2, 180);
    await ingest(d, BIG, docs);
    await d.health('green', 2, 180);
    const configs = { one: [a, a] as [BenchNode, BenchNode], two: [a, b] as [BenchNode, BenchNode] };
    o.note('contexts: sliced scroll warm-up (one walk each way) ...');
    for (const via of Object.values(configs)) await sliced(d, BIG, docs, via);
    const got: Record<keyof typeof configs, Sliced[]> = { one: [], two: [] };
    o.note(`contexts: sliced scroll, ${o.rounds} interleaved rounds ...`);
    for (let r = 0; r < o.rounds; r++) {
      for (const name of r % 2 ? (['two', 'one'] as const) : (['one', 'two'] as const)) got[name].push(await sliced(d, BIG, docs, configs[name]));
    }
    const rate = (k: keyof typeof configs) => got[k].map((g) => g.rate);
    const used = (k: keyof typeof configs) => median(got[k].map((g) => g.cores.a + g.cores.b + g.cores.nats + g.cores.loaders));
    rows.push(
      row(S, `sliced scroll max 2, size 1000, both slices opened and paged through A (${docs.toLocaleString('en-US')} docs; 2 loaders)`, median(rate('one')), 'docs/s'),
      row(S, 'sliced scroll max 2, slice 0 through A, slice 1 through B', median(rate('two')), 'docs/s'),
      row(S, 'sliced scroll served by 2 nodes / by 1 node (both nodes, 3 nats-servers and both loaders share this machine\'s 2 cores: see CPU below)', pairedRatio(rate('two'), rate('one')), 'ratio', { min: 1.25 }),
      row(S, `CPU used by nodes + nats-servers + loaders, both slices through A (${coresText(got.one.map((g) => g.cores))})`, used('one'), 'cores'),
      row(S, `CPU used by nodes + nats-servers + loaders, one slice through each node (${coresText(got.two.map((g) => g.cores))})`, used('two'), 'cores'),
    );
    o.note(`contexts: load average now ${loadavg().map((x) => x.toFixed(1)).join(' ')} on this machine`);

    // ---- a next page through a non-owner vs through the owner ----
    const pages = o.quick ? 60 : 150;
    const pageMs: Record<'owner' | 'other', number[]> = { owner: [], other: [] };
    const all: Record<'owner' | 'other', number[]> = { owner: [], other: [] };
    // CPU per page of both nodes and the nats-servers together (steadier than latency on a busy machine)
    const cpuPerPage: Record<'owner' | 'other', number[]> = { owner: [], other: [] };
    o.note(`contexts: scroll next page through B (non-owner) vs A (owner), ${o.rounds} interleaved rounds of ${pages} pages ...`);
    await scrollPages(a.port, { index: BIG, size: 1000, pages: 10, pagePort: b.port }); // warm-up
    for (let r = 0; r < o.rounds; r++) {
      for (const name of r % 2 ? (['other', 'owner'] as const) : (['owner', 'other'] as const)) {
        const cpu0 = d.cpuMs();
        const ms = (await scrollPages(a.port, { index: BIG, size: 1000, pages, pagePort: name === 'owner' ? a.port : b.port })).ms;
        cpuPerPage[name].push(((d.cpuMs() - cpu0) * 1000) / pages); // the scroll's open and clear included
        pageMs[name].push(median(ms));
        all[name].push(...ms);
      }
    }
    rows.push(
      row(S, 'scroll next page p50, size 1000, opened through A, continued through A (owner)', median(all.owner), 'ms'),
      row(S, 'scroll next page p50, same, continued through B (not the owner: use/done commands to A)', median(all.other), 'ms'),
      row(S, 'scroll next page p99 through A (owner)', percentile(all.owner, 99), 'ms'),
      row(S, 'scroll next page p99 through B', percentile(all.other, 99), 'ms'),
      // The owner logs a page's `extended` fact while its search runs; a non-owner first asks the owner
      // (`use`, answered once that fact is acknowledged by JetStream) and only then searches.
      // The non-owner tells the owner of the use while it searches (the owner answers at once unless the
      // use logged a keep-alive), and waits for that answer before it answers the page.
      row(S, 'scroll next page, non-owner / owner (paired round medians)', pairedRatio(pageMs.other, pageMs.owner), 'ratio', { max: 1.1 }),
      row(S, 'CPU per page of both nodes and the nats-servers, through A (owner)', median(cpuPerPage.owner), 'µs'),
      row(S, 'CPU per page of both nodes and the nats-servers, through B (non-owner)', median(cpuPerPage.other), 'µs'),
      row(S, 'CPU per page, non-owner / owner (paired rounds)', pairedRatio(cpuPerPage.other, cpuPerPage.owner), 'ratio'),
    );
    await call(a.url, 'DELETE', `/${BIG}`);

    // ---- owner death -> the first page served by the adopter ----
    const n = 10;
    const rounds = o.quick ? Math.min(o.rounds, 3) : Math.min(o.rounds, 5);
    await call(a.url, 'PUT', `/${SMALL}`, { settings: { number_of_shards: 2, number_of_replicas: 1 }, mappings: MAPPINGS });
    await d.health('green', 2, 180);
    await ingest(d, SMALL, 2_000);
    await d.health('green', 2, 180);
    const adoption: Adoption[] = [];
    for (let r = 0; r < rounds; r++) {
      o.note(`contexts: round ${r + 1}/${rounds}: ${n} scrolls opened through ${a.name}, SIGKILL to it, continued through ${b.name} ...`);
      adoption.push(await ownerDeath(a, b, n));
      if (r === rounds - 1) break;
      // A back (on its data) for the next round; its contexts now belong to B.
      await a.start();
      await d.health('green', 2, 180);
    }
    const refused = adoption.map((x) => Object.entries(x.refused).map(([k, v]) => `${v}× ${k}`).join(', ') || 'none').join('; ');
    rows.push(
      row(S, `owner SIGKILLed -> first scroll page served by another node (median of ${rounds}; ${n} scrolls, one continuation sent every 50 ms; the owner's silence is the 2 s command timeout, then a ping and the adoption)`, median(adoption.map((x) => x.firstMs)), 'ms', { max: 5000 }),
      row(S, `owner SIGKILLed -> all ${n} scrolls continued through the other node (median)`, median(adoption.map((x) => x.allMs)), 'ms'),
      row(S, `continuations refused before that, per round (${refused})`, median(adoption.map((x) => Object.values(x.refused).reduce((s, v) => s + v, 0))), 'requests'),
    );
  } catch (e) {
    for (const r of rows) o.note(`measured before the failure: ${r.metric} = ${r.value} ${r.unit}`);
    throw e;
  } finally {
    await d?.stop().catch(() => undefined);
    offRoot();
    await rm(root, { recursive: true, force: true });
  }
  return rows;
}
