import type { NatsConnection } from '@nats-io/transport-node';
import type { Envelope } from './envelope';
import { applyFact, emptyWorld, type World } from './evolve';
import { openFactPush, parseFact, type FactPush } from './factPush';

export { openFactPush, parseFact } from './factPush';
export type { FactPush } from './factPush';

/** Options of {@link readFactBatches}. */
export interface FactBatchOptions {
  /** One subject filter (nats-server 2.9 supports one filter per consumer). */
  filterSubject?: string;
  /** Facts per yielded batch (default 4096). */
  batchSize?: number;
  /** Called with (done, total) once per batch. */
  onProgress?: (done: number, total: number) => void;
  /** First ES_EVT stream sequence to read (a checkpoint's sequence + 1); default the start. */
  startSeq?: number;
}

/**
 * Reads ES_EVT (upcast envelopes) from the start up to what it held when the call began, in arrays of
 * `batchSize`. Finishes at once when nothing matches; deletes its consumer when the read ends or is
 * abandoned.
 *
 * @example
 * for await (const batch of readFactBatches(nc)) for (const e of batch) applyFact(world, e);
 */
export async function* readFactBatches(nc: NatsConnection, opts: FactBatchOptions = {}): AsyncGenerator<Envelope[]> {
  const size = opts.batchSize ?? 4096;
  let batch: Envelope[] = [];
  const ready: Envelope[][] = [];
  let done = 0;
  let wake: (() => void) | undefined;
  let push: FactPush | undefined; // delivery may start before openFactPush returns
  push = await openFactPush(
    nc,
    (data, subject) => {
      batch.push(parseFact(data, subject));
      done++;
      if (batch.length >= size) {
        ready.push(batch);
        batch = [];
        if (ready.length >= 8) push?.hold(true); // the reader is behind: let the server wait
        wake?.();
      }
    },
    opts.filterSubject,
    opts.startSeq,
  );
  const p = push;
  let ended = false;
  let failure: unknown;
  p.finished.then(
    () => (ended = true),
    (e) => (failure = e ?? new Error('fact delivery failed')),
  ).finally(() => wake?.());
  try {
    for (;;) {
      if (ready.length) {
        const next = ready.shift()!;
        if (ready.length < 4) p.hold(false);
        opts.onProgress?.(Math.min(done, p.total), p.total);
        yield next;
        continue;
      }
      if (failure) throw failure;
      if (ended) break;
      await new Promise<void>((r) => (wake = r));
      wake = undefined;
    }
    if (batch.length) {
      opts.onProgress?.(Math.min(done, p.total), p.total);
      yield batch;
    }
  } finally {
    await p.close();
  }
}

/**
 * Folds ES_EVT (or the part `filterSubject` matches) into a {@link World}: what a node would call at
 * start-up to revive its contexts (`openContexts(world)`).
 *
 * @example
 * const world = await foldLog(nc, { filterSubject: subjects.factsOfType(Aggregate.Scroll) });
 */
export async function foldLog(nc: NatsConnection, opts: FactBatchOptions & { world?: World } = {}): Promise<World> {
  const world = opts.world ?? emptyWorld();
  for await (const batch of readFactBatches(nc, opts)) for (const e of batch) applyFact(world, e);
  return world;
}
