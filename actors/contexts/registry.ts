import type { AnyActorRef } from 'xstate';
import { ActorHost } from './actorHost';
import { v4 as uuidv4, v5 as uuidv5 } from 'uuid';
import { makeEnvelope, type Bus, type Envelope } from '../../streams';
import type { Owner } from '../../streams';
import type { ContextKind, ContextState } from '../../streams/evolve';
import { scrollContextMachine, type ScrollReleaseReason } from '../../machines/scrollContext.machine';
import { pointInTimeMachine } from '../../machines/pointInTime.machine';
import type { LocalSlice, SearcherRef } from '../shard/engine/types';

/** Namespace of the uuid v5 ids of context facts. */
const CONTEXT_FACT_NS = '6f0c1d7e-4b8a-4e57-9a53-2f1e8c0b7d41';

/**
 * The envelope id (and Nats-Msg-Id) of fact `seq` of a scroll or PIT: derived, so when two nodes
 * append a context's next fact at once (its owner, cut off and taken for dead, and the node that
 * adopted it), JetStream stores the first and answers the other as a duplicate.
 */
export const contextFactId = (kind: ContextKind, id: string, seq: number) => uuidv5(`${kind}:${id}:${seq}`, CONTEXT_FACT_NS);

/** A shard a context pinned: enough to search it again, or to revive it after a restart. */
export interface PinnedShard {
  index: string;
  indexUuid: string;
  n: number;
  shardIndex: number;
  searcher: SearcherRef;
  /** Scroll: this shard's part of a sliced scroll. */
  slice?: LocalSlice;
}

export interface ContextRecord {
  kind: ContextKind;
  id: string;
  actor: AnyActorRef;
  indices: string[];
  shards: PinnedShard[];
  owner?: Owner;
  createdAt: number;
  keepAliveMs: number;
  /** Last time a search finished using it (keep-alive counts from here). */
  lastUsedAt: number;
  inUse: number;
  /** Searches that used it since this node opened or revived it (scroll continuations, PIT searches). */
  uses: number;
  /** Scroll only: the search it pages through, with the exact total of its first page. */
  scroll?: { request: unknown; total?: { value: number; relation: 'eq' | 'gte' }; sortLength?: number; docOrder?: boolean };
  /** Ack of the last fact appended for this context. */
  appended: Promise<unknown>;
  /** Who cleared/closed it, or why the server released it (for the tombstone). */
  endedBy?: string;
  endDetail?: string;
  /** Revived after its keep-alive ran out while the node was down: when it was due to expire. */
  overdueAt?: number;
  /** Time of the last opened/extended fact (extensions are coalesced against it). */
  loggedAt?: number;
  /** An `extend` event left the machine in use: `done` sends it `used`. */
  extending?: boolean;
  /** What the opened fact recorded besides the pinned shards (slice, scroll request, total). */
  opened?: { slice?: ContextState['slice']; request?: ContextState['request']; total?: ContextState['total'] };
  correlationId?: string;
}

export type EndReason = 'expired' | 'cleared' | 'closed' | 'released';
export interface Tombstone {
  kind: ContextKind;
  why: EndReason;
  at: number;
  detail?: string;
  by?: string;
}

const MAX_TOMBSTONES = 100_000;

/**
 * The live registry of PIT and scroll context actors: spawns one XState actor per context, turns
 * the facts it emits into envelopes on the event log, and stops it once final, keeping a
 * tombstone so a later 404 can say why the context is gone. Counts come from this registry of
 * live actors, never from a side counter.
 */
export class ContextRegistry {
  private readonly live = new Map<string, ContextRecord>();
  /** One actor system for every context actor of this registry (actorHost.ts). */
  private readonly host = new ActorHost();
  private readonly tombstones = new Map<string, Tombstone>();
  private tombOrder: string[] = [];
  private tombHead = 0;
  private readonly seqs = new Map<string, number>();
  /**
   * X-Opaque-Id of the request whose command is being processed: facts emitted while a command is
   * sent carry it; facts of the keep-alive timer (`expired`) are emitted outside any send and carry none.
   */
  private cause: string | undefined;
  /** The clock as the context machines read it (one function for all of them). */
  private readonly now = (): number => this.clock.now();
  /** Freed scroll contexts: count and summed lifetime, for `_nodes/stats`. */
  readonly freed = { scrollTotal: 0, scrollTimeMs: 0 };

  /**
   * @param nodeId this node: every fact it appends says so (`node`), and the contexts it opens name
   *   it as their owner
   * @param onFact each fact once appended (the cluster-wide directory folds its own at once)
   */
  constructor(
    private readonly bus: Bus,
    private readonly clock: { now(): number } = Date,
    private readonly nodeId?: string,
    private readonly onFact?: (e: Envelope) => void,
  ) {}

