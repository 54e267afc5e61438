import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { subjects } from '../../streams';

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
  /** Of each copy: the document log sequence its newest commit holds (the log behind it may be trimmed). */
  durable?: Record<string, number>;
  /** Free-form figures other nodes show (open contexts, …). */
  stats?: Record<string, number>;
  /** Holds the shard allocator lease (what `_nodes` calls the elected master). */
  master?: boolean;
  /** Static facts for the others' `GET /_nodes` (os, process, jvm). */
  info?: unknown;
}

export interface MembershipOptions {
  /** How often a node publishes its record (default 1 s). */
  heartbeatMs?: number;
  /** A node not heard from for this long has left (default 5 s). */
  nodeTimeoutMs?: number;
}

interface Seen {
  rec: NodeRecord;
  at: number;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/**
 * Cluster membership over core NATS: each node publishes its record on
 * `es.v1.members.<id>.heartbeat` every heartbeat and listens to everyone's. A node is live while its
 * heartbeats keep arriving (judged by this node's own clock at receipt, so clock skew between
 * machines does not matter); one not heard from for `nodeTimeoutMs` has left, and one that stops
 * cleanly says so (`…left`) and leaves at once.
 *
 * Core NATS, not a JetStream bucket: heartbeats must keep flowing while JetStream elects a stream
 * leader (seconds), or every node would take every other for dead at the same moment.
 *
 * A node that just started has heard from nobody yet: until one timeout has passed it is `warm`
 * false, and the allocator gives the nodes it has not heard from the benefit of the doubt.
 */
export class Membership {
  private readonly seen = new Map<string, Seen>();
  /** Nodes that left, with when they were last heard from. */
  readonly leftAt = new Map<string, number>();
  /** Nodes whose last word was `…left` (a clean stop), not silence. */
  readonly leftCleanly = new Set<string>();
  private readonly listeners: Array<() => void> = [];
  private readonly leftListeners: Array<(id: string) => void> = [];
  private timer?: NodeJS.Timeout;
  private sub?: Subscription;
  private stopped = false;
  private startedAt = 0;
  readonly heartbeatMs: number;
  readonly timeoutMs: number;

  constructor(
    private readonly nc: NatsConnection,
    private readonly self: () => NodeRecord,
    private readonly log: Logger,
    opts: MembershipOptions = {},
  ) {
    this.heartbeatMs = opts.heartbeatMs ?? 1_000;
    this.timeoutMs = opts.nodeTimeoutMs ?? 5_000;
  }

  get id(): string {
    return this.self().id;
  }

  /** Whether this node has listened long enough to know who is alive. */
  get warm(): boolean {
    return Date.now() - this.startedAt >= this.timeoutMs;
  }

  async start(): Promise<void> {
    this.startedAt = Date.now();
    this.sub = this.nc.subscribe(subjects.member('*', 'heartbeat').replace('.heartbeat', '.*'), {
      callback: (err, msg) => {
        if (err) return;
        const [, , , id, what] = msg.subject.split('.');
        if (id === this.id || (what !== 'heartbeat' && what !== 'left')) return;
        if (what === 'left') {
          if (this.seen.delete(id)) {
            this.leftAt.set(id, Date.now());
            this.leftCleanly.add(id);
            this.log.info({ node: id }, 'node left');
            this.emit(id);
          }
          return;
        }
        try {
          const rec = JSON.parse(dec.decode(msg.data)) as NodeRecord;
          const joined = !this.seen.has(id);
          const before = joined ? '' : JSON.stringify(this.seen.get(id)!.rec.copies);
          this.seen.set(id, { rec, at: Date.now() });
          this.leftAt.delete(id);
          this.leftCleanly.delete(id);
          if (joined) this.log.info({ node: rec.id, name: rec.name }, 'node joined');
          if (joined || before !== JSON.stringify(rec.copies)) this.emit();
        } catch {
          /* not a record */
        }
      },
    });
    await this.nc.flush();
    this.beat();
    this.timer = setInterval(() => this.tick(), this.heartbeatMs);
    this.timer.unref();
  }

  private tick(): void {
    this.beat();
    const now = Date.now();
    for (const [id, s] of this.seen) {
      if (now - s.at > this.timeoutMs) {
        this.seen.delete(id);
        this.leftAt.set(id, s.at);
        this.log.warn({ node: id, name: s.rec.name, silentMs: now - s.at }, 'node stopped heartbeating: left the cluster');
        this.emit(id);
      }
    }
  }

  private beat(): void {
    if (this.stopped || this.nc.isClosed()) return;
    try {
      this.nc.publish(subjects.member(this.id, 'heartbeat'), enc.encode(JSON.stringify(this.self())));
    } catch (e) {
      this.log.debug({ err: (e as Error).message }, 'heartbeat not sent');
    }
  }

  /** Publishes this node's record now (its copies changed). */
  publishNow(): void {
    this.beat();
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
  /** A node left (stopped cleanly, or stopped heartbeating). */
  onLeft(fn: (id: string) => void): void {
    this.leftListeners.push(fn);
  }
  private emit(left?: string): void {
    for (const fn of this.listeners) fn();
    if (left) for (const fn of this.leftListeners) fn(left);
  }

  /** Leaves: tells the others at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    try {
      if (!this.nc.isClosed()) {
        this.nc.publish(subjects.member(this.id, 'left'));
        await this.nc.flush();
      }
    } catch {
      /* closing anyway */
    }
    this.sub?.unsubscribe();
  }
}
