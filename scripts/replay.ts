/**
 * Replay for debugging (streams/README.md "Replay").
 *
 *   npm run replay -- [--aggregate <aggregate>] [--id <id>]
 *                     [--since <time>] [--until <time>] [--at <time>] [--file events.jsonl]
 *                     [--timeline] [--all] [--json] [--no-check] [--tolerance <ms>]
 *   npm run replay -- scroll <uuid>          (same as --aggregate scroll --id <uuid>)
 *
 * Reads ES_EVT (or an exported file), folds it with streams/evolve.ts, re-runs it through the
 * service's XState machines (streams/machineReplay.ts) and prints each actor's timeline, its final
 * state and any divergence. `--at` shows every context and credential as it stood at that moment.
 * Exit code 1 when the machines diverge from the log. A stopped node's log (DATA_DIR) is read through a
 * private nats-server on a copy of its store (scripts/cli/stoppedNode.ts).
 */
import { statSync } from 'node:fs';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectBus, type BusConnection } from '../streams/busConnection';
import { jetstreamManager } from '@nats-io/jetstream';
import { Aggregate, EVENT_STREAM } from '../streams';
import { num, parseOrExit, str, UsageError } from './cli/args';
import { locateLog } from './cli/natsUrl';
import { openStoppedLog, type StoppedLog } from './cli/stoppedNode';
import { parseTime } from '../streams/time';
import { progressBar } from './cli/progress';
import { factFilter, factSource, replayLog, type ReplayOutcome } from '../streams/replayLog';
import { readFactBatchesInWorker } from './cli/workerFactSource';
import { formatRow, stateRows, type StateRow } from '../streams/stateRows';

/** Every aggregate of the event log (streams/subjects.ts). */
const AGGREGATES: string[] = Object.values(Aggregate);
const USAGE = `usage: npm run replay -- [--aggregate <aggregate>] [--id <id>]
       [--since <time>] [--until <time>] [--at <time>] [--file events.jsonl]
       [--timeline] [--all] [--json] [--no-check] [--tolerance <ms>]
       npm run replay -- <aggregate> [<id>]      (= --aggregate <aggregate> --id <id>)
aggregate: ${AGGREGATES.join(' | ')}
time: ISO-8601, epoch ms, now, or -15m / -2h / -1d
Reads NATS_URL, else the node under DATA_DIR (default ./data): its running nats-server, or, when the
node is stopped, a copy of its event log served by a private nats-server (the node's store is not touched).`;
const OPTIONS = {
  aggregate: { type: 'string' },
  id: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  at: { type: 'string' },
  file: { type: 'string' },
  timeline: { type: 'boolean' },
  all: { type: 'boolean' },
  json: { type: 'boolean' },
  'no-check': { type: 'boolean' },
  tolerance: { type: 'string' },
} as const;
/** Above this many facts, timelines are kept only when asked for (memory). */
const TIMELINE_LIMIT = 200_000;
const ROW_LIMIT = 200;

async function logSize(nc: NatsConnection | undefined, file: string | undefined): Promise<number> {
  if (file) return Math.round(statSync(file).size / 300); // ~300 bytes per fact: only to decide on timelines
  const info = await (await jetstreamManager(nc!)).streams.info(EVENT_STREAM);
  return info.state.messages;
}

