/**
 * Time slicing of synchronous work: a writer is a generator that yields after a few milliseconds
 * of work (`undefined`: give the event loop a turn) or to wait for IO it handed to the libuv pool
 * (a Promise: fsync). {@link runSteps} drives one on the main thread; a worker simply runs it
 * through.
 */

/** Yields `undefined` to pause, or a Promise to wait for. */
export type Steps<T> = Generator<Promise<unknown> | undefined, T, void>;

/** Checks the clock every 256 units of work; `due()` once the slice's time is used up. */
export class Slicer {
  private t0 = performance.now();
  private n = 0;
  constructor(readonly ms: number) {}

  /** @param work units done since the last call (a doc: 1; a term: its postings) */
  due(work = 1): boolean {
    if ((this.n += work) < 256 || this.ms === Infinity) return false;
    this.n = 0;
    return performance.now() - this.t0 >= this.ms;
  }

  /** Checks the clock now (after a big piece of work). */
  dueNow(): boolean {
    return this.ms !== Infinity && performance.now() - this.t0 >= this.ms;
  }

  /** A new slice starts (after a yield). */
  reset(): void {
    this.t0 = performance.now();
  }
}

/** A pause point between two pieces of work: yields when the slice's time is used up. */
export function* pause(sl: Slicer): Steps<void> {
  if (sl.dueNow()) {
    yield;
    sl.reset();
  }
}

/**
 * Drives steps on the main thread: `setImmediate` between slices (IO and timers run), awaits the
 * promises it yields; an error while waiting is thrown into the generator so it cleans up.
 */
export async function runSteps<T>(steps: Steps<T>): Promise<T> {
  let r = steps.next();
  for (;;) {
    if (r.done) return r.value;
    const wait = r.value;
    try {
      if (wait) await wait;
      else await new Promise<void>((res) => setImmediate(res));
    } catch (e) {
      r = steps.throw(e);
      continue;
    }
    r = steps.next();
  }
}

/** Runs steps to the end synchronously (workers, tests); a yielded promise is an error. */
export function runStepsSync<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    if (r.value) throw new Error('synchronous steps yielded a promise');
  }
}
