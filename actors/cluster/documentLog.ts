import type { PubAck } from '@nats-io/jetstream';
import type { Bus } from '../../streams';

/** Thrown when the writers cannot be brought to a quiet instant in time. */
export class QuiesceTimeout extends Error {
  constructor(ms: number) {
    super(`document log writes still in flight after ${ms} ms`);
    this.name = 'QuiesceTimeout';
  }
}

/**
 * The node's writer to the document log (ES_DATA). Every write section (a shard batch: apply, then
 * append; a metadata change: append, then apply) runs through `write`, so the node knows
 *
 * - `lastSeq`, the highest ES_DATA sequence it appended (or replayed at start-up), and
 * - whether memory may differ from the log (`diverged`: an append failed or timed out, and a
 *   timed-out append may still have been stored).
 *
 * `quiet(fn)` holds new write sections back, waits for running ones to finish (each ends with its
 * JetStream ack), then runs `fn` at an instant where the in-memory projection is exactly the log up
 * to `lastSeq`: the consistent S a snapshot needs. Writers wait about one ack round trip.
 */
export class DocumentLog {
  /** Highest ES_DATA sequence whose effects are applied. */
  lastSeq = 0;
  /** Ops (documents and metadata changes) applied since start, replay included. */
  appliedOps = 0;
  diverged = false;
  private active = 0;
  private gate: Promise<void> | null = null;
  private idle?: () => void;

  constructor(private readonly bus: Bus) {}

  /** Runs one write section; waits first while a snapshot takes its consistent instant. */
  async write<T>(fn: () => Promise<T>): Promise<T> {
    while (this.gate) await this.gate;
    this.active++;
    try {
      return await fn();
    } finally {
      if (--this.active === 0) this.idle?.();
    }
  }

  /** Appends one message (inside a write section) carrying `ops` ops; resolves on the ack. */
  async append(subject: string, payload: Uint8Array, ops: number): Promise<PubAck> {
    try {
      const ack = await this.bus.publish(subject, payload);
      if (ack.seq > this.lastSeq) this.lastSeq = ack.seq;
      this.appliedOps += ops;
      return ack;
    } catch (e) {
      this.diverged = true;
      throw e;
    }
  }

  /** Counts ops applied by the start-up replay, up to stream sequence `seq`. */
  replayed(seq: number, ops: number): void {
    if (seq > this.lastSeq) this.lastSeq = seq;
    this.appliedOps += ops;
  }

  /**
   * Runs `fn` synchronously at an instant with no write section in flight: everything applied is
   * acknowledged at a sequence <= lastSeq and nothing past lastSeq is applied.
   */
  async quiet<T>(fn: () => T, timeoutMs = 30_000): Promise<T> {
    while (this.gate) await this.gate;
    let open!: () => void;
    this.gate = new Promise<void>((r) => (open = r));
    try {
      if (this.active > 0) {
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            new Promise<void>((r) => (this.idle = r)),
            new Promise<never>((_, rej) => (timer = setTimeout(() => rej(new QuiesceTimeout(timeoutMs)), timeoutMs))),
          ]);
        } finally {
          clearTimeout(timer);
          this.idle = undefined;
        }
      }
      return fn();
    } finally {
      this.gate = null;
      open();
    }
  }
}
