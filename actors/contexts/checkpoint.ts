import { readChecksummedFile, writeChecksummedFile } from '../checksummedFile';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { EVENT_STREAM } from '../../streams';
import type { ContextState } from '../../streams/evolve';
import type { ContextRegistry } from './registry';
import type { ContextDirectory } from './directory';

/**
 * A checkpoint of the context projection: the open contexts and the remembered ends as they stood
 * when ES_EVT held facts up to `streamSeq`. Start-up loads it and folds only the scroll/PIT facts
 * after `streamSeq`, so its cost follows live state and recent history, not the whole log.
 *
 * Overlap is harmless: facts are folded idempotently by their per-context `seq`, so a fact both in
 * the checkpoint and after `streamSeq` is ignored the second time. `streamSeq` is read *before* the
 * registry is copied, so every fact at or below it is in the copy.
 */
export interface ContextCheckpoint {
  version: number;
  /**
   * Identity of the log: subject and timestamp of message `streamSeq` (nats-server resets a
   * stream's `created` time when it recovers it from disk, so that cannot tell streams apart).
   */
  stream: string;
  streamSeq: number;
  takenAt: number;
  /** Every context the directory remembered (open anywhere in the cluster, and recently ended). */
  states: ContextState[];
}

/** 2: the cluster-wide directory (1 held this node's open contexts and tombstones: refolded instead). */
const VERSION = 2;

/** Writes the checkpoint atomically (temp file, fsync, rename) with a SHA-256 of its body. */
export async function writeCheckpoint(nc: NatsConnection, registry: ContextRegistry, directory: ContextDirectory, path: string): Promise<ContextCheckpoint> {
  const jsm = await jetstreamManager(nc);
  // The directory has folded everything up to its position; this node's own contexts add what the
  // log does not know (the last use of a PIT searched without keep_alive).
  const seq = directory.position;
  const own = new Map(registry.openStates().map((s) => [s.id, s]));
  const states = directory.all().map((s) => {
    const mine = own.get(s.id);
    return mine && s.status === 'open' ? { ...s, lastActivityAt: Math.max(s.lastActivityAt, mine.lastActivityAt) } : s;
  });
  const cp: ContextCheckpoint = {
    version: VERSION,
    stream: await messageIdentity(jsm, seq),
    streamSeq: seq,
    takenAt: Date.now(),
    states,
  };
  writeChecksummedFile(path, JSON.stringify(cp));
  return cp;
}

/**
 * Reads a checkpoint that belongs to the current ES_EVT, or undefined (missing, corrupt, another
 * stream, or ahead of the stream) with the reason, so the caller folds the whole log instead.
 */
export async function readCheckpoint(nc: NatsConnection, path: string): Promise<{ cp?: ContextCheckpoint; why?: string }> {
  const { body, why } = readChecksummedFile(path);
  if (body === undefined) return { why };
  let cp: ContextCheckpoint;
  try {
    cp = JSON.parse(body) as ContextCheckpoint;
  } catch {
    return { why: 'unreadable' };
  }
  if (cp.version !== VERSION) return { why: `format version ${cp.version}` };
  const foreign = await notOfThisLog(nc, cp.streamSeq, cp.stream);
  return foreign ? { why: foreign } : { cp };
}

/**
 * Why a checkpoint taken at ES_EVT sequence `seq` of the log identified by `stream` does not belong
 * to the current ES_EVT, or undefined when it does.
 */
export async function notOfThisLog(nc: NatsConnection, seq: number, stream: string): Promise<string | undefined> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(EVENT_STREAM);
  if (seq > info.state.last_seq) return 'checkpoint ahead of the event stream';
  const id = await messageIdentity(jsm, seq);
  // A message removed by retention (events.retention_ms) cannot be compared: trust the sequence.
  if (id !== stream && id !== GONE) return 'checkpoint of another event stream';
  return undefined;
}

const GONE = 'gone';

/** `<subject>@<timestamp>` of message `seq` of ES_EVT; `empty` for seq 0, `gone` when it no longer exists. */
export async function messageIdentity(jsm: JetStreamManager, seq: number): Promise<string> {
  if (seq === 0) return 'empty';
  try {
    const m = await jsm.streams.getMessage(EVENT_STREAM, { seq });
    return m ? `${m.subject}@${m.timestamp}` : GONE;
  } catch {
    return GONE;
  }
}
