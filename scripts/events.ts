/**
 * The lifecycle event log as a product (streams/README.md "Subscribe").
 *
 *   npm run events -- tail [subject-filter] [--json] [--since <time>|--all]
 *   npm run events -- export [subject-filter] [--file out.jsonl]
 *   npm run -s events -- credentials [--json]
 *
 * Connects to NATS_URL, else to the embedded server of the node under DATA_DIR (default ./data),
 * found through its nats-server_<pid>.ports file. `export` also reads a stopped node's log (a private
 * nats-server on a copy of its store).
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { connectBus, type BusConnection } from '../streams/busConnection';
import { jetstream, DeliverPolicy, type OrderedConsumerOptions } from '@nats-io/jetstream';
import { from, map } from 'rxjs';
import { EVENT_STREAM, upcast, type Envelope } from '../streams';
import { openFactPush, type FactPush } from '../streams/factPush';
import { cliArgs, str, UsageError, type Parsed } from './cli/args';
import { locateLog, resolveNatsUrl, cliConnection } from './cli/natsUrl';
import { openStoppedLog } from './cli/stoppedNode';
import { subjectFilter } from './cli/subjectFilter';
import { formatFact } from './cli/formatFact';
import { LineWriter } from '../streams/jsonLines';
import { progressBar } from './cli/progress';
import { parseTime } from '../streams/time';

const FILTER = `subject-filter: es.v1.evt.<aggregate>.<id>.<fact> with * and >, or relative: scroll, pit.<id>, *.*.expired`;
const TIME = 'time: ISO-8601, epoch ms, now, or -15m / -2h / -1d';
const USAGE = {
  main: `usage:
  npm run events -- tail [subject-filter] [--json] [--since <time> | --all]
  npm run events -- export [subject-filter] [--file out.jsonl]
  npm run -s events -- credentials [--json]
  npm run events -- <command> --help
${FILTER}
${TIME}`,
  tail: `usage: npm run events -- tail [subject-filter] [--json] [--since <time> | --all]
Follows the live event log, one line per stored fact (--json: the envelope as stored).
  --since <time>  start from that time instead of now
  --all           start from the beginning of the log
${FILTER}
${TIME}`,
  export: `usage: npm run events -- export [subject-filter] [--file out.jsonl]
Writes the whole event log (or the filtered part) as JSON lines, in log order, to --file or stdout.
Reads a stopped node's log under DATA_DIR through a private nats-server on a copy of its store.
${FILTER}`,
  credentials: `usage: npm run -s events -- credentials [--json]
Prints how a read-only subscriber connects to the event log: the servers, its credentials (the
subscriber's nkey seed of the node under DATA_DIR, or what NATS_URL with NATS_NKEY / NATS_CREDS /
NATS_USER+NATS_PASSWORD / NATS_CA give) and its inbox prefix. --json: one JSON object
{"servers": [...], "nkey_seed" | "user"+"pass" | "creds": ..., "inbox_prefix": ..., "tls"?: {"ca": PEM}}.`,
};
const HELP = { help: { type: 'boolean', short: 'h' } } as const;
/** How long the server keeps a tail's consumer once the CLI is gone without deleting it (kill -9). */
const TAIL_INACTIVE_MS = 10_000;

const dec = new TextDecoder();

async function connectTo(conn: BusConnection, how: string): Promise<NatsConnection> {
  try {
    return await connectBus(conn, { name: 'es-events-cli' });
  } catch (e) {
    throw new Error(`cannot connect to ${conn.servers.join(',')} (${how}): ${(e as Error).message}. Is the node running? Set NATS_URL (and NATS_NKEY, NATS_CREDS or NATS_USER/NATS_PASSWORD) or DATA_DIR (see streams/README.md)`, { cause: e });
  }
}

