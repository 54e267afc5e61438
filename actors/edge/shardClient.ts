import type { NatsConnection } from '@nats-io/transport-node';
import { PRIMARY_OPS, subjects, type ShardOp } from '../../streams';
import { EsError, errorFromWire } from '../wire/esErrors';
import { parseJson, stringify } from '../wire/json';
import { encodeBatch } from '../shard/opCodec';
import { shardUnavailable, type QueryMessage, type ShardRef, type ShardReply, type WriteReply } from '../shard/shardActor';
import { isPage, ShardPage, type QueryPageHead } from '../shard/pageCodec';
import type { DocWrite, SearcherRef } from '../shard/engine/types';
import { NoResponders, RequestMux } from './requestMux';
import { localCopy } from '../shard/localCopies';

const enc = new TextEncoder();
const dec = new TextDecoder();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Nobody answers the subject (no started copy / no primary right now). */
class NoCopy extends Error {}

export interface ShardClientOptions {
  /** Per-request reply timeout. */
  timeoutMs?: number;
  /**
   * How long a request waits for a copy to appear (a primary being elected, a copy recovering)
   * before it fails with ES's 503; writes wait for their primary like ES's `timeout` (1m).
   */
  writeWaitMs?: number;
  readWaitMs?: number;
}

/**
 * Talks to shard copies over NATS request/reply; replies are data, errors become EsError again.
 * Writes, real-time gets and refreshes go to the shard's primary; searches to any started copy
 * (the queue group picks one, preferring copies on the same NATS server); a copy can also be
 * addressed by node (refresh every copy).
 */
export class ShardClient {
  private readonly timeoutMs: number;
  private readonly writeWaitMs: number;
  private readonly readWaitMs: number;
  private readonly mux: RequestMux;

  constructor(private readonly nc: NatsConnection, opts: ShardClientOptions | number = {}) {
    this.mux = new RequestMux(nc);
    const o = typeof opts === 'number' ? { timeoutMs: opts } : opts;
    this.timeoutMs = o.timeoutMs ?? 60_000;
    this.writeWaitMs = o.writeWaitMs ?? 60_000;
    this.readWaitMs = o.readWaitMs ?? 5_000;
  }

  private get maxPayload() {
    return this.nc.info?.max_payload ?? 1024 * 1024;
  }

  private subjectOf(ref: ShardRef, op: ShardOp, node?: string): string {
    if (node) return subjects.shardCopy(ref.indexUuid, ref.n, node, op);
    return PRIMARY_OPS.has(op) ? subjects.shardPrimary(ref.indexUuid, ref.n, op) : subjects.shard(ref.indexUuid, ref.n, op);
  }

  private async once(subject: string, payload: Uint8Array, timeout: number): Promise<Uint8Array> {
    try {
      return await this.mux.request(subject, payload, timeout);
    } catch (e) {
      if (e instanceof NoResponders) throw new NoCopy(e.message);
      throw e;
    }
  }

  /**
   * One request; while no copy answers the subject (failover, recovery), asks again until
   * `waitMs` has passed, then ES's 503.
   */
  private async raw(ref: ShardRef, op: ShardOp, payload: Uint8Array, opts: { node?: string; waitMs?: number } = {}): Promise<Uint8Array> {
    const waitMs = opts.waitMs ?? (op === 'write' ? this.writeWaitMs : this.readWaitMs);
    const deadline = Date.now() + waitMs;
    const subject = this.subjectOf(ref, op, opts.node);
    let delay = 20;
    for (;;) {
      try {
        return await this.once(subject, payload, this.timeoutMs);
      } catch (e) {
        if (e instanceof NoCopy && Date.now() + delay < deadline) {
          await sleep(delay);
          delay = Math.min(delay * 2, 500);
          continue;
        }
        if (e instanceof NoCopy) {
          throw PRIMARY_OPS.has(op)
            ? shardUnavailable(ref, `primary shard is not active Timeout: [${Math.round(waitMs / 1000)}s]`)
            : new EsError('no_shard_available_action_exception', 503, `[${ref.index}][${ref.n}] no started copy answered: ${e.message}`, { meta: { index: ref.index, shard: String(ref.n) } });
        }
        const msg = (e as Error).message ?? String(e);
        throw new EsError('no_shard_available_action_exception', 503, `[${ref.index}][${ref.n}] ${msg}`, { meta: { index: ref.index, shard: String(ref.n) } });
      }
    }
  }

