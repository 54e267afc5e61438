/**
 * Replay throughput: publishes N synthetic scroll/PIT facts (pipelined like Bus.append, no await per
 * ack) into a fresh ES_EVT on an embedded nats-server, then replays them.
 *
 *   npx tsx scripts/benchReplay.ts [N=1000000] [--window 8192] [--keep | --dir <store>] [--fold-only]
 *
 * Prints: the raw JetStream publish rate; the read rates alone (readFacts, readFactBatches); the
 * replay from JetStream with the evolve fold only and with the machine check (what `npm run replay`
 * does); and the in-memory rates of the evolve fold and of the machine check, to show where the time
 * goes. `--keep` leaves the store; `--dir <store>` reuses one (publishing only into an empty stream);
 * `--fold-only` skips the two (slow) machine-check passes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectBus } from '../streams/busConnection';
import { startEmbeddedNats } from '../actors/embeddedNats';
import { jetstreamManager } from '@nats-io/jetstream';
import { ensureStreams, EVENT_STREAM, readFacts, type Envelope } from '../streams';
import { readFactBatches } from '../streams/factReader';
import { foldAll, openContexts } from '../streams/evolve';
import { MachineReplay } from '../streams/machineReplay';
import { factSource, replayLog } from '../streams/replayLog';
import { readFactBatchesInWorker } from './cli/workerFactSource';
import { num, parseOrExit, str } from './cli/args';
import { syntheticFacts } from './cli/syntheticFacts';
import { publishFacts, timePass } from './bench/facts';

const USAGE = 'usage: npx tsx scripts/benchReplay.ts [N=1000000] [--window 8192] [--keep | --dir <store>] [--fold-only]';

const rate = (n: number, ms: number) => `${Math.round((n / ms) * 1000).toLocaleString('en-US')} events/s`;
const line = (label: string, n: number, ms: number, extra = '') =>
  console.log(`${label.padEnd(50)} ${(ms / 1000).toFixed(2).padStart(7)} s ${rate(n, ms).padStart(19)}${extra}`);

/**
 * Times a pass: wall rate, plus CPU per event of this process and of nats-server. On a shared box the
 * CPU figures say what the code costs; the wall rate also says what the neighbours took.
 */
function measure(serverPid: number | undefined) {
  return async (label: string, run: () => Promise<number>): Promise<number> => {
    const p = await timePass(serverPid, run);
    const us = (x: number) => x.toFixed(2).padStart(5);
    line(label, p.n, p.ms, `  node ${us(p.nodeCpuUs)} µs/event CPU${Number.isNaN(p.serverCpuUs) ? '' : `, nats-server ${us(p.serverCpuUs)}`}`);
    return p.n;
  };
}

async function main() {
  const args = parseOrExit('benchReplay', USAGE, process.argv.slice(2), {
    options: { keep: { type: 'boolean' }, 'fold-only': { type: 'boolean' }, window: { type: 'string' }, dir: { type: 'string' } },
    maxPositionals: 1,
  }, (p) => ({ ...p, n: num(p.positionals[0], 'N', 1_000_000), window: num(str(p, 'window'), '--window', 8192) }));
  const check = args.values['fold-only'] !== true;
  const { n, window } = args;
  const given = str(args, 'dir');
  const dir = given ?? (await mkdtemp(join(tmpdir(), 'bench-replay-')));
  const nats = await startEmbeddedNats(dir, { admin: true });
  const nc = await connectBus(nats.connection('admin'));
  try {
    await ensureStreams(nc);
    console.log(`benchReplay: ${n.toLocaleString('en-US')} facts, nats-server at ${nats.url} (${dir}), node ${process.version}`);
    const t = performance.now();
    let facts: Envelope[] | undefined = syntheticFacts(n);
    line('generate envelopes (in memory)', n, performance.now() - t);
    console.log(`${''.padEnd(50)}    wall        events/s   CPU per event`);

    const stored = (await (await jetstreamManager(nc)).streams.info(EVENT_STREAM)).state.messages;
    if (stored) console.log(`reusing ${stored.toLocaleString('en-US')} stored facts: not publishing`);
    // Published as Bus.append does, with `window` unacknowledged publishes: never one await per ack.
    const pub = await publishFacts(nc, stored ? [] : facts, window);
    if (!stored) line(`JetStream publish (pipelined, window ${window})`, n, pub.ms);
    if (pub.failed) console.log(`${pub.failed} publishes failed`);
    facts = undefined;

    const timed = measure(nats.proc.pid);
    await timed('read + parse: readFacts (one await per fact)', async () => {
      let k = 0;
      for await (const _ of readFacts(nc)) k++;
      return k;
    });
    const read = await timed('read + parse: readFactBatches (callback, batches)', async () => {
      let k = 0;
      for await (const b of readFactBatches(nc)) k += b.length;
      return k;
    });
    await timed('replay from JetStream: evolve fold', async () => (await replayLog(factSource({ nc }, {}), { check: false })).read);
    await timed('  same, reader in a worker (npm run replay)', async () => (await replayLog(readFactBatchesInWorker(nats.connection('subscriber')), { check: false })).read);
    let divergences = 0;
    if (check) {
      await timed('replay from JetStream: evolve + machine check', async () => {
        const o = await replayLog(readFactBatchesInWorker(nats.connection('subscriber')), { check: true });
        divergences = o.divergences.length;
        return o.read;
      });
    }

    // Generated again for the in-memory passes: holding 1M envelopes during the reads above would
    // slow their garbage collection down, which `npm run replay` does not suffer.
    facts = syntheticFacts(n);
    const all = facts;
    const world = foldAll([]);
    await timed('in memory: evolve fold only', async () => foldAll(all, world).events);
    const m = new MachineReplay();
    if (check) {
      await timed('in memory: machine check only', async () => {
        for (const e of all) m.feed(e);
        return all.length;
      });
    }
    const res = m.finish();

    const ended = [...world.scroll.values(), ...world.pit.values()].length - openContexts(world).length;
    console.log(`check: ${read} read, ${divergences} divergences, ${res.divergences.length} in memory, ${ended} lifecycles ended, ${openContexts(world).length} still open`);
  } finally {
    await nc.drain();
    await nats.stop();
    if (!args.values.keep && !given) await rm(dir, { recursive: true, force: true });
    else console.log(`store kept in ${dir}`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
