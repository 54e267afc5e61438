/**
 * Issue 6, events: (0, issue 20) scroll cycles (open + pages + clear) next to the same searches
 * without a context; (1) lifecycle facts per second the node sustains on NATS while 500 scroll
 * contexts and 100 PITs are opened, extended and freed, counted by a subscriber on `es.v1.evt.>`,
 * next to pipelined raw JetStream publishes of envelopes of the same size; (2) replay rate of an
 * N-event log (N = corpus size: 1M) next to the bare read of it; (3) cold start of `startSystem`
 * (the same node starting again on its own folder, until it counts every document: its shard copies recover after it answers) on the corpus store with N lifecycle events vs the same store with an
 * empty lifecycle log. Runs last: it takes the corpus store (the shared node is stopped).
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectBus } from '../../streams/busConnection';
import { jetstreamManager } from '@nats-io/jetstream';
import { startEmbeddedNats, type EmbeddedNats } from '../../actors/embeddedNats';
import { Bus, EVENT_STREAM } from '../../streams';
import { ContextRegistry } from '../../actors/contexts';
import { readFactBatches } from '../../streams/factReader';
import { compactedPosition } from '../../streams/compactedState';
import { replayLog } from '../../streams/replayLog';
import { readFactBatchesInWorker } from '../cli/workerFactSource';
import { syntheticFacts } from '../cli/syntheticFacts';
import { bootNode, call, MAPPINGS } from './corpus';
import { onAbort } from './cleanup';
import { publishFacts, publishRaw, timePass } from './facts';
import { checkLifecycleFacts, factCounter } from './lifecycleFacts';
import { contextCycles as runCycles, lifecycles, loadBulk } from './load';
import { interleave, median, pairedRatio, row, settledHeap } from './stats';
import type { BenchOptions, Row } from './types';

const S = 'events';
const SMALL = 'events-bench';

/**
 * Issue 20: what a scroll context costs next to its searches. Cycles of a scroll opened, continued
 * `PAGES` times and cleared, next to the same searches without a context (the first page, then
 * searches after the last hit's `_doc`), on a one-shard index where both walk the same pages at
 * the same cost; CONC cycles in flight, interleaved rounds, paired ratios.
 */
export async function contextCycles(o: BenchOptions, rows: Row[]): Promise<void> {
  const c = await o.corpus.get();
  const index = `${SMALL}-1shard`;
  await call(c.url, 'PUT', `/${index}`, { settings: { number_of_shards: 1, number_of_replicas: 0 }, mappings: MAPPINGS });
  try {
    await loadBulk(c.port, { index, docs: 10_000, batch: 5000, conc: 1, refresh: true });
    await call(c.url, 'PUT', '/_cluster/settings', { persistent: { 'search.max_open_scroll_context': 100_000 } });
    for (const size of [100, 1000]) {
      const n = o.quick ? 150 : 400;
      const cycle = (context: boolean) => runCycles(c.port, { index, n, pages: PAGES, size, context, conc: CONC });
      await cycle(true); // warm both paths
      await cycle(false);
      const rate = await interleave(Math.max(3, o.rounds), { scroll: async () => (await cycle(true)).rate, plain: async () => (await cycle(false)).rate });
      rows.push(
        row(S, `scroll open + ${PAGES} pages + clear, size ${size}, _doc, one-shard 10,000-doc index, ${CONC} in flight`, median(rate.scroll), 'cycles/s'),
        row(S, `the same ${PAGES + 1} searches without a context (first page, then search_after _doc), same rounds`, median(rate.plain), 'cycles/s'),
        row(S, `scroll cycles / the same searches without a context, size ${size}`, pairedRatio(rate.scroll, rate.plain), 'ratio', size === 100 ? { min: 0.8 } : {}),
      );
    }
  } finally {
    await call(c.url, 'DELETE', `/${index}`).catch(() => undefined);
  }
}
const PAGES = 4;
/** Cycles in flight: enough that the node, not the log's acknowledgement latency, is the limit. */
const CONC = 32;

