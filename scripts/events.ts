/**
 * The lifecycle event log as a product (streams/README.md "Subscribe").
 *
 *   npm run events -- tail [subject-filter] [--json] [--since <time>|--all]
 *   npm run events -- export [subject-filter] [--file out.jsonl]
 *
 * Connects to NATS_URL, else to the embedded server of the node under DATA_DIR (default ./data),
 * found through its nats-server_<pid>.ports file.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, DeliverPolicy, type OrderedConsumerOptions } from '@nats-io/jetstream';
import { from, map } from 'rxjs';
import { EVENT_STREAM, upcast, type Envelope } from '../streams';
import { openFactPush, type FactPush } from '../streams/factPush';
import { parseArgs, flag, type Args } from './cli/args';
import { resolveNatsUrl } from './cli/natsUrl';
import { subjectFilter } from './cli/subjectFilter';
import { formatFact } from './cli/formatFact';
import { LineWriter } from './cli/jsonLines';
import { progressBar } from './cli/progress';
import { parseTime } from './cli/time';

const USAGE = `usage:
  npm run events -- tail [subject-filter] [--json] [--since <time> | --all]
  npm run events -- export [subject-filter] [--file out.jsonl]
subject-filter: es.v1.evt.<aggregate>.<id>.<fact> with * and >, or relative: scroll, pit.<id>, *.*.expired
time: ISO-8601, epoch ms, now, or -15m / -2h / -1d`;

const dec = new TextDecoder();

async function open(): Promise<NatsConnection> {
  const { url, source } = resolveNatsUrl();
  try {
    return await connect({ servers: url, name: 'es-events-cli' });
  } catch (e) {
    throw new Error(`cannot connect to ${url} (${source}): ${(e as Error).message}. Set NATS_URL or DATA_DIR (see streams/README.md)`, { cause: e });
  }
}

/** Follows the live stream through an ordered consumer: only stored (acknowledged, de-duplicated) facts. */
async function tail(args: Args): Promise<void> {
  const filter = subjectFilter(args._[1]);
  const json = args.flags.json === true;
  const since = flag(args, 'since');
  const nc = await open();
  const opts: Partial<OrderedConsumerOptions> = {
    filter_subjects: filter,
    ...(args.flags.all ? { deliver_policy: DeliverPolicy.All } : since ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: new Date(parseTime(since)).toISOString() } : { deliver_policy: DeliverPolicy.New }),
  };
  const consumer = await jetstream(nc).consumers.get(EVENT_STREAM, opts);
  const messages = await consumer.consume();
  const out = new LineWriter();
  const stop = () => {
    messages.stop();
    void nc.drain();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
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
  await nc.closed();
}

/**
 * Writes every fact of ES_EVT (or the filtered part) as JSON lines, exactly as stored, in log order.
 * Facts arrive by push (streams/factPush.ts); a full output buffer pauses the server (flow control).
 */
async function exportLog(args: Args): Promise<void> {
  const file = flag(args, 'file');
  const nc = await open();
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
      subjectFilter(args._[1]),
    );
    await push.finished;
    flush();
    bar.update(n, push.total);
  } finally {
    bar.stop();
    await push?.close();
    await out.close();
    await nc.drain();
  }
  if (file) process.stderr.write(`exported ${n} events to ${file}\n`);
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2), ['json', 'all', 'help']);
  const cmd = args._[0];
  if (cmd === 'tail') return tail(args);
  if (cmd === 'export') return exportLog(args);
  process.stderr.write(USAGE + '\n');
  process.exitCode = args.flags.help ? 0 : 2;
}

main().catch((e: Error) => {
  process.stderr.write(`events: ${e.message}\n`);
  process.exitCode = 1;
});
