import { copyFile, cp, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { startNats, type TestNats } from '../../support/natsServer';
import { runCli, spawnCli, waitForLine } from '../../support/cli';
import { Bus, ensureStreams, makeEnvelope, type Envelope } from '../../../streams';

const T0 = Date.parse('2024-05-01T10:00:00.000Z');
const pinned = [{ index: 'books', indexUuid: 'aW5kZXg', n: 0, shardIndex: 0, searcher: { maxDoc: 5, seqNo: 4 } }];
const uuid = () => crypto.randomUUID();

/** A scripted history with chosen times: seconds after T0. */
function history() {
  const s1 = uuid(); // scroll: opened 0s, extended 10s, cleared 20s
  const s2 = uuid(); // scroll: opened 5s (1m keep-alive), expired 65.2s (timers fire late)
  const p1 = uuid(); // pit: opened 0s, extended 30s, closed 40s
  const k1 = uuid(); // api key: created 0s, invalidated 50s
  const e = (type: string, id: string, seq: number, s: number, data: Record<string, unknown> = {}) =>
    makeEnvelope({ type, aggregateId: id, seq, data, time: T0 + s * 1000 });
  const opened = (ka: number) => ({ keepAliveMs: ka, indices: ['books'], shards: 1, pinned, owner: { username: 'bob', realm: 'native' } });
  const facts: Envelope[] = [
    e('scroll.opened', s1, 1, 0, opened(60_000)),
    e('pit.opened', p1, 1, 0, opened(60_000)),
    e('apikey.created', k1, 1, 0, { name: 'ci', keyType: 'rest', creation: T0, owner: { username: 'bob', realm: 'native', realmType: 'native' }, hash: '{SSHA256}abc', roleDescriptors: {}, limitedBy: {}, metadata: {} }),
    e('scroll.opened', s2, 1, 5, opened(60_000)),
    e('scroll.extended', s1, 2, 10, { keepAliveMs: 30_000 }),
    e('scroll.cleared', s1, 3, 20),
    e('pit.extended', p1, 2, 30, { keepAliveMs: 120_000 }),
    e('pit.closed', p1, 3, 40),
    e('apikey.invalidated', k1, 2, 50, { invalidation: T0 + 50_000 }),
    e('scroll.expired', s2, 2, 65.2),
  ];
  return { facts, s1, s2, p1, k1 };
}

type Row = { aggregate: string; id: string; status: string; machine?: string; note?: string; fields: Record<string, unknown> };
const byId = (rows: Row[]) => Object.fromEntries(rows.map((r) => [r.id, r.status]));

describe('events and replay CLIs on a real nats-server', () => {
  let nats: TestNats;
  let nc: NatsConnection;
  let bus: Bus;
  let dir: string;
  let h: ReturnType<typeof history>;
  const env = () => nats.env('subscriber');

  beforeAll(async () => {
    nats = await startNats();
    nc = await nats.connect();
    await ensureStreams(nc);
    bus = new Bus(nc);
    dir = await mkdtemp(join(tmpdir(), 'events-cli-'));
    h = history();
    for (const f of h.facts) await bus.append(f);
  });
  afterAll(async () => {
    await nc.drain();
    await nats.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('tail prints one readable line per new fact matching the filter', async () => {
    const p = spawnCli('events', ['tail', 'scroll'], env());
    try {
      await waitForLine(p, 'stderr', (l) => l.startsWith('tailing es.v1.evt.scroll.>'));
      const id = uuid();
      const line = waitForLine(p, 'stdout', (l) => l.includes(id));
      await bus.append(makeEnvelope({ type: 'pit.opened', aggregateId: uuid(), seq: 1, data: { keepAliveMs: 1000, indices: ['x'], shards: 0, pinned: [] } }));
      await bus.append(makeEnvelope({ type: 'scroll.extended', aggregateId: id, seq: 2, data: { keepAliveMs: 90_000 }, correlationId: 'op-7' }));
      expect(await line).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z  scroll\\.extended +${id}  #2  keep_alive=1\\.5m opaque_id=op-7$`));
    } finally {
      p.kill('SIGTERM');
    }
  });

  it('tail --json prints the envelope as stored, and finds the server through DATA_DIR', async () => {
    const dataDir = join(dir, 'data');
    await mkdir(join(dataDir, 'nats'), { recursive: true });
    await copyFile(join(nats.dir, `nats-server_${nats.proc.pid}.ports`), join(dataDir, 'nats', `nats-server_${nats.proc.pid}.ports`));
    // The node's subscriber credentials, where a node keeps them (DATA_DIR/nats/auth).
    await cp(join(nats.dir, 'auth'), join(dataDir, 'nats', 'auth'), { recursive: true });
    const p = spawnCli('events', ['tail', `pit.*.closed`, '--json'], { DATA_DIR: dataDir });
    try {
      await waitForLine(p, 'stderr', (l) => l.startsWith('tailing es.v1.evt.pit.*.closed'));
      const env = makeEnvelope({ type: 'pit.closed', aggregateId: uuid(), seq: 3, data: {} });
      const line = waitForLine(p, 'stdout', (l) => l.includes(env.aggregateId));
      await bus.append(env);
      expect(JSON.parse(await line)).toEqual(env);
    } finally {
      p.kill('SIGTERM');
    }
  });

  it('export writes the whole log as JSON lines that replay --file folds to the same state as the live log', async () => {
    const file = join(dir, 'events.jsonl');
    const ex = await runCli('events', ['export', '--file', file], env());
    expect(ex.code).toBe(0);
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(h.facts.length);
    expect(JSON.parse(lines[0])).toEqual(h.facts[0]);

    const fromFile = await runCli('replay', ['--file', file, '--json'], {});
    const fromLog = await runCli('replay', ['--json'], env());
    expect(fromFile.code).toBe(0);
    const a = JSON.parse(fromFile.stdout);
    const b = JSON.parse(fromLog.stdout);
    expect(a.read).toBe(lines.length);
    expect(a.divergences).toEqual([]);
    expect(a.states).toEqual(b.states);
    expect(byId(a.states)).toMatchObject({ [h.s1]: 'cleared', [h.s2]: 'expired', [h.p1]: 'closed', [h.k1]: 'invalidated' });
  });

  it('replay --at shows every context and credential as it stood at that moment', async () => {
    const at = async (s: number) => {
      const r = await runCli('replay', ['--at', new Date(T0 + s * 1000).toISOString(), '--json'], env());
      return JSON.parse(r.stdout) as { states: Row[]; at: string };
    };
    const t15 = await at(15);
    expect(byId(t15.states)).toEqual({ [h.s1]: 'open', [h.s2]: 'open', [h.p1]: 'open', [h.k1]: 'active' });
    expect(t15.states.find((r) => r.id === h.s1)!.fields).toMatchObject({ keep_alive: '30s', extensions: 1 });

    const t45 = await at(45);
    expect(byId(t45.states)).toEqual({ [h.s1]: 'cleared', [h.s2]: 'open', [h.p1]: 'closed', [h.k1]: 'active' });

    const t64 = await at(64.9);
    expect(byId(t64.states)).toMatchObject({ [h.s2]: 'open', [h.k1]: 'invalidated' });
    expect(t64.states.find((r) => r.id === h.s2)!.note).toBeUndefined();
    // Between the keep-alive's end and the expired fact: still open in the log, flagged.
    const t65 = await at(65.1);
    expect(t65.states.find((r) => r.id === h.s2)).toMatchObject({ status: 'open', note: expect.stringContaining('keep-alive elapsed at 2024-05-01T10:01:05.000Z') });
    expect(byId((await at(65.2)).states)).toMatchObject({ [h.s2]: 'expired' });

    expect(byId((await at(-1)).states)).toEqual({});
  });

  it('replay narrows to one aggregate and prints its timeline', async () => {
    const r = await runCli('replay', ['pit', h.p1], env());
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`pit ${h.p1}`);
    expect(r.stdout).toMatch(/#1 +pit\.opened +-> open\.inUse/);
    expect(r.stdout).toMatch(/#3 +pit\.closed +-> closed/);
    expect(r.stdout).toContain('== divergences (0) ==');
    expect(r.stdout).not.toContain(h.s1);
  });

  it('replay exits 1 and names the fact when the log and the machines disagree', async () => {
    const id = uuid();
    await bus.append(makeEnvelope({ type: 'scroll.opened', aggregateId: id, seq: 1, data: { keepAliveMs: 1_000, indices: [], shards: 0, pinned: [] }, time: T0 }));
    // expired before its keep-alive could run out (uses between facts can only make it later)
    await bus.append(makeEnvelope({ type: 'scroll.expired', aggregateId: id, seq: 2, data: {}, time: T0 + 300 }));
    const r = await runCli('replay', ['--aggregate', 'scroll', '--id', id], env());
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`scroll ${id} #2 scroll.expired: machine emitted nothing`));
    expect(r.stderr).toContain('1 divergence(s)');
  });

  it('replay --at shows an async search running, completed with its status, then deleted; never its request or ES id', async () => {
    const id = uuid();
    const T = T0 + 3_600_000;
    const request = { params: { index: 'logs' }, query: {}, body: '{"query":{"match":{"msg":"needle-in-request"}}}' };
    const submitted = { keepAliveMs: 60_000, esId: 'FmVzLWlkLW9mLXRoZS1zZWFyY2g=', node: 'n1', owner: { username: 'bob', realm: 'native1' }, indices: ['logs'], request, submittedAt: T };
    await bus.append(makeEnvelope({ type: 'asyncsearch.submitted', aggregateId: id, seq: 1, data: submitted, time: T }));
    await bus.append(makeEnvelope({ type: 'asyncsearch.completed', aggregateId: id, seq: 2, data: { status: 200, partial: false, shards: { total: 2, successful: 2, skipped: 0, failed: 0 } }, time: T + 2_000 }));
    await bus.append(makeEnvelope({ type: 'asyncsearch.deleted', aggregateId: id, seq: 3, data: { by: 'bob' }, time: T + 5_000 }));
    const at = async (ms: number) => {
      const r = await runCli('replay', ['--aggregate', 'asyncsearch', '--at', new Date(T + ms).toISOString(), '--json'], env());
      expect(r.stdout).not.toContain('needle-in-request');
      expect(r.stdout).not.toContain(submitted.esId);
      return (JSON.parse(r.stdout) as { states: Row[] }).states.find((x) => x.id === id);
    };
    expect(await at(1_000)).toMatchObject({ aggregate: 'asyncsearch', status: 'running', fields: { indices: 'logs', owner: 'bob@native1', node: 'n1', keep_alive: '1m' } });
    expect(await at(3_000)).toMatchObject({ status: 'completed', fields: { completion_status: 200, partial: false } });
    expect(await at(6_000)).toMatchObject({ status: 'deleted', fields: { by: 'bob', completion_status: 200 } });
    expect(await at(-1)).toBeUndefined();
  });
});
