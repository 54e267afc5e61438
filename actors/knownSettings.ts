import { parseTimeValue } from './wire/timeValue';
import { parseMemorySize } from './wire/byteSize';

/**
 * Every node setting this project reads, with its type, so start-up can refuse an unknown key or a
 * bad value the way Elasticsearch refuses to start (`unknown setting [...]`, `Failed to parse value
 * [...] for setting [...]`). A new `settings.str/num/bool/get('<key>')` in the code needs an entry
 * here: `test/unit/config/knownSettings.test.ts` greps the sources and fails otherwise.
 */
export type SettingType = 'bool' | 'int' | 'time' | 'string' | 'list' | 'memory' | 'double';

export interface SettingDef {
  type: SettingType;
  /** Inclusive bounds of an `int` (`min` also of a `double`). */
  min?: number;
  max?: number;
  /** Time values: bounds in milliseconds, with the text ES prints for them. */
  minMs?: [number, string];
  maxMs?: [number, string];
}

const bool: SettingDef = { type: 'bool' };
const str: SettingDef = { type: 'string' };
const time: SettingDef = { type: 'time' };
const list: SettingDef = { type: 'list' };
const nonNegative: SettingDef = { type: 'int', min: 0 };
/** A memory size: bytes (`512mb`, `-1`) or a share of the heap (`60%`), ES's memory-size settings. */
const memory: SettingDef = { type: 'memory' };
const overhead: SettingDef = { type: 'double', min: 0 };

/** Plain keys. */
export const NODE_SETTINGS: Readonly<Record<string, SettingDef>> = {
  'cluster.name': str,
  'node.name': str,
  'bootstrap.password': str,
  'action.destructive_requires_name': bool,
  'search.default_keep_alive': time,
  'search.max_keep_alive': time,
  'search.keep_alive_interval': time,
  'search.max_open_scroll_context': nonNegative,
  'search.default_allow_partial_results': bool,
  // Per-principal cap on open scrolls + PITs + async searches (0 = off; ours, README Differences).
  'search.max_open_contexts_per_user': nonNegative,
  // Async search (actors/search/asyncSearchService.ts): ES's keys and defaults.
  'search.max_async_search_response_size': str,
  'async_search.max_keep_alive': time,
  // Circuit breakers (actors/wire/circuitBreaker.ts) and the bucket limit; all dynamic, as in ES.
  'search.max_buckets': { type: 'int', min: 0, max: 2 ** 31 - 1 },
  'indices.breaker.total.use_real_memory': bool,
  'indices.breaker.total.limit': memory,
  'indices.breaker.request.limit': memory,
  'indices.breaker.request.overhead': overhead,
  'indices.breaker.fielddata.limit': memory,
  'indices.breaker.fielddata.overhead': overhead,
  'indices.breaker.accounting.limit': memory,
  'indices.breaker.accounting.overhead': overhead,
  'network.breaker.inflight_requests.limit': memory,
  'network.breaker.inflight_requests.overhead': overhead,
  // How long lifecycle facts stay once compacted (actors/compaction/retention.ts); `_ms` is the old alias.
  'events.retention': time,
  'events.retention_ms': nonNegative,
  'snapshot.enabled': bool,
  'snapshot.interval_ms': { type: 'int', min: 1 },
  'snapshot.min_ops': nonNegative,
  'snapshot.purge_log': bool,
  'indices.segments.cache.size': str,
  'indices.memory.index_buffer_size': str,
  'indices.memory.shard_inactive_time': time,
  'indices.merge.scheduler.max_thread_count': { type: 'int', min: 1 },
  'indices.merge.deletes_retention': time,
  'xpack.security.enabled': bool,
  'xpack.security.authc.token.enabled': bool,
  'xpack.security.authc.token.timeout': { type: 'time', minMs: [1_000, '1s'], maxMs: [3_600_000, '1h'] },
  'xpack.security.authc.api_key.enabled': bool,
  // Ours (README Differences): refresh-token reuse detection `off` | `revoke_family`, checked by the security module.
  'xpack.security.authc.token.reuse_detection': str,
  // Ours: API keys may create narrower, no-longer-lived API keys, invalidated with them (actors/security/derivedKeys.ts).
  'xpack.security.authc.api_key.derived_keys.enabled': bool,
  // Ours: `fail_open` (default) or `fail_closed`: refuse credentials the node cannot confirm from the log (dynamic).
  'xpack.security.authc.partition_policy': str,
  'xpack.security.audit.enabled': bool,
  // Values are checked by the security module (ES's algorithm names).
  'xpack.security.authc.password_hashing.algorithm': str,
  'xpack.security.authc.service_token_hashing.algorithm': str,
  'console.feed.revalidate_interval_ms': { type: 'int', min: 1 },
  // A byte size (100mb), parsed where it is read (parseByteSize in actors/system.ts).
  'http.max_content_length': str,
  // Clustering (actors/cluster): JetStream replicas of the streams and buckets, membership timing,
  // and an id-signing key kept out of JetStream (base64 of 32 bytes).
  'cluster.stream_replicas': { type: 'int', min: 1, max: 5 },
  'cluster.heartbeat_interval_ms': { type: 'int', min: 50 },
  'cluster.node_timeout_ms': { type: 'int', min: 200 },
  'cluster.id_signing_key': str,
  // Disk watermarks over the document log's store (actors/cluster/floodStage.ts); values are ES's
  // (percentages, ratios or byte sizes), checked together by actors/cluster/diskThreshold.ts.
  'cluster.routing.allocation.disk.threshold_enabled': bool,
  'cluster.routing.allocation.disk.watermark.low': str,
  'cluster.routing.allocation.disk.watermark.high': str,
  'cluster.routing.allocation.disk.watermark.flood_stage': str,
  'cluster.routing.allocation.disk.watermark.low.max_headroom': str,
  'cluster.routing.allocation.disk.watermark.high.max_headroom': str,
  'cluster.routing.allocation.disk.watermark.flood_stage.max_headroom': str,
  'cluster.info.update.interval': time,
  // The JetStream store size of an external NATS (its servers' max_file_store), a byte size.
  'nats.max_file_store': str,
  // The node's login and TLS on an external NATS (NATS_URL): actors/bus/natsSettings.ts.
  'nats.user': str,
  'nats.password': str,
  'nats.nkey_seed_file': str,
  'nats.creds_file': str,
  'nats.tls.ca': str,
  'nats.tls.cert': str,
  'nats.tls.key': str,
  // HTTPS on the edge (actors/tls/httpSsl.ts), PEM files as ES's `xpack.security.http.ssl.*`.
  'xpack.security.http.ssl.enabled': bool,
  'xpack.security.http.ssl.key': str,
  'xpack.security.http.ssl.certificate': str,
  'xpack.security.http.ssl.certificate_authorities': list,
  'xpack.security.http.ssl.key_passphrase': str,
};

