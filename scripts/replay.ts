/**
 * Replay for debugging (streams/README.md "Replay").
 *
 *   npm run replay -- [--aggregate pit|scroll|token|apikey|servicetoken] [--id <id>]
 *                     [--since <time>] [--until <time>] [--at <time>] [--file events.jsonl]
 *                     [--timeline] [--all] [--json] [--no-check] [--tolerance <ms>]
 *   npm run replay -- scroll <uuid>          (same as --aggregate scroll --id <uuid>)
 *
 * Reads ES_EVT (or an exported file), folds it with streams/evolve.ts, re-runs it through the
 * service's XState machines (streams/machineReplay.ts) and prints each actor's timeline, its final
 * state and any divergence. `--at` shows every context and credential as it stood at that moment.
 * Exit code 1 when the machines diverge from the log.
 */
import { statSync } from 'node:fs';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { EVENT_STREAM } from '../streams';
import { parseArgs, flag } from './cli/args';
import { resolveNatsUrl } from './cli/natsUrl';
import { parseTime } from './cli/time';
import { progressBar } from './cli/progress';
import { factFilter, factSource, replayLog, type ReplayOutcome } from './cli/replayLog';
import { readFactBatchesInWorker } from './cli/workerFactSource';
import { formatRow, stateRows, type StateRow } from './cli/stateRows';

const USAGE = `usage: npm run replay -- [--aggregate pit|scroll|token|apikey|servicetoken] [--id <id>]
       [--since <time>] [--until <time>] [--at <time>] [--file events.jsonl]
       [--timeline] [--all] [--json] [--no-check] [--tolerance <ms>]
time: ISO-8601, epoch ms, now, or -15m / -2h / -1d`;
const AGGREGATES = ['scroll', 'pit', 'token', 'apikey', 'servicetoken', 'user', 'role'];
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
      for (const s of a.timeline!) out.push(`  ${s.time}  #${String(s.seq).padEnd(3)} ${s.type.padEnd(24)} -> ${s.state}`);
    }
  } else if (withTimeline.length) out.push(`(${withTimeline.length} timelines: narrow with --id or --aggregate, or pass --timeline)`);
  out.push('', ctx.at !== undefined ? `== state at ${new Date(ctx.at).toISOString()} ==` : '== final state ==');
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(`${r.aggregate} ${r.status}`, (counts.get(`${r.aggregate} ${r.status}`) ?? 0) + 1);
  if (rows.length <= ROW_LIMIT || ctx.all) for (const r of rows) out.push(formatRow(r));
  else out.push(`(${rows.length} contexts and credentials: narrow with --aggregate/--id, or pass --all)`);
  out.push(`totals: ${[...counts].map(([k, n]) => `${k}=${n}`).join(', ') || 'none'}`);
  out.push('', `== divergences (${o.divergences.length}) ==`);
  for (const d of o.divergences.slice(0, 100)) {
    out.push(`${d.time}  ${d.aggregate} ${d.id} #${d.seq} ${d.logged}: ${d.detail}${d.emitted.length ? ` [machine: ${d.emitted.join(', ')}]` : ''}`);
  }
  if (o.divergences.length > 100) out.push(`… ${o.divergences.length - 100} more (use --json)`);
  process.stdout.write(out.join('\n') + '\n');
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2), ['json', 'timeline', 'all', 'no-check', 'help']);
  if (args.flags.help) {
    process.stdout.write(USAGE + '\n');
    return;
  }
  const aggregate = flag(args, 'aggregate') ?? (AGGREGATES.includes(args._[0]) ? args._[0] : undefined);
  const id = flag(args, 'id') ?? (aggregate && args._[0] === aggregate ? args._[1] : undefined);
  if (aggregate && !AGGREGATES.includes(aggregate)) throw new Error(`unknown aggregate [${aggregate}]: ${AGGREGATES.join('|')}`);
  const now = Date.now();
  const since = flag(args, 'since');
  const until = flag(args, 'until');
  const atArg = flag(args, 'at');
  const at = atArg === undefined ? undefined : parseTime(atArg, now);
  const untilMs = until === undefined ? at : Math.min(parseTime(until, now), at ?? Infinity);
  const file = flag(args, 'file');
  let nc: NatsConnection | undefined;
  let source = file ?? '';
  const { url } = resolveNatsUrl();
  if (!file) {
    nc = await connect({ servers: url, name: 'es-replay-cli' });
    source = `${EVENT_STREAM} on ${url}${factFilter(aggregate, id) ? ` (${factFilter(aggregate, id)})` : ''}`;
  }
  const json = args.flags.json === true;
  try {
    const timeline = args.flags.timeline === true || id !== undefined || (await logSize(nc, file)) <= TIMELINE_LIMIT;
    const bar = progressBar('replay', process.stderr, file ? 'chars' : 'events');
    const onProgress = (d: number, t: number) => bar.update(d, t);
    // From JetStream, a worker thread receives while this one folds (streams/README.md "Performance").
    const facts = file ? factSource({ file }, { onProgress }) : readFactBatchesInWorker(url, { filterSubject: factFilter(aggregate, id), onProgress });
    const o = await replayLog(facts, {
      aggregate,
      id,
      sinceMs: since === undefined ? undefined : parseTime(since, now),
      untilMs,
      check: args.flags['no-check'] !== true,
      timeline,
      toleranceMs: flag(args, 'tolerance') === undefined ? undefined : Number(flag(args, 'tolerance')),
    }).finally(() => bar.stop());
    const nowMs = at ?? (o.world.lastTime ? Date.parse(o.world.lastTime) : undefined);
    const rows = stateRows(o.world, { nowMs, machines: o.actors });
    if (json) {
      const { world: _w, actors, ...rest } = o;
      process.stdout.write(JSON.stringify({ source, ...(at !== undefined ? { at: new Date(at).toISOString() } : {}), ...rest, states: rows, timelines: actors.filter((a) => a.timeline) }) + '\n');
    } else {
      printHuman(o, rows, { source, at, showTimelines: args.flags.timeline === true || id !== undefined || o.actors.length <= 20, all: args.flags.all === true });
    }
    if (o.divergences.length) {
      process.stderr.write(`replay: ${o.divergences.length} divergence(s) between the log and the machines\n`);
      process.exitCode = 1;
    }
  } finally {
    await nc?.drain();
  }
}

main().catch((e: Error) => {
  process.stderr.write(`replay: ${e.message}\n`);
  process.exitCode = 2;
});
