import type { Subscription } from '@nats-io/transport-node';
import { createActor, type AnyStateMachine } from 'xstate';
import { v5 as uuidv5 } from 'uuid';
import { jetstreamManager } from '@nats-io/jetstream';
import { EVENT_STREAM, StreamFollower, makeEnvelope, readFacts, subjects, type Aggregate, type Envelope, type LoggedMessage } from '../../streams';
import type { NodeContext } from '../nodeContext';
import { SECURITY_NS } from './roleStore';
import { readFactBatches } from '../../streams/factReader';
import type { FactSeal } from './factSeal';
import { readCompactedState } from '../../streams/compactedState';

/** What a fact body emitted by a credential machine looks like: `{type:'apikey.created', ...data}`. */
export type FactBody = { type: string } & Record<string, unknown>;

export interface AppendOptions {
  correlationId?: string;
  /**
   * The fact is one any node may derive on its own (expiry, the generated `elastic` password): when
   * another node appended it first, ours is dropped quietly instead of failing the command.
   */
  dedupe?: boolean;
}

/** Cache invalidation broadcast on `es.v1.auth.invalidate` (core NATS, every node). Ids only. */
export interface InvalidateMessage {
  origin: string;
  kind: 'apikey' | 'token' | 'servicetoken' | 'user' | 'role';
  ids: string[];
}

/**
 * Another node appended the aggregate's next fact first (same aggregate, same seq: the same
 * message id, which JetStream de-duplicates). The aggregate is folded again from the log; the
 * command runs again on what the winner left ({@link FactLog.exclusive} does that).
 */
export class LostRace extends Error {
  constructor(readonly aggregate: string, readonly id: string, readonly seq: number) {
    super(`another node appended fact ${seq} of ${aggregate} [${id}] first`);
    this.name = 'LostRace';
  }
}

const dec = new TextDecoder();
const PREFIX = 'es.v1.evt.';
/** The message id of a credential fact: one per (aggregate, id, seq), whichever node appends it. */
export const factMsgId = (aggregate: string, id: string, seq: number) => uuidv5(`${aggregate}:${id}:${seq}`, SECURITY_NS);

/**
 * The security module's link to the event log. At start it folds each aggregate's facts (after a
 * checkpoint), then follows ES_EVT with one resumable ordered consumer: every node applies every
 * credential fact in log order, including the ones appended while it was cut off from NATS (it
 * resumes from the last sequence it applied). Commands run credential machines and append what
 * they emit BEFORE the caller answers (each append awaits its ack). Every fact's message id is
 * derived from (aggregate, id, seq), so two nodes appending the same aggregate's next fact store
 * one: the other learns it lost ({@link LostRace}) and runs its command again on the winner's state.
 */
export class FactLog {
  private readonly subs: Subscription[] = [];
  private readonly locks = new Map<string, Promise<unknown>>();
  private follower?: StreamFollower;
  private aggregates = new Set<string>();
  /** Set while the connection is down and until the follower caught up after it came back. */
  private stale?: Promise<void>;
  /** Back on NATS and reading what was missed (requests then wait for it, up to 10 s). */
  private catchingUp = false;
  /** Called once the node's credential facts are current again after a disconnect. */
  onFreshAgain?: () => void;
  private stopped = false;

  constructor(
    private readonly ctx: NodeContext,
    private readonly apply: (e: Envelope) => void,
    private readonly onInvalidate: (m: InvalidateMessage) => void,
    /** Seals secret fields before an append, opens them before a fold (factSeal.ts). */
    readonly seal: FactSeal,
    readonly clock: { now(): number } = { now: () => Date.now() },
  ) {}

