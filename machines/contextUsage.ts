/**
 * Searches that use a scroll or PIT context without an event each, as ES counts them: a
 * ReaderContext holds a reference count and a last access time that every search updates, and
 * SearchService's Reaper reads them now and then to free the contexts whose keep-alive ran out.
 * Here the context's registry keeps both on its record, and the machine's keep-alive timer reads
 * them when it fires: used since it was armed (or in use now), it is armed again for what is left.
 * A search thus costs the machine nothing; only a new keep-alive (a fact to log) is an event.
 */
export interface ContextUsage {
  /** Searches using the context right now (no expiry while any does). */
  readonly inUse: number;
  /** When the last search finished with it (ms, the registry's clock): the keep-alive counts from here. */
  readonly lastUsedAt: number;
}

/** What a context machine's input adds for usage counted outside it. */
export interface UsageInput {
  usage?: ContextUsage;
  /** The registry's clock (the time `lastUsedAt` is on). */
  now?: () => number;
}

interface TimerContext extends UsageInput {
  keepAliveMs: number;
  resumeInMs?: number;
}

/** Milliseconds until the keep-alive runs out, from the usage when there is one. */
export function keepAliveDelay(c: TimerContext): number {
  const u = c.usage;
  if (!u || !c.now) return c.resumeInMs ?? c.keepAliveMs;
  if (u.inUse > 0) return c.keepAliveMs; // looked at again then: never while in use
  return Math.max(0, u.lastUsedAt + c.keepAliveMs - c.now());
}

/** The timer fired, but a search used the context meanwhile (or uses it now): not expired. */
export function usedSince(c: TimerContext): boolean {
  const u = c.usage;
  return !!u && !!c.now && (u.inUse > 0 || c.now() < u.lastUsedAt + c.keepAliveMs);
}