/** Follows the live stream through an ordered consumer: only stored (acknowledged, de-duplicated) facts. */
async function tail(args: Parsed): Promise<void> {
  const filter = subjectFilter(args.positionals[0]);
  const json = args.values.json === true;
  const since = str(args, 'since');
  if (since !== undefined && args.values.all) throw new UsageError('--since and --all exclude each other');
  // Checked before connecting: a bad time is a usage error, not a hang.
  let startTime: string | undefined;
  try {
    startTime = since === undefined ? undefined : new Date(parseTime(since)).toISOString();
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const where = locateLog();
  if (where.kind === 'stopped') {
    throw new Error(`the node whose DATA_DIR is ${where.dataDir} is not running: start it (npm start) to follow its events; \`npm run events -- export\` and \`npm run replay\` read a stopped node's log`);
  }
  const nc = await connectTo(where.conn, where.source);
  const opts: Partial<OrderedConsumerOptions> = {
    filter_subjects: filter,
    inactive_threshold: TAIL_INACTIVE_MS,
    ...(args.values.all ? { deliver_policy: DeliverPolicy.All } : startTime ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: startTime } : { deliver_policy: DeliverPolicy.New }),
  };
  const consumer = await jetstream(nc).consumers.get(EVENT_STREAM, opts);
  const messages = await consumer.consume();
  const out = new LineWriter();
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      messages.stop();
      // The ordered consumer is ephemeral: delete it now rather than leave it for its inactive threshold.
      await consumer.delete().catch(() => undefined);
      await nc.drain().catch(() => undefined);
    })());
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(sig, () => void stop());
  process.stderr.write(`tailing ${filter} on ${nc.getServer()}\n`); // readiness line: the consumer exists
  await new Promise<void>((resolve, reject) => {
    from(messages)
      .pipe(
        map((m) => {
          const text = dec.decode(m.data);
          if (json) return text;
          try {
            return formatFact(upcast(JSON.parse(text) as Envelope));
          } catch {
            return `${new Date(m.info.timestampNanos / 1e6).toISOString()}  (not an envelope) ${m.subject}`;
          }
        }),
      )
      .subscribe({ next: (line) => void out.write(line), error: reject, complete: resolve });
  });
  await stop();
}

/**
 * Writes every fact of ES_EVT (or the filtered part) as JSON lines, exactly as stored, in log order.
 * Facts arrive by push (streams/factPush.ts); a full output buffer pauses the server (flow control).
 */
async function exportLog(args: Parsed): Promise<void> {
  const file = str(args, 'file');
  const filter = subjectFilter(args.positionals[0]);
  const where = locateLog();
  const stoppedLog = where.kind === 'stopped' ? await openStoppedLog(where.natsDir) : undefined;
  if (stoppedLog && where.kind === 'stopped') process.stderr.write(`the node whose DATA_DIR is ${where.dataDir} is stopped: reading a copy of its event log (its store is not touched)\n`);
  const nc = await connectTo(stoppedLog?.conn ?? (where.kind === 'server' ? where.conn : { servers: [] }), stoppedLog ? 'copy of a stopped node' : where.kind === 'server' ? where.source : '');
  const out = new LineWriter(file);
  const bar = file ? progressBar('export') : progressBar('export', { isTTY: false } as NodeJS.WriteStream);
  let n = 0;
  let push: FactPush | undefined;
  let lines: string[] = [];
  let held = false;
  const flush = () => {
    if (!lines.length) return;
    const buffered = out.writeNow(lines.join(''));
    lines = [];
    if (buffered > 8 << 20 && !held) {
      // The output is behind: stop answering flow control until it drains.
      held = true;
      push?.hold(true);
      out.onDrain(() => {
        held = false;
        push?.hold(false);
      });
    }
  };
  try {
    push = await openFactPush(
      nc,
      (data) => {
        lines.push(dec.decode(data) + '\n');
        if (++n % 4096 === 0) {
          flush();
          bar.update(n, push?.total ?? n);
        }
      },
      filter,
    );
    await push.finished;
    flush();
    bar.update(n, push.total);
  } finally {
    bar.stop();
    await push?.close();
    await out.close();
    await nc.drain();
    await stoppedLog?.close();
  }
  if (file) process.stderr.write(`exported ${n} events to ${file}\n`);
}

