import type { NatsConnection } from '@nats-io/transport-node';

/**
 * NATS is not reachable now (the connection is down or closed): nothing was sent, or what was in
 * flight when the connection dropped has an unknown fate (`uncertain`). The edge answers ES's 503.
 */
export class NatsUnavailable extends Error {
  constructor(readonly what: string, readonly uncertain = false) {
    super(
      uncertain
        ? `${what}: the connection to NATS dropped before the answer came; it may or may not have been applied`
        : `${what}: the node is not connected to NATS`,
    );
    this.name = 'NatsUnavailable';
  }
}

/** How long a request waits for a dropped connection to come back (a failover to another server) before it fails. */
export const RECONNECT_WAIT_MS = 1_500;

/**
 * Whether a NATS connection is up, as its status events tell (one watcher per connection): callers
 * fail fast while it is down instead of letting the client queue their messages until a reconnect,
 * and requests in flight when it drops learn so at once.
 */
export class Connectivity {
  private static readonly of_ = new WeakMap<NatsConnection, Connectivity>();
  private upNow = true;
  /** When the connection last dropped. */
  private downSince = 0;
  private readonly drops = new Set<() => void>();
  private readonly ups = new Set<() => void>();

  static of(nc: NatsConnection): Connectivity {
    let c = Connectivity.of_.get(nc);
    if (!c) Connectivity.of_.set(nc, (c = new Connectivity(nc)));
    return c;
  }

  private constructor(private readonly nc: NatsConnection) {
    if (typeof nc.status === 'function') void this.watch();
  }

  private async watch(): Promise<void> {
    try {
      for await (const s of this.nc.status()) {
        if (s.type === 'disconnect') {
          this.upNow = false;
          this.downSince = Date.now();
          for (const f of [...this.drops]) f();
        } else if (s.type === 'reconnect') {
          this.upNow = true;
          for (const f of [...this.ups]) f();
        }
      }
    } catch {
      // closed
    }
    this.upNow = false;
    for (const f of [...this.drops]) f();
  }

  private get closed(): boolean {
    return typeof this.nc.isClosed === 'function' && this.nc.isClosed();
  }

  get up(): boolean {
    return this.upNow && !this.closed;
  }

  /**
   * Resolves true once the connection is up (at once when it is), false when it has been down for
   * `grace` ms (counted from the drop: a node cut off for longer answers at once).
   */
  waitUp(grace = RECONNECT_WAIT_MS): Promise<boolean> {
    if (this.up) return Promise.resolve(true);
    const ms = Math.min(grace, this.downSince + grace - Date.now());
    if (this.closed || ms <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (v: boolean) => {
        clearTimeout(timer);
        this.ups.delete(onUp);
        resolve(v);
      };
      const onUp = () => done(true);
      const timer = setTimeout(() => done(false), ms);
      this.ups.add(onUp);
    });
  }

  /**
   * Runs `send` (a request or an append) unless the connection is down (waiting `waitMs` for it to
   * come back first); rejects with {@link NatsUnavailable} when it stays down, or, uncertain, when
   * it drops while `send` is in flight.
   */
  run<T>(what: string, send: () => Promise<T>, waitMs = RECONNECT_WAIT_MS): Promise<T> {
    // up: sent in this very tick (callers rely on call order reaching the wire in order)
    if (this.up) return this.guarded(what, send);
    return this.waitUp(waitMs).then((ok) => {
      if (!ok) throw new NatsUnavailable(what);
      return this.guarded(what, send);
    });
  }

  private async guarded<T>(what: string, send: () => Promise<T>): Promise<T> {
    let onDrop!: () => void;
    const dropped = new Promise<never>((_, reject) => (onDrop = () => reject(new NatsUnavailable(what, true))));
    dropped.catch(() => undefined);
    this.drops.add(onDrop);
    try {
      return await Promise.race([send(), dropped]);
    } finally {
      this.drops.delete(onDrop);
    }
  }
}
