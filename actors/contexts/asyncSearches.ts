import type { AnyActorRef } from 'xstate';
import { ActorHost } from './actorHost';
import { v5 as uuidv5 } from 'uuid';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import { Aggregate, makeEnvelope, subjects, type Bus, type Envelope, type Owner } from '../../streams';
import { foldLog } from '../../streams/factReader';
import { emptyWorld, evolveAsyncSearch, type AsyncSearchState } from '../../streams/evolve';
import { asyncSearchMachine } from '../../machines/asyncSearch.machine';
import { Lease } from '../cluster/lease';
import type { AsyncResults } from './asyncResults';

const NS = '0b7f6c1e-2d4a-4c8e-9f31-6a5d2e8b7c90';
const enc = new TextEncoder();
const dec = new TextDecoder();
const MAX_ENDED = 100_000;

export type Shards = { total: number; successful: number; skipped: number; failed: number };
/** A finished search: what the client gets back (`text`: `{"response":…}` or `{"error":…}`), and its outline. */
export interface AsyncOutcome {
  status: number;
  partial: boolean;
  shards: Shards;
  text: string;
}
export interface Progress {
  total: number;
  successful: number;
  failed: number;
  /** The last partial reduce (actors/search/asyncSearchPartial.ts): what a GET shows while it runs. */
  partial?: { reduces: number; total?: { value: number; relation: 'eq' | 'gte' }; aggregations?: Record<string, unknown> };
}
/** Runs a submitted search (the search service, injected from above): again after an adoption or a restart. */
export type AsyncRunner = (s: Pick<AsyncSearchState, 'request' | 'owner' | 'indices'>, progress: Progress) => Promise<AsyncOutcome>;

/** What a GET learns of a search wherever it runs. */
export interface AsyncView {
  state: AsyncSearchState;
  running: boolean;
  progress?: Progress;
}

interface Live {
  id: string;
  actor: AnyActorRef;
  running: boolean;
  progress: Progress;
  done: Promise<void>;
  finish: () => void;
  appended: Promise<unknown>;
  overdueAt?: number;
}

type Cmd = { cmd: 'get'; keepAliveMs?: number; waitMs?: number; correlationId?: string } | { cmd: 'delete'; by?: string; correlationId?: string };
type Reply = { ok: true; running: boolean; progress: Progress } | { ok: false };

export interface AsyncSearchDeps {
  nc: NatsConnection;
  bus: Bus;
  nodeId: string;
  log: Logger;
  leases: KV;
  results: AsyncResults;
  liveNodes: () => string[];
  warm: () => boolean;
  /** Reads the lifecycle log's end (a search submitted a moment ago through another node). */
  catchUp: () => Promise<void>;
  now?: () => number;
}

/**
 * The async searches of the cluster (ES AsyncSearchTask + AsyncTaskIndexService): this node's own as
 * XState actors whose facts go to the lifecycle log, every node's as the log tells them (one fold per
 * node, fed by the context directory's consumer), and the results in the KV bucket every node reads.
 * A running search lives where it was submitted; GET, status and DELETE through another node ask that
 * owner over `es.v1.cmd.asyncsearch.<id>.<get|delete>`. When the owner dies, one live node adopts its
 * searches under a lease: a finished one keeps its result and expiry, a running one is run again.
 */
export class AsyncSearchRegistry {
  private readonly states = new Map<string, AsyncSearchState>();
  private readonly live = new Map<string, Live>();
  /** One actor system for every context actor of this registry (actorHost.ts). */
  private readonly host = new ActorHost();
  private readonly seqs = new Map<string, number>();
  private readonly ended: string[] = [];
  private sub?: Subscription;
  private timer?: NodeJS.Timeout;
  private runner?: AsyncRunner;
  private cause: string | undefined;
  private readonly now: () => number;

  constructor(private readonly d: AsyncSearchDeps) {
    this.now = d.now ?? Date.now;
  }

  setRunner(r: AsyncRunner): void {
    this.runner = r;
  }

  get results(): AsyncResults {
    return this.d.results;
  }

