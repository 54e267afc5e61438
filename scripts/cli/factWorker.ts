/**
 * Worker thread of {@link readFactBatchesInWorker}: receives ES_EVT payloads and hands them to the
 * main thread in transferred chunks, so parsing and folding run in parallel with receiving.
 *
 * Receiving goes through the raw protocol reader (natsWire.ts: no message object per fact), or
 * nats.js when the server needs what that reader does not speak (TLS). A chunk is the facts as
 * one JSON array text (`[f1,f2,…]`, the payloads as stored, comma-separated), so the main thread
 * parses a chunk with one `JSON.parse` instead of one per fact; `starts` locates each payload in it
 * (to name a bad one).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { connectBus, type BusConnection } from '../../streams/busConnection';
import { openFactPush, type FactPush, type FactTransport } from '../../streams/factPush';
import { openWire, type Wire } from './natsWire';

/** Messages from the worker. */
export type FactWorkerMessage =
  | { kind: 'total'; total: number }
  | { kind: 'chunk'; buf: ArrayBuffer; len: number; count: number; starts: ArrayBuffer }
  | { kind: 'end' }
  | { kind: 'error'; message: string };

/** What the worker is started with. */
export interface FactWorkerData {
  /** Servers, credentials and TLS (plain data: it crosses the worker boundary). */
  conn: BusConnection;
  filterSubject?: string;
  /** Receive with nats.js even where the raw reader would do (tests compare both). */
  natsJs?: boolean;
}

const CHUNK = 1 << 20;
/** Chunks handed over but not yet acknowledged by the main thread before we hold the server. */
const MAX_UNACKED = 8;
const OPEN = 0x5b; // [
const COMMA = 0x2c;
const CLOSE = 0x5d; // ]

/** JetStream deliveries over the raw reader. */
function wireTransport(wire: Wire): FactTransport {
  return {
    async listen(inbox, on) {
      await wire.subscribe(inbox, {
        message(data, status, reply) {
          if (status === 100) on.control(reply);
          else if (status) on.error(new Error(`unexpected status ${status} on the fact delivery`));
          else on.fact(data);
        },
        error: (e) => on.error(e),
      });
      return { respond: (r) => wire.respondEmpty(r), close: () => wire.close() };
    },
  };
}

async function run(port: NonNullable<typeof parentPort>, data: FactWorkerData): Promise<void> {
  const nc = await connectBus(data.conn, { name: 'es-replay-reader' });
  // The raw reader speaks to one plain server; several servers, or TLS, go through nats.js.
  const wire = data.natsJs || data.conn.servers.length !== 1 || data.conn.tls ? undefined : await openWire(data.conn.servers[0], { conn: data.conn }).catch(() => undefined);
  let buf = new Uint8Array(CHUNK);
  let off = 1;
  let count = 0;
  let starts: number[] = [];
  let unacked = 0;
  buf[0] = OPEN;
  const flush = () => {
    if (!count) return;
    buf[off++] = CLOSE;
    const msg: FactWorkerMessage = { kind: 'chunk', buf: buf.buffer, len: off, count, starts: new Uint32Array(starts).buffer };
    port.postMessage(msg, [buf.buffer, msg.starts]);
    unacked++;
    if (unacked >= MAX_UNACKED) push?.hold(true);
    buf = new Uint8Array(CHUNK);
    buf[0] = OPEN;
    off = 1;
    count = 0;
    starts = [];
  };
  let push: FactPush | undefined;
  push = await openFactPush(
    nc,
    (d) => {
      if (off + d.length + 2 > buf.length) {
        flush();
        if (d.length + 3 > buf.length) {
          buf = new Uint8Array(d.length + 3);
          buf[0] = OPEN;
        }
      }
      if (count) buf[off++] = COMMA;
      starts.push(off);
      buf.set(d, off);
      off += d.length;
      count++;
    },
    data.filterSubject,
    undefined,
    wire && wireTransport(wire),
  );
  const p = push;
  port.on('message', () => {
    unacked--;
    if (unacked < MAX_UNACKED / 2) p.hold(false);
  });
  port.postMessage({ kind: 'total', total: p.total } satisfies FactWorkerMessage);
  // Hand over what arrived every few ms, so the main thread starts folding early.
  const tick = setInterval(flush, 5);
  try {
    await p.finished;
    flush();
    port.postMessage({ kind: 'end' } satisfies FactWorkerMessage);
  } finally {
    clearInterval(tick);
    await p.close();
    wire?.close();
    await nc.drain();
    port.close(); // lets the worker exit
  }
}

if (parentPort) {
  const port = parentPort;
  run(port, workerData as FactWorkerData).catch((e: Error) => port.postMessage({ kind: 'error', message: e.message } satisfies FactWorkerMessage));
}
