import { assign, emit, setup } from 'xstate';

export type PitReleaseReason = 'index_deleted' | 'shutdown';

export interface PointInTimeInput {
  contextId: string;
  keepAliveMs: number;
}

export type PitFactBody =
  | { type: 'pit.opened'; keepAliveMs: number }
  | { type: 'pit.extended'; keepAliveMs: number }
  | { type: 'pit.released'; reason: PitReleaseReason }
  | { type: 'pit.expired' }
  | { type: 'pit.closed' };

export type PointInTimeEvent =
  | { type: 'extend'; keepAliveMs: number } // a search with pit.keep_alive
  | { type: 'touch' } // a search without keep_alive: in use, expiry unchanged
  | { type: 'used' }
  | { type: 'release'; reason: PitReleaseReason }
  | { type: 'close' };

/**
 * A point in time: open -> (extend)* -> closed | expired | released. Like the scroll context, the
 * keep-alive runs only while no search is using it; `extend` replaces the keep-alive, `touch`
 * keeps the current one (ES: pit.keep_alive absent leaves expiry unchanged).
 */
export const pointInTimeMachine = setup({
  types: {
    input: {} as PointInTimeInput,
    context: {} as PointInTimeInput,
    events: {} as PointInTimeEvent,
    emitted: {} as PitFactBody,
  },
  delays: { keepAlive: ({ context }) => context.keepAliveMs },
}).createMachine({
  id: 'pointInTime',
  context: ({ input }) => input,
  entry: emit(({ context }) => ({ type: 'pit.opened' as const, keepAliveMs: context.keepAliveMs })),
  initial: 'open',
  states: {
    open: {
      initial: 'idle',
      on: {
        extend: {
          target: '.inUse',
          actions: [
            assign({ keepAliveMs: ({ event }) => event.keepAliveMs }),
            emit(({ event }) => ({ type: 'pit.extended' as const, keepAliveMs: event.keepAliveMs })),
          ],
        },
        touch: '.inUse',
        release: {
          target: 'released',
          actions: emit(({ event }) => ({ type: 'pit.released' as const, reason: event.reason })),
        },
        close: 'closed',
      },
      states: {
        idle: { after: { keepAlive: '#pointInTime.expired' } },
        inUse: { on: { used: 'idle' } },
      },
    },
    released: { type: 'final' },
    expired: { type: 'final', entry: emit({ type: 'pit.expired' as const }) },
    closed: { type: 'final', entry: emit({ type: 'pit.closed' as const }) },
  },
});
