/**
 * One XState actor system for many context actors (scrolls, PITs, async searches).
 *
 * A root actor (`createActor` without a parent) builds a whole actor system of its own: a
 * scheduler, registries, inspection observers, ~20 closures, about 1.5 KB per actor. Contexts are
 * many and short-lived, so each is created as a child of one idle root and shares its system: timers
 * are still per actor (the scheduler keys them by the actor's session id and cancels them when it
 * stops), `done` snapshots still reach the actor's own observers, and the root ignores the done and
 * error events XState relays to a parent.
 *
 * A system is shared by {@link ACTORS_PER_SYSTEM} actors at most, then a new root takes over: XState
 * stops an actor by scanning every timer of its system (`scheduler.cancelAll`), so one system for
 * 10,000 open contexts made each close cost 10,000 steps. A root whose actors all ended is garbage.
 *
 *   const host = new ActorHost();
 *   const actor = host.create(pointInTimeMachine, { input }).start();
 *   host.stop(actor);
 */
import { createActor, createMachine, type Actor, type ActorOptions, type AnyActorLogic, type AnyActorRef } from 'xstate';

/** Actors per shared system: its fixed cost (~1.2 KB) spread thin, the scan on stop kept short. */
export const ACTORS_PER_SYSTEM = 64;
const rootMachine = createMachine({ id: 'contexts' });

export class ActorHost {
  private root = createActor(rootMachine).start();
  private made = 0;

  /** An actor of `logic` in a shared system (not started). */
  create<T extends AnyActorLogic>(logic: T, options: ActorOptions<T>): Actor<T> {
    if (this.made++ === ACTORS_PER_SYSTEM) {
      this.made = 1;
      this.root = createActor(rootMachine).start();
    }
    return createActor(logic, { ...options, parent: this.root } as ActorOptions<T>);
  }

  /**
   * Stops an actor made here. XState lets only a parent stop a child (`stop()` throws for one);
   * the root has no action to do it with, so this calls the same internal step `stop()` runs.
   */
  stop(actor: AnyActorRef): void {
    (actor as unknown as { _stop(): void })._stop();
  }
}
