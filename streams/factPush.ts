import { createInbox, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import { EVENT_STREAM } from './subjects';
import { upcast, type Envelope } from './envelope';

/**
 * The delivery under `readFactBatches` (factReader.ts) and the replay reader worker: kept free of
 * folds and machines so a worker thread loads only NATS.
 *
 * Fast one-shot reads of the whole event log, for replays and for a node reviving its contexts.
 *
 * Unlike `readFacts` (an ordered pull consumer, one promise per fact): an ephemeral push consumer
 * without acks, with flow control, delivers to a plain subscription callback, and readers get arrays
 * of facts. The ordered consumer's per-message sequence bookkeeping and pull requests cost more than
 * the fold itself (scripts/benchReplay.ts measures both). Completeness is checked by count: what the
 * filter matched when the consumer was created. Facts that age out (max_age) meanwhile end the read
 * on the next idle heartbeat, once the server reports nothing pending.
 */

const dec = new TextDecoder();
const SECOND_NS = 1_000_000_000;

/**
 * How a push consumer's messages reach {@link openFactPush}: nats.js by default ({@link natsTransport});
 * the replay reader worker brings its own raw protocol reader (scripts/cli/natsWire.ts).
 */
export interface FactTransport {
  /** Subscribes to `inbox`; resolves once the server has the subscription. */
  listen(inbox: string, on: FactTransportHandler): Promise<{ respond(reply: string): void; close(): void }>;
}
export interface FactTransportHandler {
  /** A stored fact's payload (a view valid during the call); `subject` when the transport knows it. */
  fact(data: Uint8Array, subject?: string): void;
  /** A status-100 message: a flow-control request (`reply` set) or an idle heartbeat. */
  control(reply: string | undefined): void;
  error(e: unknown): void;
}

/** The default transport: a nats.js subscription on `nc`. */
export function natsTransport(nc: NatsConnection): FactTransport {
  return {
    async listen(inbox, on) {
      const replies = new Map<string, Msg>();
      const sub = nc.subscribe(inbox, {
        callback: (err, m) => {
          if (err) return on.error(err);
          if (m.data.length === 0 && m.headers?.code === 100) {
            if (m.reply) replies.set(m.reply, m);
            return on.control(m.reply);
          }
          on.fact(m.data, m.subject);
        },
      });
      await nc.flush();
      return {
        respond(reply) {
          replies.get(reply)?.respond();
          replies.delete(reply);
        },
        close: () => sub.unsubscribe(),
      };
    },
  };
}

/** A running delivery of raw fact payloads (see {@link openFactPush}). */
export interface FactPush {
  /** Facts the filter matched when the consumer was created. */
  readonly total: number;
  /** Resolves when `total` facts were delivered (or the rest aged out); rejects on a subscription error. */
  readonly finished: Promise<void>;
  /** While held, flow-control requests stay unanswered, so the server pauses delivery (back-pressure). */
  hold(on: boolean): void;
  /** Unsubscribes and deletes the consumer. */
  close(): Promise<void>;
}

/**
 * Starts delivering every fact payload of ES_EVT (or the part `filterSubject` matches) to `onFact`,
 * in log order, up to what the stream held at the call.
 */
export async function openFactPush(
  nc: NatsConnection,
  onFact: (data: Uint8Array, subject?: string) => void,
  filterSubject?: string,
  /** First stream sequence to deliver (default: the start of the stream). */
  startSeq?: number,
  /** How messages arrive (default: a nats.js subscription on `nc`, which also runs the JetStream API). */
  transport: FactTransport = natsTransport(nc),
): Promise<FactPush> {
  const jsm = await jetstreamManager(nc);
  if ((await jsm.streams.info(EVENT_STREAM)).state.messages === 0) {
    return { total: 0, finished: Promise.resolve(), hold: () => undefined, close: async () => undefined };
  }
  let settle!: { resolve: () => void; reject: (e: unknown) => void };
  const finished = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  let delivered = 0;
  let total = Infinity;
  let name: string | undefined;
  let held = false;
  let checking = false;
  const parked: string[] = [];
  const checkIdle = async () => {
    if (checking || !name || delivered >= total) return;
    checking = true;
    try {
      const c = await jsm.consumers.info(EVENT_STREAM, name);
      if (c.num_pending === 0 && c.delivered.consumer_seq <= delivered) settle.resolve(); // the rest aged out
    } catch {
      /* closing */
    } finally {
      checking = false;
    }
  };
  // A subscriber may listen only under its own inbox prefix (nats.js keeps it in the connection's options).
  const inbox = createInbox((nc as unknown as { options?: { inboxPrefix?: string } }).options?.inboxPrefix);
  const listening = await transport.listen(inbox, {
    fact(data, subject) {
      delivered++;
      try {
        onFact(data, subject);
      } catch (e) {
        settle.reject(e);
      }
      if (delivered >= total) settle.resolve();
    },
    control(reply) {
      // A flow-control request (answer it, or delivery stalls) or an idle heartbeat.
      if (!reply) void checkIdle();
      else if (held) parked.push(reply);
      else listening.respond(reply);
    },
    error: (e) => settle.reject(e),
  });
  const close = async () => {
    listening.close();
    if (name) await jsm.consumers.delete(EVENT_STREAM, name).catch(() => false);
  };
  try {
    const ci = await jsm.consumers.add(EVENT_STREAM, {
      ack_policy: AckPolicy.None,
      ...(startSeq && startSeq > 1 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: startSeq } : { deliver_policy: DeliverPolicy.All }),
      deliver_subject: inbox,
      flow_control: true,
      idle_heartbeat: SECOND_NS,
      mem_storage: true,
      ...(filterSubject ? { filter_subject: filterSubject } : {}),
    });
    name = ci.name;
    // Delivery may begin before this answer: pending + delivered is what matched at creation.
    total = ci.num_pending + ci.delivered.consumer_seq;
    if (delivered >= total) settle.resolve();
  } catch (e) {
    await close();
    throw e;
  }
  return {
    total,
    finished,
    hold(on) {
      held = on;
      if (!on) for (const r of parked.splice(0)) listening.respond(r);
    },
    close,
  };
}

/** Parses one stored payload into an (upcast) envelope. */
export function parseFact(data: Uint8Array, subject = EVENT_STREAM): Envelope {
  try {
    return upcast(JSON.parse(dec.decode(data)) as Envelope);
  } catch (e) {
    throw new Error(`ES_EVT message on ${subject} is not an envelope`, { cause: e });
  }
}
