import { v4 as uuidv4 } from 'uuid';
import type { NatsConnection, Msg, Subscription } from '@nats-io/transport-node';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import { AppendUncertain, DATA_STREAM, Fenced, READ_MAX_BYTES, fencedAppend, readStream, subjects, type LoggedMessage } from '../../streams';
import { asEsError, EsError, errorToWire, fromJetStream, type EsErrorBody } from '../wire/esErrors';
import { parseJson, stringify } from '../wire/json';
import { decodeBatch, encodeBatch } from './opCodec';
import { assembleReply, ChunkedResponder, HEADER_ROOM, hasParts } from './replyChunks';
import { appendInParts, PartAssembler } from './logParts';
import { encodeFetchPage, encodeQueryPage, fitSources, hitMeta, type SourceText } from './pageCodec';
import type { RenderSpec } from './hitRender';
import { registerLocalCopy, unregisterLocalCopy, type LocalCopy, type LocalOp } from './localCopies';
import type { ShardStore } from './engine';
import type { PreparedBatch } from './engine/store/shardStore';
import type { DocWrite, LoggedOp, SearcherRef, ShardQueryRequest, WriteOutcome } from './engine/types';
import { RecordingView } from './mappingProposal';
import type { ForceMergeOptions, SegmentMaintenance } from './maintenance';
import { fetchSegments, offerSegments, type RecoveryOffer } from './peerRecovery';
import type { ObjectStore } from '@nats-io/obj';
import type { SearchScope } from '../wire/circuitBreaker';

/** Address of one shard (any of its copies). */
export interface ShardRef {
  index: string;
  indexUuid: string;
  n: number;
}

export type ShardReply<T> = { ok: true; result: T } | { ok: false; error: EsErrorBody };

/** Query op: runs on a pinned searcher (PIT/scroll) or the current one; may fetch sources inline. */
export interface QueryMessage {
  req: ShardQueryRequest;
  searcher?: SearcherRef;
  /** Include the top hits' sources in the reply (single-shard searches skip the fetch round trip). */
  fetch?: boolean;
  /** Write the fetched hits as the response carries them (actors/shard/hitRender.ts). */
  render?: RenderSpec;
}
export interface FetchMessage {
  docs: number[];
  /** The searcher the docs came from: a copy answers only once it has applied up to it. */
  searcher?: SearcherRef;
}
/** What the primary answers to a write. */
export interface WriteReply {
  outcomes: WriteOutcome[];
  refreshed: boolean;
  /** Highest seqNo applied on the primary after this write: replicas refresh once they reach it. */
  maxSeqNo: number;
}

export type CopyRole = 'primary' | 'replica';
/** `recovering`: reading its history from the log; `failed`: cannot apply the log (see log lines). */
export type CopyState = 'recovering' | 'started' | 'failed';

/** What peer recovery needs from the node (peerRecovery.ts). */
export interface RecoveryDeps {
  /** The copy's directory. */
  dir: string;
  objects: () => Promise<ObjectStore>;
  /** This copy's object name prefix when it is the source (`<uuid>/<n>/<node>/`). */
  prefix: string;
  /** Asks a started copy on another node for its segments (undefined: none to ask). */
  offer: () => Promise<RecoveryOffer | undefined>;
  /** Where the shard's document log was trimmed up to (0: never). */
  trimPoint: () => Promise<number>;
  logId?: string;
}

/** What a shard copy needs from its node. */
export interface CopyDeps {
  nc: NatsConnection;
  js: JetStreamClient;
  log: Logger;
  nodeId: string;
  refreshIntervalMs: () => number;
  /** Puts dynamic fields in the log (a mapping_updated fact) and applies them here. */
  proposeMapping: (indexUuid: string, mappings: Record<string, unknown>) => Promise<void>;
  /** Resolves once the node's log follower has dispatched everything up to stream sequence `seq`. */
  followed: (seq: number) => Promise<void>;
  /** The state of this copy changed (membership reports it). */
  onStateChange: () => void;
  /** A store on the copy's directory (`fresh`: emptied first, to rebuild a copy that could not apply the log). */
  newStore: (fresh?: boolean) => ShardStore;
  /** The node's segment housekeeping (flushes, merges); absent in tests that run copies alone. */
  maintenance?: SegmentMaintenance;
  /** The index's settings, flat (merge policy). */
  indexSettings?: () => Record<string, string>;
  /** A commit of this copy is durable (the node may trim the log behind it). */
  onCommit?: (copy: ShardActor) => void;
  /** Peer recovery (peerRecovery.ts): absent in tests that run copies alone. */
  recovery?: RecoveryDeps;
  /** A query or fetch op's budget on the node's request breaker (closed when its reply is built). */
  searchScope?: () => SearchScope;
}

