import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import { Bus, EVENT_STREAM, STATE_STREAM, StreamFollower, subjects, type Aggregate, type Envelope, type LoggedMessage } from '../../streams';
import { applyContext, evolveAsyncSearch, type AsyncSearchState, type ContextState } from '../../streams/evolve';
import { foldLog, readFactBatches } from '../../streams/factReader';
import { evolveToken, tokenDocExpiresAt, type AccessTokenRecord } from '../../machines/accessToken.machine';
import { Lease } from '../cluster/lease';
import { ASYNC_SEARCH_AGGREGATE, CONTEXT_AGGREGATES, CREDENTIAL_AGGREGATES, NODE_FACTS_KEPT, readCompactedState, type StateMessage } from '../../streams/compactedState';

/**
 * Compaction that never loses a live thing (issue 20). One node at a time (a lease) folds ES_EVT as
 * it is appended and keeps, in ES_STATE, the current state of every credential (its facts) and of
 * every open scroll context and PIT (folded), one message per aggregate, plus the ES_EVT position they
 * cover. Only then may history go: facts older than `events.retention` are purged from ES_EVT up to
 * that position and never past it, so a fact is removed only once what it says is in ES_STATE (no
 * max_age, which would remove facts whatever was compacted). With every node down nothing is removed.
 *
 * Kept: every user, role, API key and service token (their ids come back, so their fact sequences
 * must not restart), token pairs until the fold of their facts ends them (expired, or invalidated
 * with their document ended), open contexts, async searches not ended (running or completed), each
 * node's last facts. Dropped: ended contexts, ended async searches, ended token pairs.
 */
export interface CompactorOptions {
  nc: NatsConnection;
  leases: KV;
  nodeId: string;
  log: Logger;
  /** `events.retention` in ms; 0 keeps every fact (ES_STATE is still kept, for start-up). */
  retentionMs: number;
  /** How often state is written (default: a quarter of the retention, 250 ms to 5 s). */
  flushMs?: number;
  now?: () => number;
}

const dec = new TextDecoder();
const enc = new TextEncoder();
const PREFIX = 'es.v1.evt.';
/**
 * A reader (a node starting) reads ES_STATE, then the ES_EVT tail after its position: facts are
 * purged only behind a position written this long ago, so a purge does not remove the tail of a
 * state read just before it (a slower reader sees the gap and reads ES_STATE again).
 */
const PURGE_GRACE_MS = 10_000;

export class Compactor {
  private readonly lease: Lease;
  private follower?: StreamFollower;
  private readonly contexts = new Map<string, ContextState>();
  private readonly asyncSearches = new Map<string, AsyncSearchState>();
  private readonly facts = new Map<string, Envelope[]>();
  private readonly dirty = new Set<string>();
  /** Keys with a message in ES_STATE: only those are purged when their aggregate goes (most contexts open and end between two writes). */
  private readonly present = new Set<string>();
  /** (stream seq, stored at) samples of folded facts, oldest first: where retention may cut. */
  private marks: Array<[number, number]> = [];
  private written = 0;
  /** (position, written at) of recent writes, oldest first: history is purged only behind a position written {@link PURGE_GRACE_MS} ago. */
  private writes: Array<[number, number]> = [];
  private timer?: NodeJS.Timeout;
  private leaseTimer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private flushing?: Promise<void>;
  private stopped = false;
  private readonly flushMs: number;
  private readonly now: () => number;

  constructor(private readonly o: CompactorOptions) {
    this.lease = new Lease(o.leases, 'compactor', o.nodeId);
    this.flushMs = o.flushMs ?? (o.retentionMs ? Math.min(5_000, Math.max(250, o.retentionMs / 4)) : 5_000);
    this.now = o.now ?? Date.now;
  }

  /** Whether this node is the compactor now. */
  get active(): boolean {
    return this.follower !== undefined;
  }

  /** ES_EVT position ES_STATE covers (as last written by this node). */
  get position(): number {
    return this.written;
  }

  start(): void {
    const tick = async () => {
      if (this.stopped) return;
      const held = await this.lease.acquireOrRenew();
      if (held && !this.follower && !this.running) this.running = this.become().catch((e: Error) => this.o.log.warn({ err: e.message }, 'compactor did not start')).finally(() => (this.running = undefined));
      else if (!held && this.follower) await this.resign();
    };
    void tick();
    this.leaseTimer = setInterval(() => void tick(), 1_000);
    this.leaseTimer.unref();
  }

