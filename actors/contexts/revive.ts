import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { jetstreamManager } from '@nats-io/jetstream';
import { Aggregate, EVENT_STREAM, subjects } from '../../streams';
import { foldLog } from '../../streams/factReader';
import { emptyWorld, type ContextState } from '../../streams/evolve';
import { readCheckpoint } from './checkpoint';
import type { ContextRecord, ContextRegistry } from './registry';
import type { ContextDirectory } from './directory';

/** Rebuilds a scroll's paging data from its opened fact (the request as the client sent it). */
export type ScrollRebuilder = (request: NonNullable<ContextState['request']>, total: ContextState['total']) => NonNullable<ContextRecord['scroll']>;

export interface ReviveResult {
  revived: number;
  /** Open in the log but not revivable (a pinned index is gone, or the opened fact lacks the request). */
  released: number;
  tombstones: number;
  /** Facts folded (after the checkpoint, when one was used). */
  events: number;
  /** Stream sequence of the checkpoint used, or why none was. */
  checkpoint: number | string;
}

/**
 * Start-up: folds the scroll and PIT facts of the lifecycle log (after the checkpoint, when one is
 * usable) and brings back as live actors the contexts this node owns (`nodeId`; every open one when
 * no node id is given), each on its pinned searchers with what is left of its keep-alive (one whose
 * keep-alive ran out while the node was down expires at once, with its `expired` fact). Ended
 * contexts leave tombstones, so a 404 after a restart still says why. The `directory` (when given)
 * starts from the same fold and follows the log from there: contexts of other nodes are served
 * through their owners, or adopted when their owner is gone (ContextService).
 *
 * A context that cannot be revived is released with a fact: `index_deleted` when an index it pinned
 * no longer exists, `shutdown` when its opened fact predates the revival data (no request).
 */
export async function reviveContexts(
  nc: NatsConnection,
  registry: ContextRegistry,
  opts: {
    indexExists: (uuid: string) => boolean;
    rebuildScroll: ScrollRebuilder;
    log?: Logger;
    checkpointPath?: string;
    /** Revive only the contexts this node owns (and, unless `legacy` is false, those no node owns). */
    nodeId?: string;
    /** Contexts of logs written before nodes clustered name no owner: revive them here (default), or leave them to adoption. */
    legacy?: boolean;
    directory?: ContextDirectory;
    /**
     * The compacted state inside NATS (ES_STATE: open contexts as of ES_EVT `seq`; `firstSeq` is the
     * first fact ES_EVT still holds). Used instead of the local checkpoint when that one is older, or
     * when facts after it were removed (retention): what start-up folds never has a hole.
     */
    compacted?: { seq: number; states: ContextState[]; firstSeq: number };
  },
): Promise<ReviveResult> {
  const out: ReviveResult = { revived: 0, released: 0, tombstones: 0, events: 0, checkpoint: 'none' };
  const local = opts.checkpointPath ? await readCheckpoint(nc, opts.checkpointPath) : { cp: undefined, why: 'none' };
  const c = opts.compacted;
  const useLocal = local.cp && (!c || (local.cp.streamSeq >= c.seq && local.cp.streamSeq + 1 >= c.firstSeq));
  const cp = useLocal
    ? local.cp
    : c && (c.seq > 0 || c.firstSeq > 1)
      ? { streamSeq: c.seq, states: c.states }
      : undefined;
  out.checkpoint = useLocal ? local.cp!.streamSeq : cp ? `compacted state at ${cp.streamSeq}` : local.why!;
  // What the fold below reaches at least: the directory follows on from here.
  const last = (await (await jetstreamManager(nc)).streams.info(EVENT_STREAM)).state.last_seq;
  const all: ContextState[] = [];
  for (const aggregate of [Aggregate.Scroll, Aggregate.Pit]) {
    const world = emptyWorld();
    for (const st of cp?.states ?? []) if (st.kind === aggregate) world[aggregate].set(st.id, { ...st });
    await foldLog(nc, { filterSubject: subjects.factsOfType(aggregate), world, ...(cp ? { startSeq: cp.streamSeq + 1 } : {}) });
    out.events += world.events;
    for (const st of (aggregate === Aggregate.Scroll ? world.scroll : world.pit).values()) all.push(st); // not push(...): a log may hold millions
  }
  const mine = (st: ContextState) => opts.nodeId === undefined || st.node === opts.nodeId || (!st.node && opts.legacy !== false);
  const toRevive: ContextState[] = [];
  for (const state of all) {
    if (state.status !== 'open') {
      registry.remember(state);
      out.tombstones++;
    } else if (mine(state)) toRevive.push({ ...state });
  }
  await opts.directory?.start(all, Math.max(last, cp?.streamSeq ?? 0));
  for (const state of toRevive) {
    let scroll: ContextRecord['scroll'];
    let releaseReason: 'index_deleted' | 'shutdown' | undefined;
    if (!state.pinned.every((p) => opts.indexExists(p.indexUuid))) releaseReason = 'index_deleted';
    else if (state.kind === 'scroll') {
      try {
        if (!state.request) throw new Error('opened fact has no request');
        scroll = opts.rebuildScroll(state.request, state.total);
      } catch (e) {
        opts.log?.warn({ context: state.id, err: (e as Error).message }, 'scroll context cannot be revived');
        releaseReason = 'shutdown';
      }
    }
    const rec = registry.revive(state, scroll);
    if (releaseReason) {
      await registry.release(rec, releaseReason);
      out.released++;
    } else out.revived++;
  }
  return out;
}
