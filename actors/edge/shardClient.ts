import type { Logger } from 'pino';
import { TimeoutError, type NatsConnection } from '@nats-io/transport-node';
import { subjects, type ShardOp } from '../../streams';
import { EsError, errorFromWire } from '../wire/esErrors';
import { parseJson, stringify } from '../wire/json';
import { encodeBatch } from '../shard/opCodec';
import { assembleReply, HEADER_ROOM } from '../shard/replyChunks';
import { decodeFramed, type FetchReplyHead, type QueryMessage, type QueryReplyHead, type ShardRef, type ShardReply } from '../shard/shardActor';
import type { DocWrite, WriteOutcome } from '../shard/engine/types';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Shard request timeout when the request names none: a lost reply fails the request, it does not hang it. */
export const DEFAULT_SHARD_TIMEOUT_MS = 30_000;

/** The `max_payload` the README asks of a nats-server (large pages and bulk chunks travel in one message). */
export const RECOMMENDED_MAX_PAYLOAD = 8 * 1024 * 1024;

/** Per-request options: `timeoutMs` (a search's `timeout`) bounds the wait for the shard's answer. */
export interface ShardCallOptions {
  timeoutMs?: number;
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
      'nats-server max_payload is below 8 MB: documents larger than it are refused (413), large replies are split into several messages',
    );
  }
  return max;
}

/**
 * Talks to shard actors over NATS request/reply; replies are data, errors become EsError again.
 * While the NATS connection is down every request fails at once with ES's 503 (and requests in
 * flight when it drops fail with it) instead of waiting for a timeout; after the reconnect
 * requests flow again. Replies split by the shard (replyChunks.ts) are reassembled here.
 */
export class ShardClient {
  private connected = true;
  /** Rejecters of the requests in flight, called when the connection drops. */
  private readonly inFlight = new Set<(e: unknown) => void>();

  constructor(private readonly nc: NatsConnection, private readonly timeoutMs = DEFAULT_SHARD_TIMEOUT_MS) {
    void this.watchConnection();
  }

  private get maxPayload() {
    return this.nc.info?.max_payload ?? 1024 * 1024;
  }

