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
  const t = performance.now();
  let n = 0;
  let inFlight = 0;
  let failed = 0;
  let slot: (() => void) | undefined;
  for (const e of facts) {
    if (inFlight >= window) await new Promise<void>((r) => (slot = r));
    inFlight++;
    n++;
    const subject = subjects.fact(aggregateOf(e.type) as Aggregate, e.aggregateId, factOf(e.type));
    js.publish(subject, enc.encode(JSON.stringify(e)), { msgID: e.id, timeout: 60_000 })
      .catch(() => failed++)
      .finally(() => {
        inFlight--;
        const s = slot;
        slot = undefined;
        s?.();
      });
  }
  while (inFlight > 0) await new Promise<void>((r) => (slot = r));
  return { n, ms: performance.now() - t, failed };
}

/**
 * Publishes `n` payloads of `bytes` bytes to `subject` (a stream's), `window` unacknowledged at a
 * time: the raw JetStream rate that the service's own appends are compared with.
 */
export async function publishRaw(nc: NatsConnection, subject: string, n: number, bytes: number, window = 256): Promise<{ n: number; ms: number }> {
  const js = jetstream(nc);
  const payload = new Uint8Array(bytes).fill(0x61);
  const t = performance.now();
  let inFlight = 0;
  let slot: (() => void) | undefined;
  let err: unknown;
  for (let i = 0; i < n; i++) {
    if (inFlight >= window) await new Promise<void>((r) => (slot = r));
    inFlight++;
    js.publish(subject, payload, { timeout: 60_000 })
      .catch((e) => (err ??= e))
      .finally(() => {
        inFlight--;
        const s = slot;
        slot = undefined;
        s?.();
      });
  }
  while (inFlight > 0) await new Promise<void>((r) => (slot = r));
  if (err) throw err;
  return { n, ms: performance.now() - t };
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
