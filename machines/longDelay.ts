/**
 * Timers longer than setTimeout's limit (2^31-1 ms, about 24.8 days) fire at once in Node. Credentials
 * may live for a year, so a machine waits in steps of at most {@link MAX_DELAY_MS} and counts down the
 * rest in its context (the step re-enters its state, which restarts the timer).
 */
export const MAX_DELAY_MS = 2_147_483_647;

/** The next step of a long wait: `min(remaining, MAX_DELAY_MS)`, never negative. */
export const nextStep = (remainingMs: number): number => Math.max(0, Math.min(remainingMs, MAX_DELAY_MS));

/** True when the step that just fired was the last one. */
export const isLastStep = (remainingMs: number): boolean => remainingMs <= MAX_DELAY_MS;