  private async watchConnection(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === 'disconnect') {
        this.connected = false;
        for (const fail of [...this.inFlight]) fail(CONNECTION_LOST);
      } else if (s.type === 'reconnect') this.connected = true;
    }
  }

  private async raw(ref: ShardRef, op: ShardOp | 'searcher', payload: Uint8Array, opts: ShardCallOptions = {}): Promise<Uint8Array> {
    if (!this.connected || this.nc.isClosed()) throw unavailable(ref, 'the node is not connected to NATS');
    if (payload.length > this.maxPayload - HEADER_ROOM) {
      throw new EsError('content_too_long_exception', 413, `request of [${payload.length}] bytes to [${ref.index}][${ref.n}] is larger than the transport allows [${this.maxPayload - HEADER_ROOM}] (NATS max_payload)`);
    }
    const timeout = Math.max(1, Math.round(opts.timeoutMs ?? this.timeoutMs));
    let fail!: (e: unknown) => void;
    const lost = new Promise<never>((_, reject) => (fail = reject));
    this.inFlight.add(fail);
    try {
      const ask = async () => assembleReply(this.nc, await this.nc.request(subjects.shard(ref.indexUuid, ref.n, op as ShardOp), payload, { timeout }), timeout);
      return await Promise.race([ask(), lost]);
    } catch (e) {
      if (e === CONNECTION_LOST) throw unavailable(ref, 'the node lost its NATS connection');
      if (opts.timeoutMs !== undefined && (e instanceof TimeoutError || (e as Error).cause instanceof TimeoutError)) throw new ShardTimeoutError(ref, timeout);
      // No responder: the shard is gone (index deleted under us) or not started; or no answer in time.
      throw unavailable(ref, (e as Error).message ?? String(e));
    } finally {
      this.inFlight.delete(fail);
    }
  }

  /** A plain JSON request/reply. */
  async call<T>(ref: ShardRef, op: ShardOp | 'searcher', body: unknown, opts?: ShardCallOptions): Promise<T> {
    const data = await this.raw(ref, op, enc.encode(stringify(body)), opts);
    const reply = parseJson<ShardReply<T>>(dec.decode(data));
    if (!reply.ok) throw errorFromWire(reply.error);
    return reply.result;
  }

  /** Sends writes in chunks that fit a NATS message; outcomes come back in order. */
  async write(ref: ShardRef, writes: DocWrite[], refresh?: string): Promise<{ outcomes: WriteOutcome[]; refreshed: boolean }> {
    const budget = Math.floor(this.maxPayload * 0.4);
    const head = JSON.stringify({ refresh });
    // A document that cannot travel in one message is refused on its own (ES's 413), never sent.
    const refused = new Map<number, WriteOutcome>();
    writes.forEach((w, i) => {
      const worst = (w.source?.length ?? 0) * 3 + 128;
      if (worst <= budget) return;
      const bytes = enc.encode(`${head}\n${encodeBatch([w], (x) => x.source)}`).length;
      if (bytes > this.maxPayload - HEADER_ROOM) refused.set(i, tooLargeDoc(bytes, this.maxPayload - HEADER_ROOM));
    });
    const chunks: DocWrite[][] = [];
    let cur: DocWrite[] = [];
    let size = 0;
    for (const [i, w] of writes.entries()) {
      if (refused.has(i)) continue;
      const s = (w.source?.length ?? 0) * 3 + 128; // worst-case UTF-8 growth
      if (cur.length && size + s > budget) {
        chunks.push(cur);
        cur = [];
        size = 0;
      }
      cur.push(w);
      size += s;
    }
    if (cur.length) chunks.push(cur);
    // Chunks go in order: a later chunk may depend on an earlier one (same id twice).
    const sent: WriteOutcome[] = [];
    let refreshed = false;
    for (const c of chunks) {
      const data = await this.raw(ref, 'write', enc.encode(`${head}\n${encodeBatch(c, (w) => w.source)}`));
      const reply = parseJson<ShardReply<{ outcomes: WriteOutcome[]; refreshed: boolean }>>(dec.decode(data));
      if (!reply.ok) throw errorFromWire(reply.error);
      sent.push(...reply.result.outcomes);
      refreshed ||= reply.result.refreshed;
    }
    if (!refused.size) return { outcomes: sent, refreshed };
    let next = 0;
    return { outcomes: writes.map((_, i) => refused.get(i) ?? sent[next++]), refreshed };
  }

  async query(ref: ShardRef, msg: QueryMessage, opts?: ShardCallOptions): Promise<{ head: QueryReplyHead; sources: string[] }> {
    const data = await this.raw(ref, 'query', enc.encode(stringify(msg)), opts);
    const { head, sources } = decodeFramed<QueryReplyHead>(data, (h) => h.lens);
    if (!head.ok) throw errorFromWire(head.error);
    return { head: head.result, sources };
  }

  /** Fetches sources of docs, asking again until every doc came back. */
  async fetch(ref: ShardRef, docs: number[], opts?: ShardCallOptions): Promise<string[]> {
    const out: string[] = [];
    let rest = docs;
    while (rest.length) {
      const data = await this.raw(ref, 'fetch', enc.encode(JSON.stringify({ docs: rest })), opts);
      const { head, sources } = decodeFramed<FetchReplyHead>(data, (h) => h.lens);
      if (!head.ok) throw errorFromWire(head.error);
      out.push(...sources);
      rest = rest.slice(head.result.count);
    }
    return out;
  }
}

const CONNECTION_LOST = Symbol('connection lost');

function unavailable(ref: ShardRef, why: string): EsError {
  return new EsError('no_shard_available_action_exception', 503, `[${ref.index}][${ref.n}] ${why}`, {
    meta: { index: ref.index, shard: String(ref.n) },
  });
}

function tooLargeDoc(bytes: number, max: number): WriteOutcome {
  return {
    ok: false,
    status: 413,
    error: {
      type: 'content_too_long_exception',
      reason: `document of [${bytes}] bytes is larger than the largest message the node's transport accepts [${max}] (NATS max_payload)`,
    },
  };
}
