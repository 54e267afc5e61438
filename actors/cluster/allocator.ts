import { Kvm, type KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ClusterState, IndexState } from './clusterState';
import type { Membership } from './membership';
import { decideAllocation, type AllocationInput } from './allocation';
import { Lease } from './lease';
import { parseTimeValue } from '../wire/timeValue';

/** Leases (the allocator's, and later ones) live here; entries age out when not renewed. */
export const LEASES_BUCKET = 'ES_LEASES';
export const LEASE_TTL_MS = 4_000;

/** `index.unassigned.node_left.delayed_timeout` of an index, in ms (ES default 1m). */
export function nodeLeftDelayMs(idx: IndexState): number {
  const raw = idx.settings.raw['index.unassigned.node_left.delayed_timeout'];
  if (raw === undefined) return 60_000;
  try {
    return parseTimeValue(raw, 'index.unassigned.node_left.delayed_timeout');
  } catch {
    return 60_000; // refused when the index was created; an older index's odd value: the default
  }
}

export async function leasesBucket(nc: NatsConnection, replicas = 1): Promise<KV> {
  return new Kvm(nc).create(LEASES_BUCKET, { history: 1, ttl: LEASE_TTL_MS, replicas });
}

/**
 * The elected allocator: the node holding the `allocator` lease watches membership and metadata
 * and records allocation decisions (allocation.ts) as facts on the metadata log. Every decision is
 * appended stating the metadata sequence it was made on, so a second allocator (the lease is only
 * an optimisation) can never record a decision made on stale state.
 */
export class Allocator {
  private readonly lease: Lease;
  private timer?: NodeJS.Timeout;
  private dueTimer?: NodeJS.Timeout;
  private warmTimer?: NodeJS.Timeout;
  private running = false;
  private again = false;
  private stopped = false;

  constructor(
    kv: KV,
    private readonly cluster: ClusterState,
    private readonly membership: Membership,
    private readonly log: Logger,
    private readonly renewMs = 1_000,
  ) {
    this.lease = new Lease(kv, 'allocator', membership.id);
  }

  get leader(): boolean {
    return this.lease.held;
  }

  start(): void {
    this.cluster.onChange(() => this.kick());
    this.membership.onChange(() => this.kick());
    const tick = async () => {
      const was = this.lease.held;
      const now = await this.lease.acquireOrRenew();
      if (now && !was) this.log.info('this node is the shard allocator');
      if (!now && was) this.log.warn('lost the shard allocator lease');
      if (now) this.kick();
    };
    void tick();
    this.timer = setInterval(() => void tick(), this.renewMs);
    this.timer.unref();
    // Once this node has listened long enough to know who is alive, decide again without the doubt.
    this.warmTimer = setTimeout(() => this.kick(), this.membership.timeoutMs + 50);
    this.warmTimer.unref();
  }

  /** Something changed: run the allocation (coalesced). */
  kick(): void {
    if (this.stopped || !this.lease.held) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.run()
      .catch((e) => this.log.warn({ err: (e as Error).message }, 'shard allocation failed; retrying'))
      .finally(() => {
        this.running = false;
        if (this.again) {
          this.again = false;
          setTimeout(() => this.kick(), 10).unref();
        }
      });
  }

  private input(): AllocationInput {
    // Until this node has listened for one timeout, a node the allocation names but that has not
    // been heard from yet gets the benefit of the doubt (it is not taken for dead).
    const live = new Set(this.membership.liveIds());
    if (!this.membership.warm) {
      for (const idx of this.cluster.indices()) for (const a of idx.allocation ?? []) for (const id of [a.primary, ...a.replicas]) if (id) live.add(id);
    }
    return {
      indices: this.cluster.indices().map((idx) => ({
        uuid: idx.uuid,
        shards: idx.settings.numberOfShards,
        replicas: idx.settings.numberOfReplicas,
        delayMs: nodeLeftDelayMs(idx),
        allocation: idx.allocation,
      })),
      live: [...live],
      started: (node, uuid, n) => this.cluster.copyStarted(node, uuid, n),
      leftAt: this.membership.leftAt,
      now: Date.now(),
      trimmed: (uuid, n) => this.cluster.shardTrimmed(uuid, n),
    };
  }

  private async run(): Promise<void> {
    // One index per fact; each attempt decides again on the state it is appended after.
    await this.cluster.refreshTrims().catch(() => undefined);
    for (let i = 0; i < 1000 && !this.stopped && this.lease.held; i++) {
      let nextCheckAt: number | undefined;
      const seq = await this.cluster.writeMeta(() => {
        const d = decideAllocation(this.input());
        nextCheckAt = d.nextCheckAt;
        const first = d.changes.entries().next();
        if (first.done) return undefined;
        const [uuid, shards] = first.value;
        return { kind: 'allocation', uuid, shards };
      });
      if (seq === undefined) {
        this.scheduleDue(nextCheckAt);
        return;
      }
    }
  }

  /** A delayed replica becomes due later: look again then. */
  private scheduleDue(at: number | undefined): void {
    clearTimeout(this.dueTimer);
    if (at === undefined) return;
    this.dueTimer = setTimeout(() => this.kick(), Math.max(10, at - Date.now()));
    this.dueTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.dueTimer);
    clearTimeout(this.warmTimer);
    await this.lease.release();
  }
}
