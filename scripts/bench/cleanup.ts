/**
 * What to undo if the run is interrupted: nodes, nats-servers and temp dirs register a stop here
 * while they live, so Ctrl-C or SIGTERM (which do not unwind `finally` blocks) still clean up.
 */
const pending = new Set<() => Promise<unknown> | unknown>();

/** Registers `stop` until the returned function is called (call it in your `finally`). */
export function onAbort(stop: () => Promise<unknown> | unknown): () => void {
  pending.add(stop);
  return () => pending.delete(stop);
}

/** Runs every registered stop, newest first, ignoring their errors. */
export async function abortAll(): Promise<void> {
  const all = [...pending].reverse();
  pending.clear();
  for (const s of all) {
    try {
      await s();
    } catch {
      /* best effort */
    }
  }
}
