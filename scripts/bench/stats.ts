/** One figure of `npm run bench`. `target` is informative: nothing fails on it (shared machine). */
export interface Row {
  section: string;
  metric: string;
  value: number;
  unit: string;
  target?: string;
  ok?: boolean;
}

export const median = (xs: number[]) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Nearest-rank percentile (p in 0..100). */
export const percentile = (xs: number[], p: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};

/** Median of the per-round ratios a[i] / b[i] (pairs measured side by side). */
export const pairedRatio = (a: number[], b: number[]) => median(a.map((x, i) => x / b[i]));

const gc = (globalThis as { gc?: () => void }).gc;
export const hasGc = () => typeof gc === 'function';

/** heapUsed after full collections (when run with --expose-gc; `npm run bench` re-execs with it). */
export async function settledHeap(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((r) => setImmediate(r));
  }
  return process.memoryUsage().heapUsed;
}

/** A row with its target checked: `max` (value ≤ max) or `min` (value ≥ min) or `below` (value < below). */
export function row(section: string, metric: string, value: number, unit: string, t: { max?: number; min?: number; below?: number } = {}): Row {
  const r: Row = { section, metric, value, unit };
  if (t.max !== undefined) Object.assign(r, { target: `≤ ${t.max}`, ok: value <= t.max });
  if (t.min !== undefined) Object.assign(r, { target: `≥ ${t.min}`, ok: value >= t.min });
  if (t.below !== undefined) Object.assign(r, { target: `< ${t.below}`, ok: value < t.below });
  return r;
}

/** Runs `f` for each round, each of `fs` in turn (interleaved), and returns the values per name. */
export async function interleave<K extends string>(rounds: number, fs: Record<K, () => Promise<number>>): Promise<Record<K, number[]>> {
  const out = Object.fromEntries(Object.keys(fs).map((k) => [k, [] as number[]])) as Record<K, number[]>;
  for (let r = 0; r < rounds; r++) for (const k of Object.keys(fs) as K[]) out[k].push(await fs[k]());
  return out;
}

export const fmt = (v: number) =>
  !Number.isFinite(v) ? String(v) : Math.abs(v) >= 1000 ? Math.round(v).toLocaleString('en-US') : Math.abs(v) >= 10 ? v.toFixed(1) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toFixed(3);
