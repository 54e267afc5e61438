/**
 * The one-time rewrite of a pre-issue-18 log (actors/security/logMigration.ts) on a real nats-server:
 * from scratch, and resumed after a copier died half-way (its copies already appended).
 */
import pino from 'pino';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { startNats, type TestNats } from '../../support/natsServer';
import { Bus, ensureStreams, EVENT_STREAM, makeEnvelope, readFacts, type Envelope } from '../../../streams';
import { hasClearSecrets, loadFactSeal, secretsBucket, type FactSeal } from '../../../actors/security/factSeal';
import { sealClearSecrets } from '../../../actors/security/logMigration';

let nats: TestNats;
let nc: NatsConnection;
const log = pino({ level: 'silent' });

/** A pre-18 history: credential facts with clear hashes between context facts. */
function history(): Envelope[] {
  const out: Envelope[] = [];
  for (let i = 0; i < 30; i++) {
    out.push(makeEnvelope({ type: 'user.password_changed', aggregateId: `u${i}`, seq: 1, data: { username: `u${i}`, realm: 'native', passwordHash: `{PBKDF2}10000$salt${i}$hash${i}` } }));
    out.push(makeEnvelope({ type: 'scroll.extended', aggregateId: `s${i}`, seq: 2, data: { keepAliveMs: i } }));
    out.push(makeEnvelope({ type: 'apikey.invalidated', aggregateId: `k${i}`, seq: 2, data: { invalidation: i } }));
  }
  return out;
}

async function freshLog(): Promise<{ seal: FactSeal; facts: Envelope[] }> {
  nats = await startNats();
  nc = await nats.connect();
  await ensureStreams(nc);
  const bus = new Bus(nc);
  const facts = history();
  for (const f of facts) await bus.append(f);
  return { seal: await loadFactSeal(await secretsBucket(nc)), facts };
}

async function logNow(seal: FactSeal): Promise<Envelope[]> {
  const out: Envelope[] = [];
  for await (const f of readFacts(nc)) out.push(f);
  expect(out.filter(hasClearSecrets)).toEqual([]);
  return out.map((f) => {
    const { streamSeq: _s, ...e } = f as Envelope & { streamSeq: number };
    return seal.open(e);
  });
}

afterEach(async () => {
  await nc?.close();
  await nats?.stop();
});

it('rewrites the log in order, sealed, and purges the old messages', async () => {
  const { seal, facts } = await freshLog();
  expect(await sealClearSecrets(nc, await secretsBucket(nc), seal, log, 'n1')).toBe(facts.length);
  expect(await logNow(seal)).toEqual(facts);
  const info = (await (await jetstreamManager(nc)).streams.info(EVENT_STREAM)).state;
  expect([info.messages, info.first_seq]).toEqual([facts.length, facts.length + 1]);
  expect(await sealClearSecrets(nc, await secretsBucket(nc), seal, log, 'n1')).toBe(0); // once
});

it('resumes after a copier that died half-way, without copying twice', async () => {
  const { seal, facts } = await freshLog();
  const kv = await secretsBucket(nc);
  // What a copier leaves when killed after 40 copies: its lease, and the copies.
  await kv.create('log.sealing', JSON.stringify({ last: facts.length, node: 'dead', at: Date.now() - 120_000 }));
  const bus = new Bus(nc);
  const { subjects, Aggregate } = await import('../../../streams');
  for (let i = 0; i < 40; i++) {
    const f = facts[i];
    const [agg, fact] = f.type.split('.');
    await bus.publish(subjects.fact(agg as (typeof Aggregate)[keyof typeof Aggregate], f.aggregateId, fact), new TextEncoder().encode(JSON.stringify(seal.seal(f))), `es-migrated:${i + 1}`);
  }
  expect(await sealClearSecrets(nc, kv, seal, log, 'n2')).toBe(facts.length - 40);
  expect(await logNow(seal)).toEqual(facts);
});