  open(init: {
    kind: ContextKind;
    indices: string[];
    shards: PinnedShard[];
    keepAliveMs: number;
    owner?: Owner;
    scroll?: ContextRecord['scroll'];
    correlationId?: string;
    /** Extra fields for the opened fact (slice, request…). */
    openedData?: Record<string, unknown>;
  }): ContextRecord {
    const now = this.clock.now();
    const rec = this.record(uuidv4(), init, now, now);
    rec.opened = init.openedData as ContextRecord['opened'];
    rec.correlationId = init.correlationId;
    const opened = {
      ...(this.nodeId ? { node: this.nodeId } : {}),
      indices: init.indices, shards: init.shards.length, pinned: init.shards, ...(init.owner ? { owner: init.owner } : {}), ...(init.openedData ?? {}),
    };
    this.spawn(rec, undefined, opened, init.correlationId);
    return rec;
  }

  /**
   * Brings back a context the log says is still open (node start-up): same id, same pinned
   * searchers, its fact sequence continued, and only what is left of its keep-alive (counted from
   * its last recorded activity; 0 expires it at once, with an `expired` fact). No `opened` fact.
   */
  revive(state: ContextState, scroll?: ContextRecord['scroll']): ContextRecord {
    const now = this.clock.now();
    const rec = this.record(state.id, { ...state, shards: state.pinned as PinnedShard[], scroll }, state.openedAt, state.lastActivityAt);
    rec.opened = { slice: state.slice, request: state.request, total: state.total };
    rec.loggedAt = state.lastActivityAt;
    rec.correlationId = state.correlationId;
    this.seqs.set(state.id, state.seq);
    const dueAt = state.lastActivityAt + state.keepAliveMs;
    // Ran out while the node was down: its expired fact and tombstone carry the time it was due.
    if (dueAt <= now) rec.overdueAt = dueAt;
    this.spawn(rec, Math.max(0, dueAt - now), undefined);
    return rec;
  }

  /**
   * Takes over a context whose owner node died (or a legacy one no node owns): revived like after a
   * restart, with what is left of its keep-alive, and an `adopted` fact naming the old and new owner
   * continues its facts. Every later fact comes from this node.
   */
  adopt(state: ContextState, scroll: ContextRecord['scroll'] | undefined, from: string): ContextRecord {
    const rec = this.revive(state, scroll);
    if (this.live.has(rec.id) && this.nodeId) rec.actor.send({ type: 'adopt', from, to: this.nodeId } as never);
    return rec;
  }

  /** A fact of `rec` was a duplicate: another node owns the context now. */
  private lostRace(rec: ContextRecord): void {
    if (this.live.get(rec.id) !== rec) return;
    this.disown(rec.id);
  }

  /**
   * Another node adopted this context (the log says so: this node was taken for dead, or cut off):
   * its actor stops here without a fact, and every later use goes to the new owner.
   */
  disown(id: string): void {
    const rec = this.live.get(id);
    if (!rec) return;
    this.live.delete(id);
    this.seqs.delete(id);
    this.host.stop(rec.actor);
  }

  /** Keeps the tombstone of a context the log says has ended (start-up), so a 404 can say why. */
  remember(state: ContextState): void {
    if (state.status === 'open') return;
    this.tomb(state.id, { kind: state.kind, why: state.status, at: state.endedAt ?? state.lastActivityAt, detail: state.reason, by: state.by });
  }

  private record(
    id: string,
    init: { kind: ContextKind; indices: string[]; shards: PinnedShard[]; keepAliveMs: number; owner?: Owner; scroll?: ContextRecord['scroll'] },
    createdAt: number,
    lastUsedAt: number,
  ): ContextRecord {
    return {
      kind: init.kind,
      id,
      actor: undefined as unknown as AnyActorRef,
      indices: init.indices,
      shards: init.shards,
      owner: init.owner,
      createdAt,
      keepAliveMs: init.keepAliveMs,
      lastUsedAt,
      inUse: 0,
      uses: 0,
      scroll: init.scroll,
      appended: Promise.resolve(),
    };
  }