const enc = new TextEncoder();
/** Label of the sources a reply copies (request breaker). */
const FETCH_LABEL = '<fetch_source>';
const charsOf = (xs: readonly SourceText[]) => xs.reduce((n, x) => n + (typeof x === 'string' ? x.length : x.byteLength), 0);
const dec = new TextDecoder();
/** Largest group commit (several write requests in one log message): see ShardClient's WRITE_REQUEST_BYTES. */
const GROUP_BYTES = 512 * 1024;
/** A primary refuses to wait longer than this for a replica-lag or mapping round trip. */
const WAIT_MS = 10_000;
/** A copy that needs segments and finds no source asks again this many times (backing off to 30 s: about 20 min). */
const RECOVERY_ATTEMPTS = 40;
const RECOVERY_RETRY_MAX_MS = 30_000;

interface PendingWrite {
  writes: DocWrite[];
  refresh?: 'true' | 'false' | 'wait_for';
  msg: Msg;
  bytes: number;
}

/** First item of a batch message: the shard seqNo it was prepared on (absent in logs of older versions). */
interface BatchHead {
  batch: { after: number };
}

/** A batch this primary appended, waiting for the follower to bring it back. */
interface OwnBatch {
  prepared: PreparedBatch;
  /** true: applied; false: refused (another batch came first); an Error: the copy broke applying it. */
  done: (outcome: boolean | Error) => void;
}

export const shardUnavailable = (ref: ShardRef, why: string) =>
  new EsError('unavailable_shards_exception', 503, `[${ref.index}][${ref.n}] ${why}`, { meta: { index: ref.index, shard: String(ref.n) } });

/**
 * One copy of a shard on this node: owns a ShardStore and answers requests over NATS.
 *
 * Every copy answers searches (`es.v1.shard.<uuid>.<n>.<op>`, queue group of the shard) and
 * copy-addressed requests (`...c.<node>.<op>`). The primary alone also answers `...p.write|get|refresh`:
 * it sequences a batch ({@link ShardStore.prepare}) and appends it to the shard's subject of the
 * document log, stating the subject's last sequence (JetStream refuses a stale writer) and, inside
 * the batch, the seqNo it was prepared on.
 *
 * Every copy, the primary included, applies the subject's messages only as the node's log
 * follower delivers them, in stream order ({@link deliver}), and applies a batch only if the shard
 * is still at the seqNo the batch was prepared on: two writers that both got past JetStream's check
 * (nats-server 2.9 does not hold concurrent proposals on an R3 stream to it) cannot both win, and
 * every copy and every replay decides the same. The primary answers a write once its own batch has
 * come back through the follower, applied (without parsing it again) or refused (then prepared
 * again on the newer state). Nothing is applied that the log does not have.
 *
 * A pinned searcher `{maxDoc, seqNo}` sees the same documents on every copy built from the log:
 * a copy answers for one only once it has applied up to its seqNo.
 */
export class ShardActor implements LocalCopy {
  /** Stream sequence of the last message of this shard's subject processed here (applied or refused). */
  applied = 0;
  /**
   * Stream sequence of the last message of this subject seen here, a part of an unfinished
   * multi-part batch included (logParts.ts): what JetStream's fencing compares with.
   */
  private seen = 0;
  private readonly parts = new PartAssembler();
  /** Batches refused because another batch was applied first (a second writer lost). */
  refused = 0;
  private readonly own = new Map<string, OwnBatch>();
  role?: CopyRole;
  term = 0;
  state: CopyState = 'started';
  private subs: Subscription[] = [];
  private primarySub?: Subscription;
  private timer?: NodeJS.Timeout;
  private readonly maxPayload: number;
  private readonly subject: string;
  private buffer: LoggedMessage[] = [];
  private waiters: Array<{ seqNo: number; resolve: () => void }> = [];
  private queue: PendingWrite[] = [];
  private pumping = false;
  private started = false;
  /** Replies over `max_payload` go in parts (replyChunks.ts). */
  private readonly replies: ChunkedResponder;

