import type { Subscription } from '@nats-io/transport-node';
import { createActor, type AnyStateMachine } from 'xstate';
import { v5 as uuidv5 } from 'uuid';
import { makeEnvelope, readFacts, subjects, type Aggregate, type Envelope } from '../../streams';
import type { NodeContext } from '../nodeContext';
import { SECURITY_NS } from './roleStore';
import { readFactBatches } from '../../streams/factReader';

/** What a fact body emitted by a credential machine looks like: `{type:'apikey.created', ...data}`. */
export type FactBody = { type: string } & Record<string, unknown>;

export interface AppendOptions {
  correlationId?: string;
  /** Deterministic envelope id (facts several nodes may append, such as expiry). */
  dedupe?: boolean;
}

/** Cache invalidation broadcast on `es.v1.auth.invalidate` (core NATS, every node). Ids only. */
export interface InvalidateMessage {
  origin: string;
  kind: 'apikey' | 'token' | 'servicetoken' | 'user' | 'role';
  ids: string[];
}

const dec = new TextDecoder();

/**
 * The security module's link to the event log: replays ES_EVT per aggregate at start, follows live
 * facts from every node over core NATS (folds are idempotent by per-aggregate seq), runs credential
 * machines and appends what they emit BEFORE the caller answers (each append awaits its ack).
 */
export class FactLog {
  private readonly subs: Subscription[] = [];
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(
    private readonly ctx: NodeContext,
    private readonly apply: (e: Envelope) => void,
    private readonly onInvalidate: (m: InvalidateMessage) => void,
    readonly clock: { now(): number } = { now: () => Date.now() },
  ) {}

  /**
   * Subscribes to live facts, replays the log (after `checkpoint.seq`, once the checkpoint's facts
   * are folded, when one is given), then folds what arrived meanwhile.
   */
  async start(aggregates: Aggregate[], checkpoint?: { seq: number; facts: Envelope[] }): Promise<void> {
    const buffer: Envelope[] = [];
    let live = false;
    for (const a of aggregates) {
      this.subs.push(
        this.ctx.nc.subscribe(subjects.factsOfType(a), {
          callback: (err, msg) => {
            if (err) return;
            try {
              const env = JSON.parse(dec.decode(msg.data)) as Envelope;
              if (live) this.safeApply(env);
              else buffer.push(env);
            } catch {
              /* not an envelope */
            }
          },
        }),
      );
    }
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
    await this.ctx.nc.flush();
    for (const env of checkpoint?.facts ?? []) this.safeApply(env);
    const from = checkpoint ? { startSeq: checkpoint.seq + 1 } : {};
    // The push reader (flow control, batches) folds several times faster than an ordered pull.
    for (const a of aggregates) {
      for await (const batch of readFactBatches(this.ctx.nc, { filterSubject: subjects.factsOfType(a), ...from })) for (const env of batch) this.safeApply(env);
    }
    live = true;
    for (const env of buffer.splice(0)) this.safeApply(env);
  }

  private safeApply(env: Envelope) {
    try {
      this.apply(env);
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

  /** Appends fact bodies to the log (awaiting each ack, in order) and folds them locally. */
  async append(aggregate: Aggregate, id: string, seq: number, bodies: FactBody[], opts: AppendOptions = {}): Promise<Envelope[]> {
    const out: Envelope[] = [];
    for (const { type, ...data } of bodies) {
      if (!type.startsWith(`${aggregate}.`)) throw new Error(`fact ${type} does not belong to ${aggregate}`);
      const made = makeEnvelope({ type, aggregateId: id, seq: ++seq, data, time: this.clock.now(), correlationId: opts.correlationId });
      // Facts every node may derive on its own (expiry) get an id from (aggregate, seq): JetStream
      // de-duplicates the copies other nodes append.
      const env = opts.dedupe ? { ...made, id: uuidv5(`${aggregate}:${id}:${seq}`, SECURITY_NS) } : made;
      const ack = await this.ctx.bus.append(env);
      if (ack.duplicate && opts.dedupe) {
        // Another node appended this fact first; its copy reaches us through the log.
        await this.refold(aggregate, id);
        return out;
      }
      this.apply(env);
      out.push(env);
    }
    return out;
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

  /** Serializes commands on one aggregate (two refreshes of one token must not both mint a pair). */
  async exclusive<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(key) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.locks.set(key, tail);
    try {
      return await run;
    } finally {
      if (this.locks.get(key) === tail) this.locks.delete(key);
    }
  }

  async stop(): Promise<void> {
    for (const s of this.subs.splice(0)) s.unsubscribe();
  }
}
