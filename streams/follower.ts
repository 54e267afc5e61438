import type { NatsConnection } from '@nats-io/transport-node';
import { DeliverPolicy, jetstream, jetstreamManager, type ConsumerMessages } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import { DATA_STREAM } from './subjects';
import { READ_MAX_BYTES, readWindow, type LoggedMessage } from './eventLog';
import { Connectivity } from './connectivity';
import { Slicer } from './slicer';

interface Waiter {
  seq: number;
  resolve: () => void;
  reject: (e: Error) => void;
  timer?: NodeJS.Timeout;
}

/** No message for this long while the stream has some past our position: the consumer is replaced. */
const STALL_MS = 1_500;
/** How often an idle follower checks that nothing is pending. */
const IDLE_CHECK_MS = 5_000;

/** What `_nodes/stats` shows of one follower. */
export interface FollowerStats {
  stream: string;
  filter: string;
  position: number;
  /** Times the watchdog found it idle with messages pending and replaced its consumer. */
  stalls: number;
  /** Times its consumer ended or failed and it followed again. */
  restarts: number;
  /** Ordered-consumer resets (a gap noticed, a leader change) and missed idle heartbeats. */
  resets: number;
  heartbeats_missed: number;
}

const followersOf = new WeakMap<NatsConnection, Set<StreamFollower>>();

/** The followers running on a connection (one node's), for `_nodes/stats`. */
export function followerStats(nc: NatsConnection): FollowerStats[] {
  return [...(followersOf.get(nc) ?? [])].map((f) => f.stats());
}

/** The follower did not reach a stream sequence in time. */
export class FollowTimeout extends Error {
  constructor(readonly stream: string, readonly seq: number, readonly position: number) {
    super(`the ${stream} follower reached ${position}, not ${seq}, in time`);
    this.name = 'FollowTimeout';
  }
}

/**
 * Follows a stream (the document log ES_DATA, the lifecycle log ES_EVT) from a start sequence,
 * forever, with one ordered consumer: every message arrives in stream order, so each node applies
 * them in exactly the order they were acknowledged. Start-up is the same follower catching up;
 * {@link caughtUp} resolves once it reached the last message that existed when it started. A node
 * that lost its connection (or its server) follows again from the last message it dispatched.
 *
 * `dispatch` runs synchronously for each message, in order; it must not throw (a throw is logged
 * and the message skipped, which would be a bug).
 */
export class StreamFollower {
  /** Stream sequence of the last message dispatched. */
  position = 0;
  private messages?: ConsumerMessages;
  private waiters: Waiter[] = [];
  private stopped = false;
  private loop?: Promise<void>;
  private catchUp!: { target: number; resolve: () => void; reject: (e: Error) => void; promise: Promise<void> };
  /** When the follower last dispatched a message (or last made sure nothing was pending). */
  private progressAt = Date.now();
  private watchdog?: NodeJS.Timeout;
  private checking = false;
  private stalls = 0;
  private restarts = 0;
  private resets = 0;
  private heartbeatsMissed = 0;
  /** The consumer this follower ended to replace it (after a reset), so its end is not a failure. */
  private renewing?: ConsumerMessages;

  constructor(
    private readonly nc: NatsConnection,
    private readonly stream: string,
    private readonly filter: string,
    private readonly dispatch: (m: LoggedMessage) => void,
    private readonly log: Logger,
    private readonly onProgress?: (done: number, total: number) => void,
  ) {}

  /** Starts following after `afterSeq`; returns once the consumer is set up. */
  async start(afterSeq: number): Promise<void> {
    this.position = afterSeq;
    let mine = followersOf.get(this.nc);
    if (!mine) followersOf.set(this.nc, (mine = new Set()));
    mine.add(this);
    const info = await (await jetstreamManager(this.nc)).streams.info(this.stream);
    let resolve!: () => void;
    let reject!: (e: Error) => void;
    const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
    promise.catch(() => undefined);
    this.catchUp = { target: info.state.last_seq, resolve, reject, promise };
    if (info.state.last_seq <= afterSeq) resolve();
    const first = await this.subscribe();
    this.loop = this.run(first);
    // The stream's last sequence may belong to a message purged since (a trimmed shard's log): the
    // consumer's own count says whether anything is left to read.
    if (!(info.state.last_seq <= afterSeq)) void this.settleTarget();
    this.watchdog = setInterval(() => void this.checkStall(), 500);
    this.watchdog.unref();
  }

