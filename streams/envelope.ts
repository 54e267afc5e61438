import { v7 as uuidv7 } from 'uuid';

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

export interface MakeEnvelope<T extends string, D> {
  type: T;
  aggregateId: string;
  seq: number;
  data: D;
  schema?: number;
  time?: number | Date;
  correlationId?: string;
  node?: string;
}

/** Builds an envelope with a fresh uuid v7 id. */
export function makeEnvelope<T extends string, D>(e: MakeEnvelope<T, D>): Envelope<T, D> {
  const time = e.time === undefined ? new Date() : new Date(e.time);
  return {
    v: 1,
    id: uuidv7(),
    type: e.type,
    schema: e.schema ?? 1,
    aggregateId: e.aggregateId,
    seq: e.seq,
    time: time.toISOString(),
    ...(e.correlationId ? { correlationId: e.correlationId } : {}),
    ...(e.node ? { node: e.node } : {}),
    data: e.data,
  };
}

/** The aggregate of an envelope type: `scroll.opened` -> `scroll`. */
export const aggregateOf = (type: string) => type.slice(0, type.indexOf('.'));
/** The fact of an envelope type: `scroll.opened` -> `opened`. */
export const factOf = (type: string) => type.slice(type.indexOf('.') + 1);

/**
 * Upcasts older data shapes to the current schema. Nothing has been bumped yet; when a shape
 * breaks, add a case here instead of rewriting the log.
 */
export function upcast(e: Envelope): Envelope {
  return e;
}
