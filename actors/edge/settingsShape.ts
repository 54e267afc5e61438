import { flatten } from '../config';

/** Settings as flat keys (`index.number_of_shards`), ES's `flat_settings=true` form; lists stay lists. */
export function flattenSettings(o: Record<string, unknown>): Record<string, unknown> {
  return flatten(o);
}

/** Flat keys back into nested objects (ES's default `flat_settings=false` form). */
export function nestSettings(flat: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(flat)) {
    const path = k.split('.');
    let o = out;
    for (const p of path.slice(0, -1)) {
      const next = o[p];
      o = (next && typeof next === 'object' && !Array.isArray(next) ? next : (o[p] = {})) as Record<string, unknown>;
    }
    o[path[path.length - 1]] = v;
  }
  return out;
}
