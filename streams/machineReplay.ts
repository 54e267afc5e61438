import { createActor, type AnyActorRef, type EventObject } from 'xstate';
import { scrollContextMachine } from '../machines/scrollContext.machine';
import { pointInTimeMachine } from '../machines/pointInTime.machine';
import { accessTokenMachine, type TokenCreated } from '../machines/accessToken.machine';
import { apiKeyMachine, type ApiKeyCreated } from '../machines/apiKey.machine';
import { serviceTokenMachine, type ServiceTokenCreated } from '../machines/serviceToken.machine';
import { asyncSearchMachine } from '../machines/asyncSearch.machine';
import { ReplayClock } from './replayClock';
import type { FactLike } from './evolve';

/**
 * Re-runs a log through the SAME XState machines the service runs. For each fact the machine gets
 * the command that produced it (`extended` <- `extend`, `cleared` <- `clear`, …) on a
 * {@link ReplayClock} moved to the fact's time; timer facts (`expired`) get no command, only time.
 * The machine must emit the same fact type with the same fields, else a {@link Divergence} is
 * reported and that aggregate is no longer checked.
 *
 * Uses of a context that leave no fact: a search records `extended` only for a keep-alive worth
 * logging (a new one, or the same one a quarter of it after the last logged activity), never when
 * its shards finished (`used`), and a PIT search without `keep_alive` records nothing. So after
 * `opened` and `extended` the context is taken as in use until its next fact; before an `expired`
 * fact it is released (`used`) at `expired.time - keepAlive`, the latest moment that explains the
 * expiry.
 */

/** How one aggregate's facts map to its machine. */
export interface Driver {
  creation: string;
  /** Facts the machine emits on its own when time passes. */
  timerFacts: ReadonlySet<string>;
  create(e: FactLike, clock: ReplayClock): AnyActorRef;
  /** The command that produced a non-creation, non-timer fact. */
  command(e: FactLike): EventObject;
  /** Facts after which the context counts as in use until its next fact (see the file comment). */
  inUseAfter?: ReadonlySet<string>;
}

const ms = (e: FactLike) => Date.parse(e.time);
const data = <T>(e: FactLike) => e.data as T;

