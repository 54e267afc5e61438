import { CacheDigest, sameDigest } from './hashing';

interface Entry<T> {
  digest: string;
  value: T;
  /** Epoch ms after which the entry is stale (e.g. a JWT's exp). */
  until: number;
}

/**
 * Verified credentials, keyed by credential id (API key id, username, service token name, token hash)
 * plus a per-node salted SHA-256 of the secret: a warm request costs one SHA-256 (~1.5 µs), and the
 * slow hash runs once per credential per node. Bounded; the oldest entries go first. Invalidations
 * (local or from `es.v1.auth.invalidate`) delete entries at once.
 */
export class CredentialCache<T> {
  private readonly map = new Map<string, Entry<T>>();
  constructor(
    private readonly digester: CacheDigest,
    private readonly max = 100_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The cached value when `secret` matches what was verified for `id`. */
  get(id: string, secret: string): T | undefined {
    const e = this.map.get(id);
    if (!e) return undefined;
    if (e.until <= this.now()) {
      this.map.delete(id);
      return undefined;
    }
    return sameDigest(e.digest, this.digester.digest(secret)) ? e.value : undefined;
  }

  set(id: string, secret: string, value: T, until = Number.POSITIVE_INFINITY): void {
    if (this.map.size >= this.max && !this.map.has(id)) {
      const oldest = this.map.keys().next();
      if (!oldest.done) this.map.delete(oldest.value);
    }
    this.map.set(id, { digest: this.digester.digest(secret), value, until });
  }

  delete(id: string): void {
    this.map.delete(id);
  }

  /** Drops entries whose value matches (e.g. every cached JWT of one user). */
  deleteWhere(pred: (value: T, id: string) => boolean): void {
    for (const [id, e] of this.map) if (pred(e.value, id)) this.map.delete(id);
  }

  clear(): void {
    this.map.clear();
  }

  get size(): number {
    return this.map.size;
  }
}
