/**
 * Publishing and timing lifecycle facts: shared by scripts/benchReplay.ts and the bench's events
 * section.
 */
import { readFileSync } from 'node:fs';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { aggregateOf, factOf, subjects, type Aggregate, type Envelope } from '../../streams';

const enc = new TextEncoder();

/**
 * Publishes facts exactly as Bus.append does (subject, JSON, Nats-Msg-Id), but with a sliding
 * window of `window` unacknowledged publishes: never one await per ack.
 */
export async function publishFacts(nc: NatsConnection, facts: Iterable<Envelope>, window = 8192): Promise<{ n: number; ms: number; failed: number }> {
  const js = jetstream(nc);
  let failed = 0;
  const { n, ms } = await windowed(facts, window, (e) =>
    js
      .publish(subjects.fact(aggregateOf(e.type) as Aggregate, e.aggregateId, factOf(e.type)), enc.encode(JSON.stringify(e)), { msgID: e.id, timeout: 60_000 })
      .catch(() => void failed++),
  );
  return { n, ms, failed };
}

/** Runs `send` for each item with at most `window` unsettled at a time; resolves when all settled. */
async function windowed<T>(items: Iterable<T>, window: number, send: (item: T) => Promise<unknown>): Promise<{ n: number; ms: number }> {
  const t = performance.now();
  let n = 0;
  let inFlight = 0;
  let slot: (() => void) | undefined;
  const release = () => {
    inFlight--;
    const s = slot;
    slot = undefined;
    s?.();
  };
  for (const item of items) {
    if (inFlight >= window) await new Promise<void>((r) => (slot = r));
    inFlight++;
    n++;
    send(item).finally(release);
  }
  while (inFlight > 0) await new Promise<void>((r) => (slot = r));
  return { n, ms: performance.now() - t };
}

/**
 * Publishes `n` payloads of `bytes` bytes to `subject` (a stream's), `window` unacknowledged at a
 * time: the raw JetStream rate that the service's own appends are compared with.
 */
export async function publishRaw(nc: NatsConnection, subject: string, n: number, bytes: number, window = 256): Promise<{ n: number; ms: number }> {
  const js = jetstream(nc);
  const payload = new Uint8Array(bytes).fill(0x61);
  let err: unknown;
  function* times() {
    for (let i = 0; i < n; i++) yield i;
  }
  const out = await windowed(times(), window, () =>
    js.publish(subject, payload, { timeout: 60_000 }).catch((e) => void (err ??= e)),
  );
  if (err) throw err;
  return out;
}

/** CPU ms a process has used (Linux /proc), or NaN. */
export function cpuMs(pid: number | undefined): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) * 10; // clock ticks of 10 ms
  } catch {
    return NaN;
  }
}

/** A timed pass: wall ms, and CPU µs per event of this process and of another (nats-server). */
export async function timePass(serverPid: number | undefined, run: () => Promise<number>): Promise<{ n: number; ms: number; nodeCpuUs: number; serverCpuUs: number }> {
  const s0 = cpuMs(serverPid);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const n = await run();
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { n, ms, nodeCpuUs: (c.user + c.system) / n, serverCpuUs: ((cpuMs(serverPid) - s0) * 1000) / n };
}
