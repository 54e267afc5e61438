/**
 * A minimal NATS client for one job: receiving a JetStream push consumer's deliveries as fast as
 * the socket brings them, for the replay reader worker (factWorker.ts). It speaks the plain-text
 * protocol (INFO, CONNECT, SUB, PUB, PING/PONG, MSG/HMSG) over one TCP socket and hands each
 * message's payload to the caller as a view into the bytes read, without building a message
 * object, a headers object or a subject string per message: nats.js does all three, and they were
 * most of the reader's CPU.
 *
 * Plain `nats://` only: a server that asks for TLS, or any protocol error before the subscription is
 * in place, makes {@link openWire} reject, and the caller falls back to nats.js.
 */
import { connect as tcpConnect, type Socket } from 'node:net';
import { connectFields, type BusConnection } from '../../streams/busConnection';

/** What a subscription receives, positionally (no object per message). */
export interface WireHandler {
  /**
   * One message. `data` is a view valid only during the call; `status` is the status code of a
   * header-only status message (100 for flow control and idle heartbeats), else 0; `reply` is set
   * only for status messages (a flow-control request's reply subject).
   */
  message(data: Uint8Array, status: number, reply: string | undefined): void;
  /** The connection failed or was closed by the server. */
  error(e: Error): void;
}

/** A connection {@link openWire} made. */
export interface Wire {
  /** Subscribes; resolves once the server has processed it (a PING/PONG round trip). */
  subscribe(subject: string, handler: WireHandler): Promise<void>;
  /** Publishes an empty message (answers a flow-control request). */
  respondEmpty(reply: string): void;
  close(): void;
}

const SP = 0x20;
const HMSG = 0x48; // 'H'
const MSG = 0x4d; // 'M'
const PING = Buffer.from('PING\r\n');
const PONG = Buffer.from('PONG\r\n');
const CR = 0x0d;
/** Where the status code starts in a status message's header (`NATS/1.0 100 …`). */
const STATUS_AT = 'NATS/1.0 '.length;

/** Server URL → host, port and credentials (`nats://[user:pass@|token@]host:port`). */
export function wireTarget(url: string): { host: string; port: number; user?: string; pass?: string; token?: string } {
  const u = new URL(url.includes('://') ? url : `nats://${url}`);
  if (u.protocol !== 'nats:') throw new Error(`not a plain nats:// URL: ${u.protocol}`);
  const user = u.username ? decodeURIComponent(u.username) : undefined;
  const pass = u.password ? decodeURIComponent(u.password) : undefined;
  return { host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port || 4222), ...(user && pass ? { user, pass } : user ? { token: user } : {}) };
}

/** Reads the decimal number in buf[from, to). */
function int(buf: Buffer, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) n = n * 10 + buf[i] - 48;
  return n;
}

/**
 * Connects, exchanges INFO/CONNECT and waits for the first PONG, so a refused connection rejects here.
 */