  /**
   * Folds the checkpoint's facts, replays the log after it, then follows ES_EVT from where the
   * replay began (facts appended meanwhile arrive twice; folds are idempotent by per-aggregate seq).
   */
  async start(aggregates: Aggregate[], checkpoint?: { seq: number; facts: Envelope[] }): Promise<void> {
    this.aggregates = new Set(aggregates);
    this.subs.push(
      this.ctx.nc.subscribe(subjects.authInvalidate, {
        callback: (err, msg) => {
          if (err) return;
          try {
            const m = JSON.parse(dec.decode(msg.data)) as InvalidateMessage;
            if (m.origin !== this.ctx.node.id) this.onInvalidate(m);
          } catch {
            /* ignore */
          }
        },
      }),
    );
    const last = (await (await jetstreamManager(this.ctx.nc)).streams.info(EVENT_STREAM)).state.last_seq;
    for (const env of checkpoint?.facts ?? []) this.safeApply(env);
    const from = checkpoint ? { startSeq: checkpoint.seq + 1 } : {};
    // The push reader (flow control, batches) folds several times faster than an ordered pull.
    for (const a of aggregates) {
      for await (const batch of readFactBatches(this.ctx.nc, { filterSubject: subjects.factsOfType(a), ...from })) for (const env of batch) this.safeApply(env);
    }
    if (checkpoint) {
      // The compactor purges only behind a position written 10 s before; a start slower than that
      // between its ES_STATE read and this tail may have missed facts: they are in ES_STATE now.
      const first = (await (await jetstreamManager(this.ctx.nc)).streams.info(EVENT_STREAM)).state.first_seq;
      if (first > checkpoint.seq + 1) {
        this.ctx.log.warn({ compacted: checkpoint.seq, first }, 'facts after the compacted state were purged while this node started: credentials reloaded from ES_STATE');
        await this.reloadCompacted();
      }
    }
    this.follower = new StreamFollower(this.ctx.nc, EVENT_STREAM, subjects.allFacts, (m) => this.dispatch(m), this.ctx.log);
    // Facts removed while this node was away are in the compacted state: folded from there (idempotent by seq).
    this.follower.onGap = () => void this.reloadCompacted();
    await this.follower.start(Math.max(last, checkpoint?.seq ?? 0));
    void this.watchConnection();
  }

  /** A fact of ES_EVT: folded when it is a credential's (scroll and PIT facts are skipped unparsed). */
  private dispatch(m: LoggedMessage): void {
    const dot = m.subject.indexOf('.', PREFIX.length);
    if (!this.aggregates.has(m.subject.slice(PREFIX.length, dot))) return;
    this.safeApply(JSON.parse(dec.decode(m.data)) as Envelope);
  }

  /**
   * While the connection is down, and after it comes back until the follower has read the log's
   * end, what this node knows of credentials may be stale (an invalidation on another node):
   * {@link fresh} makes authentication wait for that.
   */
  private async watchConnection(): Promise<void> {
    let release: (() => void) | undefined;
    for await (const st of this.ctx.nc.status()) {
      if (this.stopped) return;
      if (st.type === 'disconnect' && !release) this.stale = new Promise<void>((r) => (release = r));
      else if (st.type === 'reconnect' && release) {
        const done = release;
        release = undefined;
        this.catchingUp = true;
        void this.readMissed().then(() => {
          this.catchingUp = false;
          if (!release) this.stale = undefined;
          done();
          if (!release) this.onFreshAgain?.();
        });
      }
    }
  }

