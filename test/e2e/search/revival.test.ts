/**
 * Issue 6 item 5: contexts survive a restart. A real node process (`scripts/start.ts`, as `npm start`
 * runs it) is killed with SIGKILL and started again on the same NATS store and data dir; scroll
 * contexts and PITs opened before the kill continue after it (same ids, next batch, same PIT
 * results), owners still apply, and contexts that ended or ran out of keep-alive while the node was
 * down answer ES's 404 saying why. `GET /_contexts/<id>` shows each context's history.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { startNats, type TestNats } from '../../support/natsServer';
import { spawnCli } from '../../support/cli';
import { allFacts, raw, type RawResponse } from './helpers';
import { rng } from '../../support/rng';
import { validateFact } from '../../../streams/eventSchemas';

const PASSWORD = 'revival-test-pw';
const basic = (u: string, p: string) => ({ authorization: `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}` });
const ELASTIC = basic('elastic', PASSWORD);
const BOB = basic('bob', 'bob-password');

let nats: TestNats;
let dataDir: string;
let port: number;
let child: ChildProcess | undefined;
let stderr = '';
const node = () => ({ url: `http://127.0.0.1:${port}` });
const call = (method: string, path: string, body?: unknown, who = ELASTIC): Promise<RawResponse> => raw(node(), method, path, body, who);

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const p = (srv.address() as { port: number }).port;
      srv.close(() => res(p));
    });
    srv.on('error', rej);
  });
}

async function startNode(): Promise<void> {
  stderr = '';
  child = spawnCli('start', [], {
    ...nats.env('node'),
    DATA_DIR: dataDir,
    CONFIG: '/dev/null', // an empty settings file (a CONFIG that does not exist stops the start)
    CONFIG_DIR: join(dataDir, 'config'),
    HOST: '127.0.0.1',
    PORT: String(port),
    ELASTIC_PASSWORD: PASSWORD,
    LOG_LEVEL: 'warn',
  });
  child.stderr!.on('data', (d) => (stderr += d));
  child.stdout!.on('data', (d) => (stderr += d));
  const deadline = Date.now() + 45_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`node exited with ${child.exitCode}: ${stderr}`);
    try {
      if ((await call('GET', '/')).status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`node did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function killNode(): Promise<void> {
  const c = child!;
  child = undefined;
  if (c.exitCode !== null) return;
  const gone = new Promise((r) => c.once('exit', r));
  c.kill('SIGKILL');
  await gone;
}

const N = 600;
const r = rng(61);
const docs = Array.from({ length: N }, (_, i) => ({ n: Math.floor(r() * 1e12), tag: `t${i % 7}` }));
const ids = (p: RawResponse) => p.json.hits.hits.map((h: { _id: string }) => h._id) as string[];

/** Walks a PIT sorted by `n` with search_after; returns [id, sort values] per hit. */
async function walkPit(pitId: string, who = ELASTIC): Promise<Array<[string, unknown[]]>> {
  const out: Array<[string, unknown[]]> = [];
  let after: unknown[] | undefined;
  for (;;) {
    const p = await call('POST', '/_search', { size: 97, pit: { id: pitId, keep_alive: '10m' }, sort: [{ n: 'asc' }], ...(after ? { search_after: after } : {}) }, who);
    if (p.status !== 200) throw new Error(`${p.status} ${p.text}`);
    const hits = p.json.hits.hits as Array<{ _id: string; sort: unknown[] }>;
    if (!hits.length) return out;
    for (const h of hits) out.push([h._id, h.sort]);
    after = hits[hits.length - 1].sort;
  }
}

// Before the kill.
let scrollPage2Id: string;
let scrollPage2: string[];
let seenBeforeKill: string[];
let bobScrollId: string;
let shortScrollId: string;
let clearedScrollId: string;
let pitId: string;
let pitBefore: Array<[string, unknown[]]>;