/** Fact -> command, per aggregate. */
export const drivers: Record<string, Driver> = {
  scroll: {
    creation: 'scroll.opened',
    timerFacts: new Set(['scroll.expired']),
    inUseAfter: new Set(['scroll.opened', 'scroll.extended']),
    create: (e, clock) => createActor(scrollContextMachine, { clock, input: { contextId: e.aggregateId, keepAliveMs: data<{ keepAliveMs: number }>(e).keepAliveMs } }),
    command: (e) =>
      e.type === 'scroll.extended' ? { type: 'extend', keepAliveMs: data<{ keepAliveMs: number }>(e).keepAliveMs }
      : e.type === 'scroll.released' ? { type: 'release', reason: data<{ reason: string }>(e).reason }
      : e.type === 'scroll.cleared' ? { type: 'clear', ...data<{ by?: string }>(e) }
      : e.type === 'scroll.adopted' ? { type: 'adopt', ...data<{ from: string; to: string }>(e) }
      : { type: e.type },
  },
  pit: {
    creation: 'pit.opened',
    timerFacts: new Set(['pit.expired']),
    inUseAfter: new Set(['pit.opened', 'pit.extended']),
    create: (e, clock) => createActor(pointInTimeMachine, { clock, input: { contextId: e.aggregateId, keepAliveMs: data<{ keepAliveMs: number }>(e).keepAliveMs } }),
    command: (e) =>
      e.type === 'pit.extended' ? { type: 'extend', keepAliveMs: data<{ keepAliveMs: number }>(e).keepAliveMs }
      : e.type === 'pit.released' ? { type: 'release', reason: data<{ reason: string }>(e).reason }
      : e.type === 'pit.closed' ? { type: 'close', ...data<{ by?: string }>(e) }
      : e.type === 'pit.adopted' ? { type: 'adopt', ...data<{ from: string; to: string }>(e) }
      : { type: e.type },
  },
  token: {
    creation: 'token.created',
    timerFacts: new Set(['token.expired']),
    create: (e, clock) => createActor(accessTokenMachine, { clock, input: { tokenId: e.aggregateId, now: ms(e), created: data<TokenCreated>(e) } }),
    command: (e) =>
      e.type === 'token.refreshed' ? { type: 'refresh', ...data<object>(e) }
      : e.type === 'token.invalidated' ? { type: 'invalidate', ...data<object>(e) }
      : e.type === 'token.reuse_detected' ? { type: 'reuse', ...data<object>(e) }
      : { type: e.type },
  },
  apikey: {
    creation: 'apikey.created',
    timerFacts: new Set(['apikey.expired']),
    create: (e, clock) => createActor(apiKeyMachine, { clock, input: { keyId: e.aggregateId, now: ms(e), created: data<ApiKeyCreated>(e) } }),
    command: (e) =>
      e.type === 'apikey.updated' ? { type: 'update', ...data<object>(e) }
      : e.type === 'apikey.invalidated' ? { type: 'invalidate', at: data<{ invalidation: number }>(e).invalidation, ...(data<{ cascadeOf?: string }>(e).cascadeOf ? { cascadeOf: data<{ cascadeOf: string }>(e).cascadeOf } : {}) }
      : { type: e.type },
  },
  servicetoken: {
    creation: 'servicetoken.created',
    timerFacts: new Set(),
    create: (e, clock) => createActor(serviceTokenMachine, { clock, input: { tokenId: e.aggregateId, created: data<ServiceTokenCreated>(e) } }),
    command: (e) => ({ type: e.type === 'servicetoken.invalidated' ? 'invalidate' : e.type, ...data<object>(e) }),
  },
  asyncsearch: {
    creation: 'asyncsearch.submitted',
    timerFacts: new Set(['asyncsearch.expired']),
    create: (e, clock) => createActor(asyncSearchMachine, { clock, input: { id: e.aggregateId, keepAliveMs: data<{ keepAliveMs: number }>(e).keepAliveMs } }),
    command: (e) =>
      e.type === 'asyncsearch.completed' ? { type: 'complete', ...data<object>(e) }
      : e.type === 'asyncsearch.extended' ? { type: 'extend', keepAliveMs: data<{ keepAliveMs: number }>(e).keepAliveMs }
      : e.type === 'asyncsearch.deleted' || e.type === 'asyncsearch.cancelled' ? { type: 'delete', ...data<{ by?: string }>(e) }
      : e.type === 'asyncsearch.adopted' ? { type: 'adopt', ...data<{ from: string; to: string }>(e) }
      : { type: e.type },
  },
};

/** Default timer tolerance of {@link MachineReplay} in ms. */
export const DEFAULT_TOLERANCE_MS = 25;

/** A fact the machine did not reproduce. */
export interface Divergence {
  aggregate: string;
  id: string;
  seq: number;
  time: string;
  /** The fact in the log. */
  logged: string;
  /** What the machine emitted instead (fact types, possibly none). */
  emitted: string[];
  detail: string;
}

/** One step of an actor's timeline. */
export interface TimelineStep {
  seq: number;
  time: string;
  type: string;
  /** Machine state after the step (`active.inUse`, `expired`…); for a node, its folded status. */
  state: string;
  /** What the fact says beyond its type: `from=<node> to=<node>` of an adoption, a node's leave reason… */
  detail?: string;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

/**
 * The part of a fact worth a timeline column: an adoption's old and new owner, a node's join
 * (name, HTTP address) or leave (reason, who noticed, how long it had been silent). Never a secret.
 */
export function factDetail(e: FactLike): string | undefined {
  const d = (e.data ?? {}) as Record<string, unknown>;
  const kv = (pairs: Array<[string, unknown]>) => pairs.filter(([, v]) => v !== undefined && v !== '').map(([k, v]) => `${k}=${v}`).join(' ') || undefined;
  if (e.type.endsWith('.adopted')) return kv([['from', d.from === '' ? '(no owner)' : d.from], ['to', d.to]]);
  if (e.type === 'node.joined') return kv([['name', d.name], ['http', d.http_address], ['version', d.version]]);
  if (e.type === 'node.left') return kv([['reason', d.reason], ['by', d.by], ['silent', typeof d.silent_ms === 'number' ? seconds(d.silent_ms) : undefined]]);
  return undefined;
}

/** Where an actor ended up. */
export interface ActorResult {
  aggregate: string;
  id: string;
  /** Machine state value after its last fact (`diverged` / `partial` when not checked to the end). */
  state: string;
  done: boolean;
  lastSeq: number;
  facts: number;
  timeline?: TimelineStep[];
  /** No machine runs this aggregate (nodes): `state` is what the fold says, nothing was checked. */
  folded?: true;
}

type Body = { type: string } & Record<string, unknown>;
interface Live {
  aggregate: string;
  actor: AnyActorRef;
  clock: ReplayClock;
  emitted: Body[];
  inUse: boolean;
  result: ActorResult;
  /** Owner node of a scroll/PIT (facts another node appended after losing it are not its own). */
  node?: string;
}

/** Flattens an XState state value: `{ active: 'idle' }` -> `active.idle`. */
export function stateName(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>).map(([k, v]) => (v && (typeof v !== 'object' || Object.keys(v).length) ? `${k}.${stateName(v)}` : k)).join(',');
  }
  return String(value);
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Folds facts through the machines, one actor (and one clock) per aggregate id; actors are dropped
 * once final so a long log holds only its open aggregates.
 *
 * @example
 * const r = new MachineReplay();
 * for await (const e of readFacts(nc)) r.feed(e);
 * const { divergences, actors } = r.finish();
 */
