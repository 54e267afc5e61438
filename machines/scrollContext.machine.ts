import { assign, emit, enqueueActions, setup } from 'xstate';
import { keepAliveDelay, usedSince, type UsageInput } from './contextUsage';

export type ScrollReleaseReason = 'exhausted' | 'index_deleted' | 'index_closed' | 'shutdown' | 'no_scroll_param' | 'keep_alive_too_large';

export interface ScrollContextInput extends UsageInput {
  contextId: string;
  keepAliveMs: number;
  /**
   * Set when the context is revived from the log after a restart: it was opened before (no
   * `opened` fact again) and expires in this many ms unless a continuation touches it first.
   */
  resumeInMs?: number;
}

/** Facts the machine emits (the registry wraps them in envelopes and appends them to the log). */
export type ScrollFactBody =
  | { type: 'scroll.opened'; keepAliveMs: number }
  | { type: 'scroll.extended'; keepAliveMs: number }
  | { type: 'scroll.released'; reason: ScrollReleaseReason }
  | { type: 'scroll.expired' }
  | { type: 'scroll.cleared'; by?: string }
  | { type: 'scroll.adopted'; from: string; to: string };

export type ScrollContextEvent =
  | { type: 'extend'; keepAliveMs: number } // a scroll call with a keep-alive worth logging
  | { type: 'touch' } // a scroll call that logs nothing: in use, expiry unchanged (log replays)
  | { type: 'used' } // the shards finished
  | { type: 'release'; reason: ScrollReleaseReason }
  | { type: 'clear'; by?: string }
  | { type: 'adopt'; from: string; to: string }; // its owner node died: another node runs it now

/**
 * A scroll search context. Expiry follows ES ReaderContext: no timer while shards use it; the
 * keep-alive restarts when they are done. Facts are emitted; the machine knows nothing of NATS.
 * The registry counts searches on the usage it passes in (contextUsage.ts) and sends events only
 * for what it logs; replays and tests drive the same machine with events alone.
 */
export const scrollContextMachine = setup({
  types: {
    input: {} as ScrollContextInput,
    context: {} as ScrollContextInput,
    events: {} as ScrollContextEvent,
    emitted: {} as ScrollFactBody,
  },
  // A revived context's first wait is what was left of its keep-alive; any use clears it.
  delays: { keepAlive: ({ context }) => keepAliveDelay(context) },
  guards: { usedSince: ({ context }) => usedSince(context) },
}).createMachine({
  id: 'scrollContext',
  context: ({ input }) => input,
  entry: enqueueActions(({ context, enqueue }) => {
    if (context.resumeInMs === undefined) enqueue.emit({ type: 'scroll.opened' as const, keepAliveMs: context.keepAliveMs });
  }),
  initial: 'active',
  states: {
    active: {
      initial: 'idle',
      on: {
        extend: {
          target: '.inUse',
          actions: [
            assign({ keepAliveMs: ({ event }) => event.keepAliveMs, resumeInMs: undefined }),
            emit(({ event }) => ({ type: 'scroll.extended' as const, keepAliveMs: event.keepAliveMs })),
          ],
        },
        touch: { target: '.inUse', actions: assign({ resumeInMs: undefined }) },
        release: {
          target: 'released',
          actions: emit(({ event }) => ({ type: 'scroll.released' as const, reason: event.reason })),
        },
        clear: {
          target: 'cleared',
          actions: emit(({ event }) => ({ type: 'scroll.cleared' as const, ...(event.by ? { by: event.by } : {}) })),
        },
        // A new owner takes the context over; its keep-alive runs on as before (no re-entry).
        adopt: { actions: emit(({ event }) => ({ type: 'scroll.adopted' as const, from: event.from, to: event.to })) },
      },
      states: {
        // With usage counted by the registry (contextUsage.ts), a timer that finds the context used
        // since it was armed arms again for what is left; without, it expires the context.
        idle: { after: { keepAlive: [{ guard: 'usedSince', target: 'idle', reenter: true }, { target: '#scrollContext.expired' }] } },
        inUse: { on: { used: 'idle' } }, // re-entering idle restarts the timer
      },
    },
    released: { type: 'final' },
    expired: { type: 'final', entry: emit({ type: 'scroll.expired' as const }) },
    cleared: { type: 'final' },
  },
});