  /** One XState actor per context; its facts become envelopes on the log; final -> tombstone. */
  private spawn(rec: ContextRecord, resumeInMs: number | undefined, openedData: Record<string, unknown> | undefined, correlationId?: string) {
    const machine = rec.kind === 'scroll' ? scrollContextMachine : pointInTimeMachine;
    // The record is the machine's usage: searches update it, the keep-alive timer reads it.
    const actor = this.host.create(machine as typeof scrollContextMachine, { input: { contextId: rec.id, keepAliveMs: rec.keepAliveMs, resumeInMs, usage: rec, now: this.now } });
    rec.actor = actor;
    let opening = openedData; // held until the opened fact is out, then let go (heap per open context)
    actor.on('*', (fact: { type: string } & Record<string, unknown>) => {
      const { type, ...data } = fact;
      const opened = type.endsWith('.opened');
      this.append(rec, type, opened ? { ...data, ...opening } : data, this.cause);
      if (opened) opening = undefined;
    });
    actor.subscribe((snap) => {
      if (snap.status === 'done') this.finish(rec, snap.value as string);
    });
    this.live.set(rec.id, rec);
    this.as(correlationId, () => actor.start()); // `opened` carries the opening request's id
  }

  /** Runs `fn` (which sends a command to an actor) with the facts it emits caused by `correlationId`. */
  private as(correlationId: string | undefined, fn: () => void): void {
    const outer = this.cause;
    this.cause = correlationId;
    try {
      fn();
    } finally {
      this.cause = outer;
    }
  }

  private append(rec: ContextRecord, type: string, data: unknown, correlationId?: string) {
    const seq = (this.seqs.get(rec.id) ?? 0) + 1;
    this.seqs.set(rec.id, seq);
    const time =
      type.endsWith('.opened') ? rec.createdAt // the same instant the registry reports as created
      : rec.overdueAt !== undefined && type.endsWith('.expired') ? rec.overdueAt
      : this.clock.now();
    const made = makeEnvelope({ type, aggregateId: rec.id, seq, data, time, correlationId, ...(this.nodeId ? { node: this.nodeId } : {}) });
    const env = { ...made, id: contextFactId(rec.kind, rec.id, seq) };
    const p = this.bus.append(env);
    p.then(
      (ack) => {
        // Another node's fact took this seq first (an adoption racing its old owner): the log's
        // fold follows that node, so this one lets go of the context.
        if (ack.duplicate) this.lostRace(rec);
        else this.onFact?.(env);
      },
      () => undefined,
    );
    rec.appended = p;
  }

  private finish(rec: ContextRecord, state: string) {
    if (!this.live.delete(rec.id)) return;
    this.seqs.delete(rec.id);
    const why: EndReason = state === 'expired' ? 'expired' : state === 'cleared' ? 'cleared' : state === 'closed' ? 'closed' : 'released';
    const at = why === 'expired' && rec.overdueAt !== undefined ? rec.overdueAt : this.clock.now();
    this.tomb(rec.id, { kind: rec.kind, why, at, by: rec.endedBy, detail: rec.endDetail });
    if (rec.kind === 'scroll') {
      this.freed.scrollTotal += rec.shards.length;
      this.freed.scrollTimeMs += (this.clock.now() - rec.createdAt) * rec.shards.length;
    }
  }

  /** Keeps a tombstone; the oldest go first past MAX_TOMBSTONES (a queue: see ContextDirectory's bound). */
  private tomb(id: string, t: Tombstone) {
    if (!this.tombstones.has(id)) this.tombOrder.push(id);
    this.tombstones.set(id, t);
    while (this.tombstones.size > MAX_TOMBSTONES && this.tombHead < this.tombOrder.length) this.tombstones.delete(this.tombOrder[this.tombHead++]);
    if (this.tombHead > 65_536) {
      this.tombOrder = this.tombOrder.slice(this.tombHead);
      this.tombHead = 0;
    }
  }

  get(id: string): ContextRecord | undefined {
    return this.live.get(id);
  }
  tombstone(id: string): Tombstone | undefined {
    return this.tombstones.get(id);
  }