function printHuman(o: ReplayOutcome, rows: StateRow[], ctx: { source: string; at?: number; showTimelines: boolean; all: boolean }) {
  const out: string[] = [];
  const rate = o.elapsedMs > 0 ? Math.round((o.read / o.elapsedMs) * 1000) : o.read;
  out.push(`replayed ${o.folded} of ${o.read} events from ${ctx.source} in ${o.elapsedMs.toFixed(0)} ms (${rate} events/s); machine-checked ${o.checked}, not checked ${o.unchecked}`);
  const withTimeline = o.actors.filter((a) => a.timeline?.length);
  if (ctx.showTimelines && withTimeline.length) {
    out.push('', '== timelines ==');
    for (const a of withTimeline) {
      out.push(`${a.aggregate} ${a.id}`);
      for (const s of a.timeline!) out.push(`  ${s.time}  #${String(s.seq).padEnd(3)} ${s.type.padEnd(24)} -> ${s.state}${s.detail ? `  ${s.detail}` : ''}`);
    }
  } else if (withTimeline.length) out.push(`(${withTimeline.length} timelines: narrow with --id or --aggregate, or pass --timeline)`);
  out.push('', ctx.at !== undefined ? `== state at ${new Date(ctx.at).toISOString()} ==` : '== final state ==');
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(`${r.aggregate} ${r.status}`, (counts.get(`${r.aggregate} ${r.status}`) ?? 0) + 1);
  if (rows.length <= ROW_LIMIT || ctx.all) for (const r of rows) out.push(formatRow(r));
  else out.push(`(${rows.length} nodes, contexts and credentials: narrow with --aggregate/--id, or pass --all)`);
  out.push(`totals: ${[...counts].map(([k, n]) => `${k}=${n}`).join(', ') || 'none'}`);
  out.push('', `== divergences (${o.divergences.length}) ==`);
  for (const d of o.divergences.slice(0, 100)) {
    out.push(`${d.time}  ${d.aggregate} ${d.id} #${d.seq} ${d.logged}: ${d.detail}${d.emitted.length ? ` [machine: ${d.emitted.join(', ')}]` : ''}`);
  }
  if (o.divergences.length > 100) out.push(`… ${o.divergences.length - 100} more (use --json)`);
  process.stdout.write(out.join('\n') + '\n');
}

/** Everything the command line says, checked before anything connects. */
function readCommandLine(argv: string[]) {
  const args = parseOrExit('replay', USAGE, argv, { options: OPTIONS, maxPositionals: 2 });
  const [posAggregate, posId] = args.positionals;
  if (posAggregate !== undefined && str(args, 'aggregate') !== undefined) throw new UsageError(`unexpected argument [${posAggregate}]: the aggregate is given by --aggregate`);
  if (posId !== undefined && str(args, 'id') !== undefined) throw new UsageError(`unexpected argument [${posId}]: the id is given by --id`);
  const aggregate = str(args, 'aggregate') ?? posAggregate;
  if (aggregate !== undefined && !AGGREGATES.includes(aggregate)) throw new UsageError(`unknown aggregate [${aggregate}]: ${AGGREGATES.join('|')}`);
  const now = Date.now();
  const time = (name: 'since' | 'until' | 'at') => {
    const v = str(args, name);
    try {
      return v === undefined ? undefined : parseTime(v, now);
    } catch (e) {
      throw new UsageError(`--${name}: ${(e as Error).message}`);
    }
  };
  const at = time('at');
  const until = time('until');
  return {
    args,
    aggregate,
    id: str(args, 'id') ?? posId,
    at,
    sinceMs: time('since'),
    untilMs: until === undefined ? at : Math.min(until, at ?? Infinity),
    file: str(args, 'file'),
    toleranceMs: str(args, 'tolerance') === undefined ? undefined : num(str(args, 'tolerance'), '--tolerance', 25),
  };
}

