import { Worker } from 'node:worker_threads';
import type { Envelope } from '../../streams';
import { parseFact } from '../../streams/factPush';
import { upcast } from '../../streams/envelope';
import type { FactWorkerData, FactWorkerMessage } from './factWorker';
import type { BusConnection } from '../../streams/busConnection';

const dec = new TextDecoder();

/**
 * A worker chunk (`[f1,f2,…]`) as envelopes: one JSON.parse for the whole chunk. When it does not
 * parse, each payload is parsed alone, so the error names the first one that is not an envelope.
 */
export function parseChunk(m: { buf: ArrayBuffer; len: number; count: number; starts: ArrayBuffer }): Envelope[] {
  const bytes = new Uint8Array(m.buf, 0, m.len);
  let facts: unknown;
  try {
    facts = JSON.parse(dec.decode(bytes));
  } catch {
    facts = undefined;
  }
  if (Array.isArray(facts) && facts.length === m.count && facts.every((f) => f !== null && typeof f === 'object' && !Array.isArray(f))) {
    for (let i = 0; i < facts.length; i++) facts[i] = upcast(facts[i] as Envelope);
    return facts as Envelope[];
  }
  // A payload that is not one JSON object: find it (each ends where the next begins, less its comma).
  const starts = new Uint32Array(m.starts);
  return Array.from({ length: m.count }, (_, i) => parseFact(bytes.subarray(starts[i], i + 1 < m.count ? starts[i + 1] - 1 : m.len - 1)));
}

/**
 * `readFactBatches` with the NATS side in a worker thread (scripts/cli/factWorker.ts): the worker
 * receives, this thread parses and the caller folds, in parallel. On two cores this is what lets a
 * replay pass 200,000 facts/s (scripts/benchReplay.ts); a process without a spare core gains nothing.
 * Only for tsx-run scripts: the worker (factWorkerBoot.mjs registers tsx, then loads factWorker.ts)
 * is found through `import.meta.url`.
 */
export async function* readFactBatchesInWorker(
  conn: BusConnection,
  opts: { filterSubject?: string; onProgress?: (done: number, total: number) => void; natsJs?: boolean } = {},
): AsyncGenerator<Envelope[]> {
  const worker = new Worker(new URL('./factWorkerBoot.mjs', import.meta.url), { workerData: { conn, filterSubject: opts.filterSubject, natsJs: opts.natsJs } satisfies FactWorkerData });
  const queue: FactWorkerMessage[] = [];
  let wake: (() => void) | undefined;
  let exited: Error | undefined;
  worker.on('message', (m: FactWorkerMessage) => {
    queue.push(m);
    wake?.();
  });
  worker.on('error', (e) => {
    exited = e;
    wake?.();
  });
  worker.on('exit', (code) => {
    exited ??= code ? new Error(`fact reader worker exited with ${code}`) : undefined;
    wake?.();
  });
  let total = 0;
  let done = 0;
  try {
    for (;;) {
      const m = queue.shift();
      if (!m) {
        if (exited) throw exited;
        await new Promise<void>((r) => (wake = r));
        wake = undefined;
        continue;
      }
      if (m.kind === 'total') total = m.total;
      else if (m.kind === 'error') throw new Error(`fact reader worker: ${m.message}`);
      else if (m.kind === 'end') {
        // Let it delete its consumer and exit; terminate if it takes long.
        await Promise.race([new Promise((r) => worker.once('exit', r)), new Promise((r) => setTimeout(r, 2000).unref())]);
        return;
      }
      else {
        const batch = parseChunk(m);
        worker.postMessage('ack');
        done += m.count;
        opts.onProgress?.(done, total);
        yield batch;
      }
    }
  } finally {
    await worker.terminate();
  }
}
