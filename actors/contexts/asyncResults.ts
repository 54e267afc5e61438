import type { NatsConnection } from '@nats-io/transport-node';
import { Kvm, type KV } from '@nats-io/kv';

/**
 * Where finished async searches keep their result (ES's `.async-search` index): a JetStream KV bucket
 * every node reads, so a result outlives the node that computed it, and a node-only one (the
 * subscriber role has no `$KV` permission: results are documents, not lifecycle facts). A result is
 * split into chunks under `<id>.<n>` below one head entry `<id>` (a KV value must fit a NATS message).
 */
export const ASYNC_RESULTS_BUCKET = 'ES_ASYNC_SEARCH';
const CHUNK = 256 * 1024;
const enc = new TextEncoder();
const dec = new TextDecoder();

export class AsyncResults {
  private constructor(private readonly kv: KV) {}

  static async open(nc: NatsConnection, replicas?: number): Promise<AsyncResults> {
    return new AsyncResults(await new Kvm(nc).create(ASYNC_RESULTS_BUCKET, { history: 1, ...(replicas ? { replicas } : {}) }));
  }

  /** Stores the result text of async search `id` (chunks first, the head last: a reader never sees half). */
  async put(id: string, text: string): Promise<void> {
    const bytes = enc.encode(text);
    let n = 0;
    for (let off = 0; off < bytes.length || n === 0; off += CHUNK, n++) await this.kv.put(`${id}.${n}`, bytes.subarray(off, off + CHUNK));
    await this.kv.put(id, enc.encode(JSON.stringify({ chunks: n, bytes: bytes.length })));
  }

  /** The stored result text, or undefined when there is none (not finished, or deleted). */
  async get(id: string): Promise<string | undefined> {
    const head = await this.kv.get(id);
    if (!head || head.operation !== 'PUT' || !head.value.length) return undefined;
    const { chunks, bytes } = JSON.parse(dec.decode(head.value)) as { chunks: number; bytes: number };
    const out = new Uint8Array(bytes);
    let off = 0;
    for (let n = 0; n < chunks; n++) {
      const c = await this.kv.get(`${id}.${n}`);
      if (!c || c.operation !== 'PUT') return undefined;
      out.set(c.value, off);
      off += c.value.length;
    }
    return dec.decode(out);
  }

  /** Removes a result (deleted or expired search); nothing stored is fine. */
  async delete(id: string): Promise<void> {
    const head = await this.kv.get(id).catch(() => null);
    const chunks = head && head.operation === 'PUT' && head.value.length ? (JSON.parse(dec.decode(head.value)) as { chunks: number }).chunks : 0;
    await this.kv.purge(id).catch(() => undefined);
    for (let n = 0; n < chunks; n++) await this.kv.purge(`${id}.${n}`).catch(() => undefined);
  }
}
