import type { JetStreamClient, PubAck } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { Connectivity, NatsUnavailable } from './connectivity';

/** JetStream's error code for a failed `Nats-Expected-Last-Subject-Sequence` check. */
const WRONG_LAST_SEQUENCE = 10071;

/**
 * Another writer appended to the subject since the sequence we expected: we are not (or no longer)
 * the only writer, or our view is behind. Nothing of our message was stored.
 */
export class Fenced extends Error {
  constructor(readonly subject: string, readonly expected: number, readonly actual: number | undefined) {
    super(`append to [${subject}] fenced: expected last sequence ${expected}, the subject is at ${actual ?? 'unknown'}`);
    this.name = 'Fenced';
  }
}

/**
 * The append did not get an answer in time (leader election, NATS down). Whether it was stored is
 * unknown: the caller must read the subject back before it relies on its own view.
 */
export class AppendUncertain extends Error {
  constructor(readonly subject: string, cause: unknown) {
    super(`append to [${subject}] not acknowledged: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'AppendUncertain';
  }
}

export interface FencedAppendOptions {
  /** De-duplication id: the same for every retry of this message, unique per message. */
  msgID: string;
  /** The subject's last stream sequence this writer has seen (0: the subject must be empty). */
  expectedLastSubjectSeq: number;
  /** Give up (AppendUncertain) after this many ms of retries. */
  deadlineMs?: number;
  /** Per-attempt ack timeout. */
  attemptTimeoutMs?: number;
  /** Called before each retry (tests, logs). */
  onRetry?: (attempt: number, err: unknown) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The subject's actual last sequence from a `wrong last sequence: N` answer. */
function actualSeq(e: { message?: string }): number | undefined {
  const m = /wrong last sequence: (\d+)/.exec(e.message ?? '');
  return m ? Number(m[1]) : undefined;
}

function apiCode(e: unknown): number | undefined {
  const err = e as { code?: unknown; name?: string };
  return err?.name === 'JetStreamApiError' && typeof err.code === 'number' ? err.code : undefined;
}

/**
 * Appends one message to a JetStream subject only if the subject is still at
 * `expectedLastSubjectSeq` (single-writer fencing, enforced by the server on R1 and R3), retrying
 * through leader elections and reconnects with the same message id: nats-server checks the id
 * before the expected sequence, so a retry of a message that was in fact stored gets the original
 * ack (`duplicate`) instead of a false fence.
 *
 * Throws {@link Fenced} when another writer got there first, {@link AppendUncertain} when the
 * deadline passes without an answer, and the server's error for anything else (too large, …).
 */
export async function fencedAppend(js: JetStreamClient, subject: string, payload: Uint8Array, o: FencedAppendOptions): Promise<PubAck> {
  const deadline = Date.now() + (o.deadlineMs ?? 30_000);
  const nc = (js as unknown as { nc?: NatsConnection }).nc;
  const link = nc ? Connectivity.of(nc) : undefined;
  let sent = false;
  let delay = 25;
  for (let attempt = 1; ; attempt++) {
    try {
      const send = () =>
        js.publish(subject, payload, {
          msgID: o.msgID,
          expect: { lastSubjectSequence: o.expectedLastSubjectSeq },
          timeout: Math.max(100, Math.min(o.attemptTimeoutMs ?? 5_000, deadline - Date.now())),
        });
      // With NATS down nothing is sent (it would sit in the client until a reconnect): after a
      // short wait for a failover, the append fails fast; a drop mid-flight leaves it uncertain.
      return await (link ? link.run(`append to [${subject}]`, () => ((sent = true), send())) : send());
    } catch (e) {
      if (e instanceof NatsUnavailable) {
        if (!e.uncertain) throw sent ? new AppendUncertain(subject, e) : e;
        if (Date.now() + delay >= deadline) throw new AppendUncertain(subject, e);
        continue; // the next attempt waits for the reconnect; the same msgID finds it if it was stored
      }
      const code = apiCode(e);
      if (code === WRONG_LAST_SEQUENCE) throw new Fenced(subject, o.expectedLastSubjectSeq, actualSeq(e as Error));
      // Any other answer from the stream is final (message too large, stream sealed, ...).
      if (code !== undefined && code !== 10008 /* JetStream temporarily unavailable */) throw e;
      if (Date.now() + delay >= deadline) throw new AppendUncertain(subject, e);
      o.onRetry?.(attempt, e);
      await sleep(delay);
      delay = Math.min(delay * 2, 1_000);
    }
  }
}
