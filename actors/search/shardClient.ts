import type { Logger } from 'pino';
import { TimeoutError, type NatsConnection } from '@nats-io/transport-node';
import { Connectivity, PRIMARY_OPS, subjects, type ShardOp } from '../../streams';
import { EsError, errorFromWire, indexNotFound } from '../wire/esErrors';
import { Slicer } from '../../streams';
import { parseJson, stringify } from '../wire/json';
import { encodeBatch } from '../shard/opCodec';
import { assembleReply, ChunkedResponder } from '../shard/replyChunks';
import { shardUnavailable, type QueryMessage, type ShardRef, type ShardReply, type WriteReply } from '../shard/shardActor';
import { isPage, ShardPage, type QueryPageHead } from '../shard/pageCodec';
import { NoResponders, RequestMux, RequestTimeout } from './requestMux';
import { localCopy } from '../shard/localCopies';
import type { DocWrite, SearcherRef, WriteOutcome } from '../shard/engine/types';

const enc = new TextEncoder();
const dec = new TextDecoder();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Per-attempt reply timeout when the request names none. A copy that dies with a request in hand
 * never answers: the request is asked again (a write then reaches the new primary; writes carry
 * their ids, so a write that did land is applied again as an update of the same document, as ES's
 * retry on a new primary does).
 */
export const DEFAULT_SHARD_TIMEOUT_MS = 15_000;

/**
 * Largest write request to a primary (a bulk's writes for one shard go in several): the primary
 * and every copy parse, analyze and index one request without a turn of the event loop.
 */
export const WRITE_REQUEST_BYTES = 256 * 1024;

/** The `max_payload` the README asks of a nats-server (large pages and bulk chunks travel in one message). */
export const RECOMMENDED_MAX_PAYLOAD = 8 * 1024 * 1024;

/** Per-request options: `timeoutMs` (a search's `timeout`) bounds the wait for the shard's answer. */
export interface ShardCallOptions {
  timeoutMs?: number;
  /** Ask this node's copy (`es.v1.shard.<uuid>.<n>.c.<node>.<op>`). */
  node?: string;
}

export interface ShardClientOptions {
  /** Per-attempt reply timeout. */
  timeoutMs?: number;
  /**
   * How long a request waits for a copy to appear (a primary being elected, a copy recovering)
   * before it fails with ES's 503; writes wait for their primary like ES's `timeout` (1m).
   */
  writeWaitMs?: number;
  readWaitMs?: number;
  /** A primary said the store has no room left (a write refused with the flood-stage 429). */
  onStoreFull?: () => void;
  /** Bytes of a write request that was applied (the log grew by about as much). */
  onWritten?: (bytes: number) => void;
  /**
   * Whether the index (by uuid) is still in this node's cluster state: a request waiting for a copy
   * of an index deleted meanwhile fails at once with ES's 404 (TransportReplicationAction re-resolves
   * the index on every cluster state change), instead of waiting for copies that never come.
   */
  indexExists?: (uuid: string) => boolean;
}

/** A shard that did not answer within the request's own `timeout` (the search reports `timed_out`). */
export class ShardTimeoutError extends EsError {
  constructor(ref: ShardRef, ms: number) {
    super('timeout_exception', 504, `[${ref.index}][${ref.n}] no answer within [${ms}ms]`, { meta: { index: ref.index, shard: String(ref.n) } });
    this.name = 'ShardTimeoutError';
  }
}

/** Warns at start-up when the server's `max_payload` is below what the README asks. */
export function checkMaxPayload(nc: NatsConnection, log: Logger): number {
  const max = nc.info?.max_payload ?? 0;
  if (max < RECOMMENDED_MAX_PAYLOAD) {
    log.warn(
      { max_payload: max, recommended: RECOMMENDED_MAX_PAYLOAD },
      'nats-server max_payload is below 8 MB: large documents, batches and replies travel in several messages',
    );
  }
  return max;
}

/** Nobody answers the subject (no started copy / no primary right now). */
class NoCopy extends Error {}
/** The connection dropped with the request in flight: it may or may not have been delivered. */
class ConnectionLost extends Error {}
const CONNECTION_LOST = Symbol('connection lost');
const isTimeout = (e: unknown) => e instanceof RequestTimeout || e instanceof TimeoutError || (e as Error)?.cause instanceof TimeoutError || (e as { name?: string })?.name === 'TimeoutError';