  /**
   * Folds the async searches of the compacted state (ES_STATE) and the log's async search facts after
   * it (the whole log when the state does not keep async searches: an earlier build wrote it, or
   * nothing is compacted yet), revives this node's own, then serves commands and adopts orphans.
   */
  async start(compacted?: { seq: number; states: AsyncSearchState[]; kept: boolean }): Promise<{ revived: number }> {
    const world = emptyWorld();
    const fromState = compacted?.kept === true && compacted.seq > 0;
    if (fromState) for (const st of compacted.states) world.asyncsearch.set(st.id, st);
    await foldLog(this.d.nc, { filterSubject: subjects.factsOfType(Aggregate.AsyncSearch), world, ...(fromState ? { startSeq: compacted.seq + 1 } : {}) });
    for (const st of world.asyncsearch.values()) {
      const cur = this.states.get(st.id); // the consumer may have folded a later fact already
      if (!cur || cur.seq < st.seq) this.put(st);
    }
    let revived = 0;
    for (const st of this.open()) if (st.node === this.d.nodeId && !this.live.has(st.id)) (this.takeOver(st), revived++);
    this.sub = this.d.nc.subscribe(subjects.commandsOf(Aggregate.AsyncSearch), {
      callback: (err, msg) => {
        if (err) return;
        void this.serve(msg.subject.split('.')[4], msg.data).then((r) => r && msg.reply && msg.respond(enc.encode(JSON.stringify(r))));
      },
    });
    this.timer = setInterval(() => void this.adoptOrphans(), 2_000);
    this.timer.unref();
    return { revived };
  }

  stop(): void {
    clearInterval(this.timer);
    this.sub?.unsubscribe();
    for (const l of this.live.values()) this.host.stop(l.actor);
    this.live.clear();
  }

  /** Folds one fact (from the log's consumer, or right after this node's own append). */
  apply(e: Envelope): void {
    const next = evolveAsyncSearch(this.states.get(e.aggregateId), e);
    if (!next) return;
    this.put(next);
    // another node adopted one of ours (we were taken for dead): it is theirs now
    if (next.node && next.node !== this.d.nodeId && this.live.has(next.id)) {
      this.host.stop(this.live.get(next.id)!.actor);
      this.live.delete(next.id);
    }
  }

  private put(st: AsyncSearchState): void {
    const was = this.states.get(st.id);
    this.states.set(st.id, st);
    if (st.status !== 'running' && st.status !== 'completed' && (!was || was.status === 'running' || was.status === 'completed')) {
      this.ended.push(st.id);
      while (this.ended.length > MAX_ENDED) this.states.delete(this.ended.shift()!);
    }
  }

  /** The search's folded state, reading the log's end once when this node has not seen it yet. */
  async state(id: string): Promise<AsyncSearchState | undefined> {
    if (!this.states.has(id)) await this.d.catchUp();
    return this.states.get(id);
  }

  /** Searches still running or kept (for the console, `_contexts` and per-user quotas). */
  open(): AsyncSearchState[] {
    return [...this.states.values()].filter((s) => s.status === 'running' || s.status === 'completed');
  }

  /** Progress of a search running on this node. */
  progressOf(id: string): Progress | undefined {
    return this.live.get(id)?.progress;
  }

  /**
   * Registers a search the client gets an id for (it ran past its wait, or is kept on completion):
   * the `submitted` fact is acknowledged before this resolves; `run` is its search, already under way.
   */
  async submit(init: { id: string; esId: string; keepAliveMs: number; owner?: Owner; indices: string[]; request: AsyncSearchState['request']; submittedAt: number; correlationId?: string; run: Promise<AsyncOutcome>; progress: Progress }): Promise<void> {
    const submitted = { keepAliveMs: init.keepAliveMs, esId: init.esId, node: this.d.nodeId, ...(init.owner ? { owner: init.owner } : {}), indices: init.indices, submittedAt: init.submittedAt, request: init.request };
    const l = this.spawn(init.id, init.keepAliveMs, undefined, submitted, init.correlationId, init.submittedAt);
    l.progress = init.progress;
    await l.appended;
    this.whenDone(l, init.run);
  }

