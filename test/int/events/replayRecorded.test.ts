import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { startNats, type TestNats } from '../../support/natsServer';
import { Bus, ensureStreams } from '../../../streams';
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import pino from 'pino';
import { ContextDirectory, ContextRegistry, readCheckpoint, reviveContexts, writeCheckpoint, type ContextRecord } from '../../../actors/contexts';
import { factSource, replayLog } from '../../../streams/replayLog';
import { rng } from '../../support/rng';

const pinned = (i: number) => [{ index: 'books', indexUuid: i % 2 ? 'idx-a' : 'idx-b', n: 0, shardIndex: 0, searcher: { maxDoc: 10, seqNo: 9 } }];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `ok()` holds (polling the registry, not a fixed sleep). */
async function until(ok: () => boolean, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(20);
  }
}

/** A directory that has folded the whole log (what a node's checkpoint is written from). */
async function directoryOf(nc: NatsConnection): Promise<ContextDirectory> {
  const d = new ContextDirectory(nc, pino({ level: 'silent' }));
  await d.start([], 0);
  await d.catchUp();
  void d.stop();
  return d;
}

describe('replay of a log recorded by the live context registry', () => {
  let nats: TestNats;
  let nc: NatsConnection;
  beforeAll(async () => {
    nats = await startNats();
    nc = await nats.connect();
    await ensureStreams(nc);
  });
  const dirs: string[] = [];
  const tempDir = async () => {
    const d = await mkdtemp(join(tmpdir(), 'cp-'));
    dirs.push(d);
    return d;
  };
  afterAll(async () => {
    await nc.drain();
    await nats.stop();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('reproduces the final state of every scroll and PIT actor, with no divergence', async () => {
    const registry = new ContextRegistry(new Bus(nc));
    const random = rng(Number(process.env.REPLAY_SEED ?? 42));
    const recs: ContextRecord[] = [];
    const ending: ContextRecord[] = []; // contexts whose end we wait for
    const ops: Array<Promise<unknown>> = [];
    for (let i = 0; i < 60; i++) {
      const kind = i % 2 ? 'scroll' : 'pit';
      const short = random() < 0.5;
      const rec = registry.open({ kind, indices: ['books'], shards: pinned(i), keepAliveMs: short ? 250 : 60_000, owner: { username: 'u', realm: 'native' } });
      recs.push(rec);
      const plan = Math.floor(random() * 5);
      ops.push(
        (async () => {
          // Searches: a scroll continuation always extends; a PIT search extends only with keep_alive.
          const uses = Math.floor(random() * 4);
          for (let u = 0; u < uses && registry.get(rec.id); u++) {
            const ka = kind === 'pit' && random() < 0.5 ? undefined : short ? 250 : 60_000;
            registry.use(rec, ka);
            await sleep(random() * 20);
            registry.done(rec);
            await sleep(random() * 50);
          }
          if (!registry.get(rec.id)) return;
          if (plan === 0) await registry.clear(rec, 'u');
          else if (plan === 1) await registry.release(rec, kind === 'scroll' ? 'no_scroll_param' : 'index_deleted');
          else if (plan === 2 && !short) return; // stays open
          else if (short) ending.push(rec); // expires on its own
          else await registry.clear(rec, 'u');
        })(),
      );
    }
    await Promise.all(ops);
    await until(() => ending.every((r) => !registry.get(r.id)));
    await Promise.all(recs.map((r) => r.appended));

    const out = await replayLog(factSource({ nc }, {}), { timeline: true });
    expect(out.divergences).toEqual([]);
    const machines = new Map(out.actors.map((a) => [a.id, a]));
    for (const rec of recs) {
      const live = registry.get(rec.id);
      const tomb = registry.tombstone(rec.id);
      const expected = live ? 'open' : tomb!.why;
      const m = machines.get(rec.id)!;
      const folded = (rec.kind === 'scroll' ? out.world.scroll : out.world.pit).get(rec.id)!;
      expect({ id: rec.id, folded: folded.status, machine: live ? m.state.split('.')[0] : m.state }).toEqual({
        id: rec.id,
        folded: expected,
        machine: live ? (rec.kind === 'scroll' ? 'active' : 'open') : expected,
      });
      expect(folded.keepAliveMs).toBe(rec.keepAliveMs);
      expect(m.done).toBe(!live);
    }
    expect(out.world.scroll.size + out.world.pit.size).toBe(recs.length);
    // The workload reached every end: expired, cleared, closed, released, and some stay open.
    const ends = new Set(recs.map((r) => (registry.get(r.id) ? 'open' : registry.tombstone(r.id)!.why)));
    expect([...ends].sort()).toEqual(['cleared', 'closed', 'expired', 'open', 'released']);
    registry.stopAll();
  });

  it('revives open contexts in a new registry (restart): overdue ones expire at their due time, and the log still replays without divergence', async () => {
    await (await jetstreamManager(nc)).streams.purge('ES_EVT');
    const before = new ContextRegistry(new Bus(nc));
    const dueSoon = before.open({ kind: 'scroll', indices: ['books'], shards: pinned(1), keepAliveMs: 300, openedData: { request: { params: { scroll: '300ms' } } } });
    const overdue = before.open({ kind: 'pit', indices: ['books'], shards: pinned(2), keepAliveMs: 200 });
    const long = before.open({ kind: 'pit', indices: ['books'], shards: pinned(3), keepAliveMs: 60_000, owner: { username: 'u', realm: 'native' } });
    const cleared = before.open({ kind: 'scroll', indices: ['books'], shards: pinned(4), keepAliveMs: 60_000 });
    await before.clear(cleared, 'alice');
    await Promise.all([dueSoon, overdue, long].map((r) => r.appended));
    before.stopAll(); // the node goes down: no facts
    await sleep(250); // `overdue` runs out while nobody runs it

    const after = new ContextRegistry(new Bus(nc));
    const revived = await reviveContexts(nc, after, { indexExists: () => true, rebuildScroll: () => ({ request: {} }) });
    expect(revived).toMatchObject({ revived: 3, released: 0, tombstones: 1 });
    expect(after.tombstone(cleared.id)).toMatchObject({ why: 'cleared', by: 'alice' });
    expect(after.get(long.id)?.owner).toEqual({ username: 'u', realm: 'native' });
    await until(() => !after.get(overdue.id) && !after.get(dueSoon.id));
    expect(after.tombstone(overdue.id)).toMatchObject({ why: 'expired', at: overdue.createdAt + 200 });
    expect(after.get(long.id)).toBeDefined();
    after.use(after.get(long.id)!, 30_000);
    after.done(after.get(long.id)!);
    await after.get(long.id)!.appended;

    const out = await replayLog(factSource({ nc }, {}), { timeline: true });
    expect(out.divergences).toEqual([]);
    const types = (id: string) => out.actors.find((a) => a.id === id)!.timeline!.map((x: { type: string }) => x.type);
    expect(out.world.pit.get(overdue.id)).toMatchObject({ status: 'expired', endedAt: overdue.createdAt + 200, seq: 2 });
    expect(out.world.pit.get(long.id)).toMatchObject({ status: 'open', seq: 2, keepAliveMs: 30_000 });
    expect(types(long.id)).toEqual(['pit.opened', 'pit.extended']);

    // A checkpoint, then more history: the next start folds only what came after it.
    const path = join(await tempDir(), 'contexts.json');
    const cp = await writeCheckpoint(nc, after, await directoryOf(nc), path);
    expect(cp.states.filter((x) => x.status === 'open').map((x) => x.id)).toEqual([long.id]);
    const tail = after.open({ kind: 'pit', indices: ['books'], shards: pinned(5), keepAliveMs: 60_000 });
    await after.clear(after.get(long.id)!, 'u');
    await tail.appended;
    after.stopAll();
    const third = new ContextRegistry(new Bus(nc));
    const res = await reviveContexts(nc, third, { indexExists: () => true, rebuildScroll: () => ({ request: {} }), checkpointPath: path });
    expect(res).toMatchObject({ checkpoint: cp.streamSeq, revived: 1, events: 2 }); // the tail: tail's opened, long's closed
    expect(third.get(tail.id)).toBeDefined();
    expect(third.get(long.id)).toBeUndefined();
    expect(third.tombstone(long.id)).toMatchObject({ why: 'closed', by: 'u' });
    expect(third.tombstone(overdue.id)).toMatchObject({ why: 'expired' }); // from the checkpoint
    third.stopAll();

    // A corrupt checkpoint is ignored: the whole log is folded instead, with the same outcome.
    writeFileSync(path, readFileSync(path, 'utf8').replace('"status":"open"', '"status":"opem"'));
    const fourth = new ContextRegistry(new Bus(nc));
    const full = await reviveContexts(nc, fourth, { indexExists: () => true, rebuildScroll: () => ({ request: {} }), checkpointPath: path });
    expect(full).toMatchObject({ checkpoint: 'checksum mismatch', revived: 1 });
    expect(fourth.get(tail.id)).toBeDefined();
    expect(fourth.tombstone(long.id)).toMatchObject({ why: 'closed', by: 'u' });
    fourth.stopAll();
  });

  it('keeps a context checkpoint valid across a nats-server restart, and refuses one of another stream', async () => {
    const reg = new ContextRegistry(new Bus(nc));
    const rec = reg.open({ kind: 'pit', indices: ['books'], shards: pinned(7), keepAliveMs: 60_000 });
    await rec.appended;
    const path = join(await tempDir(), 'contexts.json');
    const cp = await writeCheckpoint(nc, reg, await directoryOf(nc), path);
    reg.stopAll();
    await nc.close();
    await nats.restart();
    nc = await nats.connect();
    expect((await readCheckpoint(nc, path)).cp?.streamSeq).toBe(cp.streamSeq);
    // Same sequence numbers, different history: the identity of message S differs.
    const other = JSON.parse(readFileSync(path, 'utf8').split('\n')[1]);
    other.stream = 'es.v1.evt.pit.x.opened@2000-01-01T00:00:00Z';
    const body = JSON.stringify(other);
    writeFileSync(path, `${createHash('sha256').update(body).digest('hex')}\n${body}`);
    expect((await readCheckpoint(nc, path)).why).toBe('checkpoint of another event stream');
  });
});