/**
 * Talks to shard copies over NATS request/reply; replies are data, errors become EsError again.
 * Writes, real-time gets and refreshes go to the shard's primary; searches to any started copy
 * (the queue group picks one, preferring copies on the same NATS server); a copy can also be
 * addressed by node (refresh every copy).
 *
 * While the NATS connection is down every request fails at once with ES's 503 (and requests in
 * flight when it drops fail with it); after the reconnect requests flow again. While no copy
 * answers (failover, recovery) a request is asked again until its wait is over. Replies split by
 * the shard (replyChunks.ts) are reassembled here.
 */
export class ShardClient {
  private connected_ = true;
  /** Rejecters of the requests in flight, called when the connection drops. */
  private readonly inFlight = new Set<(e: unknown) => void>();
  private readonly timeoutMs: number;
  /** One inbox for every shard request (nats.js builds error objects with stacks per `request`). */
  private readonly mux: RequestMux;
  private readonly writeWaitMs: number;
  private readonly readWaitMs: number;
  private readonly onStoreFull?: () => void;
  /** Parts of requests larger than a message, served to the copy that asks for them. */
  private readonly parts: ChunkedResponder;
  private readonly onWritten?: (bytes: number) => void;
  private readonly indexExists?: (uuid: string) => boolean;

  constructor(private readonly nc: NatsConnection, opts: ShardClientOptions | number = {}) {
    const o = typeof opts === 'number' ? { timeoutMs: opts } : opts;
    this.onStoreFull = o.onStoreFull;
    this.onWritten = o.onWritten;
    this.indexExists = o.indexExists;
    this.timeoutMs = o.timeoutMs ?? DEFAULT_SHARD_TIMEOUT_MS;
    this.writeWaitMs = o.writeWaitMs ?? 60_000;
    this.readWaitMs = o.readWaitMs ?? 5_000;
    this.mux = new RequestMux(nc);
    this.parts = new ChunkedResponder(nc, () => this.maxPayload);
    void this.watchConnection();
  }

  /** Whether the node's NATS connection is up (searches may still run on local copies without it). */
  get connected(): boolean {
    return this.connected_ && !this.nc.isClosed();
  }

  private get maxPayload() {
    return this.nc.info?.max_payload ?? 1024 * 1024;
  }