async function lifecycleRates(o: BenchOptions, rows: Row[]): Promise<void> {
  const c = await o.corpus.get();
  // A small index (3 shards), so opening a scroll costs its bookkeeping, not a 1M-doc query.
  await call(c.url, 'PUT', `/${SMALL}`, { settings: { number_of_shards: 3, number_of_replicas: 0 } });
  await loadBulk(c.port, { index: SMALL, docs: 1000, batch: 1000, conc: 1, refresh: true });
  await call(c.url, 'PUT', '/_cluster/settings', { persistent: { 'search.max_open_scroll_context': 100_000 } });
  const nc = await connectBus(c.natsConn);
  const jsm = await jetstreamManager(nc);
  try {
    await jsm.streams.add({ name: 'BENCH_RAW_EVT', subjects: ['bench.rawevt.>'] });
    const events = factCounter(nc, 'es.v1.evt.>');
    await nc.flush();
    const service: number[] = [];
    const raw: number[] = [];
    const actors: number[] = [];
    let sizes = { n: 0, bytes: 0 };
    const rounds = Math.max(3, o.rounds);
    for (let r = 0; r < rounds; r++) {
      o.note(`events: lifecycles round ${r + 1}/${rounds} ...`);
      events.reset();
      await lifecycles(c.port, { index: SMALL, scrolls: 500, pits: 100, conc: 16 });
      const got = await events.settle();
      checkLifecycleFacts(got.byFact, 500, 100);
      service.push((got.n / (got.last - got.first)) * 1000);
      sizes = got;
      const p = await publishRaw(nc, 'bench.rawevt.x', got.n, Math.round(got.bytes / got.n), 256);
      raw.push((p.n / p.ms) * 1000);
      // The actor system alone: the same lifecycles driven straight into a context registry (XState
      // actors + Bus appends), no HTTP and no search; its facts land on the same stream.
      events.reset();
      const registry = new ContextRegistry(new Bus(nc));
      const pinned = [{ index: SMALL, indexUuid: 'bench-registry', n: 0, shardIndex: 0, searcher: { maxDoc: 1000, seqNo: 999 } }];
      const recs = Array.from({ length: 600 }, (_, i) =>
        registry.open({ kind: i < 500 ? 'scroll' : 'pit', indices: [SMALL], shards: pinned, keepAliveMs: 60_000, owner: { username: 'bench', realm: 'native' } }),
      );
      for (const rec of recs) {
        registry.use(rec, 120_000);
        registry.done(rec);
      }
      await Promise.all(recs.map((rec) => registry.clear(rec, 'bench')));
      const alone = await events.settle();
      actors.push((alone.n / (alone.last - alone.first)) * 1000);
    }
    rows.push(
      row(S, `lifecycle facts on es.v1.evt.> (500 scrolls + 100 PITs opened, extended, freed: ${sizes.n} facts, ${Math.round(sizes.bytes / sizes.n)} B)`, median(service), 'events/s'),
      row(S, 'raw JetStream publish, same count and size, window 256', median(raw), 'msgs/s'),
      // Informative since issue 20: a lifecycle fact through HTTP costs an HTTP request and a search
      // (the target moved to the context cycles below: contexts at the cost of their searches).
      row(S, 'service events/s / raw JetStream publish', pairedRatio(service, raw), 'ratio'),
      row(S, 'same lifecycles driven into the context registry (actors + Bus, no HTTP)', median(actors), 'events/s'),
      row(S, 'registry events/s / raw JetStream publish', pairedRatio(actors, raw), 'ratio'),
    );
  } finally {
    await jsm.streams.delete('BENCH_RAW_EVT').catch(() => undefined);
    await nc.close();
  }
}

