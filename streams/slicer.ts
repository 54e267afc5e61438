import { performance } from 'node:perf_hooks';

/**
 * Cooperative slicing of long loops on the event loop: a loop checks {@link due} every so often
 * and, when a slice's time is used up, awaits {@link pause} (one turn of the loop: timers, I/O, other
 * requests, the NATS client's heartbeats and lease renewals run), so that no request holds the loop
 * for long (issue 21: a 100 MB `_bulk` kept it for seconds and the node lost its allocator lease).
 *
 * @example
 * const s = new Slicer();
 * for (let i = 0; i < items.length; i++) {
 *   if ((i & 255) === 0 && s.due) await s.pause();
 *   work(items[i]);
 * }
 */
export class Slicer {
  private last = performance.now();

  constructor(private readonly sliceMs = 10) {}

  /** The current slice has run its time. */
  get due(): boolean {
    return performance.now() - this.last >= this.sliceMs;
  }

  /** Gives the loop one turn (setImmediate: after pending I/O), then starts a new slice. */
  async pause(): Promise<void> {
    await new Promise<void>((r) => setImmediate(r));
    this.last = performance.now();
  }

  /** Pauses when the slice is due (an await in every call: for loops of coarse steps). */
  async maybe(): Promise<void> {
    if (this.due) await this.pause();
  }
}
