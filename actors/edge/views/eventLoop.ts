import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/**
 * The event loop's delay (perf_hooks.monitorEventLoopDelay, 10 ms resolution), in windows of 10 s:
 * `_nodes/stats` shows the last minute (the max over it exactly; p50 and p99 of its worst window) and
 * each window, so a client can look at the windows a request of its own spanned.
 */
const WINDOW_MS = 10_000;
const KEEP = 6;

export interface LoopWindow {
  start_in_millis: number;
  end_in_millis: number;
  p50_in_millis: number;
  p99_in_millis: number;
  max_in_millis: number;
  mean_in_millis: number;
}

let h: IntervalHistogram | undefined;
let windowStart = 0;
let lifetimeMax = 0;
const windows: LoopWindow[] = [];
let timer: NodeJS.Timeout | undefined;

const ms = (ns: number) => Math.round((Number.isFinite(ns) ? ns : 0) / 1e4) / 100;

function snapshot(now: number): LoopWindow {
  const w = h!;
  return {
    start_in_millis: windowStart,
    end_in_millis: now,
    p50_in_millis: w.count ? ms(w.percentile(50)) : 0,
    p99_in_millis: w.count ? ms(w.percentile(99)) : 0,
    max_in_millis: w.count ? ms(w.max) : 0,
    mean_in_millis: w.count ? ms(w.mean) : 0,
  };
}

function roll(): void {
  const now = Date.now();
  const w = snapshot(now);
  lifetimeMax = Math.max(lifetimeMax, w.max_in_millis);
  windows.push(w);
  if (windows.length > KEEP) windows.shift();
  h!.reset();
  windowStart = now;
}

/** Starts watching the loop (once per process; every node in it shares the loop). */
export function startLoopMonitor(): void {
  if (h) return;
  h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  windowStart = Date.now();
  timer = setInterval(roll, WINDOW_MS);
  timer.unref();
}

/** `_nodes/stats` `event_loop`: the last minute, the windows, the lifetime max (milliseconds). */
export function loopStats(): Record<string, unknown> {
  startLoopMonitor();
  const current = snapshot(Date.now());
  const all = [...windows, current];
  const worst = all.reduce((a, b) => (b.p99_in_millis > a.p99_in_millis ? b : a), all[0]);
  return {
    delay: {
      p50_in_millis: worst.p50_in_millis,
      p99_in_millis: worst.p99_in_millis,
      max_in_millis: Math.max(...all.map((w) => w.max_in_millis)),
      mean_in_millis: Math.round((all.reduce((a, w) => a + w.mean_in_millis, 0) / all.length) * 100) / 100,
    },
    lifetime_max_in_millis: Math.max(lifetimeMax, current.max_in_millis),
    window_in_millis: WINDOW_MS,
    windows: all,
  };
}
