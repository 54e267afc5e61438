import { assign, emit, setup } from 'xstate';

export type ScrollReleaseReason = 'exhausted' | 'index_deleted' | 'shutdown' | 'no_scroll_param' | 'keep_alive_too_large';

export interface ScrollContextInput {
  contextId: string;
  keepAliveMs: number;
}

/** Facts the machine emits (the registry wraps them in envelopes and appends them to the log). */
export type ScrollFactBody =
  | { type: 'scroll.opened'; keepAliveMs: number }
  | { type: 'scroll.extended'; keepAliveMs: number }
  | { type: 'scroll.released'; reason: ScrollReleaseReason }
  | { type: 'scroll.expired' }
  | { type: 'scroll.cleared' };

export type ScrollContextEvent =
  | { type: 'extend'; keepAliveMs: number } // a scroll call touched us
  | { type: 'used' } // the shards finished
  | { type: 'release'; reason: ScrollReleaseReason }
  | { type: 'clear' };

/**
 * A scroll search context. Expiry follows ES ReaderContext: no timer while shards use it; the
 * keep-alive restarts when they are done. Facts are emitted; the machine knows nothing of NATS.
 */
export const scrollContextMachine = setup({
  types: {
    input: {} as ScrollContextInput,
    context: {} as ScrollContextInput,
    events: {} as ScrollContextEvent,
    emitted: {} as ScrollFactBody,
  },
  delays: { keepAlive: ({ context }) => context.keepAliveMs },
}).createMachine({
  id: 'scrollContext',
  context: ({ input }) => input,
  entry: emit(({ context }) => ({ type: 'scroll.opened' as const, keepAliveMs: context.keepAliveMs })),
  initial: 'active',
  states: {
    active: {
      initial: 'idle',
      on: {
        extend: {
          target: '.inUse',
          actions: [
            assign({ keepAliveMs: ({ event }) => event.keepAliveMs }),
            emit(({ event }) => ({ type: 'scroll.extended' as const, keepAliveMs: event.keepAliveMs })),
          ],
        },
        release: {
          target: 'released',
          actions: emit(({ event }) => ({ type: 'scroll.released' as const, reason: event.reason })),
        },
        clear: 'cleared',
      },
      states: {
        idle: { after: { keepAlive: '#scrollContext.expired' } },
        inUse: { on: { used: 'idle' } }, // re-entering idle restarts the timer
      },
    },
    released: { type: 'final' },
    expired: { type: 'final', entry: emit({ type: 'scroll.expired' as const }) },
    cleared: { type: 'final', entry: emit({ type: 'scroll.cleared' as const }) },
  },
});
