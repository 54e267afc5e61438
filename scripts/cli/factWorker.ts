/**
 * Worker thread of {@link readFactBatchesInWorker}: receives ES_EVT payloads (NATS protocol work,
 * about half the CPU of a replay) and hands them to the main thread in transferred chunks of
 * `[u32 length][payload]…`, so parsing and folding run in parallel with receiving.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { connect } from '@nats-io/transport-node';
import { openFactPush } from '../../streams/factPush';

/** Messages from the worker. */
export type FactWorkerMessage =
  | { kind: 'total'; total: number }
  | { kind: 'chunk'; buf: ArrayBuffer; len: number; count: number }
  | { kind: 'end' }
  | { kind: 'error'; message: string };

/** What the worker is started with. */
export interface FactWorkerData {
  url: string;
  filterSubject?: string;
}

const CHUNK = 1 << 20;
/** Chunks handed over but not yet acknowledged by the main thread before we hold the server. */
const MAX_UNACKED = 8;

async function run(port: NonNullable<typeof parentPort>, data: FactWorkerData): Promise<void> {
  const nc = await connect({ servers: data.url, name: 'es-replay-reader' });
  let buf = new Uint8Array(CHUNK);
  let view = new DataView(buf.buffer);
  let off = 0;
  let count = 0;
  let unacked = 0;
  const flush = () => {
    if (!count) return;
    const msg: FactWorkerMessage = { kind: 'chunk', buf: buf.buffer, len: off, count };
    port.postMessage(msg, [buf.buffer]);
    unacked++;
    if (unacked >= MAX_UNACKED) push?.hold(true);
    buf = new Uint8Array(CHUNK);
    view = new DataView(buf.buffer);
    off = 0;
    count = 0;
  };
  let push: Awaited<ReturnType<typeof openFactPush>> | undefined;
  push = await openFactPush(
    nc,
    (d) => {
      if (off + 4 + d.length > buf.length) {
        flush();
        if (d.length + 4 > buf.length) {
          buf = new Uint8Array(d.length + 4);
          view = new DataView(buf.buffer);
        }
      }
      view.setUint32(off, d.length);
      buf.set(d, off + 4);
      off += 4 + d.length;
      count++;
    },
    data.filterSubject,
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
    await nc.drain();
    port.close(); // lets the worker exit
  }
}

if (parentPort) {
  const port = parentPort;
  run(port, workerData as FactWorkerData).catch((e: Error) => port.postMessage({ kind: 'error', message: e.message } satisfies FactWorkerMessage));
}
