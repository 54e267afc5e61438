import { readChecksummedFile, writeChecksummedFile } from '../checksummedFile';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { EVENT_STREAM, subjects, type Aggregate, type Envelope } from '../../streams';
import { readFactBatches } from '../../streams/factReader';
import { messageIdentity, notOfThisLog } from '../contexts/checkpoint';

/**
 * A compacted copy of the credential facts (users, roles, API keys, tokens, service tokens): every
 * fact of every credential still held, as of ES_EVT sequence `seq`. Start-up folds it from a local
 * file and then only the log after `seq`, so its cost follows the live credentials, not the
 * history: token pairs the expiry sweep has forgotten drop out at the next checkpoint. Folds are
 * idempotent by per-aggregate `seq`, so facts both in the file and after `seq` are harmless.
 *
 * File: `sha256\n{"version":1,"seq":S,"stream":"<identity>"}\n<one envelope per line>`.
 */
export interface FactCheckpoint {
  seq: number;
  facts: Envelope[];
}

const VERSION = 1;

/** Reads a checkpoint of the current ES_EVT, or why none can be used. */
export async function readFactCheckpoint(nc: NatsConnection, path: string): Promise<{ cp?: FactCheckpoint; why?: string }> {
  const { body, why } = readChecksummedFile(path);
  if (body === undefined) return { why };
  const lines = body.split('\n').filter(Boolean);
  let head: { version: number; seq: number; stream: string };
  let facts: Envelope[];
  try {
    head = JSON.parse(lines[0]);
    facts = lines.slice(1).map((l) => JSON.parse(l) as Envelope);
  } catch {
    return { why: 'unreadable' };
  }
  if (head.version !== VERSION) return { why: `format version ${head.version}` };
  const foreign = await notOfThisLog(nc, head.seq, head.stream);
  return foreign ? { why: foreign } : { cp: { seq: head.seq, facts } };
}

/**
 * Writes a new checkpoint: the previous one's facts plus the log after it, keeping the facts of
 * credentials `isLive` still knows. Temp file, fsync, rename.
 */
export async function writeFactCheckpoint(
  nc: NatsConnection,
  path: string,
  aggregates: Aggregate[],
  isLive: (aggregate: Aggregate, id: string) => boolean,
): Promise<FactCheckpoint> {
  const jsm = await jetstreamManager(nc);
  const seq = (await jsm.streams.info(EVENT_STREAM)).state.last_seq;
  const prev = (await readFactCheckpoint(nc, path)).cp;
  const seen = new Set<string>();
  const facts: Envelope[] = [];
  const keep = (a: Aggregate, e: Envelope) => {
    if (seen.has(e.id) || !isLive(a, e.aggregateId)) return;
    seen.add(e.id);
    facts.push(e);
  };
  for (const a of aggregates) {
    for (const e of prev?.facts ?? []) if (e.type.startsWith(`${a}.`)) keep(a, e);
    const from = prev ? { startSeq: prev.seq + 1 } : {};
    for await (const batch of readFactBatches(nc, { filterSubject: subjects.factsOfType(a), ...from })) for (const e of batch) keep(a, e);
  }
  const head = JSON.stringify({ version: VERSION, seq, stream: await messageIdentity(jsm, seq) });
  const body = [head, ...facts.map((f) => JSON.stringify(f))].join('\n') + '\n';
  writeChecksummedFile(path, body);
  return { seq, facts };
}
