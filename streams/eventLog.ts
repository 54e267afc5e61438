import type { NatsConnection } from '@nats-io/transport-node';
import {
  jetstream,
  jetstreamManager,
  DeliverPolicy,
  DiscardPolicy,
  RetentionPolicy,
  type StreamConfig,
  StorageType,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { DATA_STREAM, EVENT_STREAM, STATE_STREAM, subjects } from './subjects';
import { upcast, type Envelope } from './envelope';

export interface LogOptions {
  /**
   * Max age of lifecycle facts in ms (0 = keep forever, the default). The node sets none: its
   * compactor removes facts once they are older than `events.retention` *and* compacted
   * (actors/compaction), which max_age could not promise.
   */
  eventMaxAgeMs?: number;
  /**
   * Stream replicas (`cluster.stream_replicas`: 3 on a 3-server NATS cluster). Unset keeps what an
   * existing stream has (a node started without the setting never lowers another's R3 to R1).
   */
  replicas?: number;
  /**
   * Cap of the document log in bytes (JetStream `max_bytes`, discard new), so that a full document
   * log leaves room in the store for lifecycle facts. Applied only when ES_DATA is created: lowering
   * `max_bytes` under what a stream holds makes nats-server delete its oldest messages whatever the
   * discard policy, so a cap on an existing stream is set by the flood-stage monitor alone, with a
   * margin (actors/cluster/floodStage.ts). An existing stream keeps its cap and discard policy.
   */
  dataMaxBytes?: number;
}

/** Creates (or updates) the two streams: ES_EVT (lifecycle facts) and ES_DATA (document log). */
export async function ensureStreams(nc: NatsConnection, opts: LogOptions = {}): Promise<JetStreamManager> {
  const jsm = await jetstreamManager(nc);
  const want = [
    { name: EVENT_STREAM, subjects: [subjects.allFacts], max_age: (opts.eventMaxAgeMs ?? 0) * 1_000_000, perSubject: -1 },
    { name: DATA_STREAM, subjects: [subjects.allData], max_age: 0, perSubject: -1 },
    // One message per aggregate: its current state (and the position it covers).
    { name: STATE_STREAM, subjects: [subjects.allState], max_age: 0, perSubject: 1 },
  ];
  for (const s of want) {
    const cfg = {
      name: s.name,
      ...(opts.replicas ? { num_replicas: opts.replicas } : {}),
      subjects: s.subjects,
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      max_age: s.max_age,
      max_msgs_per_subject: s.perSubject,
      // JetStream refuses a duplicates window longer than max_age (a retention under two minutes).
      duplicate_window: s.max_age ? Math.min(s.max_age, 120 * 1_000_000_000) : 120 * 1_000_000_000,
      max_msg_size: -1,
    };
    let existing: StreamConfig | undefined;
    try {
      existing = (await jsm.streams.info(s.name)).config;
    } catch (e) {
      if (!String((e as Error).message).includes('not found')) throw e;
    }
    if (existing) {
      // keep a cap the stream has (the update must never lower it: see dataMaxBytes)
      await jsm.streams.update(s.name, { ...cfg, max_bytes: existing.max_bytes, discard: existing.discard });
    } else {
      const cap = s.name === DATA_STREAM && opts.dataMaxBytes && opts.dataMaxBytes > 0 ? { max_bytes: opts.dataMaxBytes, discard: DiscardPolicy.New } : {};
      const add = (c: typeof cfg) =>
        jsm.streams.add(c).catch((err: Error) => {
          // another node created it between our two calls
          if (!/already in use/i.test(err.message)) throw err;
        });
      // a cap the server cannot reserve (other streams hold reservations): created without one
      await add({ ...cfg, ...cap }).catch((err: Error) => (/insufficient storage/i.test(err.message) ? add(cfg) : Promise.reject(err)));
    }
  }
  return jsm;
}

/** Bytes a reader of the document log lets the server have in flight for it: above its largest message, below max_pending. */
export const READ_MAX_BYTES = 40 * 1024 * 1024;

/**
 * How many messages a consumer asks for at a time so that at most `maxBytes` are in flight: as
 * many of the largest message the server takes (`max_payload`) as fit, at least 2, at most 1,000.
 *
 * Why messages and not bytes: nats.js (3.4) `consume({ max_bytes })` also caps each pull at 100
 * messages, and keeps counting as outstanding the bytes of a pull that the server ended on that
 * cap, or on a message larger than the bytes left (409 without pending counts). The count only
 * grows, until the client stops pulling: the consumer then gets nothing until two idle heartbeats
 * are missed (2 x 15 s). That was the followers' "stalled with messages pending" (issue 21); pulls
 * by message count are accounted exactly (ended by their count, or by a 408 that says what was left).
 */
export function readWindow(nc: NatsConnection, maxBytes = READ_MAX_BYTES): number {
  const largest = Math.max(1, nc.info?.max_payload ?? 1024 * 1024);
  return Math.min(1_000, Math.max(2, Math.floor(maxBytes / largest)));
}

export interface LoggedMessage {
  seq: number;
  subject: string;
  data: Uint8Array;
  /** Publish time in ms since epoch. */
  timeMs: number;
  /** The Nats-Msg-Id it was appended with, if any (a writer recognises its own message). */
  msgId?: string;
}

export interface ReadOptions {
  /** One subject filter (nats-server 2.9 supports a single filter per consumer). */
  filterSubject?: string;
  startSeq?: number;
  /** Called with (done, total) every few thousand messages. */
  onProgress?: (done: number, total: number) => void;
  /**
   * Bound what is in flight by bytes instead of by 2048 messages: for logs of large messages (the
   * document log's batches reach ~29 MB), so that while the caller folds a batch the server never
   * queues more than its per-client max_pending (64 MB) for us and cuts us as a slow consumer. The
   * pulls still go by count (see readWindow). Small messages (lifecycle facts) read much faster with
   * a large count (70k vs 3.7k facts/s on 1M facts).
   */
  maxBytes?: number;
}

/**
 * Reads a stream from the start (or `startSeq`) up to the last message present when the call
 * began, through an ordered consumer. Finishes at once on an empty stream.
 */
export async function* readStream(nc: NatsConnection, stream: string, opts: ReadOptions = {}): AsyncGenerator<LoggedMessage> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(stream);
  const last = info.state.last_seq;
  const first = Math.max(opts.startSeq ?? 1, info.state.first_seq);
  if (info.state.messages === 0 || first > last) return;
  const js = jetstream(nc);
  const consumer = await js.consumers.get(stream, {
    ...(opts.filterSubject ? { filter_subjects: opts.filterSubject } : {}),
    ...(first > 1 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: first } : { deliver_policy: DeliverPolicy.All }),
  });
  const total = last - first + 1;
  let done = 0;
  // A filtered consumer may have nothing to deliver at all: ask for pending before consuming.
  const ci = await consumer.info(true);
  if (ci.num_pending === 0) return;
  // by count, never by bytes: see readWindow
  const messages = await consumer.consume({ max_messages: opts.maxBytes ? readWindow(nc, opts.maxBytes) : 2048 });
  try {
    for await (const m of messages) {
      done++;
      if (opts.onProgress && done % 4096 === 0) opts.onProgress(m.seq - first + 1, total);
      yield { seq: m.seq, subject: m.subject, data: m.data, timeMs: Math.floor(m.info.timestampNanos / 1e6), msgId: m.headers?.get('Nats-Msg-Id') || undefined };
      if (m.seq >= last || m.info.pending === 0) break;
    }
  } finally {
    opts.onProgress?.(total, total);
    messages.stop();
  }
}

const dec = new TextDecoder();

/** Reads lifecycle facts (upcast) from ES_EVT. */
export async function* readFacts(nc: NatsConnection, opts: ReadOptions = {}): AsyncGenerator<Envelope & { streamSeq: number }> {
  for await (const m of readStream(nc, EVENT_STREAM, opts)) {
    yield { ...upcast(JSON.parse(dec.decode(m.data)) as Envelope), streamSeq: m.seq };
  }
}
