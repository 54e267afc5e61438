import type { NatsConnection } from '@nats-io/transport-node';
import { Kvm, type KV } from '@nats-io/kv';
import type { Logger } from 'pino';

/** Nodes announce themselves here (one key per node id). */
export const NODES_BUCKET = 'ES_NODES';

/** What a node tells the others about itself, every heartbeat and whenever its copies change. */
export interface NodeRecord {
  id: string;
  name: string;
  host: string;
  /** URL of its HTTP edge. */
  http: string;
  version: string;
  roles: string[];
  startedAt: number;
  /** State of each shard copy it holds, by `<indexUuid>/<n>`. */
  copies: Record<string, 'started' | 'recovering' | 'failed'>;
  /** Free-form figures other nodes show (open contexts, …). */
  stats?: Record<string, number>;
  /** Holds the shard allocator lease (what `_nodes` calls the elected master). */
  master?: boolean;
  /** Static facts for the others' `GET /_nodes` (os, process, jvm). */
  info?: unknown;
}

export interface MembershipOptions {
  /** How often a node puts its record (default 1 s). */
  heartbeatMs?: number;
  /** A node not heard from for this long has left (default 5 s). */
  nodeTimeoutMs?: number;
  /** Stream replicas of the bucket. */
  replicas?: number;
}

interface Seen {
  rec: NodeRecord;
  at: number;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/**
 * Cluster membership over a JetStream KV bucket: each node puts its record every heartbeat and
 * watches everyone's. A node is live while its heartbeats keep arriving (judged by this node's own
 * clock at receipt, so clock skew between machines does not matter); one not heard from for
 * `nodeTimeoutMs` has left, and one that stops cleanly deletes its key and leaves at once. Records
 * found at start-up get the benefit of the doubt for one timeout, so a starting node never takes a
 * running one for dead.
 */
export class Membership {
  private kv?: KV;
  private readonly seen = new Map<string, Seen>();
  /** Nodes that left, with when they were last heard from. */
  readonly leftAt = new Map<string, number>();
  private readonly listeners: Array<() => void> = [];
  private timer?: NodeJS.Timeout;
  private watch?: { stop(): void };
  private stopped = false;
  private readonly heartbeatMs: number;
  private readonly timeoutMs: number;

  constructor(
    private readonly nc: NatsConnection,
    private readonly self: () => NodeRecord,
    private readonly log: Logger,
    private readonly opts: MembershipOptions = {},
  ) {
    this.heartbeatMs = opts.heartbeatMs ?? 1_000;
    this.timeoutMs = opts.nodeTimeoutMs ?? 5_000;
  }

  get id(): string {
    return this.self().id;
  }

  async start(): Promise<void> {
    this.kv = await new Kvm(this.nc).create(NODES_BUCKET, { history: 1, ttl: Math.max(10_000, this.timeoutMs * 3), replicas: this.opts.replicas ?? 1 });
    await this.beat();
    const w = await this.kv.watch();
    this.watch = w;
    void (async () => {
      for await (const e of w) {
        if (e.key === this.id) continue;
        if (e.operation === 'PUT') {
          try {
            const rec = JSON.parse(dec.decode(e.value)) as NodeRecord;
            const joined = !this.seen.has(e.key);
            this.seen.set(e.key, { rec, at: Date.now() });
            this.leftAt.delete(e.key);
            if (joined) this.log.info({ node: rec.id, name: rec.name }, 'node joined');
            this.emit();
          } catch {
            /* not a record */
          }
        } else if (this.seen.delete(e.key)) {
          this.leftAt.set(e.key, Date.now());
          this.log.info({ node: e.key }, 'node left');
          this.emit();
        }
      }
    })().catch((e) => this.stopped || this.log.warn({ err: e }, 'membership watch ended'));
    this.timer = setInterval(() => void this.tick(), this.heartbeatMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    await this.beat();
    const now = Date.now();
    for (const [id, s] of this.seen) {
      if (now - s.at > this.timeoutMs) {
        this.seen.delete(id);
        this.leftAt.set(id, s.at);
        this.log.warn({ node: id, name: s.rec.name, silentMs: now - s.at }, 'node stopped heartbeating: left the cluster');
        this.emit();
      }
    }
  }

  private async beat(): Promise<void> {
    if (this.stopped || !this.kv) return;
    try {
      await this.kv.put(this.id, enc.encode(JSON.stringify(this.self())));
    } catch (e) {
      this.log.debug({ err: (e as Error).message }, 'heartbeat not stored');
    }
  }

  /** Puts this node's record now (its copies changed). */
  publishNow(): void {
    void this.beat();
  }

  /** Live nodes, this one included, by id. */
  live(): NodeRecord[] {
    return [this.self(), ...[...this.seen.values()].map((s) => s.rec)].sort((a, b) => (a.id < b.id ? -1 : 1));
  }
  liveIds(): string[] {
    return this.live().map((r) => r.id);
  }
  record(id: string): NodeRecord | undefined {
    return id === this.id ? this.self() : this.seen.get(id)?.rec;
  }

  onChange(fn: () => void): void {
    this.listeners.push(fn);
  }
  private emit(): void {
    for (const fn of this.listeners) fn();
  }

  /** Leaves: deletes this node's key, so the others see it go at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.watch?.stop();
    await this.kv?.delete(this.id).catch(() => undefined);
  }
}