/** `xpack.security.authc.realms.<type>.<name>.<key>`: the keys each realm type reads. */
export const REALM_SETTINGS: Readonly<Record<string, Readonly<Record<string, SettingDef>>>> = {
  file: { enabled: bool, order: { type: 'int' } },
  native: { enabled: bool, order: { type: 'int' } },
  jwt: {
    enabled: bool,
    order: { type: 'int' },
    token_type: str,
    allowed_issuer: str,
    allowed_audiences: list,
    allowed_subjects: list,
    allowed_subject_patterns: list,
    allowed_signature_algorithms: list,
    allowed_clock_skew: time,
    hmac_key: str,
    hmac_jwkset: str,
    pkc_jwkset_path: str,
    'claims.principal': str,
    'claims.groups': str,
    'claims.mail': str,
    'claims.name': str,
    'claims.dn': str,
    'client_authentication.type': str,
    'client_authentication.shared_secret': str,
    populate_user_metadata: bool,
    'jwt.cache.ttl': time,
    'required_claims.*': str,
  },
};

/**
 * Elasticsearch settings people carry over from an ES config (docker-compose files, guides) that this
 * node does not use: accepted with a warning instead of refused, since ES itself knows them.
 */
export const IGNORED_SETTINGS: Readonly<Record<string, string>> = {
  'network.host': 'set HOST',
  'http.host': 'set HOST',
  'http.port': 'set PORT',
  'transport.port': 'single node, no transport layer',
  'transport.host': 'single node, no transport layer',
  'discovery.type': 'single node',
  'discovery.seed_hosts': 'single node',
  'cluster.initial_master_nodes': 'single node',
  'node.roles': 'single node',
  'path.data': 'set DATA_DIR',
  'path.logs': 'logs go to stdout (LOG_LEVEL)',
  'bootstrap.memory_lock': 'no JVM heap here',
  'xpack.security.enrollment.enabled': 'no enrollment tokens here',
  'xpack.security.http.ssl.*': 'HTTPS here takes PEM files only: enabled, key, certificate, certificate_authorities, key_passphrase',
  'xpack.security.transport.ssl.*': 'no transport layer here',
  'xpack.ml.enabled': 'no machine learning here',
  'xpack.monitoring.*': 'no monitoring collection here',
  'ingest.geoip.downloader.enabled': 'no ingest pipelines here',
};

