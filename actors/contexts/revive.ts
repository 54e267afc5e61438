import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { Aggregate, subjects } from '../../streams';
import { foldLog } from '../../streams/factReader';
import { emptyWorld, type ContextState } from '../../streams/evolve';
import { readCheckpoint } from './checkpoint';
import type { ContextRecord, ContextRegistry } from './registry';

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
 * Start-up: folds the scroll and PIT facts of the lifecycle log and brings every context that is
 * still open back as a live actor on its pinned searchers, with what is left of its keep-alive
 * (one whose keep-alive ran out while the node was down expires at once, with its `expired`
 * fact). Ended contexts leave tombstones, so a 404 after a restart still says why.
 *
 * A context that cannot be revived is released with a fact: `index_deleted` when an index it pinned
 * no longer exists, `shutdown` when its opened fact predates the revival data (no request).
 */
export async function reviveContexts(
  nc: NatsConnection,
  registry: ContextRegistry,
  opts: { indexExists: (uuid: string) => boolean; rebuildScroll: ScrollRebuilder; log?: Logger; checkpointPath?: string },
): Promise<ReviveResult> {
  const out: ReviveResult = { revived: 0, released: 0, tombstones: 0, events: 0, checkpoint: 'none' };
  const { cp, why } = opts.checkpointPath ? await readCheckpoint(nc, opts.checkpointPath) : { cp: undefined, why: 'none' };
  out.checkpoint = cp ? cp.streamSeq : why!;
  if (cp) {
    registry.restoreTombstones(cp.tombstones);
    out.tombstones += cp.tombstones.length;
  }
  for (const aggregate of [Aggregate.Scroll, Aggregate.Pit]) {
    const world = emptyWorld();
    for (const st of cp?.open ?? []) if (st.kind === aggregate) world[aggregate].set(st.id, st);
    await foldLog(nc, { filterSubject: subjects.factsOfType(aggregate), world, ...(cp ? { startSeq: cp.streamSeq + 1 } : {}) });
    out.events += world.events;
    const states = aggregate === Aggregate.Scroll ? world.scroll : world.pit;
    for (const state of states.values()) {
      if (state.status !== 'open') {
        registry.remember(state);
        out.tombstones++;
        continue;
      }
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
  }
  return out;
}
