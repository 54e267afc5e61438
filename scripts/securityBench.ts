/**
 * Security measurements (run: `node --expose-gc --import tsx scripts/securityBench.ts`):
 * bytes per API key at rest, replay of 100k keys, cost of one key creation / token grant over HTTP,
 * the warm authentication path, and authenticated vs unauthenticated request rate on a trivial route.
 * `--json <file>` also writes the figures as JSON (`npm run bench -- --only security` does).
 * Env: KEYS (100000), ROUNDS (5), SECONDS (2).
 */
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectBus } from '../streams/busConnection';
import pino from 'pino';
import { Bus, ensureStreams, makeEnvelope } from '../streams';
import { Settings } from '../actors/config';
import { startEmbeddedNats } from '../actors/embeddedNats';
import { startEdge } from '../actors/edge/httpEdge';
import { makeRequest, Router } from '../actors/edge/router';
import type { NodeContext } from '../actors/nodeContext';
import { startSecurity } from '../actors/security';
import { randomUrlSafe, ssha256Hash } from '../actors/security/hashing';
import { CHECKPOINT_FILE } from '../actors/security/factCheckpoint';
import { httpRate } from './bench/load';
import { parseOrExit, str } from './cli/args';
import type { Authentication } from '../actors/wire/security';

const ARGS = parseOrExit('securityBench', 'usage: node --expose-gc --import tsx scripts/securityBench.ts [--json <file>]   (env KEYS, ROUNDS, SECONDS)', process.argv.slice(2), {
  options: { json: { type: 'string' } },
});