  constructor(
    readonly ref: ShardRef,
    public store: ShardStore,
    private readonly deps: CopyDeps,
  ) {
    this.maxPayload = deps.nc.info?.max_payload ?? 1024 * 1024;
    this.subject = subjects.dataShard(ref.indexUuid, ref.n);
    this.replies = new ChunkedResponder(deps.nc, () => deps.nc.info?.max_payload ?? this.maxPayload);
  }

  /** Subscribes to searches and copy requests, and starts the refresh timer. */
  start(): this {
    if (this.started) return this;
    this.started = true;
    const { indexUuid, n } = this.ref;
    const any = `es.v1.shard.${indexUuid}.${n}.`;
    this.subs.push(
      this.deps.nc.subscribe(`${any}*`, {
        queue: subjects.shardQueue(indexUuid, n),
        callback: (err, msg) => {
          if (!err) void this.dispatch(msg.subject.slice(any.length), msg);
        },
      }),
    );
    const mine = `es.v1.shard.${indexUuid}.${n}.c.${this.deps.nodeId}.`;
    this.subs.push(
      this.deps.nc.subscribe(`${mine}*`, {
        callback: (err, msg) => {
          if (!err) void this.dispatch(msg.subject.slice(mine.length), msg);
        },
      }),
    );
    this.syncPrimarySub();
    this.scheduleRefresh();
    registerLocalCopy(this.deps.nc, indexUuid, n, this);
    this.deps.maintenance?.add(this);
    return this;
  }

  /** Primary or replica (allocation facts decide); a primary takes writes once started. */
  setRole(role: CopyRole, term: number): void {
    this.role = role;
    this.term = term;
    this.syncPrimarySub();
  }

  private syncPrimarySub(): void {
    const want = this.started && this.role === 'primary' && this.state === 'started';
    if (want && !this.primarySub) {
      const { indexUuid, n } = this.ref;
      const p = `es.v1.shard.${indexUuid}.${n}.p.`;
      this.primarySub = this.deps.nc.subscribe(`${p}*`, {
        queue: subjects.shardPrimaryQueue(indexUuid, n),
        callback: (err, msg) => {
          if (!err) void this.dispatch(msg.subject.slice(p.length), msg);
        },
      });
    } else if (!want && this.primarySub) {
      const s = this.primarySub;
      this.primarySub = undefined;
      void s.drain().catch(() => undefined);
    }
  }

  private scheduleRefresh() {
    const ms = this.deps.refreshIntervalMs();
    this.timer = setTimeout(
      () => {
        if (this.state === 'started' && this.store.pendingRefresh()) this.store.refresh();
        this.scheduleRefresh();
      },
      ms > 0 ? ms : 1000,
    );
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.started = false;
    this.deps.maintenance?.remove(this);
    unregisterLocalCopy(this.deps.nc, this.ref.indexUuid, this.ref.n, this);
    const subs = [...this.subs, ...(this.primarySub ? [this.primarySub] : [])];
    this.subs = [];
    this.primarySub = undefined;
    await Promise.all(subs.map((s) => (s.isClosed() ? undefined : s.drain().catch(() => undefined))));
    for (const w of this.waiters) w.resolve();
    this.waiters = [];
    await this.replies.stop();
  }

  // ---- the log ----

  /** A message of this shard's subject, in stream order (the node's log follower); returns the ops applied. */
  deliver(m: LoggedMessage): number {
    if (this.state === 'recovering') {
      this.buffer.push(m);
      return 0;
    }
    if (this.state === 'failed' || m.seq <= Math.max(this.applied, this.seen)) return 0;
    try {
      const ops = this.applyMessage(m);
      this.wakeWaiters();
      return ops;
    } catch (e) {
      this.fail(e, m.seq);
      return 0;
    }
  }

