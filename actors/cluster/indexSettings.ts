import { EsError, illegalArgument } from '../wire/esErrors';
import { flatten } from '../config';

/** The index settings this node understands (others are kept and echoed, as ES does). */
export interface IndexSettings {
  numberOfShards: number;
  numberOfReplicas: number;
  maxResultWindow: number;
  maxSlicesPerScroll: number;
  /** -1 disables periodic refresh. */
  refreshIntervalMs: number;
  /** Every setting as given, flattened, with the `index.` prefix (for GET _settings). */
  raw: Record<string, string>;
}

const DEFAULTS: IndexSettings = {
  numberOfShards: 1,
  numberOfReplicas: 1,
  maxResultWindow: 10_000,
  maxSlicesPerScroll: 1024,
  refreshIntervalMs: 1000,
  raw: {},
};

/** Settings that cannot change after creation. */
const FINAL = new Set(['index.number_of_shards']);

function intSetting(key: string, v: unknown, min: number): number {
  const n = Number(v);
  if (!Number.isInteger(n) || String(v).trim() === '') {
    throw illegalArgument(`Failed to parse value [${String(v)}] for setting [${key}]`);
  }
  if (n < min) throw illegalArgument(`Failed to parse value [${n}] for setting [${key}] must be >= ${min}`);
  return n;
}

function timeMs(key: string, v: unknown): number {
  const s = String(v);
  if (s === '-1') return -1;
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(s);
  if (!m) throw illegalArgument(`failed to parse setting [${key}] with value [${s}] as a time value: unit is missing or unrecognized`);
  const mult = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'ms'];
  return Number(m[1]) * mult;
}

/** Normalizes `{settings:{number_of_shards:3}}`, `{settings:{index:{…}}}` and `{"index.x":…}` to `index.*` keys. */
export function normalizeSettings(input: unknown): Record<string, string> {
  const flat = flatten(input ?? {});
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(flat)) {
    const key = k.startsWith('index.') ? k : `index.${k}`;
    out[key] = Array.isArray(v) ? v.join(',') : String(v);
  }
  return out;
}

/** Applies `changes` (already normalized) on top of `base`; `creating` allows final settings. */
export function applySettings(base: IndexSettings, changes: Record<string, string>, creating: boolean): IndexSettings {
  const next: IndexSettings = { ...base, raw: { ...base.raw } };
  for (const [key, v] of Object.entries(changes)) {
    if (!creating && FINAL.has(key)) {
      throw illegalArgument(`Can't update non dynamic settings [[${key}]] for open indices`);
    }
    switch (key) {
      case 'index.number_of_shards':
        next.numberOfShards = intSetting(key, v, 1);
        if (next.numberOfShards > 1024) throw illegalArgument(`Failed to parse value [${v}] for setting [${key}] must be <= 1024`);
        break;
      case 'index.number_of_replicas':
        next.numberOfReplicas = intSetting(key, v, 0);
        break;
      case 'index.max_result_window':
        next.maxResultWindow = intSetting(key, v, 1);
        break;
      case 'index.max_slices_per_scroll':
        next.maxSlicesPerScroll = intSetting(key, v, 1);
        break;
      case 'index.refresh_interval':
        next.refreshIntervalMs = timeMs(key, v);
        break;
      default:
        if (!/^index\.[a-z0-9_.]+$/.test(key) || conflicts(key, next.raw)) throw new EsError('illegal_argument_exception', 400, `unknown setting [${key}]`);
    }
    next.raw[key] = v;
  }
  return next;
}

export const defaultIndexSettings = (): IndexSettings => ({ ...DEFAULTS, raw: {} });

/** Names the rendered `index` object holds itself. */
const RENDERED = ['number_of_shards', 'provided_name', 'creation_date', 'number_of_replicas', 'uuid', 'version', 'max_result_window', 'max_slices_per_scroll', 'refresh_interval'];

/** `index.a.b` next to `index.a` (either way round) has no place in the nested view: refused, not a 500 later. */
function conflicts(key: string, raw: Record<string, string>): boolean {
  const parts = key.slice('index.'.length).split('.');
  if (parts.some((p) => p === '') || (parts.length > 1 && RENDERED.includes(parts[0]))) return true;
  const rel = parts.join('.'); // the view's own `routing.allocation.include._tier_preference` path
  if (['routing', 'routing.allocation', 'routing.allocation.include'].includes(rel) || rel.startsWith('routing.allocation.include._tier_preference.')) return true;
  return Object.keys(raw).some((k) => k !== key && (k.startsWith(`${key}.`) || key.startsWith(`${k}.`)));
}

/** ES's GET _settings view: nested `index` object with string values. */
export function renderSettings(s: IndexSettings, meta: { uuid: string; name: string; creationDate: number }): Record<string, unknown> {
  const index: Record<string, unknown> = {
    routing: { allocation: { include: { _tier_preference: 'data_content' } } },
    number_of_shards: String(s.numberOfShards),
    provided_name: meta.name,
    creation_date: String(meta.creationDate),
    number_of_replicas: String(s.numberOfReplicas),
    uuid: meta.uuid,
    version: { created: '8512000' },
  };
  for (const [k, v] of Object.entries(s.raw)) {
    const path = k.slice('index.'.length).split('.');
    if (path[0] === 'number_of_shards' || path[0] === 'number_of_replicas') continue;
    let o = index as Record<string, unknown>;
    for (const p of path.slice(0, -1)) o = (o[p] ??= {}) as Record<string, unknown>;
    o[path[path.length - 1]] = v;
  }
  return { index };
}