const N = Number(process.env.KEYS ?? 100_000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const PW = 'bench-password';
const gc = (globalThis as { gc?: () => void }).gc;
const heap = () => {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
};
const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

function http(port: number, agent: Agent, method: string, path: string, auth?: string, body?: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      { host: '127.0.0.1', port, method, path, agent, headers: { ...(auth ? { authorization: auth } : {}), ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * Requests/s and server CPU µs per request (this process only: robust to a noisy shared machine).
 * The load comes from a child process (its own core; scripts/bench/loader.mjs), so the server's
 * event loop is what is measured.
 */
async function rate(port: number, auth: string | undefined, seconds: number, concurrency = 32): Promise<{ rate: number; cpuUs: number; busyUs: number }> {
  const cpu0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const r = await httpRate(port, { path: '/_bench/books/_search', auth, seconds, conc: concurrency });
  const cpu = process.cpuUsage(cpu0);
  const elu = performance.eventLoopUtilization(elu0);
  if (r.bad) throw new Error(`${r.bad} failed requests`);
  return { rate: r.rate, cpuUs: (cpu.user + cpu.system) / r.n, busyUs: (elu.active * 1000) / r.n };
}

/** Figures as printed, for `--json <file>` (npm run bench's security section reads them). */
const figures: Array<{ metric: string; value: number; unit: string; max?: number }> = [];
const figure = (metric: string, value: number, unit: string, target: { max?: number } = {}) => figures.push({ metric, value, unit, ...target });

async function timeEach(label: string, times: number, f: () => Promise<unknown>): Promise<void> {
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    const t = process.hrtime.bigint();
    await f();
    ms.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  ms.sort((a, b) => a - b);
  const [p50, p99] = [ms[Math.floor(times / 2)], ms[Math.floor(times * 0.99)]];
  console.log(`${label}: p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms (${times} runs)`);
  figure(`${label} p50`, p50, 'ms');
  figure(`${label} p99`, p99, 'ms');
}

async function main() {
  const dir = await mkdtemp(join(tmpdir(), 'secbench-'));
  const nats = await startEmbeddedNats(join(dir, 'nats'));
  const nc = await connectBus(nats.connection('node'));
  await ensureStreams(nc);
  const log = pino({ level: 'warn' });
  const boot = async (enabled: boolean, dataDir = dir) => {
    const router = new Router();
    const ctx: NodeContext = {
      nc,
      bus: new Bus(nc),
      log,
      settings: new Settings({ 'xpack.security.enabled': enabled, 'bootstrap.password': PW }),
      router,
      node: { id: `bench-${enabled}`, name: 'bench', clusterName: 'bench', clusterUuid: 'b', host: '127.0.0.1' },
      dataDir,
      configDir: dir,
    };
    const security = await startSecurity(ctx, { print: () => {} });
    router.add('GET', '/_bench/{index}/_search', () => ({ body: { took: 0, hits: { hits: [] } } }), {
      kind: 'indices',
      action: 'indices:data/read/search',
      indices: (r) => [r.params.index],
    });
    // Times the gate's two calls under real HTTP load (what a request pays for security).
    const timing = { authenticateNs: 0n, authorizeNs: 0n, n: 0 };
    const g = security.gate;
    const gate = {
      authenticate: async (req: Parameters<typeof g.authenticate>[0]) => {
        const t0 = process.hrtime.bigint();
        const a = await g.authenticate(req);
        timing.authenticateNs += process.hrtime.bigint() - t0;
        timing.n++;
        return a;
      },
      authorize: (a: Authentication | undefined, action: string, indices?: string[]) => {
        const t0 = process.hrtime.bigint();
        g.authorize(a, action, indices);
        timing.authorizeNs += process.hrtime.bigint() - t0;
      },
    };
    const edge = await startEdge({ host: '127.0.0.1', port: 0, router, security: security.enabled ? gate : undefined, log });
    return { security, edge, ctx, timing };
  };

  // 1. Bytes per API key at rest: N keys of one owner folded as the node keeps them.
  const node = await boot(true);
  const s = node.security.services!;
  const limitedBy = s.roles.descriptorsFor(['superuser']);
  const owner = { username: 'elastic', realm: 'reserved', realmType: 'reserved', full_name: null, email: null, metadata: { _reserved: true } };
  const envs = Array.from({ length: N }, (_, i) =>
    makeEnvelope({
      type: 'apikey.created',
      aggregateId: randomUrlSafe(15),
      seq: 1,
      data: { name: `key-${i}`, keyType: 'rest', creation: Date.now(), owner, hash: ssha256Hash(randomUrlSafe(16)), roleDescriptors: {}, limitedBy, metadata: {} },
    }),
  );
  const before = heap();
  for (const e of envs) s.apiKeys.apply(JSON.parse(JSON.stringify(e)));
  const after = heap();
  console.log(`API keys at rest: ${N} keys, ${((after - before) / N).toFixed(0)} bytes/key (heap ${((after - before) / 1e6).toFixed(1)} MB)`);
  figure(`API keys at rest (${N} keys, gc${gc ? '' : ' unavailable'})`, (after - before) / N, 'B/key');

  // 2. Replay time of N key facts from JetStream into a fresh module.
  const bus = new Bus(nc);
  let t = Date.now();
  await Promise.all(envs.map((e) => bus.append(e)));
  console.log(`appended ${N} apikey.created facts in ${Date.now() - t} ms (pipelined acks)`);
  figure(`append ${N} apikey.created facts (pipelined acks)`, (N / Math.max(1, Date.now() - t)) * 1000, 'facts/s');
  // A node that never wrote a checkpoint folds the whole log; its clean stop writes the checkpoint
  // (the previous one plus the log after it) that the next start reads. Their own data folder: the
  // first node, still running, writes its own checkpoint 30 s after its start.
  // ... and it must not write it while the starts below are timed: wait for it (bounded).
  for (const until = Date.now() + 60_000; !existsSync(join(dir, CHECKPOINT_FILE)) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 200));
  const startDir = join(dir, 'start');
  mkdirSync(startDir, { recursive: true });
  t = Date.now();
  const second = await boot(true, startDir);
  const fromLog = Date.now() - t;
  const keys = second.security.services!.apiKeys.records.size;
  console.log(`security start with ${keys} keys in the log, no checkpoint: ${fromLog} ms`);
  figure(`security start with ${keys} keys in the log, no checkpoint`, fromLog, 'ms');
  await second.edge.close();
  t = Date.now();
  await second.security.stop();
  console.log(`credential checkpoint of ${keys} keys written at stop: ${Date.now() - t} ms (${statSync(join(startDir, CHECKPOINT_FILE)).size} bytes)`);
  figure(`credential checkpoint of ${keys} keys written at stop`, Date.now() - t, 'ms');
  t = Date.now();
  const third = await boot(true, startDir);
  const fromCheckpoint = Date.now() - t;
  if (third.security.services!.apiKeys.records.size !== keys) throw new Error(`start from the checkpoint saw ${third.security.services!.apiKeys.records.size} keys, not ${keys}`);
  console.log(`security start with ${keys} keys, from the credential checkpoint: ${fromCheckpoint} ms`);
  figure(`security start with ${keys} keys, from the credential checkpoint`, fromCheckpoint, 'ms', { max: 1000 });
  await third.edge.close();
  await third.security.stop();

  // 3. Creation costs over HTTP (includes the JetStream ack before the response).
  const port = node.edge.port;
  const agent = new Agent({ keepAlive: true });
  const elastic = basic('elastic', PW);
  await http(port, agent, 'GET', '/_security/_authenticate', elastic); // warm the password cache
  await timeEach('POST /_security/api_key', 300, () => http(port, agent, 'POST', '/_security/api_key', elastic, { name: 'bench' }));
  await timeEach('POST /_security/oauth2/token client_credentials', 300, () => http(port, agent, 'POST', '/_security/oauth2/token', elastic, { grant_type: 'client_credentials' }));
  await timeEach('POST /_security/oauth2/token password (warm password cache)', 300, () =>
    http(port, agent, 'POST', '/_security/oauth2/token', elastic, { grant_type: 'password', username: 'elastic', password: PW }),
  );

  // 4. Warm authentication path, in process.
  const key = JSON.parse((await http(port, agent, 'POST', '/_security/api_key', elastic, { name: 'warm' })).body) as { encoded: string };
  const tok = JSON.parse((await http(port, agent, 'POST', '/_security/oauth2/token', elastic, { grant_type: 'client_credentials' })).body) as { access_token: string };
  const gate = node.security.gate;
  for (const [label, auth] of [
    ['ApiKey', `ApiKey ${key.encoded}`],
    ['Bearer access token', `Bearer ${tok.access_token}`],
    ['Basic (reserved elastic)', elastic],
  ] as const) {
    const req = makeRequest({ method: 'GET', path: '/', uri: '/', params: {}, query: {}, headers: { authorization: auth }, body: undefined });
    for (let i = 0; i < 20_000; i++) await gate.authenticate(req);
    const M = 200_000;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < M; i++) {
      const a = await gate.authenticate(req);
      gate.authorize(a, 'indices:data/read/search', ['books']);
    }
    const us = Number(process.hrtime.bigint() - t0) / 1e3 / M;
    console.log(`warm authenticate+authorize, ${label}: ${us.toFixed(2)} µs/request`);
    figure(`warm authenticate+authorize, ${label}`, us, 'µs/req');
  }
  const { createHash } = await import('node:crypto');
  const t1 = process.hrtime.bigint();
  for (let i = 0; i < 200_000; i++) createHash('sha256').update('0123456789abcdef').update('ui2lp2axTNmsyakw9tvNnw').digest();
  const sha = Number(process.hrtime.bigint() - t1) / 1e3 / 200_000;
  console.log(`one salted SHA-256 of a key secret: ${sha.toFixed(2)} µs`);
  figure('one salted SHA-256 of a key secret', sha, 'µs');

  // 5. Request rate with and without security on a trivial route (the search side adds real work).
  const open = await boot(false);
  const sec = Number(process.env.SECONDS ?? 2);
  const configs: Array<[string, number, string | undefined]> = [
    ['no security', open.edge.port, undefined],
    ['ApiKey', port, `ApiKey ${key.encoded}`],
    ['Bearer', port, `Bearer ${tok.access_token}`],
    ['Basic', port, elastic],
  ];
  for (const [, p, a] of configs) await rate(p, a, 1); // warm up every path
  node.timing.authenticateNs = node.timing.authorizeNs = 0n;
  node.timing.n = 0;
  await rate(port, `ApiKey ${key.encoded}`, sec);
  const per = (ns: bigint) => (Number(ns) / node.timing.n / 1000).toFixed(2);
  console.log(`under HTTP load (ApiKey): authenticate ${per(node.timing.authenticateNs)} µs + authorize ${per(node.timing.authorizeNs)} µs per request`);
  figure('under HTTP load (ApiKey): authenticate', Number(per(node.timing.authenticateNs)), 'µs/req');
  figure('under HTTP load (ApiKey): authorize', Number(per(node.timing.authorizeNs)), 'µs/req');
  const runs = new Map<string, Array<{ rate: number; cpuUs: number; busyUs: number }>>(configs.map(([n]) => [n, []]));
  for (let round = 0; round < ROUNDS; round++) for (const [n, p, a] of configs) runs.get(n)!.push(await rate(p, a, sec));
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const stat = (n: string) => ({
    rate: median(runs.get(n)!.map((r) => r.rate)),
    cpuUs: median(runs.get(n)!.map((r) => r.cpuUs)),
    busyUs: median(runs.get(n)!.map((r) => r.busyUs)),
  });
  const base = stat('no security');
  console.log(`trivial route, median of ${ROUNDS} interleaved ${sec}s runs, 32 connections from a child process:`);
  for (const [n] of configs) {
    const st = stat(n);
    console.log(
      `  ${n}: ${st.rate.toFixed(0)} req/s, server CPU ${st.cpuUs.toFixed(1)} µs/req, event loop busy ${st.busyUs.toFixed(1)} µs/req (${(base.busyUs / st.busyUs).toFixed(2)}x of the open rate bound)`,
    );
    figure(`trivial route, ${n}: rate`, st.rate, 'req/s');
    figure(`trivial route, ${n}: server CPU`, st.cpuUs, 'µs/req');
    if (n !== 'no security') figure(`trivial route, ${n}: event-loop bound / open`, base.busyUs / st.busyUs, 'ratio');
  }

  agent.destroy();
  await open.edge.close();
  await node.edge.close();
  await node.security.stop();
  await nc.drain();
  await nats.stop();
  await rm(dir, { recursive: true, force: true });
  const json = str(ARGS, 'json');
  if (json) writeFileSync(json, JSON.stringify(figures, null, 2));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
