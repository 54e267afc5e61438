import type { NatsConnection } from '@nats-io/transport-node';
import { from, lastValueFrom, reduce } from 'rxjs';
import type { Envelope } from './envelope';
import { readFactBatches } from './factReader';
import { applyFact, emptyWorld, type FactLike, type World } from './evolve';
import { factDetail, MachineReplay, type ActorResult, type Divergence } from './machineReplay';
import { readJsonLines } from './jsonLines';

/** What to replay. */
export interface ReplayOptions {
  aggregate?: string;
  id?: string;
  /** Only facts with `time` in [sinceMs, untilMs]. */
  sinceMs?: number;
  untilMs?: number;
  /** Re-run the facts through the machines (default true). */
  check?: boolean;
  /** Keep each checked actor's timeline. */
  timeline?: boolean;
  /** How far real timers may be off (MachineReplay); default 25 ms. */
  toleranceMs?: number;
  onProgress?: (done: number, total: number) => void;
}

/** The outcome of a replay. */
export interface ReplayOutcome {
  /** Facts read from the source, and facts inside the filters (folded). */
  read: number;
  folded: number;
  world: World;
  divergences: Divergence[];
  actors: ActorResult[];
  checked: number;
  unchecked: number;
  elapsedMs: number;
}

/** The JetStream subject filter for `--aggregate/--id` (the server filters; the rest is client-side). */
export function factFilter(aggregate?: string, id?: string): string | undefined {
  if (!aggregate && !id) return undefined;
  return `es.v1.evt.${aggregate ?? '*'}.${id ?? '*'}.>`;
}

/** Groups an async source into arrays of up to `size`. */
export async function* batched<T>(src: AsyncIterable<T>, size = 4096): AsyncGenerator<T[]> {
  let batch: T[] = [];
  for await (const x of src) {
    batch.push(x);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length) yield batch;
}

/** Facts, in batches, from ES_EVT (ordered consumer) or from an exported JSON-lines file. */
export function factSource(src: { nc?: NatsConnection; file?: string }, opts: Pick<ReplayOptions, 'aggregate' | 'id' | 'onProgress'>): AsyncIterable<Envelope[]> {
  if (src.file) return batched(readJsonLines(src.file, opts.onProgress));
  if (!src.nc) throw new Error('replay needs a NATS connection or --file');
  return readFactBatches(src.nc, { filterSubject: factFilter(opts.aggregate, opts.id), onProgress: opts.onProgress });
}

/**
 * Folds a fact source with `evolve` (state) and, unless `check: false`, through the service's machines
 * (divergences, timelines). RxJS only at this edge: `from(asyncIterable)`, filter, tap.
 */
export async function replayLog(source: AsyncIterable<FactLike[]>, opts: ReplayOptions = {}): Promise<ReplayOutcome> {
  const started = performance.now();
  const world = emptyWorld();
  const machines = opts.check === false ? undefined : new MachineReplay({ timeline: opts.timeline, toleranceMs: opts.toleranceMs });
  const since = opts.sinceMs ?? -Infinity;
  const until = opts.untilMs ?? Infinity;
  const windowed = since !== -Infinity || until !== Infinity;
  const agg = opts.aggregate ? `${opts.aggregate}.` : undefined;
  let read = 0;
  // Nodes have no machine: their timelines come from the fold (joins and leaves, why, who noticed).
  const nodes = new Map<string, ActorResult>();
  const nodeStep = (e: FactLike) => {
    let r = nodes.get(e.aggregateId);
    if (r && e.seq <= r.lastSeq) return; // re-delivered: the fold ignored it too
    if (!r) nodes.set(e.aggregateId, (r = { aggregate: 'node', id: e.aggregateId, state: 'left', done: false, lastSeq: 0, facts: 0, folded: true, ...(opts.timeline ? { timeline: [] } : {}) }));
    r.state = world.node.get(e.aggregateId)?.status ?? r.state;
    r.lastSeq = e.seq;
    r.facts++;
    const detail = factDetail(e);
    r.timeline?.push({ seq: e.seq, time: e.time, type: e.type, state: r.state, ...(detail ? { detail } : {}) });
  };
  // Batches, not single facts, flow through RxJS: a 1M-event replay would otherwise pay per fact.
  const folded = await lastValueFrom(
    from(source).pipe(
      reduce((n, batch) => {
        read += batch.length;
        for (const e of batch) {
          if ((agg && !e.type.startsWith(agg)) || (opts.id && e.aggregateId !== opts.id)) continue;
          if (windowed) {
            const t = Date.parse(e.time);
            if (t < since || t > until) continue;
          }
          applyFact(world, e);
          if (e.type.startsWith('node.')) nodeStep(e);
          machines?.feed(e);
          n++;
        }
        return n;
      }, 0),
    ),
  );
  const m = machines?.finish() ?? { divergences: [], actors: [], checked: 0, unchecked: folded };
  return { read, folded, world, ...m, actors: [...m.actors, ...nodes.values()], elapsedMs: performance.now() - started };
}
