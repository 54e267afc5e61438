/**
 * Start-up time with N small documents (issue 6 item 6): full replay of ES_DATA vs the newest
 * snapshot plus the log tail. Builds the store through a real node (startSystem on a nats-server
 * in a temp dir), takes a snapshot, writes a small tail after it, then restarts twice on the same
 * log and data dir, each start in a fresh process (as a real restart is: no heap left over from
 * loading).
 *
 *   npx tsx scripts/snapshotBench.ts [N=1000000] [--shards 3] [--batch 5000] [--tail 1000] [--keep]
 *
 * Prints the load rate, the snapshot figures (size, time, writer pause, longest synchronous
 * stretch), and for each restart the whole startSystem time and the document-projection part
 * (ClusterState.start: snapshot load + tail replay), plus the ratio full replay / snapshot.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { startNats } from '../test/support/natsServer';
import { startSystem, type System } from '../actors/system';
import { Settings } from '../actors/config';
import { num, parseOrExit, str } from './cli/args';

const USAGE = 'usage: npx tsx scripts/snapshotBench.ts [N=1000000] [--shards 3] [--batch 5000] [--tail 1000] [--keep]';
const args = parseOrExit('snapshotBench', USAGE, process.argv.slice(2), {
  options: {
    keep: { type: 'boolean' },
    shards: { type: 'string' },
    batch: { type: 'string' },
    tail: { type: 'string' },
    // internal: the timed child start
    child: { type: 'string' },
    nats: { type: 'string' },
    data: { type: 'string' },
  },
  maxPositionals: 1,
}, (p) => ({
  ...p,
  n: num(p.positionals[0], 'N', 1_000_000),
  shards: num(str(p, 'shards'), '--shards', 3),
  batch: num(str(p, 'batch'), '--batch', 5000),
  tail: num(str(p, 'tail'), '--tail', 1000),
}));
const N = args.n;
const SHARDS = args.shards;
const BATCH = args.batch;
const TAIL = args.tail;
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa'];

interface ChildReport {
  startMs: number;
  documentsMs: number;
  snapshotSeq?: number;
  snapshotMs?: number;
  ops: number;
  count: number;
  heapMB: number;
}

const boot = (natsUrl: string, dataDir: string, extra: Record<string, unknown> = {}) =>
  startSystem({
    host: '127.0.0.1',
    port: 0,
    natsUrl,
    dataDir,
    configDir: join(dataDir, 'config'),
    settings: new Settings({ 'xpack.security.enabled': false, 'snapshot.interval_ms': 0, ...extra }),
    log: pino({ level: process.env.LOG_LEVEL ?? 'warn' }),
  });

async function call(sys: System, method: string, path: string, body?: string): Promise<any> {
  const res = await fetch(`${sys.url}${path}`, {
    method,
    headers: { 'content-type': path.includes('_bulk') ? 'application/x-ndjson' : 'application/json' },
    body,
  });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
  return json;
}

function bulkBody(from: number, to: number): string {
  const parts: string[] = [];
  for (let i = from; i < to; i++) {
    parts.push(`{"index":{"_id":"d${i}"}}\n{"n":${i},"tag":"t${i % 100}","title":"${WORDS[i % 10]} ${WORDS[(i >> 3) % 10]} w${i % 5000}"}\n`);
  }
  return parts.join('');
}

async function load(sys: System, from: number, to: number): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  for (let i = from; i < to; i += BATCH) {
    const p: Promise<void> = call(sys, 'POST', '/bench/_bulk', bulkBody(i, Math.min(to, i + BATCH))).then((r) => {
      if (r.errors) throw new Error('bulk errors');
      inFlight.delete(p);
    });
    inFlight.add(p);
    if (inFlight.size >= 4) await Promise.race(inFlight);
    if (process.stdout.isTTY && i % 100_000 === 0) process.stdout.write(`\rloaded ${i.toLocaleString('en-US')}`);
  }
  await Promise.all(inFlight);
}

/** Child mode: one timed start, its report as a JSON line on stdout, then a stop without snapshot. */
async function child(natsUrl: string, dataDir: string, full: boolean): Promise<void> {
  const t0 = performance.now();
  const sys = await boot(natsUrl, dataDir, full ? { 'snapshot.enabled': false } : {});
  const startMs = performance.now() - t0;
  const r = sys.services.cluster.startResult!;
  const heapMB = Math.round(process.memoryUsage().heapUsed / 1e6);
  const count = (await call(sys, 'POST', '/bench/_count')).count as number;
  const report: ChildReport = { startMs, documentsMs: r.ms, snapshotSeq: r.snapshotSeq, snapshotMs: r.snapshotMs, ops: r.ops, count, heapMB };
  console.log(JSON.stringify(report));
  // leave the snapshots on disk as they are: a shutdown snapshot would change what the next start loads
  sys.ctx.settings.setDynamic('snapshot.enabled', false);
  await sys.stop();
}

