import type { JetStreamClient, PubAck } from '@nats-io/jetstream';
import { fencedAppend } from '../../streams';

/**
 * Write batches larger than a NATS message (a document up to `http.max_content_length` on a
 * nats-server whose `max_payload` is 1 MB) go into the document log as consecutive parts on the
 * shard's subject, each fenced on the one before it (`Nats-Expected-Last-Subject-Sequence`), each
 * with the message id `<batch id>~<i>/<n>`. A copy applies the batch when its last part arrives
 * right after the others; anything else on the subject in between (another writer, a retried
 * batch) abandons it, and nobody ever applies a batch whose parts are not all in the log: a write
 * reported failed is never visible.
 */
export interface PartId {
  batch: string;
  i: number;
  n: number;
}

export const partMsgId = (batch: string, i: number, n: number) => `${batch}~${i}/${n}`;

export function parsePartId(msgId: string | undefined): PartId | undefined {
  if (!msgId) return undefined;
  const m = /^(.+)~(\d+)\/(\d+)$/.exec(msgId);
  return m ? { batch: m[1], i: Number(m[2]), n: Number(m[3]) } : undefined;
}

interface Pending {
  batch: string;
  n: number;
  chunks: Uint8Array[];
  /** Stream sequence of the first part. */
  firstSeq: number;
}

/** What a copy does with one message of its subject. */
export type Assembled =
  | { kind: 'whole'; data: Uint8Array; msgId?: string }
  | { kind: 'part' }
  | { kind: 'stray' };

/** Puts a copy's multi-part batches together, in stream order. */
export class PartAssembler {
  private pending?: Pending;

  /** The first stream sequence of a batch still missing parts (a snapshot must not pass it). */
  get pendingFrom(): number | undefined {
    return this.pending?.firstSeq;
  }

  reset(): void {
    this.pending = undefined;
  }

  accept(seq: number, data: Uint8Array, msgId: string | undefined): Assembled {
    const part = parsePartId(msgId);
    if (!part) {
      this.pending = undefined; // a whole message ends any unfinished batch
      return { kind: 'whole', data, msgId };
    }
    if (part.i === 1) this.pending = { batch: part.batch, n: part.n, chunks: [], firstSeq: seq };
    const p = this.pending;
    if (!p || p.batch !== part.batch || p.n !== part.n || p.chunks.length + 1 !== part.i) {
      this.pending = undefined;
      return { kind: 'stray' };
    }
    p.chunks.push(data);
    if (p.chunks.length < p.n) return { kind: 'part' };
    this.pending = undefined;
    const out = new Uint8Array(p.chunks.reduce((a, c) => a + c.length, 0));
    let at = 0;
    for (const c of p.chunks) {
      out.set(c, at);
      at += c.length;
    }
    return { kind: 'whole', data: out, msgId: p.batch };
  }
}

/**
 * Appends a batch in parts of at most `partBytes`, each fenced on the one before it; resolves with
 * the last part's ack. Throws as fencedAppend does (a Fenced after the first part means another
 * writer came in between: the parts before it are abandoned).
 */
export async function appendInParts(
  js: JetStreamClient,
  subject: string,
  payload: Uint8Array,
  partBytes: number,
  batch: string,
  expectedLastSubjectSeq: number,
  onRetry?: (attempt: number, err: unknown) => void,
): Promise<PubAck> {
  const n = Math.ceil(payload.length / partBytes);
  let expected = expectedLastSubjectSeq;
  let ack!: PubAck;
  for (let i = 1; i <= n; i++) {
    ack = await fencedAppend(js, subject, payload.subarray((i - 1) * partBytes, i * partBytes), {
      msgID: partMsgId(batch, i, n),
      expectedLastSubjectSeq: expected,
      onRetry,
    });
    expected = ack.seq;
  }
  return ack;
}
