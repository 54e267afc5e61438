/**
 * The segment cache: a bounded set of off-heap buffers (ArrayBuffers, allocated by V8 outside the
 * heap and aligned for Float64Array views) that segment readers load sections and postings into,
 * keyed by (segment, section[, term]). Replacement is CLOCK (second chance), a cheap LRU: a hit
 * only sets a flag, the hand gives flagged entries another round. An evicted buffer is only no
 * longer retained: whoever holds a view of it keeps a valid view.
 *
 * A load bigger than the whole cache is served and not retained.
 */

/** One cached value (a typed-array view or a small object over one buffer). */
export interface CacheEntry<T = unknown> {
  readonly segment: string;
  readonly key: string;
  /** null once evicted. */
  value: T | null;
  readonly bytes: number;
  /** Still retained by the cache. */
  live: boolean;
  /** Used since the clock hand last passed. */
  ref: boolean;
  /** Called once when the cache lets the entry go (readers drop their memos of it). */
  onEvict?: () => void;
}

/** What a load returns: the value and the bytes it holds. */
export interface Loaded<T> {
  value: T;
  bytes: number;
}

export interface SegmentCacheStats {
  maxBytes: number;
  /** Bytes retained (payloads plus a fixed overhead per entry). */
  bytes: number;
  entries: number;
  hits: number;
  misses: number;
  evictions: number;
  /** Loads served without being retained (bigger than the whole cache). */
  unretained: number;
}

/** Bookkeeping bytes counted per entry, so many tiny entries cannot grow the heap unbounded. */
export const ENTRY_OVERHEAD = 128;

export class SegmentCache {
  readonly maxBytes: number;
  private readonly map = new Map<string, CacheEntry>();
  private bytes = 0;
  private hits = 0;
  private misses = 0;
  private evictions = 0;
  private unretained = 0;

  constructor(opts: { maxBytes: number }) {
    if (!(opts.maxBytes >= 0)) throw new RangeError(`maxBytes must be >= 0, got ${opts.maxBytes}`);
    this.maxBytes = opts.maxBytes;
  }

  /**
   * The entry of (segment, key), loading it on a miss. The returned entry may already be
   * non-live (too big to retain); its `value` is valid either way at return.
   */
  get<T>(segment: string, key: string, load: () => Loaded<T>): CacheEntry<T> & { value: T } {
    const k = segment + '\u0000' + key;
    const hit = this.map.get(k);
    if (hit) {
      hit.ref = true;
      this.hits++;
      return hit as CacheEntry<T> & { value: T };
    }
    this.misses++;
    const { value, bytes } = load();
    const e: CacheEntry<T> & { value: T } = { segment, key, value, bytes: bytes + ENTRY_OVERHEAD, live: true, ref: false };
    if (e.bytes > this.maxBytes) {
      e.live = false;
      this.unretained++;
      return e;
    }
    this.makeRoom(e.bytes);
    this.map.set(k, e);
    this.bytes += e.bytes;
    return e;
  }

  /** The live entry of (segment, key), if cached (counts no hit or miss). */
  peek<T>(segment: string, key: string): CacheEntry<T> | undefined {
    return this.map.get(segment + '\u0000' + key) as CacheEntry<T> | undefined;
  }

  /** Drops every entry of a segment (its file was deleted); returns how many. */
  evictSegment(segment: string): number {
    let n = 0;
    for (const [k, e] of this.map) {
      if (e.segment !== segment) continue;
      this.drop(k, e);
      n++;
    }
    return n;
  }

  /** Drops everything. */
  clear(): void {
    for (const [k, e] of this.map) this.drop(k, e);
  }

  stats(): SegmentCacheStats {
    return {
      maxBytes: this.maxBytes, bytes: this.bytes, entries: this.map.size, hits: this.hits, misses: this.misses,
      evictions: this.evictions, unretained: this.unretained,
    };
  }

  private makeRoom(need: number): void {
    // CLOCK over insertion order: a referenced entry goes to the back with its flag cleared.
    let spins = this.map.size * 2 + 1;
    while (this.bytes + need > this.maxBytes && this.map.size > 0 && spins-- > 0) {
      const [k, e] = this.map.entries().next().value as [string, CacheEntry];
      this.map.delete(k);
      if (e.ref) {
        e.ref = false;
        this.map.set(k, e);
        continue;
      }
      this.release(e);
      this.evictions++;
    }
  }

  private drop(k: string, e: CacheEntry): void {
    this.map.delete(k);
    this.release(e);
  }

  private release(e: CacheEntry): void {
    this.bytes -= e.bytes;
    e.live = false;
    e.value = null;
    const f = e.onEvict;
    e.onEvict = undefined;
    f?.();
  }
}
