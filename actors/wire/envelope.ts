/**
 * The shape of every lifecycle fact, on the ground floor so that the pure machines (machines/),
 * which fold facts, and the streams that log them (streams/envelope.ts makes and upcasts them)
 * share it without importing each other.
 */
/** The envelope of every lifecycle fact (streams/README.md "Envelope"). */
export interface Envelope<T extends string = string, D = unknown> {
  /** Envelope version; v2 would mean subject root es.v2. */
  readonly v: 1;
  /** uuid v7; also the Nats-Msg-Id, so JetStream de-duplicates retries. */
  readonly id: string;
  /** `<aggregate>.<fact>`, e.g. `scroll.extended`. */
  readonly type: T;
  /** Version of `data`; upcast on read. */
  readonly schema: number;
  readonly aggregateId: string;
  /** Per aggregate, from 1. */
  readonly seq: number;
  /** ISO-8601 from the actor clock. */
  readonly time: string;
  /** X-Opaque-Id of the request that caused it. */
  readonly correlationId?: string;
  /** Node that appended it (facts of a scroll or PIT come from its owner node). */
  readonly node?: string;
  readonly data: D;
}