  /** GET or status through whichever node runs it: extends it (keep_alive), waits up to `waitMs` for it to finish. */
  async view(id: string, opts: { keepAliveMs?: number; waitMs?: number; correlationId?: string }): Promise<AsyncView | undefined> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const st = await this.state(id);
      if (!st || (st.status !== 'running' && st.status !== 'completed')) return undefined;
      const local = this.live.get(id);
      const r = local ? await this.serveGet(local, opts) : await this.ask(st, { cmd: 'get', ...opts });
      if (r === 'retry') continue;
      if (!r.ok) return undefined;
      await this.d.catchUp();
      const now = this.states.get(id);
      return now && { state: now, running: r.running, progress: r.progress };
    }
    return undefined;
  }

  /** DELETE: cancels a running search, deletes a finished one's result; false when there is none. */
  async delete(id: string, by?: string, correlationId?: string): Promise<boolean> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const st = await this.state(id);
      if (!st || (st.status !== 'running' && st.status !== 'completed')) return false;
      const local = this.live.get(id);
      const r = local ? await this.serveDelete(local, by, correlationId) : await this.ask(st, { cmd: 'delete', by, correlationId });
      if (r === 'retry') continue;
      return r.ok;
    }
    return false;
  }

  // ---- the owner's side ----

  private async serve(id: string, data: Uint8Array): Promise<Reply | undefined> {
    const l = this.live.get(id);
    if (!l) {
      const st = this.states.get(id);
      return st && st.node === this.d.nodeId && st.status !== 'running' && st.status !== 'completed' ? { ok: false } : undefined;
    }
    const c = JSON.parse(dec.decode(data)) as Cmd;
    return c.cmd === 'get' ? this.serveGet(l, c) : this.serveDelete(l, c.by, c.correlationId);
  }

  private async serveGet(l: Live, c: { keepAliveMs?: number; waitMs?: number; correlationId?: string }): Promise<Reply> {
    if (c.keepAliveMs !== undefined) {
      this.as(c.correlationId, () => l.actor.send({ type: 'extend', keepAliveMs: c.keepAliveMs! }));
      await l.appended;
    }
    if (l.running && c.waitMs && c.waitMs > 0) {
      let t: NodeJS.Timeout | undefined;
      await Promise.race([l.done, new Promise((r) => (t = setTimeout(r, c.waitMs)))]);
      clearTimeout(t);
    }
    return { ok: true, running: l.running, progress: { ...l.progress } };
  }

  private async serveDelete(l: Live, by?: string, correlationId?: string): Promise<Reply> {
    this.as(correlationId, () => l.actor.send({ type: 'delete', ...(by ? { by } : {}) }));
    await l.appended;
    await this.d.results.delete(l.id);
    return { ok: true, running: false, progress: l.progress };
  }

  // ---- another node's side ----

  private async ask(st: AsyncSearchState, c: Cmd): Promise<Reply | 'retry'> {
    const owner = st.node ?? '';
    if (owner && this.d.liveNodes().includes(owner)) {
      try {
        // a GET may wait for the search to finish: the request waits as long, plus a margin
        const timeout = 2_000 + (c.cmd === 'get' ? c.waitMs ?? 0 : 0);
        const m = await this.d.nc.request(subjects.command(Aggregate.AsyncSearch, st.id, c.cmd), enc.encode(JSON.stringify(c)), { timeout });
        return JSON.parse(dec.decode(m.data)) as Reply;
      } catch {
        if (await this.alive(owner)) throw Object.assign(new Error(`the node running async search [${st.esId}] did not answer in time`), { name: 'TimeoutError' });
      }
    }
    await this.adopt(owner);
    return 'retry';
  }

  private async alive(node: string): Promise<boolean> {
    try {
      await this.d.nc.request(subjects.node(node, 'ping'), new Uint8Array(), { timeout: 1_000 });
      return true;
    } catch {
      return false;
    }
  }

  // ---- actors ----

  private spawn(id: string, keepAliveMs: number, resume: { expiresInMs: number; completed: boolean } | undefined, submitted?: Record<string, unknown>, correlationId?: string, at?: number): Live {
    let finish!: () => void;
    const done = new Promise<void>((r) => (finish = r));
    const actor = this.host.create(asyncSearchMachine, { input: { id, keepAliveMs, ...(resume ? { resume } : {}) } });
    const l: Live = { id, actor, running: !resume?.completed, progress: { total: 0, successful: 0, failed: 0 }, done, finish, appended: Promise.resolve() };
    if (resume && resume.expiresInMs <= 0) l.overdueAt = this.now() + resume.expiresInMs;
    actor.on('*', (f: { type: string } & Record<string, unknown>) => {
      const { type, ...data } = f;
      this.append(l, type, type === 'asyncsearch.submitted' ? { ...data, ...submitted } : data, type === 'asyncsearch.submitted' ? at : undefined);
    });
    actor.subscribe((snap) => {
      if (snap.status !== 'done' || this.live.get(id) !== l) return;
      this.live.delete(id);
      l.running = false;
      l.finish();
      void l.appended.then(() => this.d.results.delete(id)).catch(() => undefined);
    });
    this.live.set(id, l);
    const outer = this.cause;
    this.cause = correlationId;
    try {
      actor.start();
    } finally {
      this.cause = outer;
    }
    return l;
  }

  private as(correlationId: string | undefined, fn: () => void): void {
    const outer = this.cause;
    this.cause = correlationId;
    try {
      fn();
    } finally {
      this.cause = outer;
    }
  }

  private append(l: Live, type: string, data: unknown, at?: number): void {
    const seq = (this.seqs.get(l.id) ?? this.states.get(l.id)?.seq ?? 0) + 1;
    this.seqs.set(l.id, seq);
    const time = at ?? (type === 'asyncsearch.expired' && l.overdueAt !== undefined ? l.overdueAt : this.now());
    const env = { ...makeEnvelope({ type, aggregateId: l.id, seq, data, time, correlationId: this.cause, node: this.d.nodeId }), id: uuidv5(`asyncsearch:${l.id}:${seq}`, NS) };
    const p = this.d.bus.append(env).then((ack) => {
      if (!ack.duplicate) this.apply(env);
      return ack;
    });
    p.catch(() => undefined);
    l.appended = p;
  }

  /** Stores the search's result when it finishes, then tells its machine (the `completed` fact follows the stored result). */
  private whenDone(l: Live, run: Promise<AsyncOutcome>): void {
    void run
      .then(async (o) => {
        if (this.live.get(l.id) !== l) return; // deleted, expired or adopted away meanwhile
        await this.d.results.put(l.id, o.text);
        if (this.live.get(l.id) !== l) return void this.d.results.delete(l.id);
        l.running = false;
        l.actor.send({ type: 'complete', status: o.status, partial: o.partial, shards: o.shards });
        await l.appended;
        l.finish();
      })
      .catch((e: Error) => this.d.log.warn({ id: l.id, err: e.message }, 'async search result could not be stored'));
  }

  /** Runs a search of the log here: revived after a restart, or adopted from a dead node (`from`). */
  private takeOver(st: AsyncSearchState, from?: string): void {
    this.seqs.set(st.id, st.seq); // before the actor starts: a search overdue expires at once, as fact seq + 1
    const l = this.spawn(st.id, st.keepAliveMs, { expiresInMs: st.expiresAt - this.now(), completed: st.status === 'completed' });
    if (from !== undefined && this.live.get(st.id) === l) l.actor.send({ type: 'adopt', from, to: this.d.nodeId });
    if (st.status === 'running' && this.live.get(st.id) === l && this.runner) this.whenDone(l, this.runner(st, l.progress));
  }

  async adoptOrphans(): Promise<void> {
    if (!this.d.warm()) return;
    const live = new Set(this.d.liveNodes());
    const owners = new Set(this.open().map((s) => s.node ?? '').filter((n) => n !== this.d.nodeId && !live.has(n)));
    for (const o of owners) await this.adopt(o).catch((e: Error) => this.d.log.warn({ node: o, err: e.message }, 'adopting async searches failed'));
  }

  private async adopt(owner: string): Promise<void> {
    const lease = new Lease(this.d.leases, `adopt-async.${owner || '_legacy_'}`, this.d.nodeId);
    if (!(await lease.acquireOrRenew())) {
      await new Promise((r) => setTimeout(r, 250));
      await this.d.catchUp();
      return;
    }
    try {
      await this.d.catchUp();
      const mine = this.open().filter((s) => (s.node ?? '') === owner && !this.live.has(s.id));
      for (const st of mine) this.takeOver(st, owner);
      await Promise.all(mine.map((s) => this.live.get(s.id)?.appended.catch(() => undefined)));
      if (mine.length) this.d.log.info({ from: owner, searches: mine.length }, 'adopted the async searches of a node that left');
    } finally {
      await lease.release();
    }
  }
}