export function openWire(url: string, opts: { name?: string; timeoutMs?: number; conn?: BusConnection } = {}): Promise<Wire> {
  return new Promise<Wire>((resolve, reject) => {
    const target = wireTarget(url); // a list of servers or a tls:// URL rejects here (nats.js then)
    const socket: Socket = tcpConnect({ host: target.host, port: target.port });
    socket.setNoDelay(true);
    const handlers = new Map<number, WireHandler>();
    const pongs: Array<() => void> = [];
    let nextSid = 1;
    let pending: Buffer | undefined;
    let ready = false;
    let failed: Error | undefined;
    const timer = setTimeout(() => fail(new Error('NATS handshake timed out')), opts.timeoutMs ?? 5_000);

    const fail = (e: Error) => {
      if (failed) return;
      failed = e;
      clearTimeout(timer);
      socket.destroy();
      if (!ready) reject(e);
      for (const h of handlers.values()) h.error(e);
    };
    const wire: Wire = {
      subscribe(subject, handler) {
        const sid = nextSid++;
        handlers.set(sid, handler);
        socket.write(`SUB ${subject} ${sid}\r\n`);
        return ping();
      },
      respondEmpty(reply) {
        socket.write(`PUB ${reply} 0\r\n\r\n`);
      },
      close() {
        ready = false;
        failed ??= new Error('closed');
        socket.destroy();
      },
    };
    const ping = () =>
      new Promise<void>((res, rej) => {
        if (failed) return rej(failed);
        pongs.push(res);
        socket.write(PING);
      });

    /** Parses every complete protocol line/message in `buf`; returns where the incomplete rest starts. */
    const parse = (buf: Buffer): number => {
      let pos = 0;
      while (pos < buf.length) {
        // A control line ends at its first CR (a byte search, not a string one): it holds no other.
        const eol = buf.indexOf(CR, pos);
        if (eol < 0 || eol + 1 >= buf.length) return pos;
        const op = buf[pos];
        if (op === HMSG || op === MSG) {
          // HMSG <subject> <sid> [reply] <hdr_len> <total_len>   |   MSG <subject> <sid> [reply] <len>
          const args: number[] = [];
          let a = pos + (op === HMSG ? 5 : 4);
          for (let i = a; i <= eol; i++) {
            if (i === eol || buf[i] === SP) {
              if (i > a) args.push(a, i);
              a = i + 1;
            }
          }
          const n = args.length / 2;
          const size = int(buf, args[args.length - 2], args[args.length - 1]);
          const start = eol + 2;
          if (start + size + 2 > buf.length) return pos; // the payload has not all arrived
          const hdr = op === HMSG ? int(buf, args[args.length - 4], args[args.length - 3]) : 0;
          const sid = int(buf, args[2], args[3]);
          const hasReply = n === (op === HMSG ? 5 : 4);
          const h = handlers.get(sid);
          if (h) {
            let status = 0;
            let reply: string | undefined;
            // `NATS/1.0 100 …` is a status line; a stored fact's headers start `NATS/1.0\r\n`.
            if (hdr > STATUS_AT + 3 && buf[start + STATUS_AT - 1] === SP) {
              status = int(buf, start + STATUS_AT, start + STATUS_AT + 3);
              if (hasReply) reply = buf.toString('latin1', args[4], args[5]);
            }
            h.message(buf.subarray(start + hdr, start + size), status, reply);
          }
          pos = start + size + 2;
          continue;
        }
        const line = buf.toString('latin1', pos, eol);
        pos = eol + 2;
        if (line === 'PING') socket.write(PONG);
        else if (line === 'PONG') {
          if (!ready) {
            ready = true;
            clearTimeout(timer);
            resolve(wire);
          } else pongs.shift()?.();
        } else if (line.startsWith('-ERR')) fail(new Error(`NATS ${line}`));
        else if (line.startsWith('INFO ') && !ready && !sentConnect) {
          const info = JSON.parse(line.slice(5)) as { tls_required?: boolean; headers?: boolean; nonce?: string };
          if (info.tls_required) fail(new Error('the server requires TLS'));
          else if (info.headers === false) fail(new Error('the server does not support headers'));
          else connectNow(info.nonce);
        }
        // +OK and later INFOs need nothing
      }
      return pos;
    };
    let sentConnect = false;
    const connectNow = (nonce: string | undefined) => {
      sentConnect = true;
      const c = {
        verbose: false,
        pedantic: false,
        headers: true,
        no_responders: true,
        protocol: 1,
        lang: 'es-replay-wire',
        version: '1',
        name: opts.name ?? 'es-replay-reader',
        ...(target.user ? { user: target.user, pass: target.pass } : {}),
        ...(target.token ? { auth_token: target.token } : {}),
        // Credentials of the connection (an nkey signs the server's nonce).
        ...(opts.conn ? connectFields(opts.conn, nonce) : {}),
      };
      socket.write(`CONNECT ${JSON.stringify(c)}\r\n`);
      socket.write(PING);
    };

    socket.on('data', (chunk: Buffer) => {
      const buf = pending ? Buffer.concat([pending, chunk]) : chunk;
      let rest: number;
      try {
        rest = parse(buf);
      } catch (e) {
        return fail(e as Error);
      }
      // Keep only the incomplete tail (copied: the socket reuses nothing, but a view would pin `buf`).
      pending = rest < buf.length ? Buffer.from(buf.subarray(rest)) : undefined;
    });
    socket.on('error', (e) => fail(e));
    socket.on('close', () => fail(new Error('connection closed')));
  });
}