  /**
   * Applies one batch message if the shard is still where the batch was prepared; a batch of ours
   * is committed as prepared (no second parse). Returns the ops applied (0 when refused).
   */
  private applyMessage(m: LoggedMessage): number {
    this.seen = m.seq;
    // a batch larger than a message comes in parts: applied with its last one (logParts.ts)
    const whole = this.parts.accept(m.seq, m.data, m.msgId);
    if (whole.kind !== 'whole') {
      if (whole.kind === 'stray') this.applied = m.seq; // an abandoned batch: nothing to apply
      return 0;
    }
    const mine = whole.msgId ? this.own.get(whole.msgId) : undefined;
    if (mine) this.own.delete(whole.msgId!);
    const items = decodeBatch<LoggedOp | BatchHead>(dec.decode(whole.data));
    const head = items.length && 'batch' in items[0] ? (items.shift() as BatchHead).batch : undefined;
    this.applied = m.seq;
    if (head && head.after !== this.store.maxSeqNo()) {
      this.store.markApplied(m.seq);
      this.refused++;
      this.deps.log.warn({ shard: this.ref, seq: m.seq, after: head.after, maxSeqNo: this.store.maxSeqNo(), own: !!mine }, 'shard batch refused: prepared on another state');
      mine?.done(false);
      return 0;
    }
    try {
      if (mine) this.store.commit(mine.prepared);
      else for (const op of items as LoggedOp[]) this.store.applyLogged(op);
    } catch (e) {
      mine?.done(shardUnavailable(this.ref, 'the copy failed while applying the write and is being rebuilt from the log'));
      throw e;
    }
    this.store.markApplied(m.seq);
    this.lastWriteAt = Date.now();
    this.deps.maintenance?.afterWrite();
    mine?.done(true);
    return items.length;
  }

  // ---- segments (maintenance.ts) ----

  /** Time of the last write applied (idle copies are flushed). */
  lastWriteAt = Date.now();

  get label(): string {
    return `[${this.ref.index}][${this.ref.n}]`;
  }

  indexSettings(): Record<string, string> {
    return this.deps.indexSettings?.() ?? {};
  }

  committed(): void {
    this.deps.onCommit?.(this);
  }

  /** `POST _flush`: writes the buffer to disk and commits. */
  flush(): Promise<void> {
    return this.deps.maintenance ? this.deps.maintenance.flush(this) : this.store.flushAsync();
  }

  /** The copy's segments as `_cat/segments` lists them, and the searchers contexts pin. */
  segments(): { segments: ReturnType<ShardStore['segmentList']>; pinned: ReturnType<ShardStore['pinned']> } {
    return { segments: this.store.segmentList(), pinned: this.store.pinned() };
  }

  /** `POST _forcemerge`. */
  forceMerge(o: ForceMergeOptions): Promise<void> {
    return this.deps.maintenance ? this.deps.maintenance.forceMerge(this, o) : Promise.resolve();
  }

  /**
   * Reads this shard's history from the log (after `applied`) while the follower's messages wait
   * in a buffer, then applies those too: a copy assigned to this node at run time (new replica,
   * rebuilt copy) ends up exactly where the log is.
   */
  async recover(): Promise<void> {
    this.state = 'recovering';
    this.buffer = [];
    this.parts.reset(); // read again from the message after `applied`, parts of a batch included
    this.seen = this.applied;
    this.syncPrimarySub();
    this.deps.onStateChange();
    try {
      await this.fromPeer();
      for await (const m of readStream(this.deps.nc, DATA_STREAM, { filterSubject: this.subject, startSeq: this.applied + 1, maxBytes: READ_MAX_BYTES })) {
        if (m.seq > this.seen) this.applyMessage(m);
      }
      for (const m of this.buffer) if (m.seq > this.seen) this.applyMessage(m);
    } catch (e) {
      this.buffer = [];
      this.fail(e, this.applied);
      return;
    }
    this.buffer = [];
    this.store.refresh();
    this.state = 'started';
    this.wakeWaiters();
    this.syncPrimarySub();
    this.deps.onStateChange();
  }