  /** A plain JSON request/reply (to one copy's node when `node` is given). */
  async call<T>(ref: ShardRef, op: ShardOp, body: unknown, node?: string): Promise<T> {
    const data = await this.raw(ref, op, enc.encode(stringify(body)), { node });
    const reply = parseJson<ShardReply<T>>(dec.decode(data));
    if (!reply.ok) throw errorFromWire(reply.error);
    return reply.result;
  }

  /** Sends writes in chunks that fit a NATS message; outcomes come back in order. */
  async write(ref: ShardRef, writes: DocWrite[], refresh?: string): Promise<WriteReply> {
    const budget = Math.floor(this.maxPayload * 0.4);
    const chunks: DocWrite[][] = [];
    let cur: DocWrite[] = [];
    let size = 0;
    for (const w of writes) {
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
    const head = JSON.stringify({ refresh });
    // Chunks go in order: a later chunk may depend on an earlier one (same id twice).
    const out: WriteReply = { outcomes: [], refreshed: false, maxSeqNo: -1 };
    for (const c of chunks) {
      const data = await this.raw(ref, 'write', enc.encode(`${head}\n${encodeBatch(c, (w) => w.source)}`));
      const reply = parseJson<ShardReply<WriteReply>>(dec.decode(data));
      if (!reply.ok) throw errorFromWire(reply.error);
      out.outcomes.push(...reply.result.outcomes);
      out.refreshed ||= reply.result.refreshed;
      out.maxSeqNo = Math.max(out.maxSeqNo, reply.result.maxSeqNo);
    }
    return out;
  }

  /**
   * Refreshes the primary, then every other copy once it has applied what the primary had:
   * a search on any copy afterwards sees every write acknowledged before the refresh.
   */
  async refresh(ref: ShardRef, replicas: string[], minSeqNo?: number): Promise<{ total: number; successful: number }> {
    const p = await this.call<{ maxSeqNo: number }>(ref, 'refresh', {});
    const at = Math.max(p.maxSeqNo, minSeqNo ?? -1);
    const res = await Promise.allSettled(replicas.map((node) => this.call(ref, 'refresh', { minSeqNo: at }, node)));
    return { total: 1 + replicas.length, successful: 1 + res.filter((r) => r.status === 'fulfilled').length };
  }

  /** The query phase on one copy: a page of hits as columns (with the sources asked inline). */
  async query(ref: ShardRef, msg: QueryMessage): Promise<ShardPage<QueryPageHead>> {
    return pageOf<QueryPageHead>(await this.read(ref, 'query', enc.encode(stringify(msg))));
  }

  /**
   * A read op: this node's own started copy answers in process when it holds one (no NATS round
   * trip for a page of sources), else any started copy through the queue group.
   */
  private read(ref: ShardRef, op: 'query' | 'fetch', body: Uint8Array): Promise<Uint8Array> {
    return localCopy(this.nc, ref.indexUuid, ref.n)?.answerLocally(op, body) ?? this.raw(ref, op, body);
  }

  /**
   * Fetches sources of docs (seen by `searcher`), asking again until every doc came back: pages
   * whose sources, in order, are those of `docs`.
   */
  async fetch(ref: ShardRef, docs: number[], searcher?: SearcherRef): Promise<ShardPage[]> {
    const out: ShardPage[] = [];
    let rest = docs;
    while (rest.length) {
      const page = pageOf(await this.read(ref, 'fetch', enc.encode(stringify({ docs: rest, ...(searcher ? { searcher } : {}) }))));
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
