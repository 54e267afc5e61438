/**
 * Where a request's CPU goes, counted: the bench's node runs in this process, a child loader drives
 * it, and the inspector samples this process. Each workload is a pair (a baseline and the thing
 * measured against it, as in `npm run bench`), profiled in alternating rounds; the output is µs of
 * CPU per request for both and the functions and files the second spends more in.
 *
 *   npm run profile -- <pit|scroll|security|contexts> [--seconds S] [--rounds R] [--docs N] [--top N] [--out dir]
 *
 * - pit: the plain search (size 1000, sort n) vs the PIT's first page of the same search
 * - scroll: a whole `_doc` scroll walk (size 1000) vs JSON.stringify of the same pages
 * - security: a search with no security vs each credential (Basic, Bearer, ApiKey, service token)
 * - contexts: scroll open + pages + clear vs the same searches without a context
 *
 * Absolute figures swing with the machine's load; compare the two columns of one run.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { num, parseOrExit, str, UsageError } from './cli/args';
import { Corpus, MAPPINGS, call } from './bench/corpus';
import { contextCycles, httpRate, killLoaders, loadBulk, portOf, scrollAll } from './bench/load';
import { diff, profiled, top, type WorkCount } from './bench/cpuProfile';
import { startTestNode, ELASTIC_PASSWORD, type TestNode } from '../test/support/node';
import { loadavg } from 'node:os';

const USAGE = 'usage: npm run profile -- <pit|scroll|security|contexts> [--seconds S] [--rounds R] [--docs N] [--top N] [--out dir]';

interface Opts {
  seconds: number;
  rounds: number;
  docs: number;
  top: number;
  out?: string;
}
type Work = { name: string; run: () => Promise<number> };

/** Alternates the workloads for `rounds` rounds, merging each one's counts. */
async function compare(o: Opts, label: string, works: Work[]): Promise<void> {
  const merged = works.map(() => [] as WorkCount[]);
  for (let r = 0; r < o.rounds; r++) {
    for (const [i, w] of (r % 2 ? [...works.entries()].reverse() : [...works.entries()])) {
      const out = o.out ? join(o.out, `${label}-${w.name.replace(/\W+/g, '_')}-${r}.cpuprofile`) : undefined;
      merged[i].push(await profiled(w.run, out));
    }
  }
  const sum = (cs: WorkCount[]): WorkCount => {
    const add = (k: 'byFunction' | 'byFile') => {
      const m = new Map<string, number>();
      const total = cs.reduce((n, c) => n + c.requests, 0);
      for (const c of cs) for (const [f, v] of c[k]) m.set(f, (m.get(f) ?? 0) + (v * c.requests) / total);
      return m;
    };
    const total = cs.reduce((n, c) => n + c.requests, 0);
    return {
      requests: total,
      cpuUs: cs.reduce((n, c) => n + c.cpuUs * c.requests, 0) / total,
      sampledUs: cs.reduce((n, c) => n + c.sampledUs * c.requests, 0) / total,
      byFunction: add('byFunction'),
      byFile: add('byFile'),
    };
  };
  const all = merged.map(sum);
  console.log(`\n## ${label} (load ${loadavg().map((x) => x.toFixed(1)).join(' ')})`);
  for (const [i, w] of works.entries()) {
    console.log(`${w.name}: ${all[i].requests} requests, process CPU ${all[i].cpuUs.toFixed(1)} µs/request, sampled ${all[i].sampledUs.toFixed(1)} µs/request`);
  }
  const base = all[0];
  console.log(`\n${works[0].name}: top functions (self µs/request)`);
  console.log(top(base.byFunction, o.top).join('\n'));
  for (let i = 1; i < works.length; i++) {
    console.log(`\n${works[i].name}: top functions (self µs/request)`);
    console.log(top(all[i].byFunction, o.top).join('\n'));
    console.log(`\n${works[i].name} - ${works[0].name}: by file`);
    console.log(diff(base.byFile, all[i].byFile, o.top).join('\n'));
    console.log(`\n${works[i].name} - ${works[0].name}: by function`);
    console.log(diff(base.byFunction, all[i].byFunction, o.top).join('\n'));
  }
}

async function pit(o: Opts, corpus: Corpus): Promise<void> {
  const c = await corpus.get();
  const { id } = await call<{ id: string }>(c.url, 'POST', `/${c.index}/_pit?keep_alive=30m`);
  const body = (pitId?: string) => JSON.stringify({ size: 1000, ...(pitId ? { pit: { id: pitId, keep_alive: '30m' } } : {}), sort: [{ n: 'asc' }] });
  const rate = (path: string, b: string) => async () => (await httpRate(c.port, { method: 'POST', path, body: b, seconds: o.seconds, conc: 1 })).n;
  await compare(o, 'pit', [
    { name: 'plain search', run: rate(`/${c.index}/_search`, body()) },
    { name: 'PIT first page', run: rate('/_search', body(id)) },
  ]);
}