beforeAll(async () => {
  nats = await startNats();
  dataDir = await mkdtemp(join(tmpdir(), 'revival-'));
  port = await freePort();
  await startNode();
  expect((await call('PUT', '/_security/role/reader', { indices: [{ names: ['logs'], privileges: ['read'] }] })).status).toBe(200);
  expect((await call('PUT', '/_security/user/bob', { password: 'bob-password', roles: ['reader'] })).status).toBe(200);
  expect((await call('PUT', '/logs', { settings: { number_of_shards: 3 }, mappings: { properties: { n: { type: 'long' }, tag: { type: 'keyword' } } } })).status).toBe(200);
  const bulk = docs.map((d, i) => `${JSON.stringify({ index: { _index: 'logs', _id: `d${i}` } })}\n${JSON.stringify(d)}\n`).join('');
  const b = await call('POST', '/_bulk?refresh=true', bulk);
  expect(b.json.errors).toBe(false);

  // A scroll two pages in (sorted by _doc), its second id kept.
  const p1 = await call('POST', '/logs/_search?scroll=10m', { size: 50, sort: ['_doc'] });
  expect(p1.status).toBe(200);
  const p2 = await call('POST', '/_search/scroll', { scroll: '10m', scroll_id: p1.json._scroll_id });
  scrollPage2Id = p2.json._scroll_id;
  scrollPage2 = ids(p2);
  seenBeforeKill = [...ids(p1), ...scrollPage2];

  bobScrollId = (await call('POST', '/logs/_search?scroll=10m', { size: 10, query: { term: { tag: 't3' } } }, BOB)).json._scroll_id;
  shortScrollId = (await call('POST', '/logs/_search?scroll=1s', { size: 10 })).json._scroll_id;
  clearedScrollId = (await call('POST', '/logs/_search?scroll=10m', { size: 10 })).json._scroll_id;
  expect((await call('DELETE', '/_search/scroll', { scroll_id: clearedScrollId })).json.num_freed).toBe(3);

  pitId = (await call('POST', '/logs/_pit?keep_alive=10m')).json.id;
  pitBefore = await walkPit(pitId);

  // Writes after the contexts opened: invisible to them, before and after the restart.
  const later = Array.from({ length: 40 }, (_, i) => `${JSON.stringify({ index: { _index: 'logs', _id: `late${i}` } })}\n${JSON.stringify({ n: i, tag: 'late' })}\n`).join('');
  await call('POST', '/_bulk?refresh=true', later);
  await call('DELETE', '/logs/_doc/d1?refresh=true');
  // Acknowledged without a refresh, then SIGKILL at once: still there after the restart.
  const unrefreshed = Array.from({ length: 25 }, (_, i) => `${JSON.stringify({ index: { _index: 'logs', _id: `norefresh${i}` } })}\n${JSON.stringify({ n: -i, tag: 'nr' })}\n`).join('');
  expect((await call('POST', '/_bulk', unrefreshed)).json.errors).toBe(false);

  await killNode();
  await new Promise((res) => setTimeout(res, 1500)); // the 1s scroll runs out while the node is down
  await startNode();
}, 120_000);

