import { v4 as uuidv4 } from 'uuid';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import { Aggregate, Connectivity, NatsUnavailable, subjects, type Owner } from '../../streams';
import type { ContextKind, ContextState } from '../../streams/evolve';
import { EsError } from '../wire/esErrors';
import { Lease } from '../cluster/lease';
import type { ContextDirectory } from './directory';
import type { ContextRecord, ContextRegistry, PinnedShard } from './registry';
import type { ScrollRebuilder } from './revive';

const enc = new TextEncoder();
const dec = new TextDecoder();
/** Lease key of the node adopting a dead node's contexts (one adopter per dead node). */
const adoptKey = (node: string) => `adopt.${node || '_legacy_'}`;
/** Contexts written before nodes clustered name no owner node. */
export const LEGACY_OWNER = '';

/** What the paging routes need of a context, wherever its owner runs. */
export interface ContextHandle {
  id: string;
  kind: ContextKind;
  indices: string[];
  shards: PinnedShard[];
  owner?: Owner;
  /** Scroll: the search it pages through. */
  scroll?: ContextRecord['scroll'];
  /**
   * Resolves once the use (and any extension it logged) is acknowledged by the owner: at once when
   * this node owns the context and the use logged nothing.
   */
  ready: Promise<void>;
  /** The search is finished with it: its keep-alive runs again from now. */
  done(): void;
  /** The server frees it (a continuation without `scroll`, a keep-alive too large). */
  release(reason: string, correlationId?: string): Promise<void>;
}

type Command =
  | { cmd: 'use'; useId: string; keepAliveMs?: number; correlationId?: string; from: string }
  | { cmd: 'done'; useId: string }
  | { cmd: 'clear'; by?: string; correlationId?: string }
  | { cmd: 'release'; reason: string; correlationId?: string };
/** What a use of a context asks (`gone`: the caller's error when the context ended meanwhile). */
export interface UseOptions {
  keepAliveMs?: number;
  correlationId?: string;
  mayUse: (owner: Owner | undefined) => boolean;
  gone?: () => Error;
}
type Answer = { ok: true; freed?: number } | { ok: false; gone: true };

/** A use that logged nothing is ready at once. */
const READY: Promise<void> = Promise.resolve();

/** The owner did not answer and is still alive: ES's 503, the client may retry. */
const ownerBusy = (id: string) => new EsError('no_shard_available_action_exception', 503, `the node owning search context [${id}] did not answer in time`);

export interface ContextServiceDeps {
  nc: NatsConnection;
  nodeId: string;
  registry: ContextRegistry;
  directory: ContextDirectory;
  /** Live node ids (membership). */
  liveNodes: () => string[];
  /** Whether this node has listened long enough to know who is alive. */
  warm: () => boolean;
  leases: KV;
  rebuildScroll: ScrollRebuilder;
  log: Logger;
  /** How long a use waits for the owner's answer before asking whether it is alive. */
  commandTimeoutMs?: number;
}

/**
 * Scroll contexts and PITs across nodes. Each context has one owner node (named in its `opened`
 * fact, or by its last `adopted` fact) that runs its XState actor and keep-alive timer and appends
 * its facts; any node serves its pages from the pinned searchers (which give the same hits on every
 * copy) and tells the owner of each use over request/reply on `es.v1.cmd.<aggregate>.<id>.<command>`
 * (`use`, `done`, `clear`, `release`). Every node listens on one wildcard per aggregate; only the
 * owner answers.
 *
 * When an owner node dies, one live node adopts its open contexts (a lease per dead node in the
 * leases bucket, so exactly one adopter): each continues on the adopter with what was left of its
 * keep-alive, after an `adopted` fact naming the old and the new owner.
 */
