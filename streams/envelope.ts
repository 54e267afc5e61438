import { v7 as uuidv7 } from 'uuid';
import type { Envelope } from '../actors/wire/envelope';

export type { Envelope };


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