/** The subscriber's connection (streams/README.md "Subscribe from your own code"). Holds a secret: printed to stdout only. */
async function credentials(args: Parsed): Promise<void> {
  const r = resolveNatsUrl();
  if (r.source === 'default') throw new Error('no node found: set DATA_DIR to a node\'s data folder (its nats-server writes DATA_DIR/nats/nats-server_<pid>.ports), or NATS_URL');
  const c = cliConnection(r.url, r.source);
  if (r.source === 'ports file' && !c.nkeySeed) throw new Error(`no subscriber credentials under ${process.env.DATA_DIR ?? './data'}/nats/auth: start the node once with this version`);
  const out = {
    servers: c.servers,
    ...(c.nkeySeed ? { nkey_seed: c.nkeySeed } : {}),
    ...(c.user ? { user: c.user, pass: c.pass } : {}),
    ...(c.creds ? { creds: c.creds } : {}),
    inbox_prefix: c.inboxPrefix,
    ...(c.tls?.ca ? { tls: { ca: c.tls.ca } } : {}),
  };
  if (args.values.json) {
    process.stdout.write(JSON.stringify(out) + '\n');
    return;
  }
  const lines = [`servers: ${c.servers.join(', ')}${r.source === 'ports file' && !r.live ? '  (the node is not running)' : ''}`];
  if (c.nkeySeed) lines.push(`nkey seed: ${c.nkeySeed}`);
  if (c.user) lines.push(`user: ${c.user}`, `password: ${c.pass}`);
  if (c.creds) lines.push('creds: (the file named by NATS_CREDS)');
  if (!c.nkeySeed && !c.user && !c.creds) lines.push('credentials: none (the servers let anonymous clients in)');
  lines.push(`inbox prefix: ${c.inboxPrefix} (set it in your client: the subscriber may not subscribe to other inboxes)`);
  if (c.tls?.ca) lines.push(`tls: trust the CA in NATS_CA (${process.env.NATS_CA})`);
  process.stdout.write(lines.join('\n') + '\n');
}

const COMMANDS = {
  tail: { run: tail, options: { ...HELP, json: { type: 'boolean' }, since: { type: 'string' }, all: { type: 'boolean' } } },
  export: { run: exportLog, options: { ...HELP, file: { type: 'string' } } },
  credentials: { run: credentials, options: { ...HELP, json: { type: 'boolean' } } },
} as const;

async function main(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  if (cmd === undefined || cmd === '-h' || cmd === '--help' || cmd === 'help') {
    if (rest.length) throw new UsageError(`unexpected argument [${rest[0]}]`);
    process.stdout.write(USAGE.main + '\n');
    if (cmd === undefined) process.exitCode = 64;
    return;
  }
  if (!Object.hasOwn(COMMANDS, cmd)) throw new UsageError(`unknown command [${cmd}]: tail, export or credentials`);
  const c = COMMANDS[cmd as keyof typeof COMMANDS];
  try {
    const args = cliArgs(rest, { options: c.options, maxPositionals: cmd === 'credentials' ? 0 : 1 });
    if (args.values.help) {
      process.stdout.write(USAGE[cmd as keyof typeof COMMANDS] + '\n');
      return;
    }
    await c.run(args);
  } catch (e) {
    if (e instanceof UsageError) (e as UsageError & { command?: string }).command = cmd;
    throw e;
  }
}

main(process.argv.slice(2)).catch((e: Error & { command?: string }) => {
  if (e instanceof UsageError) {
    process.stderr.write(`events: ${e.message}\n${USAGE[(e.command ?? 'main') as keyof typeof USAGE]}\n`);
    process.exitCode = 64;
  } else {
    process.stderr.write(`events: ${e.message}\n`);
    process.exitCode = 1;
  }
});