afterAll(async () => {
  await killNode().catch(() => undefined);
  await nats?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

it('continues a scroll opened before the kill with its next batch, through to the end', async () => {
  const seen = new Set(seenBeforeKill);
  let id = scrollPage2Id;
  for (;;) {
    const p = await call('POST', '/_search/scroll', { scroll: '10m', scroll_id: id });
    expect(p.status).toBe(200);
    expect(p.json.hits.total).toEqual({ value: N, relation: 'eq' });
    const page = ids(p);
    if (!page.length) break;
    for (const x of page) {
      expect(seen.has(x)).toBe(false); // no page repeated, no doc twice
      seen.add(x);
    }
    id = p.json._scroll_id;
  }
  // Exactly the documents of the snapshot taken at open: d1 deleted later is still there, late* are not.
  expect([...seen].sort()).toEqual(docs.map((_, i) => `d${i}`).sort());
});

it('keeps every acknowledged write across the kill (including unrefreshed ones and the delete)', async () => {
  await call('POST', '/logs/_refresh');
  const c = await call('GET', '/logs/_count');
  expect(c.json.count).toBe(N + 40 + 25 - 1);
  expect((await call('GET', '/logs/_doc/norefresh24')).json._source).toEqual({ n: -24, tag: 'nr' });
  expect((await call('GET', '/logs/_doc/d1')).status).toBe(404);
});

it('returns the same batch again for a re-sent scroll id after the restart (retry-safe ids)', async () => {
  const again = await call('POST', '/_search/scroll', { scroll: '10m', scroll_id: scrollPage2Id });
  expect(again.status).toBe(200);
  const before = await call('POST', '/_search/scroll', { scroll: '10m', scroll_id: scrollPage2Id });
  expect(ids(before)).toEqual(ids(again));
  expect(ids(again)).not.toEqual(scrollPage2);
});

it('walks a PIT opened before the kill to exactly the results it gave before', async () => {
  const after = await walkPit(pitId);
  expect(after).toEqual(pitBefore);
  expect(after).toHaveLength(N);
});

it('keeps the owner of a revived scroll: another user gets 404, the owner continues', async () => {
  const stolen = await call('POST', '/_search/scroll', { scroll: '1m', scroll_id: bobScrollId });
  expect(stolen.status).toBe(404);
  expect(stolen.json.error.root_cause[0].type).toBe('search_context_missing_exception');
  const mine = await call('POST', '/_search/scroll', { scroll: '1m', scroll_id: bobScrollId }, BOB);
  expect(mine.status).toBe(200);
  expect(ids(mine).length).toBeGreaterThan(0);
});

it('expires a context whose keep-alive ran out while the node was down, and says so', async () => {
  const p = await call('POST', '/_search/scroll', { scroll: '1m', scroll_id: shortScrollId });
  expect(p.status).toBe(404);
  expect(p.json.error.root_cause[0].type).toBe('search_context_missing_exception');
  expect(p.json.error.root_cause[0].reason).toMatch(/expired at \d{4}-/);
});

it('remembers contexts cleared before the kill: 404 naming who cleared them', async () => {
  const p = await call('POST', '/_search/scroll', { scroll: '1m', scroll_id: clearedScrollId });
  expect(p.status).toBe(404);
  expect(p.json.error.root_cause[0].reason).toMatch(/cleared at .* by \[elastic\]/);
});

it('logs no second opened fact for a revived context, and an expired fact for the one that ran out', async () => {
  const nc = await nats.connect();
  try {
    const facts = await allFacts(nc);
    const opened = facts.filter((f) => f.type === 'scroll.opened' || f.type === 'pit.opened');
    expect(new Set(opened.map((f) => f.aggregateId)).size).toBe(opened.length);
    // Every fact, the revival's included, matches its JSON Schema and holds no raw id or password.
    for (const f of facts) {
      const { streamSeq: _s, ...wire } = f;
      expect({ type: f.type, errors: validateFact(wire) }).toEqual({ type: f.type, errors: [] });
    }
    const text = JSON.stringify(facts);
    for (const secret of [PASSWORD, 'bob-password', scrollPage2Id, pitId]) expect(text).not.toContain(secret);
    const shortCtx = (await call('GET', `/_contexts/${encodeURIComponent(shortScrollId)}`)).json.id;
    expect(facts.filter((f) => f.aggregateId === shortCtx).map((f) => f.type)).toEqual(['scroll.opened', 'scroll.expired']);
  } finally {
    await nc.close();
  }
});

it('GET /_contexts/<id> tells a context\'s history from the log', async () => {
  const pit = await call('GET', `/_contexts/${encodeURIComponent(pitId)}`);
  expect(pit.status).toBe(200);
  expect(pit.json).toMatchObject({ kind: 'pit', status: 'open', indices: ['logs'], owner: { username: 'elastic' }, shards: 3 });
  expect(pit.json.history[0].type).toBe('pit.opened');
  expect(pit.json.history.every((h: { data: object }) => !('pinned' in h.data))).toBe(true);

  const cleared = await call('GET', `/_contexts/${encodeURIComponent(clearedScrollId)}`);
  expect(cleared.json).toMatchObject({ kind: 'scroll', status: 'cleared', by: 'elastic' });
  expect(cleared.json.history.map((h: { type: string }) => h.type)).toEqual(['scroll.opened', 'scroll.cleared']);

  for (const junk of ['8a5f4b3e-0000-4000-8000-000000000000', 'not-an-id', encodeURIComponent('es.v1.evt.>')]) {
    const missing = await call('GET', `/_contexts/${junk}`);
    expect(missing.status).toBe(404);
    expect(missing.json.error.type).toBe('resource_not_found_exception');
    expect(missing.json.status).toBe(404);
  }

  const denied = await call('GET', `/_contexts/${encodeURIComponent(pitId)}`, undefined, BOB);
  expect(denied.status).toBe(403);
});

it('revives them again on a second restart (revived contexts keep their facts going)', async () => {
  await killNode();
  await startNode();
  expect(await walkPit(pitId)).toEqual(pitBefore);
  const close = await call('DELETE', '/_pit', { id: pitId });
  expect(close.json).toEqual({ succeeded: true, num_freed: 3 });
  const gone = await call('POST', '/_search', { pit: { id: pitId }, size: 1 });
  expect(gone.status).toBe(404);
  expect(gone.json.error.root_cause[0].reason).toMatch(/closed at .* by \[elastic\]/);
});