export async function run(o: BenchOptions): Promise<Row[]> {
  const rows: Row[] = [];
  await contextCycles(o, rows);
  await lifecycleRates(o, rows);

  // Two copies of the corpus store: A gets N lifecycle events, B an empty lifecycle log.
  const root = await mkdtemp(join(tmpdir(), 'bench-events-'));
  const servers: EmbeddedNats[] = [];
  const off = onAbort(async () => {
    for (const s of servers) await s.stop();
    await rm(root, { recursive: true, force: true });
  });
  try {
    const docs = o.docs;
    const [dirA, dirB] = [join(root, 'with-events'), join(root, 'empty-log')];
    o.note('events: copying the corpus store ...');
    // The node's own folder too (identity, snapshots): a cold start is the same node starting again,
    // not a stranger on its log (that one waits for the shard copies of a node that never returns).
    const corpusData = (await o.corpus.get()).dataDir;
    await o.corpus.copyStoreTo([dirA, dirB]);
    for (const d of ['data-a', 'data-b']) await cp(corpusData, join(root, d), { recursive: true });
    const natsA = await startEmbeddedNats(dirA, { admin: true });
    servers.push(natsA);
    const natsB = await startEmbeddedNats(dirB, { admin: true });
    servers.push(natsB);
    for (const s of servers) {
      const nc = await connectBus(s.connection('admin'));
      await (await jetstreamManager(nc)).streams.purge(EVENT_STREAM);
      await nc.close();
    }

    const N = docs;
    const ncA = await connectBus(natsA.connection('admin'));
    try {
      o.note(`events: publishing ${N.toLocaleString('en-US')} synthetic lifecycle facts ...`);
      const pub = await publishFacts(ncA, syntheticFacts(N), 8192);
      if (pub.failed) throw new Error(`${pub.failed} fact publishes failed`);
      await settledHeap();
      rows.push(row(S, `publish ${N.toLocaleString('en-US')} synthetic facts (pipelined, window 8192)`, (pub.n / pub.ms) * 1000, 'events/s'));

      // Replay (fold, reader in a worker: what `npm run replay` does) next to the bare read.
      const replay: number[] = [];
      const read: number[] = [];
      const rr = o.quick ? 2 : 3;
      for (let r = 0; r < rr; r++) {
        o.note(`events: replay round ${r + 1}/${rr} ...`);
        const rp = await timePass(natsA.proc.pid, async () => (await replayLog(readFactBatchesInWorker(natsA.connection('subscriber')), { check: false })).read);
        if (rp.n !== N) throw new Error(`replay read ${rp.n} facts, expected ${N}`);
        replay.push((rp.n / rp.ms) * 1000);
        const rd = await timePass(natsA.proc.pid, async () => {
          let k = 0;
          for await (const b of readFactBatches(ncA)) k += b.length;
          return k;
        });
        read.push((rd.n / rd.ms) * 1000);
        await settledHeap();
      }
      rows.push(
        row(S, `replay ${N.toLocaleString('en-US')} facts: fold, reader in a worker (npm run replay)`, median(replay), 'events/s', { min: 250_000 }),
        row(S, 'read + parse only (readFactBatches, this thread)', median(read), 'events/s'),
        row(S, 'replay / read + parse', pairedRatio(replay, read), 'ratio'),
      );
    } finally {
      await ncA.close();
    }

    // Cold start (issue 20 part 2): start-up reads the compacted state (ES_STATE) plus the ES_EVT tail,
    // never the whole history. Each log is compacted once first (a node starts, its compactor folds the
    // log into ES_STATE, a clean stop writes the rest), then every round starts with the node's local
    // checkpoints deleted, so what it reads is ES_STATE + tail, A (with N facts) and B (empty log)
    // interleaved. Then 9M more facts go into A and the same again: 10M.
    const limitMs = o.quick ? 60_000 : 180_000;
    const dataA = join(root, 'data-a');
    const dataB = join(root, 'data-b');
    const coldStart = async (nats: EmbeddedNats, dataDir: string, keepCheckpoints = false): Promise<number | undefined> => {
      if (!keepCheckpoints) for (const f of ['contexts-checkpoint.json', 'security-checkpoint.bin']) await rm(join(dataDir, f), { force: true });
      await settledHeap();
      const t0 = performance.now();
      const starting = bootNode(nats, dataDir, join(dataDir, 'config'));
      let timer: NodeJS.Timeout | undefined;
      const sys = await Promise.race([starting, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), limitMs)))]);
      clearTimeout(timer);
      if (!sys) {
        starting.then((late) => late.stop()).catch(() => undefined);
        await nats.stop();
        return undefined;
      }
      const offSys = onAbort(() => sys.stop());
      try {
        // Ready means serving every document: the node answers before its shard copies have all
        // started (they recover from the snapshot and the log after it), so poll the count.
        for (;;) {
          const count = await call<{ count: number }>(sys.url, 'GET', '/bench/_count').catch(() => undefined);
          if (count?.count === docs) break;
          if (performance.now() - t0 > limitMs) return undefined;
          await new Promise((r) => setTimeout(r, 25));
        }
        const ready = performance.now() - t0;
        if (keepCheckpoints) {
          // The compacting start: the compactor catches up with the whole log (what a node that
          // appended these facts would have done as it went), before the clean stop.
          const nc = await connectBus(nats.connection('admin'));
          try {
            const last = (await (await jetstreamManager(nc)).streams.info(EVENT_STREAM)).state.last_seq;
            // (a request may time out while the compactor keeps the server busy: ask again)
            while ((await compactedPosition(nc).catch(() => 0)) < last) {
              if (performance.now() - t0 > 10 * limitMs) throw new Error('the compactor did not catch up with the log');
              await new Promise((r) => setTimeout(r, 200));
            }
          } finally {
            await nc.close();
          }
          return performance.now() - t0;
        }
        return ready;
      } finally {
        offSys();
        await sys.stop(); // a clean stop: the compactor writes everything folded so far
      }
    };
    const coldStarts = async (facts: number) => {
      const label = `${docs.toLocaleString('en-US')} docs + ${facts.toLocaleString('en-US')} lifecycle facts (compacted)`;
      try {
        o.note(`events: compacting the log of ${facts.toLocaleString('en-US')} facts (one start) ...`);
        const first = await coldStart(natsA, dataA, true);
        if (first === undefined) throw new Error(`the compacting start did not finish in ${limitMs / 1000} s`);
        await coldStart(natsB, dataB, true);
        const withEvents: number[] = [];
        const emptyLog: number[] = [];
        const timedOut = { a: false, b: false };
        const cr = o.quick ? 2 : 3;
        for (let r = 0; r < cr && !timedOut.a && !timedOut.b; r++) {
          o.note(`events: cold start round ${r + 1}/${cr} (${facts.toLocaleString('en-US')} facts) ...`);
          const a = await coldStart(natsA, dataA);
          if (a === undefined) timedOut.a = true;
          else withEvents.push(a);
          const b = await coldStart(natsB, dataB);
          if (b === undefined) timedOut.b = true;
          else emptyLog.push(b);
        }
        const startRow = (what: string, xs: number[], out: boolean, t: { max?: number } = {}) =>
          out
            ? { ...row(S, `cold start, ${what}: TIMED OUT (not ready after ${limitMs / 1000} s)`, limitMs / 1000, 's', t), ok: false }
            : row(S, `cold start, ${what}`, median(xs) / 1000, 's', t);
        rows.push(
          row(S, `first start on ${facts.toLocaleString('en-US')} facts, until its compactor has folded them all into ES_STATE (once)`, first / 1000, 's'),
          startRow(label, withEvents, timedOut.a, { max: 15 }),
          startRow(`${docs.toLocaleString('en-US')} docs + empty lifecycle log`, emptyLog, timedOut.b),
          row(S, `cold start with ${facts.toLocaleString('en-US')} facts / with empty log (local checkpoints deleted)`, timedOut.a || timedOut.b ? NaN : pairedRatio(withEvents, emptyLog), 'ratio', { max: 1.5 }),
        );
      } catch (e) {
        rows.push({ ...row(S, `cold start (${facts.toLocaleString('en-US')} facts) FAILED: ${(e as Error).message.slice(0, 200)}`, NaN, 's', { max: 15 }), ok: false });
      }
    };
    await coldStarts(N);
    // 10M facts: 9M more appended to A in chunks (the generator holds one chunk in memory).
    const BIG = o.quick ? 2_000_000 : 10_000_000;
    if (BIG > N) {
      const nc = await connectBus(natsA.connection('admin'));
      try {
        for (let done = N; done < BIG; done += 1_000_000) {
          o.note(`events: appending facts ${done.toLocaleString('en-US')}..${Math.min(BIG, done + 1_000_000).toLocaleString('en-US')} ...`);
          const pub = await publishFacts(nc, syntheticFacts(Math.min(1_000_000, BIG - done)), 8192);
          if (pub.failed) throw new Error(`${pub.failed} fact publishes failed`);
        }
      } finally {
        await nc.close();
      }
      await coldStarts(BIG);
    }
  } finally {
    off();
    for (const s of servers) await s.stop();
    await rm(root, { recursive: true, force: true });
  }
  return rows;
}