  private async watchConnection(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === 'disconnect') {
        this.connected_ = false;
        for (const fail of [...this.inFlight]) fail(CONNECTION_LOST);
      } else if (s.type === 'reconnect') this.connected_ = true;
    }
  }

  private subjectOf(ref: ShardRef, op: ShardOp, node?: string): string {
    if (node) return subjects.shardCopy(ref.indexUuid, ref.n, node, op);
    return PRIMARY_OPS.has(op) ? subjects.shardPrimary(ref.indexUuid, ref.n, op) : subjects.shard(ref.indexUuid, ref.n, op);
  }

  /** One request, failing at once when the connection drops under it. */
  private async once(ref: ShardRef, subject: string, payload: Uint8Array, timeout: number): Promise<Uint8Array> {
    if (!this.connected && !(await Connectivity.of(this.nc).waitUp())) throw unavailable(ref, 'the node is not connected to NATS');
    let fail!: (e: unknown) => void;
    const lost = new Promise<never>((_, reject) => (fail = reject));
    this.inFlight.add(fail);
    try {
      // a request larger than a message (a big document) goes in parts, as large replies do
      const { first, headers } = this.parts.offer(payload);
      const ask = async () => assembleReply(this.nc, await this.mux.request(subject, first, timeout, headers), timeout);
      return await Promise.race([ask(), lost]);
    } catch (e) {
      if (e === CONNECTION_LOST) throw new ConnectionLost('the node lost its NATS connection');
      if (e instanceof NoResponders) throw new NoCopy(e.message);
      throw e;
    } finally {
      this.inFlight.delete(fail);
    }
  }

  /**
   * One request; while no copy answers the subject (failover, recovery), asks again until the
   * wait is over, then ES's 503. A request with its own `timeoutMs` (a search's `timeout`) is not
   * asked again: it reports the shard as timed out.
   */
  private async raw(ref: ShardRef, op: ShardOp, payload: Uint8Array, opts: ShardCallOptions = {}): Promise<Uint8Array> {
    const waitMs = op === 'write' ? this.writeWaitMs : this.readWaitMs;
    const deadline = Date.now() + waitMs;
    const subject = this.subjectOf(ref, op, opts.node);
    const timeout = Math.max(1, Math.round(opts.timeoutMs ?? this.timeoutMs));
    let delay = 20;
    let timeouts = 0;
    for (;;) {
      try {
        return await this.once(ref, subject, payload, timeout);
      } catch (e) {
        if ((e instanceof NoCopy || isTimeout(e)) && this.indexExists && !this.indexExists(ref.indexUuid)) throw indexNotFound(ref.index);
        if (e instanceof NoCopy) {
          if (Date.now() + delay < deadline) {
            await sleep(delay);
            delay = Math.min(delay * 2, 500);
            continue;
          }
          throw PRIMARY_OPS.has(op)
            ? shardUnavailable(ref, `primary shard is not active Timeout: [${Math.round(waitMs / 1000)}s]`)
            : unavailable(ref, `no started copy answered: ${e.message}`);
        }
        if (isTimeout(e)) {
          if (opts.timeoutMs !== undefined) throw new ShardTimeoutError(ref, timeout);
          // No answer: the copy may have died holding it. Ask again (writes until their wait is over, reads once).
          if (op === 'write' ? Date.now() < deadline : timeouts++ < 1) continue;
        }
        if (e instanceof ConnectionLost) {
          // Sent, then the connection dropped (our NATS server died): ask again if it is back within
          // a failover's time (a write that did land is applied again as the same documents), else
          // ES's 503 at once: a node cut off answers fast.
          if (await Connectivity.of(this.nc).waitUp()) continue;
          throw unavailable(ref, `${e.message} and did not get it back in time; the request may have been applied`);
        }
        if (e instanceof EsError) throw e;
        throw unavailable(ref, (e as Error).message ?? String(e));
      }
    }
  }


  /** A plain JSON request/reply (counts and real-time gets from this node's own copy when it can). */
  async call<T>(ref: ShardRef, op: ShardOp, body: unknown, opts?: ShardCallOptions | string): Promise<T> {
    const o = typeof opts === 'string' ? { node: opts } : opts;
    const payload = enc.encode(stringify(body));
    const local = !o?.node && (op === 'count' || op === 'get') ? localCopy(this.nc, ref.indexUuid, ref.n)?.answerLocally(op, payload) : undefined;
    const data = await (local ?? this.raw(ref, op, payload, o));
    const reply = parseJson<ShardReply<T>>(dec.decode(data));
    if (!reply.ok) throw errorFromWire(reply.error);
    return reply.result;
  }

  /**
   * Sends writes in chunks of at most WRITE_REQUEST_BYTES (and well within a NATS message);
   * outcomes come back in order. The chunk size bounds how long the primary and every copy spend
   * on one write message without a turn of the event loop (parsing, analyzing and indexing it).
   */
  async write(ref: ShardRef, writes: DocWrite[], refresh?: string): Promise<WriteReply> {
    const budget = Math.min(Math.floor(this.maxPayload * 0.4), WRITE_REQUEST_BYTES);
    const slicer = new Slicer();
    const head = JSON.stringify({ refresh });
    // A document larger than a message goes alone, its request in parts (and its batch in the log
    // in parts too, logParts.ts): documents up to http.max_content_length whatever the max_payload.
    const chunks: DocWrite[][] = [];
    let cur: DocWrite[] = [];
    let size = 0;
    for (let i = 0; i < writes.length; i++) {
      if ((i & 1023) === 0 && slicer.due) await slicer.pause();
      const w = writes[i];
      const s = (w.source === undefined ? 0 : Buffer.byteLength(w.source)) + 128;
      if (cur.length && size + s > budget) {
        chunks.push(cur);
        cur = [];
        size = 0;
      }
      cur.push(w);
      size += s;
    }
    if (cur.length) chunks.push(cur);
    // Chunks go in order: a later chunk may depend on an earlier one (same id twice). Each chunk is
    // one write request, applied or refused as a whole: a chunk that fails fails its own writes and,
    // as they are never sent, the ones after it; the chunks before it keep their outcomes (they are
    // in the log and visible). A failure of the first chunk is thrown (nothing was written).
    const sent: WriteOutcome[] = [];
    const out: WriteReply = { outcomes: [], refreshed: false, maxSeqNo: -1 };
    for (const c of chunks) {
      if (slicer.due) await slicer.pause();
      let reply: ShardReply<WriteReply>;
      try {
        const payload = enc.encode(`${head}\n${encodeBatch(c, (w) => w.source)}`);
        reply = parseJson<ShardReply<WriteReply>>(dec.decode(await this.raw(ref, 'write', payload)));
        if (!reply.ok) throw errorFromWire(reply.error);
        this.onWritten?.(payload.length);
      } catch (e) {
        if (e instanceof EsError && e.status === 429 && e.type === 'cluster_block_exception') this.onStoreFull?.();
        if (!sent.length) throw e;
        const err = e instanceof EsError ? e : unavailable(ref, (e as Error).message ?? String(e));
        const failed: WriteOutcome = { ok: false, status: err.status, error: { type: err.type, reason: err.message } };
        while (sent.length < writes.length) sent.push(failed);
        break;
      }
      sent.push(...reply.result.outcomes);
      out.refreshed ||= reply.result.refreshed;
      out.maxSeqNo = Math.max(out.maxSeqNo, reply.result.maxSeqNo);
    }
    out.outcomes = sent;
    if (out.outcomes.some((o) => !o.ok && o.status === 429 && o.error.type === 'cluster_block_exception')) this.onStoreFull?.();
    return out;
  }

  /**
   * Refreshes the primary, then every other copy once it has applied what the primary had:
   * a search on any copy afterwards sees every write acknowledged before the refresh.
   */
  async refresh(ref: ShardRef, replicas: string[], minSeqNo?: number): Promise<{ total: number; successful: number }> {
    const p = await this.call<{ maxSeqNo: number }>(ref, 'refresh', {});
    const at = Math.max(p.maxSeqNo, minSeqNo ?? -1);
    const res = await Promise.allSettled(replicas.map((node) => this.call(ref, 'refresh', { minSeqNo: at }, { node })));
    return { total: 1 + replicas.length, successful: 1 + res.filter((r) => r.status === 'fulfilled').length };
  }

  /** The query phase on one copy: a page of hits as columns (with the sources asked inline). */
  async query(ref: ShardRef, msg: QueryMessage, opts?: ShardCallOptions): Promise<ShardPage<QueryPageHead>> {
    return pageOf<QueryPageHead>(await this.read(ref, 'query', enc.encode(stringify(msg)), opts));
  }

  /**
   * A read op: this node's own started copy answers in process when it holds one (no NATS round
   * trip for a page of sources), else any started copy through the queue group.
   */
  private read(ref: ShardRef, op: 'query' | 'fetch', body: Uint8Array, opts?: ShardCallOptions): Promise<Uint8Array> {
    return localCopy(this.nc, ref.indexUuid, ref.n)?.answerLocally(op, body) ?? this.raw(ref, op, body, opts);
  }

  /**
   * Fetches sources of docs (seen by `searcher`), asking again until every doc came back: pages
   * whose sources, in order, are those of `docs`.
   */
  async fetch(ref: ShardRef, docs: number[], searcher?: SearcherRef, opts?: ShardCallOptions): Promise<ShardPage[]> {
    const out: ShardPage[] = [];
    let rest = docs;
    while (rest.length) {
      const page = pageOf(await this.read(ref, 'fetch', enc.encode(stringify({ docs: rest, ...(searcher ? { searcher } : {}) })), opts));
      if (!page.fetched) throw new Error(`fetch of ${rest.length} docs returned none`);
      out.push(page);
      rest = rest.slice(page.fetched);
    }
    return out;
  }
}

/** A page reply, or the error a JSON reply carries. */
function pageOf<H>(data: Uint8Array): ShardPage<H> {
  if (isPage(data)) return new ShardPage<H>(data);
  const reply = parseJson<ShardReply<unknown>>(dec.decode(data));
  if (!reply.ok) throw errorFromWire(reply.error);
  throw new Error('shard answered a page request with a JSON result');
}

function unavailable(ref: ShardRef, why: string): EsError {
  return new EsError('no_shard_available_action_exception', 503, `[${ref.index}][${ref.n}] ${why}`, {
    meta: { index: ref.index, shard: String(ref.n) },
  });
}

