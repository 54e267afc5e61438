import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import { Aggregate, Bus, EVENT_STREAM, readStream, subjects, type Envelope } from '../../streams';
import { readFactBatches } from '../../streams/factReader';
import { hasClearSecrets, type FactSeal } from './factSeal';

/**
 * A lifecycle log written before issue 18 holds credential secret material in clear (password and
 * key hashes in ES_EVT, which anyone with the subscriber role may read). JetStream cannot edit a
 * message, so the log is rewritten once, in order: every message from the first to the last is
 * appended again (credential facts sealed, factSeal.ts; everything else byte for byte, same
 * subject), then the old messages are purged in one step (`purge` up to the first copy).
 *
 * Crash-safe: until the purge the old messages are all there; progress is a KV entry
 * (`log.sealing`: the last old sequence and who is copying), copies carry the message id
 * `es-migrated:<old seq>`, so a restart resumes after the last copy and JetStream drops a repeat.
 * Once done, `log.sealed` says so and later starts skip the scan. What changes for readers: stream
 * sequences (checkpoints tied to the old ones are ignored once: a full fold) and the JetStream
 * timestamps of old facts (the time of the rewrite; envelope `time`s are kept, and `events.retention`
 * counts from the rewrite for them).
 */

const SEALED = 'log.sealed';
const SEALING = 'log.sealing';
/** A copier that has not reported progress for this long is taken over. */
const STALE_MS = 60_000;
const COPY_PREFIX = 'es-migrated:';

interface Sealing {
  /** Last stream sequence of the old log: everything up to it is copied, then purged. */
  last: number;
  node: string;
  at: number;
}

const enc = new TextEncoder();
const dec = new TextDecoder();
const CREDENTIALS = [Aggregate.User, Aggregate.ApiKey, Aggregate.Token, Aggregate.ServiceToken];

/** Whether any credential fact of the log holds secret material in clear. */
async function clearSecretsIn(nc: NatsConnection): Promise<boolean> {
  for (const a of CREDENTIALS) {
    for await (const batch of readFactBatches(nc, { filterSubject: subjects.factsOfType(a) })) if (batch.some(hasClearSecrets)) return true;
  }
  return false;
}

const json = <T>(v: Uint8Array) => JSON.parse(dec.decode(v)) as T;

/**
 * Makes sure no fact a subscriber can read holds secret material (see the file comment). Returns how
 * many messages were rewritten (0 when the log needed nothing).
 */
export async function sealClearSecrets(nc: NatsConnection, kv: KV, seal: FactSeal, log: Logger, node = `pid-${process.pid}`): Promise<number> {
  if ((await kv.get(SEALED))?.operation === 'PUT') return 0;
  const jsm = await jetstreamManager(nc);
  let lease = await kv.get(SEALING);
  let state: Sealing;
  let revision: number;
  if (!lease || lease.operation !== 'PUT') {
    if (!(await clearSecretsIn(nc))) {
      await kv.put(SEALED, JSON.stringify({ at: Date.now(), node, rewritten: 0 }));
      return 0;
    }
    state = { last: (await jsm.streams.info(EVENT_STREAM)).state.last_seq, node, at: Date.now() };
    try {
      revision = await kv.create(SEALING, JSON.stringify(state));
    } catch {
      return waitForOther(nc, kv, seal, log, node);
    }
  } else {
    state = json<Sealing>(lease.value);
    if (state.node !== node && Date.now() - state.at < STALE_MS) return waitForOther(nc, kv, seal, log, node);
    state = { ...state, node, at: Date.now() };
    revision = await kv.update(SEALING, JSON.stringify(state), lease.revision); // taken over (a crashed copier)
  }
  const info = (await jsm.streams.info(EVENT_STREAM)).state;
  // Resume after the last copy, if an earlier run got that far.
  let copied = 0;
  if (info.last_seq > state.last) {
    const tail = await jsm.streams.getMessage(EVENT_STREAM, { seq: info.last_seq });
    const id = tail?.header?.get('Nats-Msg-Id') ?? '';
    if (id.startsWith(COPY_PREFIX)) copied = Number(id.slice(COPY_PREFIX.length));
  }
  log.warn({ messages: state.last - Math.max(copied, info.first_seq - 1), stream: EVENT_STREAM }, 'the lifecycle log holds credential hashes in clear (written before issue 18): rewriting it once with them sealed');
  const bus = new Bus(nc, 1024);
  let n = 0;
  let pending: Array<Promise<unknown>> = [];
  for await (const m of readStream(nc, EVENT_STREAM, { startSeq: copied + 1 })) {
    if (m.seq > state.last) break;
    let data = m.data;
    const f = m.subject.startsWith('es.v1.evt.') ? tryParse(data) : undefined;
    if (f && hasClearSecrets(f)) data = enc.encode(JSON.stringify(seal.seal(f)));
    pending.push(bus.publish(m.subject, data, `${COPY_PREFIX}${m.seq}`));
    if (++n % 10_000 === 0) {
      await Promise.all(pending);
      pending = [];
      revision = await kv.update(SEALING, JSON.stringify({ ...state, at: Date.now() }), revision);
      log.info({ copied: n }, 'rewriting the lifecycle log');
    }
  }
  await Promise.all(pending);
  const purged = await jsm.streams.purge(EVENT_STREAM, { seq: state.last + 1 });
  await kv.put(SEALED, JSON.stringify({ at: Date.now(), node, rewritten: n, purged: purged.purged }));
  await kv.delete(SEALING);
  log.warn({ rewritten: n, purged: purged.purged }, 'the lifecycle log is rewritten: no fact holds credential secret material in clear');
  return n;
}

function tryParse(data: Uint8Array): Envelope | undefined {
  try {
    return json<Envelope>(data);
  } catch {
    return undefined;
  }
}

/** Another node is rewriting the log: wait for it (taking over if it stops reporting progress). */
async function waitForOther(nc: NatsConnection, kv: KV, seal: FactSeal, log: Logger, node: string): Promise<number> {
  log.warn('another node is rewriting the lifecycle log with credential hashes sealed: waiting for it');
  for (;;) {
    await new Promise((r) => setTimeout(r, 1_000));
    if ((await kv.get(SEALED))?.operation === 'PUT') return 0;
    const e = await kv.get(SEALING);
    if (!e || e.operation !== 'PUT' || Date.now() - json<Sealing>(e.value).at >= STALE_MS) return sealClearSecrets(nc, kv, seal, log, node);
  }
}
