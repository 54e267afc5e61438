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
 *   const host = new ActorHost();
 *   const actor = host.create(pointInTimeMachine, { input }).start();
 *   host.stop(actor);
 */
import { createActor, createMachine, type Actor, type ActorOptions, type AnyActorLogic, type AnyActorRef } from 'xstate';

export class ActorHost {
  private readonly root = createActor(createMachine({ id: 'contexts' })).start();

  /** An actor of `logic` in the shared system (not started). */
  create<T extends AnyActorLogic>(logic: T, options: ActorOptions<T>): Actor<T> {
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
