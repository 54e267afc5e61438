import type { KV } from '@nats-io/kv';

const enc = new TextEncoder();
const dec = new TextDecoder();

/**
 * A lease on one key of a KV bucket whose entries age out (`ttl`): the holder renews it with a
 * compare-and-set on the revision it last wrote; when the holder stops renewing, the key ages out
 * and `create` succeeds for the next contender. At most one holder at a time, decided by
 * JetStream's expected-sequence checks, not by anything of ours.
 *
 * A holder that cannot renew (partitioned, paused) must assume it lost the lease: whatever it
 * decides is still fenced by the expected sequence of the log it appends to.
 */
export class Lease {
  private revision?: number;

  constructor(private readonly kv: KV, readonly key: string, private readonly holder: string) {}

  get held(): boolean {
    return this.revision !== undefined;
  }

  /** Takes the lease if it is free (or already ours), or renews it; returns whether we hold it. */
  async acquireOrRenew(): Promise<boolean> {
    try {
      if (this.revision !== undefined) {
        this.revision = await this.kv.update(this.key, enc.encode(this.holder), this.revision);
        return true;
      }
      try {
        this.revision = await this.kv.create(this.key, enc.encode(this.holder));
        return true;
      } catch {
        // Taken: ours from before a restart (same holder id) can be resumed.
        const e = await this.kv.get(this.key);
        if (e && e.operation === 'PUT' && dec.decode(e.value) === this.holder) {
          this.revision = await this.kv.update(this.key, enc.encode(this.holder), e.revision);
          return true;
        }
        return false;
      }
    } catch {
      this.revision = undefined;
      return false;
    }
  }

  /** Who holds it now, if anyone. */
  async holderNow(): Promise<string | undefined> {
    const e = await this.kv.get(this.key).catch(() => null);
    return e && e.operation === 'PUT' ? dec.decode(e.value) : undefined;
  }

  /** Gives the lease up (clean shutdown), so another node takes it without waiting for the ttl. */
  async release(): Promise<void> {
    if (this.revision === undefined) return;
    const rev = this.revision;
    this.revision = undefined;
    await this.kv.delete(this.key, { previousSeq: rev }).catch(() => undefined);
  }
}
