import { EsError, illegalArgument } from '../wire/esErrors';
import { flatten } from '../config';
import { calculateNumRoutingShards, indexShard, type RoutingSpec } from '../shard/engine';
import { parseTimeValue } from '../wire/timeValue';

/** The index settings this node understands (others are kept and echoed, as ES does). */
export interface IndexSettings {
  numberOfShards: number;
  numberOfReplicas: number;
  maxResultWindow: number;
  maxSlicesPerScroll: number;
  /**
   * `index.number_of_routing_shards`, fixed at creation: the given value, else ES's default
   * (calculateNumRoutingShards). Absent in snapshots written before it existed (see routingSpec).
   */
  numberOfRoutingShards?: number;
  /** `index.routing_partition_size`, fixed at creation (1: documents of one routing value share a shard). */
  routingPartitionSize?: number;
  /** -1 disables periodic refresh. */
  refreshIntervalMs: number;
  /** Every setting as given, flattened, with the `index.` prefix (for GET _settings). */
  raw: Record<string, string>;
  /** Closed (`POST /<index>/_close`): searches, PITs and scrolls refuse it with `index_closed_exception`. */
  closed?: boolean;
}

const DEFAULTS: IndexSettings = {
  numberOfShards: 1,
  numberOfReplicas: 1,
  maxResultWindow: 10_000,
  maxSlicesPerScroll: 1024,
  refreshIntervalMs: 1000,
  raw: {},
};

/** Settings that cannot change after creation (ES: not Dynamic, or Final). */
const FINAL = new Set(['index.number_of_shards', 'index.number_of_routing_shards', 'index.routing_partition_size']);

/** The index a settings change is about, for ES's messages. */
export interface SettingsTarget {
  name: string;
  uuid?: string;
}

function intSetting(key: string, v: unknown, min: number): number {
  const n = Number(v);
  if (!Number.isInteger(n) || String(v).trim() === '') {
    throw illegalArgument(`Failed to parse value [${String(v)}] for setting [${key}]`);
  }
  if (n < min) throw illegalArgument(`Failed to parse value [${n}] for setting [${key}] must be >= ${min}`);
  return n;
}