  /**
   * The ordered consumer recovers from a leader change on its own only after missed heartbeats
   * (tens of seconds), and was seen to stall again after such a reset with messages pending. While
   * the stream holds messages past our position and none arrived for STALL_MS (checked sooner when
   * someone waits), the consumer is replaced by a new one from the message after the last dispatched.
   */
  private async checkStall(): Promise<void> {
    const idle = Date.now() - this.progressAt;
    if (this.stopped || this.checking || idle < (this.waiters.length ? STALL_MS : IDLE_CHECK_MS)) return;
    this.checking = true;
    try {
      const last = (await (await jetstreamManager(this.nc)).streams.info(this.stream)).state.last_seq;
      // nothing past our position, or only purged messages (the consumer has nothing left to deliver)
      const end = last <= this.position ? this.position : await this.existingEnd();
      if (end !== undefined && end <= this.position) {
        this.progressAt = Date.now(); // nothing pending: idle, not stalled
        this.catchUp.resolve();
        return;
      }
      if (Date.now() - this.progressAt < STALL_MS) return;
      this.stalls++;
      this.log.warn({ stream: this.stream, position: this.position, last, stalls: this.stalls }, `${this.stream} follower stalled with messages pending; following again`);
      this.progressAt = Date.now();
      this.messages?.stop();
    } catch {
      // no answer (the connection is down): the next tick asks again
    } finally {
      this.checking = false;
    }
  }

  /**
   * Called when the facts after `position` are no longer in the stream (the compactor removed them
   * while this follower was away, e.g. cut off from NATS for longer than `events.retention`): the
   * follower goes on from the stream's first message, and the owner reloads what it missed from
   * the compacted state.
   */
  onGap?: (from: number, to: number) => void;

