/**
 * `npx tsx scripts/breakers.ts`: issue 19's breakers "Must show". Starts a node in a child process
 * under `NODE_OPTIONS=--max-old-space-size=<heap>` (its own nats-server, a temp DATA_DIR), loads a
 * seeded corpus, then sends rounds of a `terms` aggregation of size 2,000,000 over a keyword with
 * one value per doc, a default-size `terms` over it, and 16 concurrent 10,000-hit pages with their
 * sources (scripts/breakersRun.ts). Every answer must be a 200 or an ES-shaped 4xx (400
 * `too_many_buckets_exception`, 429 `circuit_breaking_exception`, …); the node must still answer
 * afterwards, and its RSS stay under `--max-rss-mb`. Prints the answers, the node's heap and
 * breaker figures, its RSS and the machine's load; exits 1 on any failure.
 *
 *   npx tsx scripts/breakers.ts                         # 512 MB heap, 300,000 docs of ~1 KB, 3 rounds
 *   npx tsx scripts/breakers.ts --docs 300000 --heap-mb 512 --rounds 5
 */
import { readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { rssMb, serveChild, startChildNode, stopChildNode } from './cli/childNode';
import { runBreakers } from './breakersRun';
import { num, parseOrExit, str, UsageError } from './cli/args';

const USAGE = `usage: npx tsx scripts/breakers.ts [--heap-mb 512] [--docs 300000] [--doc-bytes 1024] [--pages 16]
                       [--page-size 10000] [--buckets 2000000] [--rounds 3] [--seed 1] [--max-rss-mb MB]
                       [--only terms-size,terms,page]`;

async function nodeFigures(url: string): Promise<{ heapUsed: number; heapMax: number; breakers: Record<string, { estimated_size: string; limit_size: string; tripped: number }> }> {
  const res = await fetch(`${url}/_nodes/_local/stats/jvm,breaker`, { signal: AbortSignal.timeout(30_000) });
  const node = Object.values(((await res.json()) as { nodes: Record<string, any> }).nodes)[0];
  return { heapUsed: node.jvm.mem.heap_used_in_bytes, heapMax: node.jvm.mem.heap_max_in_bytes, breakers: node.breakers };
}

async function alive(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/`, { signal: AbortSignal.timeout(30_000) })).status === 200;
  } catch {
    return false;
  }
}

const mb = (n: number) => `${Math.round(n / 1024 / 1024)} MB`;
const load = () => loadavg().map((x) => x.toFixed(2)).join(', ');

const OPTIONS = ['heap-mb', 'docs', 'doc-bytes', 'pages', 'page-size', 'buckets', 'rounds', 'seed', 'max-rss-mb', 'only'] as const;
const DEFAULTS: Record<string, number> = { 'heap-mb': 512, docs: 300_000, 'doc-bytes': 1024, pages: 16, 'page-size': 10_000, buckets: 2_000_000, rounds: 3, seed: 1 };

async function main(): Promise<number> {
  const opts = parseOrExit('breakers', USAGE, process.argv.slice(2), { options: Object.fromEntries(OPTIONS.map((o) => [o, { type: 'string' as const }])) }, (p) => {
    const out: Record<string, number> = {};
    for (const k of Object.keys(DEFAULTS)) {
      const n = num(str(p, k), `--${k}`, DEFAULTS[k]);
      if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${k} must be a whole number, got [${str(p, k)}]`);
      out[k] = n;
    }
    const only = str(p, 'only')?.split(',');
    if (only?.some((w) => !['terms-size', 'terms', 'page'].includes(w))) throw new UsageError(`--only takes terms-size, terms, page; got [${str(p, 'only')}]`);
    return { ...out, maxRss: str(p, 'max-rss-mb') === undefined ? undefined : num(str(p, 'max-rss-mb'), '--max-rss-mb', 0), only };
  });
  const num2 = (k: string) => opts[k as keyof typeof opts] as number;
  const heapMb = num2('heap-mb');
  // RSS: the heap, V8's young space and code, the response buffers (outside the heap) of 16 pages
  const maxRss = opts.maxRss ?? 2 * heapMb + 512;
  console.log(`machine load before: ${load()}`);
  const child = await startChildNode({
    script: fileURLToPath(import.meta.url),
    prefix: 'breakers-node-',
    env: { NODE_OPTIONS: `--max-old-space-size=${heapMb}`, LOG_LEVEL: 'warn' },
  });
  let failed = true; // until every check passed
  let peak = 0;
  const rssOf = () => {
    try {
      return rssMb(child.proc.pid!);
    } catch {
      return NaN; // gone
    }
  };
  const sample = () => {
    if (!child.exited()) peak = Math.max(peak, rssOf() || 0);
  };
  try {
    console.log(`node ${child.url} (pid ${child.proc.pid}, NODE_OPTIONS=--max-old-space-size=${heapMb}), RSS ${rssOf()} MB`);
    const report = await runBreakers({
      url: child.url, seed: num2('seed'), docs: num2('docs'), docBytes: num2('doc-bytes'), pages: num2('pages'), pageSize: num2('page-size'),
      buckets: num2('buckets'), rounds: num2('rounds'), log: (l) => console.log(l), tick: sample,
      ...(opts.only ? { only: opts.only as Array<'terms-size' | 'terms' | 'page'> } : {}),
      loaded: async () => {
        const f = await nodeFigures(child.url);
        console.log(`after the load: heap ${mb(f.heapUsed)} used of ${mb(f.heapMax)}, RSS ${rssOf()} MB`);
      },
    });
    console.log(`machine load during the run: ${load()}`);
    for (const [what, by] of Object.entries(report.summary)) console.log(`  ${what}: ${Object.entries(by).map(([k, n]) => `${n} × ${k}`).join(', ')}`);
    const ms = (w: string) => report.answers.filter((a) => a.what === w).map((a) => a.ms).sort((a, b) => a - b);
    for (const w of ['terms-size', 'terms', 'page']) {
      const xs = ms(w);
      if (xs.length) console.log(`  ${w}: median ${xs[Math.floor(xs.length / 2)]} ms, max ${xs[xs.length - 1]} ms`);
    }
    for (const b of report.bad) console.log(`  BAD ${b.what} ${b.status} ${b.type ?? ''}: ${b.body.slice(0, 300)}`);
    const crashed = child.exited();
    const up = !crashed && (await alive(child.url));
    console.log(`node process: ${crashed ? `CRASHED (exit ${child.proc.exitCode ?? child.proc.signalCode})` : up ? 'alive, answering' : 'NOT ANSWERING'}`);
    if (up) {
      const f = await nodeFigures(child.url);
      console.log(`heap: ${mb(f.heapUsed)} used of ${mb(f.heapMax)} (V8 heap_size_limit)`);
      console.log(`breakers: ${Object.entries(f.breakers).map(([n, b]) => `${n} ${b.estimated_size}/${b.limit_size} tripped ${b.tripped}`).join('; ')}`);
    }
    sample();
    const rss = rssOf();
    console.log(`RSS: ${rss} MB now, peak ${peak} MB (bound ${maxRss} MB)`);
    failed = report.bad.length > 0 || !up || peak > maxRss || report.loaded < num2('docs');
    if (report.loaded < num2('docs')) console.log(`only ${report.loaded} of ${num2('docs')} docs acknowledged`);
  } finally {
    await stopChildNode(child);
    if (failed) console.log(`node log kept: ${child.logFile}\n${readFileSync(child.logFile, 'utf8').split('\n').slice(-20).join('\n')}`);
    else rmSync(child.dataDir, { recursive: true, force: true });
  }
  console.log(failed ? 'FAIL' : 'PASS: every answer a 200 or an ES-shaped 4xx, the node up, RSS bounded');
  return failed ? 1 : 0;
}

if (process.argv[2] === '--serve') {
  await serveChild(process.argv[3], { 'xpack.security.enabled': false });
} else {
  try {
    process.exit(await main());
  } catch (e) {
    console.error(`breakers: ${(e as Error).message}`);
    process.exit(1);
  }
}