function timedStart(label: string, natsUrl: string, dataDir: string, full: boolean): Promise<ChildReport> {
  return new Promise((res, rej) => {
    const p = spawn(process.execPath, ['--import', 'tsx', process.argv[1], '--child', full ? 'full' : 'snapshot', '--nats', natsUrl, '--data', dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout!.on('data', (d) => (out += d));
    p.on('close', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      if (code !== 0) return rej(new Error(`${label}: exit ${code}: ${out}`));
      const r = JSON.parse(line) as ChildReport;
      if (r.count !== N + TAIL) return rej(new Error(`${label}: ${r.count} docs, want ${N + TAIL}`));
      console.log(`${label.padEnd(16)} startSystem ${(r.startMs / 1000).toFixed(2)} s; documents ${(r.documentsMs / 1000).toFixed(2)} s` +
        ` (snapshot S=${r.snapshotSeq ?? '-'} loaded in ${r.snapshotMs ?? '-'} ms; ${r.ops.toLocaleString('en-US')} ops replayed); heap ${r.heapMB} MB`);
      res(r);
    });
  });
}

async function main(): Promise<void> {
  const nats = await startNats();
  const dataDir = await mkdtemp(join(tmpdir(), 'snapbench-'));
  try {
    let sys = await boot(nats.url, dataDir);
    await call(sys, 'PUT', '/bench', JSON.stringify({
      settings: { number_of_shards: SHARDS, refresh_interval: '-1' },
      mappings: { properties: { n: { type: 'long' }, tag: { type: 'keyword' }, title: { type: 'text' } } },
    }));
    const t0 = performance.now();
    await load(sys, 0, N);
    const loadMs = performance.now() - t0;
    console.log(`\rloaded ${N.toLocaleString('en-US')} docs in ${(loadMs / 1000).toFixed(1)} s (${Math.round(N / (loadMs / 1000)).toLocaleString('en-US')} docs/s), ${SHARDS} shards`);
    const snap = (await sys.services.cluster.snapshots.take('request'))!;
    console.log(`snapshot S=${snap.seq}: ${(snap.bytes / 1e6).toFixed(1)} MB, ${snap.docs.toLocaleString('en-US')} docs in ${snap.ms} ms;` +
      ` writers paused ${snap.pauseMs} ms; longest synchronous stretch ${snap.maxBlockMs} ms`);
    await load(sys, N, N + TAIL); // the tail after S
    sys.ctx.settings.setDynamic('snapshot.enabled', false); // keep the snapshot at S (no shutdown snapshot)
    await sys.stop();

    // 1. Full replay: snapshots set aside (and switched off) for this start.
    const dir = join(dataDir, 'snapshots');
    await rename(dir, `${dir}.aside`);
    const full = await timedStart('full replay', nats.url, dataDir, true);
    await rm(dir, { recursive: true, force: true });
    await rename(`${dir}.aside`, dir);
    // 2. Snapshot + tail.
    const fromSnap = await timedStart('snapshot + tail', nats.url, dataDir, false);
    console.log(`ratio full replay / snapshot: ${(full.documentsMs / fromSnap.documentsMs).toFixed(1)}x (documents part), ` +
      `${(full.startMs / fromSnap.startMs).toFixed(1)}x (startSystem)`);
    sys = undefined as never;
  } finally {
    if (!args.values.keep) {
      await nats.stop();
      await rm(dataDir, { recursive: true, force: true });
    } else console.log(`kept: nats ${nats.dir}, data ${dataDir}`);
  }
}

if (args.values.child) await child(str(args, 'nats')!, str(args, 'data')!, str(args, 'child') === 'full');
else await main();
process.exit(0);