  /**
   * A search starts using the context; `keepAliveMs` undefined keeps the current keep-alive.
   * Returns the append of the `extended` fact this use logged, or undefined when it logged none.
   *
   * A use is two field updates on the record (`inUse`, then `lastUsedAt` in {@link done}), not an
   * event: the machine's keep-alive timer reads them when it fires (machines/contextUsage.ts), as
   * ES's Reaper reads a ReaderContext's last access time. Only a keep-alive worth logging is an
   * event and a fact: a new keep-alive, or the same one when the last logged activity is older
   * than a quarter of it. Clients send `scroll` / `keep_alive` with every page, and one fact per
   * page costs more than the page's search. Live expiry is exact either way; a context revived or
   * adopted from the log after a crash counts its keep-alive from its last logged activity, so it
   * expires at most a quarter of its keep-alive before the live one would have (ES loses it).
   */
  use(rec: ContextRecord, keepAliveMs: number | undefined, correlationId?: string): Promise<unknown> | undefined {
    rec.inUse++;
    rec.uses++;
    if (keepAliveMs === undefined) return undefined; // a PIT search without keep_alive: expiry unchanged
    const now = this.clock.now();
    if (keepAliveMs === rec.keepAliveMs && now - (rec.loggedAt ?? rec.createdAt) < rec.keepAliveMs / 4) return undefined;
    rec.keepAliveMs = keepAliveMs;
    rec.loggedAt = now;
    rec.extending = true;
    this.as(correlationId, () => rec.actor.send({ type: 'extend', keepAliveMs }));
    return rec.appended;
  }
  /** The search finished: the keep-alive restarts from now once nobody uses it. */
  done(rec: ContextRecord): void {
    rec.inUse = Math.max(0, rec.inUse - 1);
    rec.lastUsedAt = this.clock.now();
    // An `extend` event put the machine in use: back to idle, where its timer reads the usage.
    if (rec.inUse === 0 && rec.extending) {
      rec.extending = false;
      rec.actor.send({ type: 'used' });
    }
  }

  /** Client asked (DELETE _search/scroll, DELETE _pit). Resolves once the fact is acknowledged. */
  async clear(rec: ContextRecord, by?: string, correlationId?: string): Promise<number> {
    if (!this.live.has(rec.id)) return 0;
    rec.endedBy = by;
    this.as(correlationId, () => rec.actor.send({ type: rec.kind === 'pit' ? 'close' : 'clear', ...(by ? { by } : {}) }));
    await rec.appended;
    return rec.shards.length;
  }

  /**
   * Server frees it (index deleted, continuation without scroll, keep-alive too large);
   * `correlationId` is the request that made the server free it, if one did.
   */
  async release(rec: ContextRecord, reason: ScrollReleaseReason | 'index_deleted' | 'index_closed', correlationId?: string): Promise<void> {
    if (!this.live.has(rec.id)) return;
    rec.endDetail = reason;
    this.as(correlationId, () => rec.actor.send({ type: 'release', reason } as never));
    await rec.appended;
  }

  /** Releases every context that pinned a shard of the deleted (or closed) index. */
  releaseIndex(indexUuid: string, reason: 'index_deleted' | 'index_closed' = 'index_deleted'): void {
    for (const rec of [...this.live.values()]) {
      if (rec.shards.some((s) => s.indexUuid === indexUuid)) void this.release(rec, reason);
    }
  }

  list(kind?: ContextKind): ContextRecord[] {
    return [...this.live.values()].filter((r) => !kind || r.kind === kind);
  }
  /** Open shard-level contexts (ES counts a 5-shard scroll as 5). */
  shardContexts(kind?: ContextKind): number {
    let n = 0;
    for (const r of this.live.values()) if (!kind || r.kind === kind) n += r.shards.length;
    return n;
  }
  /** When the context will expire if nobody touches it (null while in use). */
  expiresAt(rec: ContextRecord): number | null {
    return rec.inUse ? null : rec.lastUsedAt + rec.keepAliveMs;
  }

  /**
   * The open contexts as their folded state (what a checkpoint stores): the last use counts as the
   * last activity, which the log alone does not know for PIT searches without keep_alive.
   */
  openStates(): ContextState[] {
    return [...this.live.values()].map((r) => ({
      kind: r.kind,
      id: r.id,
      seq: this.seqs.get(r.id) ?? 1,
      status: 'open' as const,
      indices: r.indices,
      shards: r.shards.length,
      pinned: r.shards,
      ...(r.owner ? { owner: r.owner } : {}),
      ...(r.opened?.slice ? { slice: r.opened.slice } : {}),
      ...(r.opened?.request ? { request: r.opened.request } : {}),
      ...(r.opened?.total ? { total: r.opened.total } : {}),
      keepAliveMs: r.keepAliveMs,
      openedAt: r.createdAt,
      lastActivityAt: r.inUse ? this.clock.now() : r.lastUsedAt,
      extensions: 0,
      ...(r.correlationId ? { correlationId: r.correlationId } : {}),
    }));
  }

  /** Remembered ends, oldest first (for a checkpoint). */
  tombstoneEntries(): Array<[string, Tombstone]> {
    return [...this.tombstones.entries()];
  }

  /** Restores remembered ends from a checkpoint. */
  restoreTombstones(entries: Array<[string, Tombstone]>): void {
    for (const [id, t] of entries) this.tomb(id, t);
  }

  /** Stops every actor without facts (node shutdown: contexts are revived from the log on start). */
  stopAll(): void {
    for (const rec of this.live.values()) this.host.stop(rec.actor);
    this.live.clear();
  }
}