  /**
   * After a reconnect: reads up to the log's end. Right after the node's own server comes back,
   * JetStream may not answer yet (its stream info fails until the server rejoined): asked again
   * until it does, for at most 10 s, then the node goes on with what it has (and says so).
   */
  private async readMissed(): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        return await this.follower!.reachEnd(Math.max(1, deadline - Date.now()));
      } catch (e) {
        if (this.stopped || Date.now() >= deadline) {
          this.ctx.log.warn({ err: (e as Error).message }, 'credential facts missed while disconnected may not be read yet');
          return;
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  /** Resolves once the follower has read every fact appended so far (bounded: 2 s). */
  async catchUp(): Promise<void> {
    await this.follower?.reachEnd(2_000).catch(() => undefined);
  }

  /**
   * Resolves once this node's credential facts are current: at once when connected and followed
   * (undefined, so the hot path does not await); after a reconnect, once the follower caught up
   * (at most 10 s); while disconnected, after at most `waitMs` (then it answers from what it has).
   */
  fresh(waitMs = 1_000): Promise<void> | undefined {
    const s = this.stale;
    if (!s) return undefined;
    const ms = this.catchingUp ? 10_000 : waitMs;
    return Promise.race([s, new Promise<void>((r) => setTimeout(r, ms).unref())]);
  }


  /** Whether what this node knows of credentials may be stale now (disconnected, or still reading what it missed). */
  get isStale(): boolean {
    return this.stale !== undefined;
  }

  /** Folds a fact read from the log (or a checkpoint): its secret fields opened first. */
  private safeApply(env: Envelope) {
    try {
      this.apply(this.seal.open(env));
    } catch (e) {
      this.ctx.log.warn({ err: e, type: env.type, aggregateId: env.aggregateId }, 'security fact not applied');
    }
  }

  /**
   * Runs a credential machine actor for one command: starts it from `input` (a new credential or a
   * record at rest), sends `events`, collects the facts it emits and stops it (idle credentials are not
   * kept as live actors). Then appends the facts (seq after `seq`) and folds them locally.
   */
  async run(
    machine: AnyStateMachine,
    input: unknown,
    events: Array<{ type: string } & Record<string, unknown>>,
    target: { aggregate: Aggregate; id: string; seq: number } & AppendOptions,
  ): Promise<Envelope[]> {
    const bodies: FactBody[] = [];
    const actor = createActor(machine, { input });
    actor.on('*', (f: FactBody) => bodies.push(f));
    actor.start();
    for (const e of events) actor.send(e);
    actor.stop();
    return this.append(target.aggregate, target.id, target.seq, bodies, target);
  }

  /**
   * Appends fact bodies to the log (awaiting each ack, in order) and folds them locally. A fact
   * another node appended first (same aggregate and seq) throws {@link LostRace} once the
   * aggregate is folded again, or, with `dedupe`, ends the append quietly.
   */
  async append(aggregate: Aggregate, id: string, seq: number, bodies: FactBody[], opts: AppendOptions = {}): Promise<Envelope[]> {
    const out: Envelope[] = [];
    for (const { type, ...data } of bodies) {
      if (!type.startsWith(`${aggregate}.`)) throw new Error(`fact ${type} does not belong to ${aggregate}`);
      const made = makeEnvelope({ type, aggregateId: id, seq: ++seq, data, time: this.clock.now(), correlationId: opts.correlationId });
      const env = { ...made, id: factMsgId(aggregate, id, seq) };
      const ack = await this.ctx.bus.append(this.seal.seal(env)); // the log never holds the secret fields in clear
      if (ack.duplicate) {
        // Another node appended this aggregate's fact `seq` first; its copy reaches us through the log.
        await this.refold(aggregate, id);
        if (opts.dedupe) return out;
        throw new LostRace(aggregate, id, seq);
      }
      this.apply(env);
      out.push(env);
    }
    return out;
  }

  /** Folds every credential fact of the compacted state (ES_STATE) again: after a gap in the log. */
  private async reloadCompacted(): Promise<void> {
    try {
      const cs = await readCompactedState(this.ctx.nc);
      for (const f of cs.facts) if (this.aggregates.has(f.type.slice(0, f.type.indexOf('.')))) this.safeApply(f);
    } catch (e) {
      this.ctx.log.error({ err: (e as Error).message }, 'credentials could not be reloaded from the compacted state');
    }
  }

  /** Re-reads one aggregate's facts from the log (after losing a de-duplicated append race). */
  async refold(aggregate: Aggregate, id: string): Promise<void> {
    for await (const env of readFacts(this.ctx.nc, { filterSubject: subjects.factsOf(aggregate, id) })) this.safeApply(env);
  }

  /** Tells every other node to drop cached verifications of these credentials now. */
  broadcastInvalidate(kind: InvalidateMessage['kind'], ids: string[]): void {
    if (!ids.length) return;
    const m: InvalidateMessage = { origin: this.ctx.node.id, kind, ids };
    this.ctx.nc.publish(subjects.authInvalidate, JSON.stringify(m));
  }

  /**
   * Serializes commands on one aggregate on this node (two refreshes of one token must not both
   * mint a pair), after the follower has read the log's end (another node's fact a moment ago).
   * Across nodes the message ids do the same: a command that lost the race runs again.
   */
  async exclusive<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const attempt = async () => {
      for (let i = 0; ; i++) {
        await this.follower?.reachEnd(5_000).catch(() => undefined);
        try {
          return await fn();
        } catch (e) {
          if (!(e instanceof LostRace) || i >= 4) throw e;
        }
      }
    };
    const prev = this.locks.get(key) ?? Promise.resolve();
    const run = prev.then(attempt, attempt);
    const tail = run.catch(() => undefined);
    this.locks.set(key, tail);
    try {
      return await run;
    } finally {
      if (this.locks.get(key) === tail) this.locks.delete(key);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const s of this.subs.splice(0)) s.unsubscribe();
    await this.follower?.stop();
  }
}
