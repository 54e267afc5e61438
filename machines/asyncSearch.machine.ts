import { assign, emit, enqueueActions, setup } from 'xstate';

export interface AsyncSearchInput {
  id: string;
  /** ES's `keep_alive` (default 5d): the search and its result are deleted this long after submission. */
  keepAliveMs: number;
  /** Revived or adopted: no `submitted` fact again; expires in this many ms; `completed` when it had finished. */
  resume?: { expiresInMs: number; completed: boolean };
}

/** Facts the machine emits (the registry adds the request, owner and node to `submitted`). */
export type AsyncSearchFactBody =
  | { type: 'asyncsearch.submitted'; keepAliveMs: number }
  | { type: 'asyncsearch.completed'; status: number; partial: boolean; shards: { total: number; successful: number; skipped: number; failed: number } }
  | { type: 'asyncsearch.extended'; keepAliveMs: number }
  | { type: 'asyncsearch.deleted'; by?: string }
  | { type: 'asyncsearch.cancelled'; by?: string }
  | { type: 'asyncsearch.expired' }
  | { type: 'asyncsearch.adopted'; from: string; to: string };

export type AsyncSearchEvent =
  | { type: 'complete'; status: number; partial: boolean; shards: { total: number; successful: number; skipped: number; failed: number } }
  | { type: 'extend'; keepAliveMs: number } // a GET or status with keep_alive: expiry = now + keep_alive
  | { type: 'delete'; by?: string } // DELETE /_async_search/<id>: a running search is cancelled
  | { type: 'adopt'; from: string; to: string }; // its owner node died: another node runs it now

/**
 * An async search (ES AsyncSearchTask + its stored result): submitted -> running -> completed, until
 * it is deleted, or expires at `keep_alive` after submission (or after the last GET that set
 * `keep_alive`), whether it still runs or not (ES cancels a search whose expiration passed). A
 * DELETE of a running search cancels it. Facts are emitted; the machine knows nothing of NATS or of
 * where the result is stored.
 */
interface Ctx {
  id: string;
  keepAliveMs: number;
  /** The first wait of a revived search (what was left); any extension clears it. */
  expiresInMs?: number;
  done: boolean;
  revived: boolean;
}

export const asyncSearchMachine = setup({
  types: {
    input: {} as AsyncSearchInput,
    context: {} as Ctx,
    events: {} as AsyncSearchEvent,
    emitted: {} as AsyncSearchFactBody,
  },
  delays: { expiry: ({ context }) => context.expiresInMs ?? context.keepAliveMs },
  actions: {
    extendKeepAlive: enqueueActions(({ enqueue, event }) => {
      if (event.type !== 'extend') return;
      enqueue.assign({ keepAliveMs: event.keepAliveMs, expiresInMs: undefined });
      enqueue.emit({ type: 'asyncsearch.extended' as const, keepAliveMs: event.keepAliveMs });
    }),
  },
}).createMachine({
  id: 'asyncSearch',
  context: ({ input }) => ({
    id: input.id,
    keepAliveMs: input.keepAliveMs,
    expiresInMs: input.resume?.expiresInMs,
    done: !!input.resume?.completed,
    revived: !!input.resume,
  }),
  entry: enqueueActions(({ context, enqueue }) => {
    if (!context.revived) enqueue.emit({ type: 'asyncsearch.submitted' as const, keepAliveMs: context.keepAliveMs });
  }),
  initial: 'live',
  on: {
    adopt: { actions: emit(({ event }) => ({ type: 'asyncsearch.adopted' as const, from: event.from, to: event.to })) },
  },
  states: {
    live: {
      initial: 'decide',
      after: { expiry: 'expired' },
      on: {
        // re-entering `live` restarts the expiry timer from now
        extend: { target: 'live', reenter: true, actions: 'extendKeepAlive' },
      },
      states: {
        decide: { always: [{ guard: ({ context }) => context.done, target: 'completed' }, { target: 'running' }] },
        running: {
          on: {
            complete: {
              target: 'completed',
              actions: [assign({ done: true }), emit(({ event }) => ({ type: 'asyncsearch.completed' as const, status: event.status, partial: event.partial, shards: event.shards }))],
            },
            delete: { target: '#asyncSearch.cancelled', actions: emit(({ event }) => ({ type: 'asyncsearch.cancelled' as const, ...(event.by ? { by: event.by } : {}) })) },
          },
        },
        completed: {
          on: {
            delete: { target: '#asyncSearch.deleted', actions: emit(({ event }) => ({ type: 'asyncsearch.deleted' as const, ...(event.by ? { by: event.by } : {}) })) },
          },
        },
      },
    },
    expired: { type: 'final', entry: emit({ type: 'asyncsearch.expired' as const }) },
    deleted: { type: 'final' },
    cancelled: { type: 'final' },
  },
});