  /**
   * An empty copy, or one whose log was trimmed past its commit, takes another copy's segments
   * first (peer recovery) and then reads only the log after them. Throws when the log was trimmed
   * past this copy and no other copy can give it segments (the documents would be lost).
   */
  private async fromPeer(): Promise<void> {
    const r = this.deps.recovery;
    if (!r) return;
    let offer: RecoveryOffer | undefined;
    for (let attempt = 0; ; attempt++) {
      const trimmed = await r.trimPoint();
      if (this.applied > 0 && trimmed <= this.applied) return;
      offer = await r.offer().catch((e: Error) => {
        this.deps.log.warn({ shard: this.ref, err: e.message }, 'no copy could give its segments; reading the document log');
        return undefined;
      });
      if (offer && offer.commit.applied > this.applied) break;
      if (trimmed <= this.applied) return;
      // the log lacks this copy's start and no copy gave segments (its node died while it put them, or is
      // down): stay recovering and ask again, as ES retries a recovery, until a source is back or the copy stops
      const error = `the document log of ${this.label} was trimmed up to ${trimmed}, past this copy (${this.applied}), and no other copy gave its segments`;
      if (!this.started || attempt >= RECOVERY_ATTEMPTS) throw new Error(error);
      if (attempt === 0) this.deps.log.warn({ shard: this.ref }, `${error}; asking again`);
      await new Promise((res) => setTimeout(res, Math.min(RECOVERY_RETRY_MAX_MS, 500 * 2 ** attempt)));
    }
    const t0 = Date.now();
    await this.store.closeWhenIdle(); // its flushes and merges must not write into the directory the fetch fills
    await fetchSegments(await r.objects(), offer, r.dir, r.logId);
    this.store = this.deps.newStore(false);
    this.applied = this.store.committedPoint().applied;
    this.deps.log.info({ shard: this.ref, files: offer.files.length, bytes: offer.bytes, applied: this.applied, ms: Date.now() - t0 }, 'copy recovered from another copy\'s segments');
  }

  /** The copy cannot follow the log (an op that does not apply): stop serving and rebuild from the log. */
  private fail(e: unknown, seq: number): void {
    this.deps.log.error({ err: e, shard: this.ref, seq }, 'shard copy cannot apply the document log; rebuilding it from the log');
    this.state = 'failed';
    this.syncPrimarySub();
    this.deps.onStateChange();
    if (this.rebuilds++ < 1) void this.rebuild();
  }

  private async rebuild(): Promise<void> {
    await this.store.closeWhenIdle(); // nothing of the old store may still write into the wiped directory
    this.store = this.deps.newStore(true);
    this.applied = 0;
    this.seen = 0;
    await this.recover();
  }
  private rebuilds = 0;

  /** Resolves once this copy has applied every op up to `seqNo` (pinned searchers from other copies). */
  private reach(seqNo: number): Promise<void> | undefined {
    if (this.store.maxSeqNo() >= seqNo) return undefined;
    return new Promise<void>((resolve, reject) => {
      const w = { seqNo, resolve };
      this.waiters.push(w);
      setTimeout(() => {
        if (!this.waiters.includes(w)) return;
        this.waiters = this.waiters.filter((x) => x !== w);
        reject(new EsError('no_shard_available_action_exception', 503, `[${this.ref.index}][${this.ref.n}] the copy on node [${this.deps.nodeId}] has not applied seqNo [${seqNo}] yet`));
      }, WAIT_MS).unref();
    });
  }

  private wakeWaiters(): void {
    if (!this.waiters.length) return;
    const at = this.store.maxSeqNo();
    const still = [];
    for (const w of this.waiters) (w.seqNo <= at ? w.resolve() : still.push(w));
    this.waiters = still;
  }

  // ---- requests ----

