import { SimulatedClock } from 'xstate';

/**
 * XState's SimulatedClock that can be moved to an absolute time one timer at a time.
 *
 * `SimulatedClock.set(t)` fires every due timer with the clock already at `t`, so a timer a machine
 * starts from inside another timer (the long-delay countdown of credentials, `machines/longDelay.ts`)
 * would start late. {@link advanceTo} stops at each deadline on the way instead.
 */
export class ReplayClock extends SimulatedClock {
  private readonly deadlines = new Map<number, number>();
  /** Deadline of the last timer that fired (NaN before any). */
  lastFiredAt = NaN;

  constructor(startMs = 0) {
    super();
    if (startMs) this.set(startMs);
  }

  override setTimeout(fn: (...args: unknown[]) => void, timeout: number): number {
    let id = -1;
    id = super.setTimeout(() => {
      this.lastFiredAt = this.deadlines.get(id) ?? this.now();
      this.deadlines.delete(id);
      fn();
    }, timeout);
    this.deadlines.set(id, this.now() + timeout);
    return id;
  }

  override clearTimeout(id: number): void {
    this.deadlines.delete(id);
    super.clearTimeout(id);
  }

  /** The earliest pending deadline, or Infinity. */
  nextDeadline(): number {
    let next = Infinity;
    for (const d of this.deadlines.values()) if (d < next) next = d;
    return next;
  }

  /** Moves to `t` (never backwards), firing each timer due on the way at its own deadline. */
  advanceTo(t: number): void {
    for (let guard = 0; guard < 10_000; guard++) {
      const next = this.nextDeadline();
      if (next > t) break;
      this.set(Math.max(next, this.now()));
    }
    if (t > this.now()) this.set(t);
  }
}
