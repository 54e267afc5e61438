import v8 from 'node:v8';
import vm from 'node:vm';
import { EsError } from './esErrors';
import { formatBytes, parseMemorySize } from './byteSize';

/**
 * Circuit breakers as Elasticsearch 8 has them (HierarchyCircuitBreakerService,
 * ChildMemoryCircuitBreaker): child breakers count the bytes that requests reserve (estimates,
 * times the breaker's overhead) against their limit, and every reservation also asks the parent,
 * which compares the real heap in use (V8's, with `indices.breaker.total.use_real_memory`) plus the
 * new reservation, or the children's sum, against `indices.breaker.total.limit`. A trip is ES's 429
 * `circuit_breaking_exception`. Limits and overheads are read from the settings at each use, so a
 * `PUT /_cluster/settings` takes effect at once.
 */

export type Durability = 'TRANSIENT' | 'PERMANENT';
export type BreakerName = 'request' | 'fielddata' | 'inflight_requests' | 'accounting';

interface ChildDef {
  name: BreakerName;
  limitKey: string;
  limitDefault: string;
  overheadKey: string;
  overheadDefault: number;
  durability: Durability;
}

/** ES 8's child breakers, their settings and defaults (all dynamic). */
export const CHILD_BREAKERS: readonly ChildDef[] = [
  { name: 'request', limitKey: 'indices.breaker.request.limit', limitDefault: '60%', overheadKey: 'indices.breaker.request.overhead', overheadDefault: 1, durability: 'TRANSIENT' },
  { name: 'fielddata', limitKey: 'indices.breaker.fielddata.limit', limitDefault: '40%', overheadKey: 'indices.breaker.fielddata.overhead', overheadDefault: 1.03, durability: 'PERMANENT' },
  { name: 'inflight_requests', limitKey: 'network.breaker.inflight_requests.limit', limitDefault: '100%', overheadKey: 'network.breaker.inflight_requests.overhead', overheadDefault: 2, durability: 'TRANSIENT' },
  { name: 'accounting', limitKey: 'indices.breaker.accounting.limit', limitDefault: '100%', overheadKey: 'indices.breaker.accounting.overhead', overheadDefault: 1, durability: 'PERMANENT' },
];
export const TOTAL_LIMIT = 'indices.breaker.total.limit';
export const USE_REAL_MEMORY = 'indices.breaker.total.use_real_memory';
/** `search.max_buckets` and its default (MultiBucketConsumerService). */
export const MAX_BUCKETS_SETTING = 'search.max_buckets';
export const DEFAULT_MAX_BUCKETS = 65_536;

/** The heap the parent breaker watches: V8's (`heap_size_limit` plays the JVM's max heap). */
export interface HeapProbe {
  /** Bytes in use now (garbage not yet collected included, as the JVM's figure). */
  used(): number;
  /** The heap limit the percentages are taken of. */
  max(): number;
  /** Frees what it can before a trip is decided (ES's over-limit strategy); optional. */
  collect?(): void;
}

let forcedGc: (() => void) | undefined;

/** `--max-semi-space-size` (MB) from the node's flags; V8's default on 64-bit is 16. */
function semiSpaceMb(): number {
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  for (const f of flags) {
    const m = /^--max[-_]semi[-_]space[-_]size=(\d+)$/.exec(f);
    if (m) return Number(m[1]);
  }
  return 16;
}

/**
 * V8's heap. `heap_size_limit` (what the percentages are of, and `_nodes/stats` `jvm.mem.heap_max`)
 * is the old generation's limit (`--max-old-space-size`) plus the young generation (three
 * semi-spaces, 48 MB by default). Old objects never get the young generation's share: V8 runs out
 * of memory when the old generation is full, some 48 MB below `heap_size_limit`. So the real
 * usage the parent breaker reads counts the young generation whole: the old generation in use plus
 * the young generation's size (what is in it is within that size).
 */
export const v8Heap: HeapProbe = {
  used: () => {
    const young = v8.getHeapSpaceStatistics().reduce((n, sp) => (sp.space_name === 'new_space' || sp.space_name === 'new_large_object_space' ? n + sp.space_used_size : n), 0);
    return v8.getHeapStatistics().used_heap_size - young + youngGeneration;
  },
  max: () => v8.getHeapStatistics().heap_size_limit,
  collect() {
    if (!forcedGc) {
      v8.setFlagsFromString('--expose-gc');
      forcedGc = vm.runInNewContext('gc') as () => void;
    }
    forcedGc();
  },
};
const youngGeneration = Math.min(3 * semiSpaceMb() * 1024 * 1024, v8.getHeapStatistics().heap_size_limit / 4);

/** ES's 429 `circuit_breaking_exception` (CircuitBreakingException: `bytes_wanted`, `bytes_limit`, `durability`). */
export function circuitBreakingException(reason: string, wanted: number, limit: number, durability: Durability): EsError {
  return new EsError('circuit_breaking_exception', 429, reason, { meta: { bytes_wanted: wanted, bytes_limit: limit, durability } });
}

const sized = (n: number) => `${n}/${formatBytes(n)}`;

