import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { startNats, type TestNats } from '../../support/natsServer';
import { Bus, ensureStreams, EVENT_STREAM, makeEnvelope, type Envelope } from '../../../streams';
import { readFactBatches } from '../../../streams/factReader';
import { syntheticFacts } from '../../../scripts/cli/syntheticFacts';

const ROOT = resolve(__dirname, '../../..');

/** What the replay worker reads (raw protocol reader or nats.js), from a child process. */
function readInWorker(conn: string, how: 'raw' | 'natsjs', filter?: string): Promise<{ facts?: Envelope[]; batches?: number; error?: string; read?: number }> {
  return new Promise((res, rej) => {
    const p = spawn(process.execPath, ['--import', 'tsx', 'test/support/readLogInWorker.ts', conn, how, ...(filter ? [filter] : [])], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = []; // joined before decoding: a chunk may end inside a UTF-8 sequence
    let err = '';
    p.stdout.on('data', (d: Buffer) => chunks.push(d));
    p.stderr.on('data', (d) => (err += d));
    p.on('error', rej);
    p.on('close', () => {
      const out = Buffer.concat(chunks).toString('utf8');
      try {
        res(JSON.parse(out));
      } catch {
        rej(new Error(`reader printed ${out.slice(0, 200)}; stderr ${err.slice(0, 2000)}`));
      }
    });
  });
}

async function readHere(nc: NatsConnection, filterSubject?: string): Promise<Envelope[]> {
  const out: Envelope[] = [];
  for await (const b of readFactBatches(nc, { filterSubject })) out.push(...b);
  return out;
}

/**
 * The replay reader worker receives with a raw protocol reader and hands the main thread chunks that
 * parse with one JSON.parse: what it reads must be exactly what the nats.js reader reads.
 */
describe('the replay reader worker on a real nats-server', () => {
  let nats: TestNats;
  let nc: NatsConnection;

  beforeAll(async () => {
    nats = await startNats();
    nc = await nats.connect();
    await ensureStreams(nc);
  });
  afterAll(async () => {
    await nc.drain();
    await nats.stop();
  });

  it('reads nothing from an empty log', async () => {
    expect(await readInWorker(JSON.stringify(nats.connection('subscriber')), 'raw')).toEqual({ facts: [], batches: 0 });
  });

  it('reads every fact in log order, byte for byte what readFactBatches reads, large and non-ASCII ones included', async () => {
    const facts = syntheticFacts(20_000, 200);
    // one fact larger than a socket read and a worker chunk, one with non-ASCII text and escapes
    const big = makeEnvelope({ type: 'scroll.opened', aggregateId: crypto.randomUUID(), seq: 1, data: { keepAliveMs: 60_000, indices: ['x'], body: 'é"\\\n'.repeat(400_000) } });
    const odd = makeEnvelope({ type: 'pit.opened', aggregateId: crypto.randomUUID(), seq: 1, data: { keepAliveMs: 1, indices: ['ünïcødé ✓ 𝄞'], note: '\u2028\u0000' } });
    facts.splice(7_000, 0, big, odd);
    const bus = new Bus(nc, 1024);
    await Promise.all(facts.map((e) => bus.append(e)));
    const here = await readHere(nc);
    expect(here.map((e) => e.id)).toEqual(facts.map((e) => e.id));
    const raw = await readInWorker(JSON.stringify(nats.connection('subscriber')), 'raw');
    const natsJs = await readInWorker(JSON.stringify(nats.connection('subscriber')), 'natsjs');
    expect(raw.facts!.length).toBe(facts.length);
    expect(raw.facts).toEqual(here);
    expect(natsJs.facts).toEqual(here);
    expect(raw.batches).toBeGreaterThan(1);
  });

  it('reads only what the filter matches', async () => {
    const here = await readHere(nc, 'es.v1.evt.pit.>');
    const raw = await readInWorker(JSON.stringify(nats.connection('subscriber')), 'raw', 'es.v1.evt.pit.>');
    expect(here.length).toBeGreaterThan(0);
    expect(raw.facts).toEqual(here);
  });

  it('fails on a payload that is not an envelope, as the nats.js reader does, and leaves no consumer', async () => {
    await jetstream(nc).publish('es.v1.evt.scroll.broken.opened', new TextEncoder().encode('{"not json'));
    const raw = await readInWorker(JSON.stringify(nats.connection('subscriber')), 'raw');
    const natsJs = await readInWorker(JSON.stringify(nats.connection('subscriber')), 'natsjs');
    expect(raw.error).toBe('ES_EVT message on ES_EVT is not an envelope');
    expect(natsJs.error).toBe(raw.error);
    const consumers = await (await jetstreamManager(nc)).consumers.list(EVENT_STREAM).next();
    expect(consumers.length).toBe(0);
  });
});