export class ContextService {
  private readonly subs: Subscription[] = [];
  /** Uses other nodes have open on our contexts: useId -> (context, node). */
  private readonly remoteUses = new Map<string, { rec: ContextRecord; node: string }>();
  private readonly adopting = new Map<string, Promise<void>>();
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly d: ContextServiceDeps) {}

  start(): void {
    for (const a of [Aggregate.Scroll, Aggregate.Pit]) {
      this.subs.push(
        this.d.nc.subscribe(subjects.commandsOf(a), {
          callback: (err, msg) => {
            if (err) return;
            const id = msg.subject.split('.')[4];
            void this.serve(id, msg.data).then((answer) => answer && msg.reply && msg.respond(enc.encode(JSON.stringify(answer))));
          },
        }),
      );
    }
    // Contexts of nodes that left: adopted (also found on a timer, for nodes that died unnoticed).
    this.timer = setInterval(() => void this.adoptOrphans(), 2_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    for (const s of this.subs.splice(0)) s.unsubscribe();
  }

  /** A node left: give back its uses of our contexts, and adopt its contexts. */
  nodeLeft(node: string): void {
    for (const [useId, u] of this.remoteUses) {
      if (u.node !== node) continue;
      this.remoteUses.delete(useId);
      this.d.registry.done(u.rec);
    }
    void this.adoptOrphans();
  }

  // ---- the owner's side ----

  /** Answers a command if this node owns the context (or did, and it ended here); else stays silent. */
  private async serve(id: string, data: Uint8Array): Promise<Answer | undefined> {
    const c = JSON.parse(dec.decode(data)) as Command;
    const reg = this.d.registry;
    const rec = reg.get(id);
    if (!rec) {
      if (c.cmd === 'done') this.remoteUses.delete(c.useId);
      return reg.tombstone(id) && c.cmd !== 'done' ? { ok: false, gone: true } : undefined;
    }
    switch (c.cmd) {
      case 'use': {
        const logged = reg.use(rec, c.keepAliveMs, c.correlationId);
        this.remoteUses.set(c.useId, { rec, node: c.from });
        if (logged) await logged.catch(() => undefined); // an extension it logged is in the log before the page is answered
        return { ok: true };
      }
      case 'done':
        if (this.remoteUses.delete(c.useId)) reg.done(rec);
        return undefined;
      case 'clear':
        return { ok: true, freed: await reg.clear(rec, c.by, c.correlationId) };
      case 'release':
        await reg.release(rec, c.reason as never, c.correlationId);
        return { ok: true, freed: rec.shards.length };
    }
  }

  // ---- the serving node's side ----

  /** The context's state as the log tells it (waiting for a fact appended a moment ago elsewhere). */
  async state(id: string): Promise<ContextState | undefined> {
    let st = this.d.directory.get(id);
    if (!st) {
      await this.d.directory.catchUp();
      st = this.d.directory.get(id);
    }
    return st;
  }

  /**
   * Starts a use of a context: on this node when it owns it, else through its owner. Undefined
   * when the context does not exist (any more), is of the other kind, or `mayUse` refuses its
   * owner principal: the caller answers ES's 404 either way.
   */
  async acquire(
    id: string,
    kind: ContextKind,
    opts: UseOptions,
  ): Promise<ContextHandle | undefined> {
    for (let attempt = 0; attempt < 4; attempt++) {
      const st = this.d.directory.get(id) ?? (await this.state(id));
      if (!st || st.kind !== kind || st.status !== 'open' || !opts.mayUse(st.owner)) return undefined;
      const owner = st.node ?? LEGACY_OWNER;
      if (owner === this.d.nodeId) {
        const rec = this.d.registry.get(id);
        // A use that may log (a keep-alive) needs the log: cut off, ES's 503 before the context
        // changes (a PIT search without keep_alive reads only what this node holds, and goes on).
        if (rec && opts.keepAliveMs !== undefined && !Connectivity.of(this.d.nc).up) await this.needLog(kind);
        if (rec) return this.localHandle(rec, opts);
        if (this.d.registry.tombstone(id)) return undefined; // it just ended here; its last fact is on its way
      }
      if (owner === this.d.nodeId || !this.d.liveNodes().includes(owner)) {
        await this.adopt(owner);
        continue;
      }
      // The owner is told of the use while the page is searched: `ready` settles when it logged it.
      return this.remoteHandle(st, kind, opts);
    }
    return undefined;
  }

  private localHandle(rec: ContextRecord, opts: { keepAliveMs?: number; correlationId?: string }): ContextHandle {
    const reg = this.d.registry;
    const logged = reg.use(rec, opts.keepAliveMs, opts.correlationId);
    return {
      id: rec.id, kind: rec.kind, indices: rec.indices, shards: rec.shards, owner: rec.owner, scroll: rec.scroll,
      ready: logged ? logged.then(() => undefined) : READY,
      done: () => reg.done(rec),
      release: (reason, correlationId) => reg.release(rec, reason as never, correlationId),
    };
  }

  /**
   * A use through the owner on another node. The `use` command goes out at once and the caller
   * searches meanwhile (the pinned searchers and the scroll's request come from the log); `ready`
   * settles when the owner has logged the use, or rejects: ES's 503 when the owner is alive but
   * silent, the caller's 404 when the context ended. An owner found dead is adopted here first, and
   * a context adopted away from the owner asked is asked of its new owner.
   */
  private remoteHandle(st: ContextState, kind: ContextKind, opts: UseOptions): ContextHandle {
    const useId = uuidv4();
    const reg = this.d.registry;
    let owner = st.node ?? LEGACY_OWNER;
    let local: ContextRecord | undefined;
    const ready = (async () => {
      for (let attempt = 0; attempt < 4; attempt++) {
        const answer = await this.command(kind, st.id, { cmd: 'use', useId, keepAliveMs: opts.keepAliveMs, correlationId: opts.correlationId, from: this.d.nodeId });
        if (answer !== 'silent' && answer.ok) return;
        if (answer === 'silent') {
          // Not answered: the owner is dead (adopt it) or slow (503, the client retries).
          if (await this.alive(owner)) throw ownerBusy(st.id);
          await this.adopt(owner);
        } else {
          await this.d.directory.catchUp();
        }
        const now = this.d.directory.get(st.id);
        if (!now || now.status !== 'open') break;
        owner = now.node ?? LEGACY_OWNER;
        if (owner === this.d.nodeId) {
          local = reg.get(st.id);
          if (!local) break;
          await reg.use(local, opts.keepAliveMs, opts.correlationId);
          return;
        }
      }
      throw opts.gone?.() ?? new EsError('search_context_missing_exception', 404, `No search context found for id [${st.id}]`);
    })();
    ready.catch(() => undefined); // the caller awaits it after its search; a search that fails first leaves it unawaited
    return {
      id: st.id, kind, indices: st.indices, shards: st.pinned as PinnedShard[], owner: st.owner,
      scroll: kind === 'scroll' ? this.d.directory.scrollOf(st, this.d.rebuildScroll) : undefined,
      ready,
      // After the owner has the use (a `done` ahead of its `use` would be dropped and pin it open).
      done: () =>
        void ready.then(
          () => (local ? reg.done(local) : this.d.nc.publish(subjects.command(kind, st.id, 'done'), enc.encode(JSON.stringify({ cmd: 'done', useId })))),
          () => undefined,
        ),
      release: async (reason, correlationId) => {
        await ready.catch(() => undefined);
        if (local) return reg.release(local, reason as never, correlationId);
        const a = await this.command(kind, st.id, { cmd: 'release', reason, correlationId });
        if (a === 'silent' && (await this.alive(owner))) throw ownerBusy(st.id);
      },
    };
  }

  /**
   * DELETE of a scroll or PIT: through its owner, wherever it runs. Returns the shard contexts freed
   * (0 when it no longer exists or `mayUse` refuses it).
   */
  clear(id: string, kind: ContextKind, by: string | undefined, correlationId: string | undefined, mayUse: (owner: Owner | undefined) => boolean): Promise<number> {
    return this.end(id, kind, { cmd: 'clear', by, correlationId }, mayUse);
  }

  /** The server frees a context (a continuation asked too long a keep-alive), through its owner. */
  async release(id: string, kind: ContextKind, reason: string, correlationId: string | undefined, mayUse: (owner: Owner | undefined) => boolean): Promise<void> {
    await this.end(id, kind, { cmd: 'release', reason, correlationId }, mayUse);
  }

  private async end(id: string, kind: ContextKind, c: Extract<Command, { cmd: 'clear' | 'release' }>, mayUse: (owner: Owner | undefined) => boolean): Promise<number> {
    for (let attempt = 0; attempt < 4; attempt++) {
      const st = await this.state(id);
      if (!st || st.kind !== kind || st.status !== 'open' || !mayUse(st.owner)) return 0;
      const owner = st.node ?? LEGACY_OWNER;
      const rec = owner === this.d.nodeId ? this.d.registry.get(id) : undefined;
      if (rec) {
        await this.needLog(kind); // cut off: 503 and the context stays as it is (its end could not be logged)
        if (c.cmd === 'clear') return this.d.registry.clear(rec, c.by, c.correlationId);
        await this.d.registry.release(rec, c.reason as never, c.correlationId);
        return rec.shards.length;
      }
      if (owner === this.d.nodeId && this.d.registry.tombstone(id)) return 0;
      if (owner === this.d.nodeId || !this.d.liveNodes().includes(owner)) {
        await this.adopt(owner);
        continue;
      }
      const a = await this.command(kind, id, c);
      if (a === 'silent') {
        if (await this.alive(owner)) throw ownerBusy(id);
        await this.adopt(owner);
        continue;
      }
      return a.ok ? (a.freed ?? 0) : 0;
    }
    return 0;
  }

  /** Throws ES's 503 when the lifecycle log cannot be reached (after a failover's wait). */
  private async needLog(kind: ContextKind): Promise<void> {
    if (!(await Connectivity.of(this.d.nc).waitUp())) throw new NatsUnavailable(`the ${kind} context's next fact cannot be logged`);
  }

  private async command(kind: ContextKind, id: string, c: Command): Promise<Answer | 'silent'> {
    // cut off from NATS, the owner cannot be told (nor found dead): ES's 503 at once, no adoption
    if (!(await Connectivity.of(this.d.nc).waitUp())) throw new NatsUnavailable(`the ${kind} context's owner cannot be reached`);
    try {
      const m = await this.d.nc.request(subjects.command(kind, id, c.cmd), enc.encode(JSON.stringify(c)), { timeout: this.d.commandTimeoutMs ?? 2_000 });
      return JSON.parse(dec.decode(m.data)) as Answer;
    } catch {
      return 'silent';
    }
  }

  /** Whether a node answers on its own subject (a dead node's subscriptions are gone at once). */
  private async alive(node: string): Promise<boolean> {
    if (!node) return false;
    try {
      await this.d.nc.request(subjects.node(node, 'ping'), new Uint8Array(), { timeout: 1_000 });
      return true;
    } catch {
      return false;
    }
  }

  // ---- adoption ----

  /** Adopts the open contexts of every owner node that is not live (once this node knows who is). */
  async adoptOrphans(): Promise<void> {
    if (this.stopped) return;
    const live = new Set(this.d.liveNodes());
    const warm = this.d.warm();
    const owners = new Set<string>();
    for (const st of this.d.directory.open()) {
      const owner = st.node ?? LEGACY_OWNER;
      if (owner === this.d.nodeId) continue;
      // Until warm, a node not heard from yet is not taken for dead (legacy contexts have no node).
      if (owner === LEGACY_OWNER || (warm && !live.has(owner))) owners.add(owner);
    }
    for (const o of owners) await this.adopt(o).catch((e) => this.d.log.warn({ err: (e as Error).message, node: o }, 'adopting contexts failed'));
  }

  /** Adopts every open context of `owner` if this node wins the lease on it; one attempt at a time. */
  adopt(owner: string): Promise<void> {
    const running = this.adopting.get(owner);
    if (running) return running;
    const p = this.adoptNow(owner).finally(() => this.adopting.delete(owner));
    this.adopting.set(owner, p);
    return p;
  }

  private async adoptNow(owner: string): Promise<void> {
    const lease = new Lease(this.d.leases, adoptKey(owner), this.d.nodeId);
    if (!(await lease.acquireOrRenew())) {
      // Another node adopts them: its adopted facts will name the new owner.
      await new Promise((r) => setTimeout(r, 250));
      await this.d.directory.catchUp();
      return;
    }
    try {
      // Everything the dead owner (and any earlier adopter) appended is folded before deciding.
      await this.d.directory.catchUp();
      const mine = this.d.directory.open().filter((st) => (st.node ?? LEGACY_OWNER) === owner && !this.d.registry.get(st.id));
      const adopted: ContextRecord[] = [];
      for (const st of mine) {
        let scroll: ContextRecord['scroll'];
        try {
          if (st.kind === 'scroll') scroll = st.request ? this.d.rebuildScroll(st.request, st.total) : undefined;
        } catch (e) {
          this.d.log.warn({ context: st.id, err: (e as Error).message }, 'scroll context cannot be adopted');
        }
        if (st.kind === 'scroll' && !scroll) continue;
        adopted.push(this.d.registry.adopt(st, scroll, owner));
      }
      await Promise.all(adopted.map((r) => r.appended.catch(() => undefined)));
      if (adopted.length) this.d.log.info({ from: owner || 'legacy', contexts: adopted.length }, 'adopted the search contexts of a node that left');
    } finally {
      await lease.release();
    }
  }
}
