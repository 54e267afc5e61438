/**
 * `npm run faults -- [--fault nats|store|all] [--outages 5] [--down-seconds 5] [--store-mb 40] [--cycles 2]`:
 * the faults of issue 21, repeated. `store`: scripts/faultStore.ts (a store that fills up, again and
 * again). `nats`: the NATS outage, repeated.
 * Starts a nats-server (nkey users, as a node's embedded one) and a node in a child process on it
 * (security on, temp directories), makes fixtures (an index, scrolls, PITs, an API key, a token),
 * then `--outages` times: kills the nats-server with SIGKILL, sends every kind of request
 * (scripts/faultProbes.ts: each must answer 503, or succeed from what the node holds, within 2 s),
 * keeps it down `--down-seconds`, starts it again on the same port and store, measures the time to
 * the first acknowledged write, and sends every kind again (each served, no 5xx, within 1 s). At the
 * end: the node's log followers (stalls must be 0), the node alive. Exits 1 on any miss.
 * `test/int/reliability/failFast.test.ts` is its bounded version in CI (one outage).
 *
 *   npm run faults                    # both: 5 outages of 5 s, 2 store-full cycles of a 40 MB store
 *   npm run faults -- --fault nats --outages 20 --down-seconds 2
 *   npm run faults -- --fault store --store-mb 200 --cycles 3
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { num, parseOrExit, str, UsageError } from './cli/args';
import { serveChild, startChildNode, stopChildNode } from './cli/childNode';
import { faultFixtures, faultProbes, probeRound, send } from './faultProbes';
import { storeFull } from './faultStore';

const PASSWORD = 'faults-elastic-password-1';
const auth = { authorization: `Basic ${Buffer.from(`elastic:${PASSWORD}`).toString('base64')}` };
const USAGE = `usage: npm run faults -- [--fault nats|store|all] [--outages N] [--down-seconds S] [--store-mb MB] [--cycles N]
nats: kills the node's nats-server N times (default 5) for S seconds (default 5) and checks every kind
of request answers 503 (or succeeds) within 2 s while it is down and is served again once it is back.
store: fills a MB-sized JetStream store (default 40) N times (default 2) and checks every write
reported failed is invisible, lifecycle facts still fit, and deleting the index frees the room.`;

interface Options {
  fault: string;
  outages: number;
  downSeconds: number;
  storeMb: number;
  cycles: number;
}

async function main(): Promise<number> {
  const o = parseOrExit('faults', USAGE, process.argv.slice(2), {
    options: { fault: { type: 'string' }, outages: { type: 'string' }, 'down-seconds': { type: 'string' }, 'store-mb': { type: 'string' }, cycles: { type: 'string' } },
  }, (p): Options => {
    const fault = str(p, 'fault') ?? 'all';
    if (!['nats', 'store', 'all'].includes(fault)) throw new UsageError(`--fault must be nats, store or all, got [${fault}]`);
    return {
      fault,
      outages: num(str(p, 'outages'), '--outages', 5),
      downSeconds: num(str(p, 'down-seconds'), '--down-seconds', 5),
      storeMb: num(str(p, 'store-mb'), '--store-mb', 40),
      cycles: num(str(p, 'cycles'), '--cycles', 2),
    };
  });
  const misses: string[] = [];
  if (o.fault !== 'store') misses.push(...(await natsOutages(o)));
  if (o.fault !== 'nats') {
    console.log(`store full: a ${o.storeMb} MB JetStream store, ${o.cycles} cycles`);
    misses.push(...(await storeFull({ script: fileURLToPath(import.meta.url), storeMb: o.storeMb, cycles: o.cycles, auth })));
  }
  for (const m of misses) console.log(`  MISS ${m}`);
  console.log(misses.length ? `FAIL: ${misses.length} misses` : 'PASS: every fault answered as ES does, nothing acknowledged lost, nothing failed visible');
  return misses.length ? 1 : 0;
}

async function natsOutages(o: Options): Promise<string[]> {
  const { startEmbeddedNats } = await import('../actors/embeddedNats');
  const natsDir = mkdtempSync(join(tmpdir(), 'faults-nats-'));
  let nats = await startEmbeddedNats(natsDir);
  const port = Number(nats.url.split(':').pop());
  const child = await startChildNode({
    script: fileURLToPath(import.meta.url),
    prefix: 'faults-node-',
    env: { FAULTS_NATS_URL: nats.url, FAULTS_NKEY_FILE: nats.keys.node.file },
  });
  const misses: string[] = [];
  try {
    const fx = await faultFixtures(child.url, auth, PASSWORD);
    const probes = () => faultProbes(fx, PASSWORD);
    console.log(`node ${child.url} on nats-server ${nats.url}; ${o.outages} outages of ${o.downSeconds} s, ${probes().length} kinds of request`);
    for (let i = 1; i <= o.outages; i++) {
      const gone = new Promise((r) => nats.proc.once('exit', r));
      nats.proc.kill('SIGKILL');
      await gone;
      const started = Date.now();
      const down = await probeRound(child.url, auth, probes(), true);
      await new Promise((r) => setTimeout(r, Math.max(0, o.downSeconds * 1000 - (Date.now() - started))));
      const back = Date.now();
      nats = await startEmbeddedNats(natsDir, { port });
      let recovered = NaN;
      for (let t = 0; t < 200; t++) {
        if ((await send(child.url, 'PUT', '/o/_doc/after', { n: i }, auth, 5_000)).status === 200 || t === 199) {
          recovered = Date.now() - back;
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      const again = await probeRound(child.url, auth, probes(), false);
      console.log(`outage ${i}: down — slowest answer ${down.maxMs} ms, ${down.bad.length} missed; back — first write after ${recovered} ms, slowest answer ${again.maxMs} ms, ${again.bad.length} missed`);
      for (const b of down.bad) misses.push(`outage ${i}, NATS down: ${b}`);
      for (const b of again.bad) misses.push(`outage ${i}, NATS back: ${b}`);
      if (!(recovered < 20_000)) misses.push(`outage ${i}: no write acknowledged within 20 s of NATS coming back`);
    }
    const stats = (await send(child.url, 'GET', '/_nodes/_local/stats/log_followers', undefined, auth)).json;
    const followers = Object.values(stats?.nodes ?? {}).flatMap((n) => (n as { log_followers: Array<{ stream: string; stalls: number; resets: number }> }).log_followers);
    console.log(`log followers: ${followers.map((f) => `${f.stream} stalls ${f.stalls} resets ${f.resets}`).join(', ')}`);
    for (const f of followers) if (f.stalls) misses.push(`${f.stream} follower stalled ${f.stalls} times`);
    if (child.exited()) misses.push('the node process died');
  } finally {
    await stopChildNode(child);
    await nats.stop();
    if (!misses.length) {
      rmSync(child.dataDir, { recursive: true, force: true });
      rmSync(natsDir, { recursive: true, force: true });
    } else console.log(`node log kept: ${child.logFile}`);
  }
  return misses;
}

if (process.argv[2] === '--serve') {
  await serveChild(process.argv[3], {
    'xpack.security.enabled': true,
    'bootstrap.password': PASSWORD,
    ...(process.env.FAULTS_NKEY_FILE ? { 'nats.nkey_seed_file': process.env.FAULTS_NKEY_FILE } : {}),
    ...(process.env.FAULTS_STORE ? { 'nats.max_file_store': process.env.FAULTS_STORE, 'snapshot.interval_ms': 3_600_000 } : {}),
  }, process.env.FAULTS_NATS_URL);
} else {
  process.exit(await main());
}