  /** Loads ES_STATE into memory and follows ES_EVT from the position it covers. */
  private async become(): Promise<void> {
    const cs = await readCompactedState(this.o.nc);
    this.contexts.clear();
    this.asyncSearches.clear();
    this.facts.clear();
    this.present.clear();
    for (const c of cs.contexts) {
      this.contexts.set(c.id, c);
      this.present.add(`${c.kind}.${c.id}`);
    }
    for (const a of cs.asyncSearches) {
      this.asyncSearches.set(a.id, a);
      this.present.add(`${ASYNC_SEARCH_AGGREGATE}.${a.id}`);
    }
    for (const f of cs.facts) if (this.keep(f)) this.present.add(`${f.type.slice(0, f.type.indexOf('.'))}.${f.aggregateId}`);
    this.dirty.clear();
    if (!cs.asyncSearchesKept && cs.seq > 0) {
      // an ES_STATE of an earlier build, without async searches: their facts from the whole log, once
      const world = await foldLog(this.o.nc, { filterSubject: subjects.factsOfType(ASYNC_SEARCH_AGGREGATE as Aggregate) });
      for (const a of world.asyncsearch.values()) {
        if (a.status !== 'running' && a.status !== 'completed') continue;
        this.asyncSearches.set(a.id, a);
        this.dirty.add(`${ASYNC_SEARCH_AGGREGATE}.${a.id}`);
      }
    }
    // (an earlier build's state: 0 until the first write, which then marks it as keeping async searches)
    this.written = cs.asyncSearchesKept ? cs.seq : 0;
    this.writes = this.written ? [[this.written, this.now()]] : [];
    this.marks = [];
    // What was appended since: read fast (push, in batches), then followed as it comes.
    const last = (await (await jetstreamManager(this.o.nc)).streams.info(EVENT_STREAM)).state.last_seq;
    if (last > cs.seq) {
      for await (const batch of readFactBatches(this.o.nc, { startSeq: cs.seq + 1 })) {
        if (this.stopped) return; // a stop during a long backlog: nothing written, the next holder reads it again
        for (const e of batch) this.fold(e);
      }
    }
    if (this.stopped) return;
    const follower = new StreamFollower(this.o.nc, EVENT_STREAM, subjects.allFacts, (m) => this.dispatch(m), this.o.log);
    await follower.start(Math.max(cs.seq, last));
    this.follower = follower;
    this.o.log.info({ position: cs.seq, contexts: this.contexts.size, credentials: this.facts.size }, 'compactor started');
    this.timer = setInterval(() => void this.flush(), this.flushMs);
    this.timer.unref();
  }

  private async resign(): Promise<void> {
    clearInterval(this.timer);
    await this.flushing;
    await this.follower?.stop();
    this.follower = undefined;
    this.o.log.warn('lost the compactor lease');
  }

  private dispatch(m: LoggedMessage): void {
    if (this.o.retentionMs) {
      const last = this.marks[this.marks.length - 1];
      if (!last || m.timeMs - last[1] >= 100) this.marks.push([m.seq, m.timeMs]);
      else last[0] = m.seq; // the newest seq stored within 100 ms of that sample
    }
    const dot = m.subject.indexOf('.', PREFIX.length);
    const aggregate = m.subject.slice(PREFIX.length, dot);
    if (!CONTEXT_AGGREGATES.has(aggregate) && !CREDENTIAL_AGGREGATES.has(aggregate) && aggregate !== 'node' && aggregate !== ASYNC_SEARCH_AGGREGATE) return;
    let e: Envelope;
    try {
      e = JSON.parse(dec.decode(m.data)) as Envelope;
    } catch {
      return;
    }
    this.fold(e);
  }

  /** Folds one fact into what is kept (idempotent by per-aggregate seq). */
  private fold(e: Envelope): void {
    const aggregate = e.type.slice(0, e.type.indexOf('.'));
    const isNode = aggregate === 'node';
    if (CONTEXT_AGGREGATES.has(aggregate)) {
      const before = this.contexts.get(e.aggregateId);
      const next = applyContext(before, e);
      if (!next) return;
      if (next.status === 'open') this.contexts.set(next.id, next);
      else if (!this.contexts.delete(next.id)) return; // ended, and never known open here: nothing kept
      this.dirty.add(`${aggregate}.${e.aggregateId}`);
    } else if (aggregate === ASYNC_SEARCH_AGGREGATE) {
      const before = this.asyncSearches.get(e.aggregateId);
      const next = evolveAsyncSearch(before, e);
      if (!next || next === before) return;
      if (next.status === 'running' || next.status === 'completed') this.asyncSearches.set(next.id, next);
      else if (!this.asyncSearches.delete(next.id)) return; // ended, and never known here: nothing kept
      this.dirty.add(`${aggregate}.${e.aggregateId}`);
    } else if ((CREDENTIAL_AGGREGATES.has(aggregate) || isNode) && this.keep(e)) {
      const key = `${aggregate}.${e.aggregateId}`;
      // A node's last facts are enough: its next fact's sequence, and whether it is up.
      if (isNode) this.facts.set(key, this.facts.get(key)!.slice(-NODE_FACTS_KEPT));
      this.dirty.add(key);
    }
  }

  /** Adds a credential fact to its aggregate's list (once per seq); whether it was new. */
  private keep(e: Envelope): boolean {
    const key = `${e.type.slice(0, e.type.indexOf('.'))}.${e.aggregateId}`;
    const list = this.facts.get(key);
    if (!list) {
      this.facts.set(key, [e]);
      return true;
    }
    if (list.some((f) => f.seq === e.seq)) return false;
    list.push(e);
    if (list.length > 1 && list[list.length - 2].seq > e.seq) list.sort((a, b) => a.seq - b.seq);
    return true;
  }

