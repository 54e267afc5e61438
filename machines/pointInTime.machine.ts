import { assign, emit, enqueueActions, setup } from 'xstate';
import { keepAliveDelay, usedSince, type UsageInput } from './contextUsage';

export type PitReleaseReason = 'index_deleted' | 'index_closed' | 'shutdown';

export interface PointInTimeInput extends UsageInput {
  contextId: string;
  keepAliveMs: number;
  /** Revived after a restart: no `opened` fact again; expires in this many ms unless used first. */
  resumeInMs?: number;
}

export type PitFactBody =
  | { type: 'pit.opened'; keepAliveMs: number }
  | { type: 'pit.extended'; keepAliveMs: number }
  | { type: 'pit.released'; reason: PitReleaseReason }
  | { type: 'pit.expired' }
  | { type: 'pit.closed'; by?: string }
  | { type: 'pit.adopted'; from: string; to: string };

export type PointInTimeEvent =
  | { type: 'extend'; keepAliveMs: number } // a search with pit.keep_alive
  | { type: 'touch' } // a search without keep_alive: in use, expiry unchanged
  | { type: 'used' }
  | { type: 'release'; reason: PitReleaseReason }
  | { type: 'close'; by?: string }
  | { type: 'adopt'; from: string; to: string }; // its owner node died: another node runs it now

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
  delays: { keepAlive: ({ context }) => keepAliveDelay(context) },
  guards: { usedSince: ({ context }) => usedSince(context) },
}).createMachine({
  id: 'pointInTime',
  context: ({ input }) => input,
  entry: enqueueActions(({ context, enqueue }) => {
    if (context.resumeInMs === undefined) enqueue.emit({ type: 'pit.opened' as const, keepAliveMs: context.keepAliveMs });
  }),
  initial: 'open',
  states: {
    open: {
      initial: 'idle',
      on: {
        extend: {
          target: '.inUse',
          actions: [
            assign({ keepAliveMs: ({ event }) => event.keepAliveMs, resumeInMs: undefined }),
            emit(({ event }) => ({ type: 'pit.extended' as const, keepAliveMs: event.keepAliveMs })),
          ],
        },
        touch: { target: '.inUse', actions: assign({ resumeInMs: undefined }) },
        release: {
          target: 'released',
          actions: emit(({ event }) => ({ type: 'pit.released' as const, reason: event.reason })),
        },
        close: {
          target: 'closed',
          actions: emit(({ event }) => ({ type: 'pit.closed' as const, ...(event.by ? { by: event.by } : {}) })),
        },
        // A new owner takes the context over; its keep-alive runs on as before (no re-entry).
        adopt: { actions: emit(({ event }) => ({ type: 'pit.adopted' as const, from: event.from, to: event.to })) },
      },
      states: {
        // With usage counted by the registry (contextUsage.ts), a timer that finds the context used
        // since it was armed arms again for what is left; without, it expires the context.
        idle: { after: { keepAlive: [{ guard: 'usedSince', target: 'idle', reenter: true }, { target: '#pointInTime.expired' }] } },
        inUse: { on: { used: 'idle' } },
      },
    },
    released: { type: 'final' },
    expired: { type: 'final', entry: emit({ type: 'pit.expired' as const }) },
    closed: { type: 'final' },
  },
});