async function scroll(o: Opts, corpus: Corpus): Promise<void> {
  const c = await corpus.get();
  await call(c.url, 'PUT', '/_cluster/settings', { persistent: { 'search.max_open_scroll_context': 100_000 } });
  await compare(o, 'scroll', [
    {
      name: 'scroll walk (per page)',
      run: async () => (await scrollAll(c.port, { index: c.index, size: 1000, max: 1 })).pages,
    },
  ]);
}

async function contexts(o: Opts, corpus: Corpus): Promise<void> {
  const c = await corpus.get();
  await call(c.url, 'PUT', '/_cluster/settings', { persistent: { 'search.max_open_scroll_context': 100_000 } });
  const index = `${c.index}-1shard`;
  await call(c.url, 'PUT', `/${index}`, { settings: { number_of_shards: 1, number_of_replicas: 0 }, mappings: MAPPINGS });
  await loadBulk(c.port, { index, docs: 10_000, batch: 5000, conc: 1, refresh: true });
  const n = Math.max(50, Math.round(o.seconds * 60));
  const size = Number(process.env.SIZE ?? 100);
  const cycles = (context: boolean) => async () => (await contextCycles(c.port, { index, n, pages: 4, size, context, conc: 8 })).n * 5;
  await compare(o, 'contexts (per search: 5 per cycle)', [
    { name: 'the same searches, no context', run: cycles(false) },
    { name: 'scroll open + 4 pages + clear', run: cycles(true) },
  ]);
}

async function security(o: Opts): Promise<void> {
  const nodes: TestNode[] = [];
  try {
    nodes.push(await startTestNode({ security: false }), await startTestNode({ security: true }));
    const [open, sec] = nodes;
    const INDEX = 'profiling-bench';
    for (const t of nodes) {
      await t.es.indices.create({ index: INDEX });
      await t.es.bulk({ refresh: true, operations: Array.from({ length: 200 }, (_, i) => [{ index: { _index: INDEX, _id: String(i) } }, { title: `book ${i}`, year: 1900 + i }]).flat() });
    }
    const key = await sec.es.security.createApiKey({ name: 'bench' });
    const token = await sec.es.security.getToken({ grant_type: 'client_credentials' });
    const service = await sec.es.security.createServiceToken({ namespace: 'elastic', service: 'fleet-server', name: 'bench' });
    const auth = {
      basic: 'Basic ' + Buffer.from(`elastic:${ELASTIC_PASSWORD}`).toString('base64'),
      bearer: `Bearer ${token.access_token}`,
      apikey: `ApiKey ${key.encoded}`,
      service: `Bearer ${service.token.value}`,
    };
    const path = `/${INDEX}/_search?size=10`;
    const load = (port: number, a?: string) => async () => {
      const r = await httpRate(port, { path, auth: a, seconds: o.seconds, conc: 16 });
      if (r.bad) throw new Error(`${r.bad} of ${r.n} failed`);
      return r.n;
    };
    const which = (process.env.CRED ?? 'basic,bearer,apikey,service').split(',') as Array<keyof typeof auth>;
    await compare(o, 'security', [
      { name: 'security off', run: load(portOf(open.url)) },
      ...which.map((k) => ({ name: k, run: load(portOf(sec.url), auth[k]) })),
    ]);
  } finally {
    for (const n of nodes) await n.stop();
  }
}

async function main(): Promise<void> {
  const args = parseOrExit('profile', USAGE, process.argv.slice(2), {
    options: { seconds: { type: 'string' }, rounds: { type: 'string' }, docs: { type: 'string' }, top: { type: 'string' }, out: { type: 'string' } },
    maxPositionals: 1,
  });
  const what = args.positionals[0];
  const o: Opts = {
    seconds: num(str(args, 'seconds'), '--seconds', 3),
    rounds: num(str(args, 'rounds'), '--rounds', 2),
    docs: num(str(args, 'docs'), '--docs', 100_000),
    top: num(str(args, 'top'), '--top', 25),
    out: str(args, 'out'),
  };
  if (o.out) await mkdir(o.out, { recursive: true });
  const corpus = new Corpus(o.docs, (l) => process.stderr.write(`  · ${l}\n`));
  try {
    if (what === 'pit') await pit(o, corpus);
    else if (what === 'scroll') await scroll(o, corpus);
    else if (what === 'contexts') await contexts(o, corpus);
    else if (what === 'security') await security(o);
    else throw new UsageError(`unknown workload ${what}`);
  } finally {
    killLoaders();
    await corpus.stop();
  }
}

try {
  await main();
} catch (e) {
  if (e instanceof UsageError) process.stderr.write(`profile: ${e.message}\n${USAGE}\n`);
  else console.error(e);
  process.exitCode = 1;
}
process.exit(process.exitCode ?? 0);