/** One breaker's figures as `_nodes/stats/breaker` shows them. */
export interface BreakerStats {
  limit_size_in_bytes: number;
  limit_size: string;
  estimated_size_in_bytes: number;
  estimated_size: string;
  overhead: number;
  tripped: number;
}

function statsOf(limit: number, estimated: number, overhead: number, tripped: number): BreakerStats {
  return {
    limit_size_in_bytes: limit,
    limit_size: formatBytes(limit),
    estimated_size_in_bytes: estimated,
    estimated_size: formatBytes(estimated),
    overhead,
    tripped,
  };
}

/** A child breaker (ChildMemoryCircuitBreaker): its used bytes, its trips, its parent. */
export class ChildBreaker {
  used = 0;
  tripped = 0;

  constructor(readonly def: ChildDef, private readonly service: CircuitBreakerService) {}

  get name(): BreakerName {
    return this.def.name;
  }
  get durability(): Durability {
    return this.def.durability;
  }
  limit(): number {
    return this.service.memorySetting(this.def.limitKey, this.def.limitDefault);
  }
  overhead(): number {
    return this.service.doubleSetting(this.def.overheadKey, this.def.overheadDefault);
  }

  /**
   * Adds an estimate, tripping when used × overhead would pass the limit (0: every reservation
   * trips; -1: no limit), then asks the parent with the new bytes × overhead; a parent trip takes
   * the bytes back off.
   * @throws EsError 429 `circuit_breaking_exception`
   */
  addEstimateBytesAndMaybeBreak(bytes: number, label: string): void {
    const limit = this.limit();
    const overhead = this.overhead();
    if (limit === 0) this.circuitBreak(label, bytes, limit);
    const next = this.used + bytes;
    if (limit > 0) {
      const withOverhead = Math.trunc(next * overhead);
      if (withOverhead > limit) this.circuitBreak(label, withOverhead, limit);
    }
    this.used = next;
    try {
      this.service.checkParentLimit(Math.trunc(bytes * overhead), label);
    } catch (e) {
      this.used -= bytes;
      throw e;
    }
  }

  /** Adds (or, negative, releases) bytes without any check. */
  addWithoutBreaking(bytes: number): void {
    this.used += bytes;
  }

  private circuitBreak(label: string, wanted: number, limit: number): never {
    this.tripped++;
    throw circuitBreakingException(
      `[${this.name}] Data too large, data for [${label}] would be [${sized(wanted)}], which is larger than the limit of [${sized(limit)}]`,
      wanted, limit, this.durability,
    );
  }

  stats(): BreakerStats {
    return statsOf(this.limit(), this.used, this.overhead(), this.tripped);
  }
}

/**
 * Bytes one request holds on a breaker, released together (`close`). What the engine and the
 * search service reserve through.
 */
export class BreakerAccount {
  private held = 0;
  constructor(private readonly breaker: ChildBreaker) {}

  /** Reserves `bytes` (0 still asks the parent, as ES's periodic bucket check does). */
  reserve(bytes: number, label: string): void {
    const n = Math.max(0, Math.ceil(bytes));
    this.breaker.addEstimateBytesAndMaybeBreak(n, label);
    this.held += n;
  }
  /** Gives back what this account holds (at most what it holds). */
  release(bytes = this.held): void {
    const n = Math.min(this.held, Math.max(0, Math.ceil(bytes)));
    this.breaker.addWithoutBreaking(-n);
    this.held -= n;
  }
  close(): void {
    this.release();
  }
  get bytes(): number {
    return this.held;
  }
}

/**
 * What a search may spend where it materialises things: reservations on the request breaker and
 * `search.max_buckets`. The engine sees only this.
 */
export interface SearchBudget {
  /** Reserves estimated bytes on the request breaker; throws ES's 429 when that would trip. */
  reserve(bytes: number, label: string): void;
  /** `search.max_buckets`. */
  readonly maxBuckets: number;
}

/** No accounting, the default bucket limit (unit tests and callers without a node). */
export const UNLIMITED_BUDGET: SearchBudget = { reserve: () => undefined, maxBuckets: DEFAULT_MAX_BUCKETS };

/** A request-breaker account with the bucket limit: one search phase's budget, closed when it ends. */
export interface SearchScope extends SearchBudget {
  close(): void;
}

/** Reads a setting (cluster settings over node settings): `Settings.get(key, undefined)`. */
export type SettingLookup = (key: string) => unknown;

/** Minimum time between two forced full GCs when the real-memory parent is over its limit (ES G1OverLimitStrategy: 2 s between full GCs). */
const GC_INTERVAL_MS = 2_000;

/** The node's breakers (HierarchyCircuitBreakerService). */
export class CircuitBreakerService {
  private readonly children = new Map<BreakerName, ChildBreaker>();
  private parentTrips = 0;
  private lastGc = 0;
  private readonly heapMax: number;
  private readonly parsed = new Map<string, { raw: unknown; value: number }>();
  /** The last heap reading and when (a reading serves for 1 ms: every request asks the parent). */
  private reading = { at: -Infinity, used: 0 };

