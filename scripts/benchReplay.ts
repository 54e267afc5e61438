/**
 * Replay throughput: publishes N synthetic scroll/PIT facts (pipelined like Bus.append, no await per
 * ack) into a fresh ES_EVT on an embedded nats-server, then replays them.
 *
 *   npx tsx scripts/benchReplay.ts [N=1000000] [--window 8192] [--keep | --dir <store>]
 *
 * Prints: the raw JetStream publish rate; the read rates alone (readFacts, readFactBatches); the
 * replay from JetStream with the evolve fold only and with the machine check (what `npm run replay`
 * does); and the in-memory rates of the evolve fold and of the machine check, to show where the time
 * goes. `--keep` leaves the store; `--dir <store>` reuses one (publishing only into an empty stream).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { startEmbeddedNats } from '../actors/embeddedNats';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { aggregateOf, ensureStreams, EVENT_STREAM, factOf, readFacts, subjects, type Aggregate } from '../streams';
import { readFactBatches } from '../streams/factReader';
import { foldAll, openContexts } from '../streams/evolve';
import { MachineReplay } from '../streams/machineReplay';
import { factSource, replayLog } from './cli/replayLog';
import { parseArgs, flag } from './cli/args';
import { syntheticFacts } from './cli/syntheticFacts';

const enc = new TextEncoder();
const rate = (n: number, ms: number) => `${Math.round((n / ms) * 1000).toLocaleString('en-US')} events/s`;
const line = (label: string, n: number, ms: number) => console.log(`${label.padEnd(44)} ${(ms / 1000).toFixed(2).padStart(7)} s  ${rate(n, ms).padStart(20)}`);

async function main() {
  const args = parseArgs(process.argv.slice(2), ['keep']);
  const n = Number(args._[0] ?? 1_000_000);
  const window = Number(flag(args, 'window') ?? 8192);
  const given = flag(args, 'dir');
  const dir = given ?? (await mkdtemp(join(tmpdir(), 'bench-replay-')));
  const nats = await startEmbeddedNats(dir);
  const nc = await connect({ servers: nats.url });
  try {
    await ensureStreams(nc);
    console.log(`benchReplay: ${n.toLocaleString('en-US')} facts, nats-server at ${nats.url} (${dir}), node ${process.version}`);
    let t = performance.now();
    const facts = syntheticFacts(n);
    line('generate envelopes (in memory)', n, performance.now() - t);

    const stored = (await (await jetstreamManager(nc)).streams.info(EVENT_STREAM)).state.messages;
    if (stored) console.log(`reusing ${stored.toLocaleString('en-US')} stored facts: not publishing`);
    // Publish exactly as Bus.append does (subject, JSON, Nats-Msg-Id), but with a sliding window of
    // `window` unacknowledged publishes: never one await per ack.
    const js = jetstream(nc);
    t = performance.now();
    let inFlight = 0;
    let failed = 0;
    let slot: (() => void) | undefined;
    for (const e of stored ? [] : facts) {
      if (inFlight >= window) await new Promise<void>((r) => (slot = r));
      inFlight++;
      const subject = subjects.fact(aggregateOf(e.type) as Aggregate, e.aggregateId, factOf(e.type));
      js.publish(subject, enc.encode(JSON.stringify(e)), { msgID: e.id, timeout: 60_000 })
        .catch(() => failed++)
        .finally(() => {
          inFlight--;
          const s = slot;
          slot = undefined;
          s?.();
        });
    }
    while (inFlight > 0) await new Promise<void>((r) => (slot = r));
    if (!stored) line(`JetStream publish (pipelined, window ${window})`, n, performance.now() - t);
    if (failed) console.log(`${failed} publishes failed`);

    t = performance.now();
    let perMessage = 0;
    for await (const _ of readFacts(nc)) perMessage++;
    line('read + parse: readFacts (one await per fact)', perMessage, performance.now() - t);
    t = performance.now();
    let read = 0;
    for await (const b of readFactBatches(nc)) read += b.length;
    line('read + parse: readFactBatches (callback, batches)', read, performance.now() - t);

    const folded = await replayLog(factSource({ nc }, {}), { check: false });
    line('replay from JetStream: evolve fold', folded.read, folded.elapsedMs);
    const checked = await replayLog(factSource({ nc }, {}), { check: true });
    line('replay from JetStream: evolve + machine check', checked.read, checked.elapsedMs);

    t = performance.now();
    const world = foldAll(facts);
    line('in memory: evolve fold only', world.events, performance.now() - t);
    t = performance.now();
    const m = new MachineReplay();
    for (const e of facts) m.feed(e);
    const res = m.finish();
    line('in memory: machine check only', n, performance.now() - t);

    const ended = [...world.scroll.values(), ...world.pit.values()].length - openContexts(world).length;
    console.log(`check: ${read} read, ${checked.divergences.length} divergences, ${res.divergences.length} in memory, ${ended} lifecycles ended, ${openContexts(world).length} still open`);
    if (checked.divergences.length) console.log('first divergence:', checked.divergences[0]);
  } finally {
    await nc.drain();
    await nats.stop();
    if (!args.flags.keep && !given) await rm(dir, { recursive: true, force: true });
    else console.log(`store kept in ${dir}`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