  private async dispatch(op: string, msg: Msg): Promise<void> {
    try {
      if (this.state !== 'started') throw new EsError('no_shard_available_action_exception', 503, `[${this.ref.index}][${this.ref.n}] copy on node [${this.deps.nodeId}] is ${this.state}`);
      // a request larger than a message (a big document) comes in parts, as large replies do
      const data = hasParts(msg) ? await assembleReply(this.deps.nc, msg, WAIT_MS) : msg.data;
      switch (op) {
        case 'write':
          return this.enqueueWrite(msg, data);
        case 'query':
        case 'fetch':
          this.replies.respond(msg, await this.read(op, data));
          return;
        case 'get':
        case 'count':
          return this.ok(msg, await this.answerJson(op, data));
        case 'refresh': {
          const { minSeqNo } = parseJson<{ minSeqNo?: number }>(dec.decode(data)) ?? {};
          if (minSeqNo !== undefined) await this.reach(minSeqNo);
          this.store.refresh();
          return this.ok(msg, { searcher: this.store.acquireSearcher(), maxSeqNo: this.store.maxSeqNo() });
        }
        case 'searcher':
          return this.ok(msg, this.store.acquireSearcher());
        case 'flush':
          await this.flush();
          return this.ok(msg, this.store.committedPoint());
        case 'forcemerge': {
          const o = parseJson<ForceMergeOptions>(dec.decode(msg.data)) ?? {};
          await this.forceMerge(o);
          return this.ok(msg, this.store.committedPoint());
        }
        case 'segments':
          return this.ok(msg, this.segments());
        case 'recovery': {
          const r = this.deps.recovery;
          if (!r) throw new Error('this copy does not serve recoveries');
          return this.ok(msg, await offerSegments(this.store, r.dir, await r.objects(), r.prefix));
        }
        case 'stats':
          return this.ok(msg, {
            ...this.store.stats(), maxSeqNo: this.store.maxSeqNo(), indexTotal: this.store.indexTotal(), sizeBytes: this.store.sourceBytes(),
            segments: this.store.segmentStats(), merges: this.store.mergeStats,
            applied: this.applied, refused: this.refused, role: this.role, state: this.state, node: this.deps.nodeId,
          });
        default:
          throw new Error(`unknown shard op [${op}]`);
      }
    } catch (e) {
      this.replyError(msg, e, op);
    }
  }

  private replyError(msg: Msg, e: unknown, op: string): void {
    try {
      this.replies.respond(msg, this.errorReply(e, op));
    } catch {
      // the connection is gone: the requester fails on its own
    }
  }

  private errorReply(e: unknown, op: string): Uint8Array {
    // JetStream refusals as ES says them (no room: the flood-stage 429), never a 500
    const err = fromJetStream(e, [this.ref.index]) ?? asEsError(e);
    if (err.status >= 500 && !(e instanceof EsError)) this.deps.log.error({ err: e, shard: this.ref, op }, 'shard op failed');
    return enc.encode(JSON.stringify({ ok: false, error: errorToWire(err) }));
  }

  /**
   * A query or fetch asked by a coordinator on this node, answered in process with the very bytes
   * the NATS reply would carry (the request is the same encoded message); undefined when this copy
   * cannot answer now, and the coordinator asks the queue group instead.
   */
  answerLocally(op: LocalOp, body: Uint8Array): Promise<Uint8Array> | undefined {
    if (!this.started || this.state !== 'started' || (op === 'get' && this.role !== 'primary')) return undefined;
    return this.read(op, body);
  }

  /** The reply to a read op (a page for query/fetch, JSON for count/get, or the error as JSON). */
  private async read(op: LocalOp, data: Uint8Array): Promise<Uint8Array> {
    try {
      if (op === 'count' || op === 'get') return enc.encode(stringify({ ok: true, result: await this.answerJson(op, data) }));
      const m = parseJson<QueryMessage & FetchMessage>(dec.decode(data));
      if (m.searcher) await this.reach(m.searcher.seqNo);
      return op === 'query' ? this.query(m) : this.fetch(m);
    } catch (e) {
      return this.errorReply(e, op);
    }
  }

