import { createInbox, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import { EVENT_STREAM } from './subjects';
import { upcast, type Envelope } from './envelope';

/** Options of {@link readFactBatches}. */
export interface FactBatchOptions {
  /** One subject filter (nats-server 2.9 supports one filter per consumer). */
  filterSubject?: string;
  /** Facts per yielded batch (default 4096). */
  batchSize?: number;
  /** Called with (done, total) once per batch. */
  onProgress?: (done: number, total: number) => void;
}

const dec = new TextDecoder();
const SECOND_NS = 1_000_000_000;

/**
 * Reads ES_EVT (upcast envelopes) from the start up to what it held when the call began, in batches.
 *
 * Built for long replays (a 1M-event replay spends most of its time here), so unlike `readFacts`:
 * - an ephemeral push consumer without acks, with flow control, delivers to a plain subscription
 *   callback; in scripts/benchReplay.ts it sustains ~1.3-1.6x an ordered pull consumer, whose
 *   per-message sequence bookkeeping and pull requests cost more than the fold itself;
 * - the generator yields one array per `batchSize` facts instead of one promise per fact;
 * - completeness is checked by count (what the consumer had pending at creation). If facts aged out
 *   (max_age) meanwhile, the idle heartbeat and an empty pending count end the read.
 * Finishes at once when nothing matches. The consumer is deleted when the read ends or is abandoned.
 *
 * @example
 * for await (const batch of readFactBatches(nc)) for (const e of batch) applyFact(world, e);
 */
export async function* readFactBatches(nc: NatsConnection, opts: FactBatchOptions = {}): AsyncGenerator<Envelope[]> {
  const jsm = await jetstreamManager(nc);
  if ((await jsm.streams.info(EVENT_STREAM)).state.messages === 0) return;
  const size = opts.batchSize ?? 4096;
  const inbox = createInbox();
  let batch: Envelope[] = [];
  const ready: Envelope[][] = [];
  let done = 0;
  let total = Infinity;
  let failure: unknown;
  let idle = false;
  let wake: (() => void) | undefined;
  const flush = () => {
    if (batch.length) ready.push(batch);
    batch = [];
    wake?.();
  };
  const sub = nc.subscribe(inbox, {
    callback: (err, m) => {
      if (err) {
        failure = err;
        return flush();
      }
      if (m.data.length === 0 && m.headers?.code === 100) {
        // Flow control request (has a reply: answer it or delivery stalls) or idle heartbeat.
        if (m.reply) m.respond();
        else {
          idle = true;
          wake?.();
        }
        return;
      }
      try {
        batch.push(upcast(JSON.parse(dec.decode(m.data)) as Envelope));
      } catch (e) {
        failure = new Error(`ES_EVT message on ${m.subject} is not an envelope`, { cause: e });
      }
      done++;
      if (batch.length >= size || done >= total || failure) flush();
    },
  });
  let name: string | undefined;
  try {
    const ci = await jsm.consumers.add(EVENT_STREAM, {
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.All,
      deliver_subject: inbox,
      flow_control: true,
      idle_heartbeat: SECOND_NS,
      mem_storage: true,
      ...(opts.filterSubject ? { filter_subject: opts.filterSubject } : {}),
    });
    name = ci.name;
    // Delivery may have begun before this answer: pending + delivered is what matched at creation.
    total = ci.num_pending + ci.delivered.consumer_seq;
    if (done >= total) flush();
    for (;;) {
      if (ready.length) {
        opts.onProgress?.(Math.min(done, total), total);
        yield ready.shift()!;
        continue;
      }
      if (failure) throw failure;
      if (done >= total) break;
      if (idle) {
        idle = false;
        const c = await jsm.consumers.info(EVENT_STREAM, name);
        if (c.num_pending === 0 && c.delivered.consumer_seq <= done) break; // the rest aged out
        continue; // facts may have arrived while we asked
      }
      await new Promise<void>((r) => (wake = r));
      wake = undefined;
    }
    flush();
    while (ready.length) yield ready.shift()!;
  } finally {
    sub.unsubscribe();
    if (name) await jsm.consumers.delete(EVENT_STREAM, name).catch(() => false);
  }
}