export class MachineReplay {
  readonly divergences: Divergence[] = [];
  private readonly live = new Map<string, Live>();
  private readonly ended = new Map<string, ActorResult>();
  /** Every actor in the order its first fact came. */
  private readonly seen: ActorResult[] = [];
  /** Facts of aggregates without a machine (users, roles) and of aggregates not checked. */
  unchecked = 0;
  checked = 0;

  private readonly tolerance: number;

  /**
   * `toleranceMs` (default {@link DEFAULT_TOLERANCE_MS}): how far a real timer may be off. A Node timer
   * can fire a millisecond before `Date.now()` shows its delay elapsed, and late by however long the
   * event loop was busy, during which a command may still reach the actor. So a timer fact may come
   * that much early, and a command that much after the machine's deadline, without a divergence.
   */
  constructor(private readonly opts: { timeline?: boolean; toleranceMs?: number } = {}) {
    this.tolerance = opts.toleranceMs ?? DEFAULT_TOLERANCE_MS;
  }

  /** Feeds one fact (facts of one aggregate must come in seq order; aggregates may interleave). */
  feed(e: FactLike): void {
    const aggregate = e.type.slice(0, e.type.indexOf('.'));
    const d = drivers[aggregate];
    const key = `${aggregate}/${e.aggregateId}`;
    const done = this.ended.get(key);
    const seen = done ?? this.live.get(key)?.result;
    if (seen && seen.facts > 0 && e.seq <= seen.lastSeq) return; // re-delivered: folds are idempotent by seq
    if (!d || (done && done.state === 'partial') || (done && done.state === 'diverged')) {
      this.unchecked++;
      if (done) this.touch(done, e);
      return;
    }
    if (done) return this.diverge(undefined, done, e, [], `fact after the actor reached its final state "${done.state}"`);
    const a = this.live.get(key) ?? this.start(d, aggregate, key, e);
    if (!a) return;
    if (a.node && e.node && e.node !== a.node && !e.type.endsWith('.adopted')) {
      this.unchecked++; // a node that lost the context appended this before it learned (the folds ignore it too)
      a.result.timeline?.push({ seq: e.seq, time: e.time, type: e.type, state: a.result.state, detail: `ignored: appended by ${e.node}, not the owner ${a.node}` });
      return;
    }
    if (e.type.endsWith('.adopted')) a.node = (e.data as { to: string }).to;
    this.checked++;
    const t = Math.max(Date.parse(e.time), a.clock.now());
    if (a.result.facts > 0) {
      if (d.timerFacts.has(e.type)) {
        if (a.inUse) {
          const keepAliveMs = (a.actor.getSnapshot().context as { keepAliveMs?: number }).keepAliveMs ?? 0;
          a.clock.advanceTo(Math.max(a.clock.now(), t - keepAliveMs));
          a.actor.send({ type: 'used' });
          a.inUse = false;
        }
        a.clock.advanceTo(t + this.tolerance); // timer facts end the machine: nothing follows on this clock
      } else {
        a.clock.advanceTo(Math.max(a.clock.now(), t - this.tolerance));
        if (a.emitted.length) {
          const at = a.clock.lastFiredAt;
          return this.diverge(a, a.result, e, a.emitted.map((x) => x.type), `machine emitted ${a.emitted[0].type} before this fact (timer due at ${new Date(at).toISOString()}, ${t - at} ms earlier)`);
        }
        a.actor.send(d.command(e));
      }
    }
    if (!this.compare(a, e)) return;
    if (d.inUseAfter?.has(e.type)) {
      if (e.type === 'pit.opened' || e.type === 'scroll.opened') a.actor.send({ type: 'touch' }); // a search may use it without a fact
      a.inUse = true;
    }
    this.touch(a.result, e, a);
    if (a.actor.getSnapshot().status === 'done') {
      a.result.done = true;
      this.retire(key, a);
    }
  }