  /** count and get, whether asked over NATS or in process. */
  private async answerJson(op: 'count' | 'get', data: Uint8Array): Promise<unknown> {
    if (op === 'get') {
      const { id } = parseJson<{ id: string }>(dec.decode(data));
      return this.store.get(id) ?? null;
    }
    const { query, searcher } = parseJson<{ query?: unknown; searcher?: SearcherRef }>(dec.decode(data));
    if (searcher) await this.reach(searcher.seqNo);
    return this.store.count(searcher ?? this.store.acquireSearcher(), query);
  }

  private ok(msg: Msg, result: unknown) {
    this.replies.respond(msg, enc.encode(stringify({ ok: true, result })));
  }

  private enqueueWrite(msg: Msg, data: Uint8Array): void {
    const text = dec.decode(data);
    const nl = text.indexOf('\n');
    const head = JSON.parse(nl < 0 ? text : text.slice(0, nl)) as { refresh?: 'true' | 'false' | 'wait_for' };
    const writes = nl < 0 ? [] : decodeBatch<DocWrite>(text.slice(nl + 1));
    this.queue.push({ writes, refresh: head.refresh, msg, bytes: data.length });
    void this.pump();
  }

  /**
   * Group commit: while one append is in flight, later requests queue; the next round prepares
   * them together as one batch (one log message, one ack), bounded by the message size.
   */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.queue.length) {
        // bounded in bytes too: one group is prepared (parsed, analyzed) without a turn of the event loop
        const budget = Math.min(Math.floor(this.maxPayload * 0.4), GROUP_BYTES);
        const group: PendingWrite[] = [this.queue.shift()!];
        let bytes = group[0].bytes;
        while (this.queue.length && bytes + this.queue[0].bytes * 2 <= budget) {
          bytes += this.queue[0].bytes;
          group.push(this.queue.shift()!);
        }
        await this.writeGroup(group);
      }
    } finally {
      this.pumping = false;
    }
  }

  private async writeGroup(group: PendingWrite[]): Promise<void> {
    let outcomes: WriteOutcome[];
    try {
      outcomes = await this.sequenceAndAppend(group.flatMap((g) => g.writes));
    } catch (e) {
      for (const g of group) this.replyError(g.msg, e, 'write');
      return;
    }
    let refreshed = false;
    if (group.some((g) => g.refresh === 'true' || g.refresh === 'wait_for')) {
      if (this.store.pendingRefresh()) this.store.refresh();
      refreshed = true;
    }
    let at = 0;
    for (const g of group) {
      const mine = outcomes.slice(at, at + g.writes.length).map((o) => (o.ok ? { ...o, logged: undefined } : o));
      at += g.writes.length;
      const reply: WriteReply = { outcomes: mine, refreshed: refreshed && g.refresh === 'true', maxSeqNo: this.store.maxSeqNo() };
      this.replies.respond(g.msg, enc.encode(stringify({ ok: true, result: reply })));
    }
  }

  /**
   * Prepares the writes, puts any new dynamic fields in the log first, appends the batch, and
   * resolves once the follower has brought it back applied. Refused (another writer's batch came
   * first) or fenced by JetStream: prepared again on the newer state.
   */
  private async sequenceAndAppend(writes: DocWrite[]): Promise<WriteOutcome[]> {
    let purgedTo: number | undefined;
    for (let attempt = 0; attempt < 8; attempt++) {
      const p = await this.prepare(writes);
      if (!p.ops.length) return p.outcomes;
      const head: BatchHead = { batch: { after: p.afterSeqNo } };
      const payload = enc.encode(encodeBatch<LoggedOp | BatchHead>([head, ...p.ops], (l) => ('source' in l ? l.source : undefined)));
      const msgID = uuidv4();
      let settle!: (outcome: boolean | Error) => void;
      const decided = new Promise<boolean | Error>((r) => (settle = r));
      this.own.set(msgID, { prepared: p, done: settle });
      const partBytes = this.maxPayload - HEADER_ROOM;
      const onRetry = (n: number, e: unknown) => n === 1 && this.deps.log.warn({ shard: this.ref, err: (e as Error).message }, 'document log append retried');
      const expected = purgedTo ?? Math.max(this.applied, this.seen);
      try {
        // larger than a message (a big document): in parts, the batch applied with its last (logParts.ts)
        const ack = payload.length <= partBytes
          ? await fencedAppend(this.deps.js, this.subject, payload, { msgID, expectedLastSubjectSeq: expected, onRetry })
          : await appendInParts(this.deps.js, this.subject, payload, partBytes, msgID, expected, onRetry);
        const outcome = await this.settled(decided, ack.seq);
        if (outcome instanceof Error) throw outcome;
        if (outcome) return p.outcomes;
        this.deps.log.warn({ shard: this.ref, seq: ack.seq }, 'shard batch refused: another writer got there first; preparing it again');
        purgedTo = undefined;
      } catch (e) {
        if (e instanceof Fenced) {
          this.own.delete(msgID);
          if (e.actual !== undefined && e.actual < e.expected) {
            purgedTo = e.actual; // the log was purged below what we applied (snapshot.purge_log): nobody wrote
            continue;
          }
          // Someone else wrote this shard (a primary that has not yet seen it lost the role):
          // apply what they wrote, then sequence our batch again on top of it.
          this.deps.log.warn({ shard: this.ref, expected: e.expected, actual: e.actual }, 'shard append fenced; catching up');
          await this.deps.followed(e.actual ?? Math.max(this.applied, this.seen) + 1);
          purgedTo = undefined;
          continue;
        }
        if (e instanceof AppendUncertain) {
          // It may still be stored: then the follower applies it like anyone's batch (and, as the
          // batch names the seqNo it was prepared on, a later batch prepared without it is refused).
          setTimeout(() => this.own.delete(msgID), 120_000).unref();
          throw shardUnavailable(this.ref, `the document log did not acknowledge the write: ${e.message}`);
        }
        this.own.delete(msgID);
        throw e;
      }
    }
    throw shardUnavailable(this.ref, 'the write kept losing the shard to another writer');
  }

  /** Waits for the follower to decide our batch (it reaches `seq`). */
  private async settled(decided: Promise<boolean | Error>, seq: number): Promise<boolean | Error> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        decided,
        new Promise<never>((_, rej) => {
          timer = setTimeout(() => rej(shardUnavailable(this.ref, `the write is in the log at ${seq} but this node's log follower did not reach it in time`)), 30_000);
          timer.unref();
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Prepares against the mapping the log has: new dynamic fields go to the log first (see RecordingView). */
  private async prepare(writes: DocWrite[]): Promise<PreparedBatch> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const view = new RecordingView(this.store.mapping);
      let p: PreparedBatch;
      let proposal: Record<string, unknown> | undefined;
      try {
        p = this.store.prepare(writes, view);
      } finally {
        proposal = view.takeProposal();
      }
      if (!proposal) return p;
      await this.deps.proposeMapping(this.ref.indexUuid, proposal);
    }
    throw shardUnavailable(this.ref, 'the mapping kept changing while the write was prepared');
  }

  /** The query phase, replied as a page (actors/shard/pageCodec.ts); sources inline when asked, within the message size. */
  private query(m: QueryMessage): Uint8Array {
    const scope = this.deps.searchScope?.();
    try {
      const searcher = m.searcher ?? this.store.acquireSearcher();
      const result = this.store.query(searcher, m.req, scope ? { budget: scope } : undefined);
      const docs = this.store.docsOf(searcher);
      const sources = m.fetch ? fitSources(docs.sourceTexts(result.hits.map((h) => h.doc)), this.maxPayload) : [];
      scope?.reserve(charsOf(sources), FETCH_LABEL); // the reply's copy of the sources
      return encodeQueryPage(searcher, result, sources, m.req.shardIndex, hitMeta(docs, result.hits, m.req), m.render);
    } finally {
      scope?.close();
    }
  }

  /** Sources of docs, in order, as many as fit a message (at least one). */
  private fetch(m: FetchMessage): Uint8Array {
    const scope = this.deps.searchScope?.();
    try {
      const docs = this.store.docsOf(m.searcher);
      const sources = fitSources(docs.sourceTexts(m.docs), this.maxPayload);
      scope?.reserve(charsOf(sources), FETCH_LABEL);
      return encodeFetchPage(sources);
    } finally {
      scope?.close();
    }
  }
}
