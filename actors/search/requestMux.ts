import { createInbox, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node';

/** Nobody subscribes to the subject (the server's 503 status reply). */
export class NoResponders extends Error {
  constructor(subject: string) {
    super(`no responders: '${subject}'`);
    this.name = 'NoResponders';
  }
}

/** No reply within the request's timeout. */
export class RequestTimeout extends Error {
  constructor(subject: string, ms: number) {
    super(`request to '${subject}' timed out after ${ms} ms`);
    this.name = 'RequestTimeout';
  }
}

interface Pending {
  subject: string;
  resolve: (msg: Msg) => void;
  reject: (e: Error) => void;
  deadline: number;
  ms: number;
}

/** How often pending requests are checked for their deadline. */
const SWEEP_MS = 250;

/**
 * Request/reply over one long-lived inbox subscription with our own correlation (`<inbox>.<n>`),
 * for the shard ops on the page path.
 *
 * Why not `nc.request`: nats.js 3.x builds two or three Error objects with a captured stack per
 * request (`RequestError` as an async trace, a `TimeoutError` for the timer, and a
 * `RequestError("cancelled")` when a *successful* request cleans up), plus a timer and a
 * `Promise.race`. Here a request is a map entry; one sweep timer, armed only while requests are
 * pending, enforces timeouts; Error objects are made only for the requests that fail.
 */
export class RequestMux {
  private sub?: Subscription;
  private prefix = '';
  private seq = 0;
  private readonly pending = new Map<number, Pending>();
  private sweeper?: NodeJS.Timeout;

  constructor(private readonly nc: NatsConnection) {}

  /** Publishes `payload` to `subject` and resolves with the reply (its headers may say it comes in parts). */
  request(subject: string, payload: Uint8Array, timeoutMs: number, headers?: MsgHdrs): Promise<Msg> {
    if (this.nc.isClosed()) return Promise.reject(new Error('connection closed'));
    this.ensureSub();
    const id = ++this.seq;
    return new Promise<Msg>((resolve, reject) => {
      this.pending.set(id, { subject, resolve, reject, deadline: Date.now() + timeoutMs, ms: timeoutMs });
      try {
        this.nc.publish(subject, payload, headers ? { reply: this.prefix + id, headers } : { reply: this.prefix + id });
      } catch (e) {
        this.pending.delete(id);
        reject(e as Error);
        return;
      }
      this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
    });
  }

  /** Requests waiting for a reply. */
  get inFlight(): number {
    return this.pending.size;
  }

  private ensureSub(): void {
    if (this.sub && !this.sub.isClosed()) return;
    this.prefix = `${createInbox()}.`;
    const prefixLen = this.prefix.length;
    const sub = this.nc.subscribe(`${this.prefix}*`, { callback: (err, msg) => (err ? undefined : this.settle(msg, prefixLen)) });
    this.sub = sub;
    void sub.closed.then(() => {
      // Connection closed or drained: nothing will answer what is still pending.
      if (this.sub === sub) this.sub = undefined;
      this.failAll(new Error('connection closed'));
    });
  }

  private settle(msg: Msg, prefixLen: number): void {
    const id = Number(msg.subject.slice(prefixLen));
    const p = this.pending.get(id);
    if (!p) return; // late reply of a request that timed out
    this.pending.delete(id);
    if (msg.data.length === 0 && msg.headers?.code === 503) p.reject(new NoResponders(p.subject));
    else p.resolve(msg);
    this.idle();
  }

  private sweep(): void {
    const now = Date.now();
    for (const [id, p] of this.pending) {
      if (p.deadline > now) continue;
      this.pending.delete(id);
      p.reject(new RequestTimeout(p.subject, p.ms));
    }
    this.idle();
  }

  private idle(): void {
    if (this.pending.size || !this.sweeper) return;
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private failAll(e: Error): void {
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
    this.idle();
  }
}