  private start(d: Driver, aggregate: string, key: string, e: FactLike): Live | undefined {
    const result: ActorResult = { aggregate, id: e.aggregateId, state: 'partial', done: false, lastSeq: e.seq, facts: 0, ...(this.opts.timeline ? { timeline: [] } : {}) };
    this.seen.push(result);
    if (e.type !== d.creation) {
      // The log starts after this aggregate was created (retention, --since): fold only.
      this.touch(result, e);
      this.ended.set(key, result);
      this.unchecked++;
      if (e.seq === 1) this.divergences.push({ aggregate, id: e.aggregateId, seq: e.seq, time: e.time, logged: e.type, emitted: [], detail: `first fact is not ${d.creation}` });
      return undefined;
    }
    const clock = new ReplayClock(Date.parse(e.time));
    const actor = d.create(e, clock);
    const node = (e.data as { node?: string } | undefined)?.node ?? e.node;
    const a: Live = { aggregate, actor, clock, emitted: [], inUse: false, result, ...(node ? { node } : {}) };
    actor.on('*', (f: Body) => a.emitted.push(f));
    actor.start();
    this.live.set(key, a);
    return a;
  }

  private compare(a: Live, e: FactLike): boolean {
    const got = a.emitted.splice(0);
    const types = got.map((x) => x.type);
    if (got.length !== 1 || got[0].type !== e.type) {
      this.diverge(a, a.result, e, types, got.length ? `machine emitted ${types.join(', ')}` : 'machine emitted nothing');
      return false;
    }
    const d = (e.data ?? {}) as Record<string, unknown>;
    for (const [k, v] of Object.entries(got[0])) {
      if (k !== 'type' && !same(v, d[k])) {
        this.diverge(a, a.result, e, types, `data.${k}: machine ${JSON.stringify(v)}, log ${JSON.stringify(d[k])}`);
        return false;
      }
    }
    return true;
  }

  private diverge(a: Live | undefined, r: ActorResult, e: FactLike, emitted: string[], detail: string): void {
    this.divergences.push({ aggregate: r.aggregate, id: r.id, seq: e.seq, time: e.time, logged: e.type, emitted, detail });
    r.state = 'diverged';
    this.touch(r, e);
    if (a) this.retire(`${r.aggregate}/${r.id}`, a);
  }

  private touch(r: ActorResult, e: FactLike, a?: Live): void {
    r.lastSeq = e.seq;
    r.facts++;
    if (a) r.state = stateName(a.actor.getSnapshot().value);
    if (!r.timeline) return;
    const detail = factDetail(e);
    r.timeline.push({ seq: e.seq, time: e.time, type: e.type, state: r.state, ...(detail ? { detail } : {}) });
  }

  private retire(key: string, a: Live): void {
    a.actor.stop();
    this.live.delete(key);
    this.ended.set(key, a.result);
  }

  /** Every actor seen, in the order of its first fact. */
  results(): ActorResult[] {
    return this.seen;
  }

  /** Stops the live actors and returns the outcome. */
  finish(): { divergences: Divergence[]; actors: ActorResult[]; checked: number; unchecked: number } {
    const actors = this.results();
    for (const a of this.live.values()) a.actor.stop();
    this.live.clear();
    return { divergences: this.divergences, actors, checked: this.checked, unchecked: this.unchecked };
  }
}
