import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, type JetStreamClient, type PubAck } from '@nats-io/jetstream';
import { subjects, type Aggregate } from './subjects';
import { aggregateOf, factOf, type Envelope } from './envelope';
import { Connectivity } from './connectivity';

const enc = new TextEncoder();

/**
 * Publishes lifecycle facts and document-log batches to JetStream.
 *
 * Appends are pipelined: callers await their own ack, but nothing waits for an earlier append's
 * ack before sending the next one (performance-facts.md: serial acks cost ~190 µs each). A window
 * bounds how many are in flight so a burst cannot queue unbounded memory.
 */
export class Bus {
  readonly js: JetStreamClient;
  private inFlight = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(readonly nc: NatsConnection, private readonly window = 256) {
    this.js = jetstream(nc);
  }

  /** Appends a fact to the event log on `es.v1.evt.<aggregate>.<id>.<fact>`; resolves on the ack. */
  append(env: Envelope): Promise<PubAck> {
    const subject = subjects.fact(aggregateOf(env.type) as Aggregate, env.aggregateId, factOf(env.type));
    return this.publish(subject, enc.encode(JSON.stringify(env)), env.id);
  }

  /** Appends raw bytes on a subject of a stream; resolves on the ack. */
  async publish(subject: string, payload: Uint8Array, msgID?: string): Promise<PubAck> {
    // Strict FIFO: once anyone waits, later callers queue behind them, and a finished publish hands
    // its slot straight to the oldest waiter. Appends of one aggregate (or shard) thus reach the
    // stream in call order even when the window is full, so a replay never sees seq n+1 before n.
    if (this.inFlight >= this.window || this.waiters.length) await new Promise<void>((r) => this.waiters.push(r));
    else this.inFlight++;
    try {
      // never queued in the client while NATS is down (it would be sent after a reconnect, long
      // after its caller gave up): fail fast, and learn at once of a drop while it is in flight
      return await Connectivity.of(this.nc).run('append to the log', () => this.js.publish(subject, payload, msgID ? { msgID, timeout: 10_000 } : { timeout: 10_000 }));
    } finally {
      const next = this.waiters.shift();
      if (next) next();
      else this.inFlight--;
    }
  }
}