function timeMs(key: string, v: unknown): number {
  try {
    return parseTimeValue(String(v), key);
  } catch (e) {
    throw illegalArgument((e as Error).message); // index settings refuse with illegal_argument_exception
  }
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

/**
 * Applies `changes` (already normalized) on top of `base`; `creating` allows final settings and
 * fixes the routing settings (`index` names the index in ES's messages).
 */
export function applySettings(base: IndexSettings, changes: Record<string, string>, creating: boolean, index?: SettingsTarget): IndexSettings {
  const next: IndexSettings = { ...base, raw: { ...base.raw } };
  const fixed = Object.keys(changes).filter((k) => FINAL.has(k));
  if (!creating && fixed.length) {
    const open = index ? ` for open indices [[${index.name}/${index.uuid ?? '_na_'}]]` : ' for open indices';
    throw illegalArgument(`Can't update non dynamic settings [[${fixed.join(', ')}]]${open}`);
  }
  for (const [key, v] of Object.entries(changes)) {
    switch (key) {
      case 'index.number_of_shards':
        next.numberOfShards = intSetting(key, v, 1);
        if (next.numberOfShards > 1024) throw illegalArgument(`Failed to parse value [${v}] for setting [${key}] must be <= 1024`);
        break;
      case 'index.number_of_replicas':
        next.numberOfReplicas = intSetting(key, v, 0);
        break;
      case 'index.number_of_routing_shards':
      case 'index.routing_partition_size':
        break; // fixed after the loop; validated by validateCreate (a replayed create never throws)
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
  if (creating) fixRouting(next, changes);
  return next;
}

const positiveInt = (v: string | undefined): number | undefined => {
  const n = Number(v);
  return v !== undefined && v.trim() !== '' && Number.isInteger(n) && n >= 1 && n <= 0x7fffffff ? n : undefined;
};

/**
 * Fixes the routing settings at creation: the given number_of_routing_shards, else the default of
 * MetadataCreateIndexService.calculateNumRoutingShards; the partition size (1 by default). Lenient,
 * because it also folds logged creates: validateCreate refuses bad values before they are logged.
 */
function fixRouting(s: IndexSettings, changes: Record<string, string>): void {
  s.numberOfRoutingShards = positiveInt(changes['index.number_of_routing_shards']) ?? calculateNumRoutingShards(s.numberOfShards);
  s.routingPartitionSize = positiveInt(changes['index.routing_partition_size']) ?? 1;
}

/** The routing fields of an index (settings restored from an older snapshot are completed as creation would). */
export function routingSpec(s: IndexSettings): RoutingSpec {
  return {
    numberOfShards: s.numberOfShards,
    routingNumShards: s.numberOfRoutingShards ?? positiveInt(s.raw['index.number_of_routing_shards']) ?? calculateNumRoutingShards(s.numberOfShards),
    routingPartitionSize: s.routingPartitionSize ?? positiveInt(s.raw['index.routing_partition_size']) ?? 1,
  };
}

/** What docShard reads of an index. */
export interface RoutedIndex {
  name: string;
  uuid: string;
  settings: IndexSettings;
  mapping: { toJSON(): Record<string, unknown>; version?: number };
}

/**
 * The shard holding document `id` (ES `IndexRouting.indexShard/getShard/deleteShard`): a mapping
 * with `_routing.required` answers a missing routing with `routing_missing_exception`; a
 * partitioned index without routing is IndexRouting's illegal argument, and a document indexed into
 * one whose mapping does not require routing fails ES's mapping check (`write`).
 * @throws EsError 400 `routing_missing_exception` / `illegal_argument_exception`
 */
export function docShard(idx: RoutedIndex, id: string, routing: string | undefined, write = false): number {
  const spec = routingSpec(idx.settings);
  const required = routingRequiredOf(idx.mapping);
  if (required && routing === undefined) {
    throw new EsError('routing_missing_exception', 400, `routing is required for [${idx.name}]/[${id}]`, {
      meta: { index_uuid: '_na_', index: idx.name },
    });
  }
  if (spec.routingPartitionSize > 1) {
    if (routing === undefined) throw illegalArgument('A routing value is required for gets from a partitioned index');
    if (write && !required) throw partitionNeedsRequiredRouting(idx.name);
  }
  return indexShard(spec, id, routing);
}

/** `_routing.required` of a mapping, read once per mapping version (toJSON builds the whole mapping). */
const requiredCache = new WeakMap<object, { version: number | undefined; required: boolean }>();
function routingRequiredOf(mapping: RoutedIndex['mapping']): boolean {
  const hit = requiredCache.get(mapping);
  if (hit && hit.version === mapping.version && mapping.version !== undefined) return hit.required;
  const required = routingRequired(mapping.toJSON());
  requiredCache.set(mapping, { version: mapping.version, required });
  return required;
}

function routingRequired(mappings: unknown): boolean {
  const r = (mappings as { _routing?: { required?: unknown } } | undefined)?._routing;
  return r?.required === true || r?.required === 'true';
}

const partitionNeedsRequiredRouting = (name: string) =>
  illegalArgument(`mapping type [_doc] must have routing required for partitioned index [${name}]`);

/**
 * Create-index checks of the routing settings, as ES makes them: the int settings (min 1), the
 * number_of_routing_shards validator (>= number_of_shards, and IndexMetadata.getRoutingFactor: a
 * multiple of it), IndexMetadata.Builder's partition check, and DocumentMapper.validate (explicit
 * mappings of a partitioned index must require routing).
 * @param settings the result of applySettings(defaultIndexSettings(), changes, true)
 */
export function validateCreate(changes: Record<string, string>, settings: IndexSettings, mappings: unknown, name: string): void {
  for (const key of ['index.number_of_routing_shards', 'index.routing_partition_size']) {
    if (changes[key] !== undefined) intSetting(key, changes[key], 1);
  }
  const shards = settings.numberOfShards;
  const routing = settings.numberOfRoutingShards!;
  if (changes['index.number_of_routing_shards'] !== undefined) {
    if (routing < shards) throw illegalArgument(`index.number_of_routing_shards [${routing}] must be >= index.number_of_shards [${shards}]`);
    const factor = Math.floor(routing / shards);
    if (routing !== shards && (factor * shards !== routing || factor <= 1)) {
      throw illegalArgument(`the number of source shards [${shards}] must be a factor of [${routing}]`);
    }
  }
  // MetadataCreateIndexService.validateSoftDeleteSettings (indices created by 8.0+)
  if (changes['index.soft_deletes.enabled'] === 'false') {
    throw illegalArgument('Creating indices with soft-deletes disabled is no longer supported. Please do not specify a value for setting [index.soft_deletes.enabled].');
  }
  const partition = settings.routingPartitionSize!;
  if (partition !== 1 && partition >= routing) {
    throw illegalArgument(`routing partition size [${partition}] should be a positive number less than the number of routing shards [${routing}] for [${name}]`);
  }
  const hasMappings = !!mappings && typeof mappings === 'object' && Object.keys(mappings).length > 0;
  if (hasMappings && partition > 1 && !routingRequired(mappings)) throw partitionNeedsRequiredRouting(name);
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
