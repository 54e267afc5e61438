import type { NatsConnection } from '@nats-io/transport-node';
import { subjects, type ShardOp } from '../../streams';
import { EsError, errorFromWire } from '../wire/esErrors';
import { parseJson, stringify } from '../wire/json';
import { encodeBatch } from '../shard/opCodec';
import { decodeFramed, type FetchReplyHead, type QueryMessage, type QueryReplyHead, type ShardRef, type ShardReply } from '../shard/shardActor';
import type { DocWrite, WriteOutcome } from '../shard/engine/types';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Talks to shard actors over NATS request/reply; replies are data, errors become EsError again. */
export class ShardClient {
  constructor(private readonly nc: NatsConnection, private readonly timeoutMs = 60_000) {}

  private get maxPayload() {
    return this.nc.info?.max_payload ?? 1024 * 1024;
  }

  private async raw(ref: ShardRef, op: ShardOp | 'searcher', payload: Uint8Array): Promise<Uint8Array> {
    try {
      const m = await this.nc.request(subjects.shard(ref.indexUuid, ref.n, op as ShardOp), payload, { timeout: this.timeoutMs });
      return m.data;
    } catch (e) {
      const msg = (e as Error).message ?? String(e);
      // No responder: the shard is gone (index deleted under us) or not started.
      throw new EsError('no_shard_available_action_exception', 503, `[${ref.index}][${ref.n}] ${msg}`, {
        meta: { index: ref.index, shard: String(ref.n) },
      });
    }
  }

  /** A plain JSON request/reply. */
  async call<T>(ref: ShardRef, op: ShardOp | 'searcher', body: unknown): Promise<T> {
    const data = await this.raw(ref, op, enc.encode(stringify(body)));
    const reply = parseJson<ShardReply<T>>(dec.decode(data));
    if (!reply.ok) throw errorFromWire(reply.error);
    return reply.result;
  }

  /** Sends writes in chunks that fit a NATS message; outcomes come back in order. */
  async write(ref: ShardRef, writes: DocWrite[], refresh?: string): Promise<{ outcomes: WriteOutcome[]; refreshed: boolean }> {
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
    const outcomes: WriteOutcome[] = [];
    let refreshed = false;
    for (const c of chunks) {
      const data = await this.raw(ref, 'write', enc.encode(`${head}\n${encodeBatch(c, (w) => w.source)}`));
      const reply = parseJson<ShardReply<{ outcomes: WriteOutcome[]; refreshed: boolean }>>(dec.decode(data));
      if (!reply.ok) throw errorFromWire(reply.error);
      outcomes.push(...reply.result.outcomes);
      refreshed ||= reply.result.refreshed;
    }
    return { outcomes, refreshed };
  }

  async query(ref: ShardRef, msg: QueryMessage): Promise<{ head: QueryReplyHead; sources: string[] }> {
    const data = await this.raw(ref, 'query', enc.encode(stringify(msg)));
    const { head, sources } = decodeFramed<QueryReplyHead>(data, (h) => h.lens);
    if (!head.ok) throw errorFromWire(head.error);
    return { head: head.result, sources };
  }

  /** Fetches sources of docs, asking again until every doc came back. */
  async fetch(ref: ShardRef, docs: number[]): Promise<string[]> {
    const out: string[] = [];
    let rest = docs;
    while (rest.length) {
      const data = await this.raw(ref, 'fetch', enc.encode(JSON.stringify({ docs: rest })));
      const { head, sources } = decodeFramed<FetchReplyHead>(data, (h) => h.lens);
      if (!head.ok) throw errorFromWire(head.error);
      out.push(...sources);
      rest = rest.slice(head.result.count);
    }
    return out;
  }
}