async function main(): Promise<void> {
  const { args, aggregate, id, at, sinceMs, untilMs, file, toleranceMs } = readCommandLine(process.argv.slice(2));
  let nc: NatsConnection | undefined;
  let stopped: StoppedLog | undefined;
  let source = file ?? '';
  let url = '';
  let conn: BusConnection = { servers: [] };
  if (!file) {
    const where = locateLog();
    if (where.kind === 'stopped') {
      process.stderr.write(`the node whose DATA_DIR is ${where.dataDir} is stopped: replaying a copy of its event log (its store is not touched)\n`);
      stopped = await openStoppedLog(where.natsDir);
      url = stopped.url;
      conn = stopped.conn;
    } else {
      url = where.url;
      conn = where.conn;
    }
    try {
      nc = await connectBus(conn, { name: 'es-replay-cli' });
    } catch (e) {
      await stopped?.close();
      throw new Error(`cannot connect to ${url}: ${(e as Error).message}. Is the node running? Set NATS_URL, or DATA_DIR to a node's data folder (running or stopped), or use --file`, { cause: e });
    }
    const filter = factFilter(aggregate, id);
    source = `${EVENT_STREAM} on ${where.kind === 'stopped' ? `a copy of ${where.natsDir}` : url}${filter ? ` (${filter})` : ''}`;
  }
  const json = args.values.json === true;
  // A log whose older facts were compacted away (events.retention) cannot show a moment before it.
  let historyFrom: string | undefined;
  if (nc) {
    const st = (await (await jetstreamManager(nc)).streams.info(EVENT_STREAM)).state;
    // (an empty log whose facts were all removed keeps no history at all: it starts now)
    if (st.first_seq > 1) historyFrom = st.messages ? st.first_ts : new Date().toISOString();
    const asked = at ?? sinceMs;
    if (historyFrom && asked !== undefined && asked < Date.parse(historyFrom)) {
      const msg = `the asked-for moment ${new Date(asked).toISOString()} is older than the kept history: ${EVENT_STREAM} keeps facts from ${historyFrom} on (older ones were removed once compacted, events.retention)`;
      if (at !== undefined) {
        await nc.drain();
        await stopped?.close();
        throw new Error(`${msg}, so the state then cannot be rebuilt`);
      }
      process.stderr.write(`replay: ${msg}: timelines start there\n`);
    } else if (historyFrom) process.stderr.write(`replay: the history starts at ${historyFrom} (older facts were removed once compacted, events.retention): timelines of older contexts and credentials start mid-way\n`);
  }
  try {
    const timeline = args.values.timeline === true || id !== undefined || (await logSize(nc, file)) <= TIMELINE_LIMIT;
    const bar = progressBar('replay', process.stderr, file ? 'chars' : 'events');
    const onProgress = (d: number, t: number) => bar.update(d, t);
    // From JetStream, a worker thread receives while this one folds (streams/README.md "Performance").
    const facts = file ? factSource({ file }, { onProgress }) : readFactBatchesInWorker(conn, { filterSubject: factFilter(aggregate, id), onProgress });
    const o = await replayLog(facts, {
      aggregate,
      id,
      sinceMs,
      untilMs,
      check: args.values['no-check'] !== true,
      timeline,
      toleranceMs,
    }).finally(() => bar.stop());
    const nowMs = at ?? (o.world.lastTime ? Date.parse(o.world.lastTime) : undefined);
    const rows = stateRows(o.world, { nowMs, machines: o.actors });
    if (json) {
      const { world: _w, actors, ...rest } = o;
      process.stdout.write(JSON.stringify({ source, ...(at !== undefined ? { at: new Date(at).toISOString() } : {}), ...(historyFrom ? { history_from: historyFrom } : {}), ...rest, states: rows, timelines: actors.filter((a) => a.timeline) }) + '\n');
    } else {
      printHuman(o, rows, { source, at, showTimelines: args.values.timeline === true || id !== undefined || o.actors.length <= 20, all: args.values.all === true });
    }
    if (o.divergences.length) {
      process.stderr.write(`replay: ${o.divergences.length} divergence(s) between the log and the machines\n`);
      process.exitCode = 1;
    }
  } finally {
    await nc?.drain();
    await stopped?.close();
  }
}

main().catch((e: Error) => {
  process.stderr.write(`replay: ${e.message}\n${e instanceof UsageError ? USAGE + '\n' : ''}`);
  process.exitCode = e instanceof UsageError ? 64 : 2;
});