const REALM_KEY = /^xpack\.security\.authc\.realms\.([^.]+)\.([^.]+)\.(.+)$/;

function matches(pattern: string, key: string): boolean {
  return pattern.endsWith('.*') ? key.startsWith(pattern.slice(0, -1)) : pattern === key;
}

/** The definition of a key, or undefined when the node does not know it. */
export function settingDef(key: string): SettingDef | undefined {
  if (Object.hasOwn(NODE_SETTINGS, key)) return NODE_SETTINGS[key];
  const m = REALM_KEY.exec(key);
  if (m && Object.hasOwn(REALM_SETTINGS, m[1])) {
    const defs = REALM_SETTINGS[m[1]];
    const name = Object.keys(defs).find((k) => matches(k, m[3]));
    return name === undefined ? undefined : defs[name];
  }
  return undefined;
}

/** Why an ES setting is accepted but not used, or undefined. */
export function ignoredReason(key: string): string | undefined {
  const k = Object.keys(IGNORED_SETTINGS).find((p) => matches(p, key));
  return k === undefined ? undefined : IGNORED_SETTINGS[k];
}

/**
 * Checks one value against its definition; returns ES's message for a bad one.
 * @example checkValue('xpack.security.enabled', 'yes', { type: 'bool' }) // 'Failed to parse value [yes] as only [true] or [false] are allowed.'
 */
export function checkValue(key: string, value: unknown, def: SettingDef): string | undefined {
  const text = Array.isArray(value) ? value.join(',') : String(value);
  switch (def.type) {
    case 'bool':
      if (value === true || value === false || text === 'true' || text === 'false') return undefined;
      return `Failed to parse value [${text}] as only [true] or [false] are allowed.`;
    case 'int': {
      if (!/^[+-]?\d+$/.test(text.trim()) || !Number.isSafeInteger(Number(text))) return `Failed to parse value [${text}] for setting [${key}]`;
      const n = Number(text);
      if (def.min !== undefined && n < def.min) return `Failed to parse value [${text}] for setting [${key}] must be >= ${def.min}`;
      if (def.max !== undefined && n > def.max) return `Failed to parse value [${text}] for setting [${key}] must be <= ${def.max}`;
      return undefined;
    }
    case 'time': {
      let ms: number;
      try {
        ms = parseTimeValue(text, key);
      } catch (e) {
        return (e as Error).message;
      }
      if (def.minMs && ms < def.minMs[0]) return `failed to parse value [${text}] for setting [${key}], must be >= [${def.minMs[1]}]`;
      if (def.maxMs && ms > def.maxMs[0]) return `failed to parse value [${text}] for setting [${key}], must be <= [${def.maxMs[1]}]`;
      return undefined;
    }
    case 'memory':
      try {
        parseMemorySize(text, key, 1);
        return undefined;
      } catch (e) {
        return (e as Error).message;
      }
    case 'double': {
      const n = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(text) ? Number(text) : NaN;
      if (Number.isNaN(n)) return `Failed to parse value [${text}] for setting [${key}]`;
      if (def.min !== undefined && n < def.min) return `Failed to parse value [${text}] for setting [${key}] must be >= ${javaDouble(def.min)}`;
      return undefined;
    }
    case 'list':
    case 'string':
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) return `Failed to parse value for setting [${key}]: expected a ${def.type}`;
      return undefined;
  }
}

/** Java's `Double.toString` for the bounds ES prints (`0.0`). */
function javaDouble(n: number): string {
  return Number.isInteger(n) ? `${n}.0` : String(n);
}
