import { randomUUID } from 'node:crypto';
import { headers as natsHeaders, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node';

/**
 * Shard replies larger than the server's `max_payload` (a big scroll page, a large aggregation,
 * a `get` of a large document): the responder sends the first part in the reply itself, with
 * headers naming how many parts there are and where to ask for the others; the requester asks for
 * them in order and concatenates. Replies that fit (nearly all) travel exactly as before.
 *
 * The rest is asked for on a subject of this responder alone (not the shard's queue group), so it
 * works whichever copy of a shard answered the first request.
 */

/** Room left in every message for NATS headers. */
export const HEADER_ROOM = 4096;

const H_PARTS = 'Es-Reply-Parts';
const H_TOKEN = 'Es-Reply-Token';
const H_SUBJECT = 'Es-Reply-Subject';

/** How long unclaimed parts are kept (a requester that gave up never asks for them). */
const KEEP_MS = 60_000;

interface Pending {
  parts: Uint8Array[];
  timer: NodeJS.Timeout;
}

export class ChunkedResponder {
  private sub?: Subscription;
  private readonly subject = `es.v1.reply.${randomUUID()}`;
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly nc: NatsConnection, private readonly maxPayload: () => number) {}

  /** Part size: a message with headers must fit `max_payload`. */
  private get partSize(): number {
    return Math.max(1024, this.maxPayload() - HEADER_ROOM);
  }

  /** Replies with `data`, in parts when it does not fit one message. */
  respond(msg: Msg, data: Uint8Array): void {
    const { first, headers } = this.offer(data);
    if (headers) msg.respond(first, { headers });
    else msg.respond(first);
  }

  /**
   * What to send for `data` (a reply, or a request larger than a message): the data itself when it
   * fits, else its first part with headers naming the others, kept here until asked for.
   */
  offer(data: Uint8Array): { first: Uint8Array; headers?: MsgHdrs } {
    const size = this.partSize;
    if (data.length <= size) return { first: data };
    const parts: Uint8Array[] = [];
    for (let i = 0; i < data.length; i += size) parts.push(data.subarray(i, i + size));
    const token = randomUUID();
    this.listen();
    const timer = setTimeout(() => this.pending.delete(token), KEEP_MS);
    timer.unref();
    this.pending.set(token, { parts, timer });
    const h = natsHeaders();
    h.set(H_PARTS, String(parts.length));
    h.set(H_TOKEN, token);
    h.set(H_SUBJECT, this.subject);
    return { first: parts[0], headers: h };
  }

  private listen(): void {
    if (this.sub) return;
    this.sub = this.nc.subscribe(this.subject, {
      callback: (err, m) => {
        if (err) return;
        const [token, index] = m.string().split(' ');
        const p = this.pending.get(token);
        const i = Number(index);
        const part = p?.parts[i];
        if (!p || !part) {
          m.respond(new Uint8Array(0)); // expired or unknown: the requester reports it
          return;
        }
        m.respond(part);
        if (i === p.parts.length - 1) {
          clearTimeout(p.timer);
          this.pending.delete(token);
        }
      },
    });
  }

  async stop(): Promise<void> {
    for (const p of this.pending.values()) clearTimeout(p.timer);
    this.pending.clear();
    if (this.sub && !this.sub.isClosed()) await this.sub.drain().catch(() => undefined);
  }
}

/** Whether a message (a reply or a request) is the first of several parts. */
export const hasParts = (m: Msg): boolean => Number(m.headers?.get(H_PARTS) || 0) > 0;

/**
 * The whole reply of a request whose answer may have come in parts (see ChunkedResponder); also
 * the whole of a request that came in parts (the responder asks the requester for the rest).
 * @throws Error when a part is missing (expired on the responder).
 */
export async function assembleReply(nc: NatsConnection, m: Msg, timeoutMs: number): Promise<Uint8Array> {
  const n = Number(m.headers?.get(H_PARTS) || 0);
  if (!n) return m.data;
  const token = m.headers!.get(H_TOKEN);
  const subject = m.headers!.get(H_SUBJECT);
  const parts: Uint8Array[] = [m.data];
  let total = m.data.length;
  for (let i = 1; i < n; i++) {
    const r = await nc.request(subject, `${token} ${i}`, { timeout: timeoutMs });
    if (!r.data.length) throw new Error(`reply part ${i} of ${n} is no longer available`);
    parts.push(r.data);
    total += r.data.length;
  }
  const out = new Uint8Array(total);
  let pos = 0;
  for (const p of parts) {
    out.set(p, pos);
    pos += p.length;
  }
  return out;
}