  /** Whether a token pair's facts say it is gone (expired, or invalidated with its document ended). */
  private tokenEnded(list: Envelope[]): boolean {
    let rec: AccessTokenRecord | undefined;
    for (const e of list) rec = evolveToken(rec, e) ?? rec;
    return !!rec && (rec.status === 'expired' || (rec.status === 'invalidated' && this.now() >= tokenDocExpiresAt(rec)));
  }

  /**
   * Writes what changed, then the position it covers, then removes facts older than the retention up
   * to that position. One at a time; `final` (a clean stop) waits for a running one and runs again.
   */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    this.flushing = this.flushOnce().catch((e: Error) => this.o.log.warn({ err: e.message }, 'compaction failed (retried)')).finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async flushOnce(): Promise<void> {
    const follower = this.follower;
    if (!follower) return;
    const jsm = await jetstreamManager(this.o.nc);
    // Token pairs end by time too (an invalidated pair once its document is over): looked at each pass.
    for (const [key, list] of this.facts) if (key.startsWith('token.') && this.tokenEnded(list)) this.dirty.add(key);
    const position = follower.position;
    const keys = [...this.dirty];
    this.dirty.clear();
    if (keys.length || position !== this.written) {
      const bus = new Bus(this.o.nc, 512);
      const writes: Array<Promise<unknown>> = [];
      const purges: string[] = [];
      for (const key of keys) {
        const dot = key.indexOf('.');
        const [aggregate, id] = [key.slice(0, dot) as Aggregate, key.slice(dot + 1)];
        const subject = subjects.state(aggregate, id);
        let msg: StateMessage | undefined;
        if (CONTEXT_AGGREGATES.has(aggregate)) {
          const st = this.contexts.get(id);
          if (st) msg = { kind: 'context', state: st };
        } else if (aggregate === ASYNC_SEARCH_AGGREGATE) {
          const st = this.asyncSearches.get(id);
          if (st) msg = { kind: 'asyncsearch', state: st };
        } else {
          const list = this.facts.get(key);
          if (list && aggregate === 'token' && this.tokenEnded(list)) this.facts.delete(key);
          else if (list) msg = { kind: 'facts', facts: list };
        }
        if (msg) {
          writes.push(bus.publish(subject, enc.encode(JSON.stringify(msg))));
          this.present.add(key);
        } else if (this.present.delete(key)) purges.push(subject);
      }
      try {
        await Promise.all(writes);
        for (let i = 0; i < purges.length; i += 64) await Promise.all(purges.slice(i, i + 64).map((filter) => jsm.streams.purge(STATE_STREAM, { filter })));
      } catch (e) {
        for (const k of keys) this.dirty.add(k); // written again next time
        for (const subject of purges) this.present.add(subject.slice('es.v1.state.'.length));
        throw e;
      }
      const pos: StateMessage = { kind: 'position', seq: position, at: this.now(), node: this.o.nodeId, asyncSearches: true };
      await bus.publish(subjects.statePosition, enc.encode(JSON.stringify(pos)));
      this.written = position;
      this.writes.push([position, this.now()]);
    }
    await this.ageOut(jsm);
  }

  /** Removes ES_EVT facts stored before now − retention, never past a position written {@link PURGE_GRACE_MS} ago. */
  private async ageOut(jsm: JetStreamManager): Promise<void> {
    if (!this.o.retentionMs || !this.written) return;
    const now = this.now();
    // the newest position written at least PURGE_GRACE_MS ago bounds the purge
    let w = 0;
    while (w < this.writes.length && this.writes[w][1] <= now - PURGE_GRACE_MS) w++;
    const settled = w ? this.writes[w - 1][0] : 0;
    this.writes = this.writes.slice(Math.max(0, w - 1));
    if (!settled) return;
    const cutoff = now - this.o.retentionMs;
    let upTo = 0;
    let i = 0;
    while (i < this.marks.length && this.marks[i][1] < cutoff && this.marks[i][0] <= settled) upTo = this.marks[i++][0];
    this.marks = this.marks.slice(i);
    const info = (await jsm.streams.info(EVENT_STREAM)).state;
    if (!upTo && info.first_seq <= settled && info.messages) {
      // Facts this compactor never read (it took over with them compacted): their own time decides.
      const m = await jsm.streams.getMessage(EVENT_STREAM, { seq: settled }).catch(() => null);
      if (m && m.timestamp && Date.parse(m.timestamp) < cutoff) upTo = settled;
    }
    if (upTo >= info.first_seq) await jsm.streams.purge(EVENT_STREAM, { seq: upTo + 1 });
  }

  /** Stops; a clean stop writes what is compacted so far (the next start reads it) and gives the lease up. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.leaseTimer);
    await this.running;
    if (this.follower) {
      clearInterval(this.timer);
      await this.follower.reachEnd(2_000).catch(() => undefined);
      await this.flush();
      await this.flush(); // one may have been under way with older dirt
      await this.follower.stop();
      this.follower = undefined;
    }
    await this.lease.release();
  }
}