  constructor(private readonly lookup: SettingLookup, private readonly heap: HeapProbe = v8Heap, private readonly now: () => number = Date.now) {
    this.heapMax = heap.max();
    for (const d of CHILD_BREAKERS) this.children.set(d.name, new ChildBreaker(d, this));
  }

  breaker(name: BreakerName): ChildBreaker {
    return this.children.get(name)!;
  }

  /** A fresh account on a breaker (the request breaker by default). */
  account(name: BreakerName = 'request'): BreakerAccount {
    return new BreakerAccount(this.breaker(name));
  }

  /** One search phase's budget: a request-breaker account plus the current `search.max_buckets`. */
  searchScope(): SearchScope {
    const acct = this.account('request');
    return {
      reserve: (bytes, label) => acct.reserve(bytes, label),
      maxBuckets: this.intSetting(MAX_BUCKETS_SETTING, DEFAULT_MAX_BUCKETS),
      close: () => acct.close(),
    };
  }

  useRealMemory(): boolean {
    const v = this.lookup(USE_REAL_MEMORY);
    return v === undefined || v === null ? true : String(v) !== 'false';
  }

  parentLimit(): number {
    return this.memorySetting(TOTAL_LIMIT, this.useRealMemory() ? '95%' : '70%');
  }

  /** A memory-size setting in bytes (value cached per raw value). */
  memorySetting(key: string, fallback: string): number {
    const raw = this.lookup(key) ?? fallback;
    const hit = this.parsed.get(key);
    if (hit && hit.raw === raw) return hit.value;
    let value: number;
    try {
      value = parseMemorySize(raw, key, this.heapMax);
    } catch {
      value = parseMemorySize(fallback, key, this.heapMax); // values are checked when set; never fail a request here
    }
    this.parsed.set(key, { raw, value });
    return value;
  }

  doubleSetting(key: string, fallback: number): number {
    const v = this.lookup(key);
    const n = v === undefined || v === null ? fallback : Number(v);
    return Number.isFinite(n) && n >= 0 ? n : fallback;
  }

  intSetting(key: string, fallback: number): number {
    const v = this.lookup(key);
    const n = v === undefined || v === null ? fallback : Number(v);
    return Number.isSafeInteger(n) && n >= 0 ? n : fallback;
  }

  private childUsage(): { transient: number; permanent: number } {
    let transient = 0;
    let permanent = 0;
    for (const c of this.children.values()) {
      const u = Math.trunc(c.used * c.overhead());
      if (c.durability === 'TRANSIENT') transient += u;
      else permanent += u;
    }
    return { transient, permanent };
  }

  private realUsage(fresh: boolean): number {
    const t = this.now();
    if (fresh || t - this.reading.at >= 1) this.reading = { at: t, used: this.heap.used() };
    return this.reading.used;
  }

  /** ES's MemoryUsage: real heap + new bytes (real memory), or the children's sum. */
  private memoryUsed(newBytes: number, fresh = false): { base: number; total: number; transient: number; permanent: number } {
    const { transient, permanent } = this.childUsage();
    if (this.useRealMemory()) {
      const base = this.realUsage(fresh);
      return { base, total: base + newBytes, transient, permanent };
    }
    return { base: transient + permanent, total: transient + permanent, transient, permanent };
  }

  /**
   * Trips the parent when the memory in use would pass `indices.breaker.total.limit`. With real
   * memory, an over-limit reading is taken again after a full GC (at most every 2 s), as ES's
   * G1 over-limit strategy collects before it trips: V8's figure includes uncollected garbage.
   */
  checkParentLimit(newBytes: number, label: string): void {
    let used = this.memoryUsed(newBytes);
    const limit = this.parentLimit();
    if (used.total <= limit) return;
    if (this.useRealMemory()) {
      used = this.memoryUsed(newBytes, true); // over: never decide on an old reading
      if (used.total > limit && this.heap.collect && this.now() - this.lastGc >= GC_INTERVAL_MS) {
        this.lastGc = this.now();
        this.heap.collect();
        used = this.memoryUsed(newBytes, true);
      }
      if (used.total <= limit) return;
    }
    this.parentTrips++;
    const real = this.useRealMemory() ? `, real usage: [${sized(used.base)}], new bytes reserved: [${sized(newBytes)}]` : '';
    const usages = [...this.children.values()].map((c) => `${c.name}=${sized(Math.trunc(c.used * c.overhead()))}`).join(', ');
    throw circuitBreakingException(
      `[parent] Data too large, data for [${label}] would be [${sized(used.total)}], which is larger than the limit of [${sized(limit)}]${real}, usages [${usages}]`,
      used.total, limit, used.transient >= used.permanent ? 'TRANSIENT' : 'PERMANENT',
    );
  }

  /** `_nodes/stats` `breakers`: every child, then the parent (its estimate is the memory in use). */
  stats(): Record<string, BreakerStats> {
    const out: Record<string, BreakerStats> = {};
    for (const c of this.children.values()) out[c.name] = c.stats();
    out.parent = statsOf(this.parentLimit(), this.memoryUsed(0, true).total, 1, this.parentTrips);
    return out;
  }
}