  /**
   * The sequence of the last message that still exists for us, when the consumer has nothing left
   * to deliver (the stream's last sequence may be a purged message: a trimmed shard's log);
   * undefined when messages are still to come or the consumer cannot be asked.
   */
  private async existingEnd(): Promise<number | undefined> {
    try {
      const asked = this.consumer?.info(false);
      if (!asked) return undefined;
      let timer: NodeJS.Timeout | undefined;
      const ci = await Promise.race([asked, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), 2_000)))]).finally(() => clearTimeout(timer));
      if (!ci || ci.num_pending > 0) return undefined;
      return Math.max(this.position, ci.delivered.stream_seq);
    } catch {
      return undefined;
    }
  }

  /** At start: catch-up ends at the last message that exists, not at a purged last sequence. */
  private async settleTarget(): Promise<void> {
    // asked while the consumer delivers (until nothing is left for it to deliver)
    for (let i = 0; i < 300 && !this.stopped && this.position < this.catchUp.target; i++) {
      await new Promise((r) => setTimeout(r, i === 0 ? 50 : 100));
      if ((await this.existingEnd()) === undefined) continue; // the server still has messages for us
      // nothing left on the server: once what it sent is dispatched (no progress for a while), we
      // are at the end of what exists (the sequences after it were purged)
      const at = this.position;
      await new Promise((r) => setTimeout(r, 200));
      if (this.position === at) {
        this.catchUp.target = Math.min(this.catchUp.target, at);
        this.catchUp.resolve();
        return;
      }
    }
  }

  private consumer?: { info(cached?: boolean): Promise<{ num_pending: number; delivered: { stream_seq: number } }> };

  /** An ordered consumer from the message after `position`. */
  private async subscribe(): Promise<ConsumerMessages> {
    if (this.position > 0 && this.onGap) {
      const first = (await (await jetstreamManager(this.nc)).streams.info(this.stream)).state.first_seq;
      if (first > this.position + 1) {
        this.log.error({ stream: this.stream, position: this.position, first }, `${this.stream} no longer holds the messages after this follower's position (removed by retention once compacted): reloading from the compacted state`);
        this.onGap(this.position + 1, first - 1);
      }
    }
    const consumer = await jetstream(this.nc).consumers.get(this.stream, {
      filter_subjects: this.filter,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: this.position + 1,
    });
    // Pulled by count (pulls by bytes stall: see readWindow); for the document log, whose write
    // batches reach tens of MB, few enough that the server never queues more than its per-client
    // max_pending for us while a big batch is applied (slow-consumer cut).
    this.consumer = consumer;
    this.messages = await consumer.consume({ max_messages: this.stream === DATA_STREAM ? readWindow(this.nc, READ_MAX_BYTES) : 1_000 });
    // stopped while subscribing: stop() could not see this consumer, so it ends here
    if (this.stopped) this.messages.stop();
    void this.watch(this.messages);
    return this.messages;
  }

  /**
   * Watches the consumer's notifications. An ordered-consumer reset (its server restarted, a leader
   * changed, a gap was noticed) is not left to the client: nats.js (3.4) recreates the consumer but
   * keeps counting the pulls it had sent to the old one as outstanding (their ends go to an inbox it
   * no longer listens to), so the new one is asked for few or no messages and stalls until two idle
   * heartbeats are missed (30 s). This consumer is ended instead, and the follower starts a fresh one
   * from the message after the last it dispatched (see run).
   */
  private async watch(messages: ConsumerMessages): Promise<void> {
    try {
      for await (const st of messages.status()) {
        if (st.type === 'heartbeats_missed') this.heartbeatsMissed++;
        if (st.type === 'reset') {
          this.resets++;
          this.log.info({ stream: this.stream, position: this.position }, `${this.stream} follower consumer reset by the server side; following again with a fresh consumer`);
          this.renewing = messages;
          messages.stop();
          return;
        }
        if (st.type === 'heartbeats_missed') {
          this.log.warn({ stream: this.stream, event: st.type, position: this.position }, `${this.stream} follower consumer ${st.type}`);
        }
      }
    } catch {
      // the consumer ended
    }
  }

  /** Resolves when the follower reached the log's end as of `start`. */
  caughtUp(): Promise<void> {
    return this.catchUp.promise;
  }

  /**
   * Dispatches messages in order, forever. If the consumer ends (its server died, the connection
   * was closed and reopened), follows again from the message after the last one dispatched: a
   * node must never silently stop applying the log.
   */
  private async run(first: ConsumerMessages): Promise<void> {
    const from = this.position;
    const slicer = new Slicer(20);
    let n = 0;
    let messages: ConsumerMessages | undefined = first;
    while (!this.stopped) {
      try {
        messages ??= await this.subscribe();
        for await (const m of messages) {
          if (m.seq <= this.position) continue; // redelivered after an ordered-consumer reset
          try {
            this.dispatch({ seq: m.seq, subject: m.subject, data: m.data, timeMs: Math.floor(m.info.timestampNanos / 1e6), msgId: m.headers?.get('Nats-Msg-Id') || undefined });
          } catch (e) {
            this.log.error({ err: e, seq: m.seq, subject: m.subject }, `${this.stream} message could not be applied`);
          }
          this.position = m.seq;
          this.progressAt = Date.now();
          if (this.onProgress && ++n % 4096 === 0) this.onProgress(m.seq - from, this.catchUp.target - from);
          if (m.seq >= this.catchUp.target) this.catchUp.resolve();
          if (this.waiters.length) this.wake();
          // messages that came together are applied one after the other: the loop gets a turn
          // between them once a slice's time is used (a write batch takes tens of ms to apply)
          if (slicer.due) await slicer.pause();
        }
        if (!this.stopped && this.renewing !== messages) {
          this.restarts++;
          this.log.warn({ position: this.position }, `${this.stream} follower ended; following again`);
        }
      } catch (e) {
        if (this.stopped) break;
        this.restarts++;
        this.log.warn({ err: (e as Error).message, position: this.position }, `${this.stream} follower failed; following again`);
      }
      const renewed = this.renewing === messages;
      messages = undefined;
      if (!this.stopped && !renewed) await new Promise((r) => setTimeout(r, 250));
    }
  }

  private wake(): void {
    const still: Waiter[] = [];
    for (const w of this.waiters) {
      if (w.seq <= this.position) {
        clearTimeout(w.timer);
        w.resolve();
      } else still.push(w);
    }
    this.waiters = still;
  }

  /** Resolves once every message up to the stream's last sequence (asked now) was dispatched. */
  async reachEnd(timeoutMs = 10_000): Promise<void> {
    // cut off, the log's end cannot be known: say so at once rather than after a request timeout
    const info = await Connectivity.of(this.nc).run(`read the end of ${this.stream}`, async () => (await jetstreamManager(this.nc)).streams.info(this.stream));
    const last = info.state.last_seq;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        await this.waitFor(last, Math.max(1, Math.min(300, deadline - Date.now())));
        return;
      } catch (e) {
        if (!(e instanceof FollowTimeout) || Date.now() >= deadline) throw e;
      }
      // not there yet: the last sequences may have been purged (nothing left on the server, no progress)
      const at = this.position;
      if ((await this.existingEnd()) !== undefined) {
        await new Promise((r) => setTimeout(r, 100));
        if (this.position === at) return;
      }
    }
  }

  /** Resolves once every message up to stream sequence `seq` was dispatched. */
  waitFor(seq: number, timeoutMs = 30_000): Promise<void> {
    if (seq <= this.position) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const w: Waiter = { seq, resolve, reject };
      w.timer = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        reject(new FollowTimeout(this.stream, seq, this.position));
      }, timeoutMs);
      w.timer.unref?.();
      this.waiters.push(w);
    });
  }

  stats(): FollowerStats {
    return {
      stream: this.stream, filter: this.filter, position: this.position,
      stalls: this.stalls, restarts: this.restarts, resets: this.resets, heartbeats_missed: this.heartbeatsMissed,
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    followersOf.get(this.nc)?.delete(this);
    clearInterval(this.watchdog);
    this.messages?.stop();
    await this.loop?.catch(() => undefined);
    for (const w of this.waiters) {
      clearTimeout(w.timer);
      w.reject(new Error(`${this.stream} follower stopped`));
    }
    this.waiters = [];
  }
}
