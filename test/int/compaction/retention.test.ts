/**
 * Issue 20 parts 1-2: with `events.retention: 5s`, history ages out of ES_EVT and nothing live is
 * lost. A node process on a real (secured) nats-server: users, API keys, tokens and service tokens
 * made before the retention, and a scroll and a PIT kept open across it, all work after a `kill -9`
 * restart with the node's local checkpoint files deleted; an invalidated key stays refused; the facts
 * of a cleared scroll older than the retention are gone from ES_EVT; an async search kept after it
 * completed outlives its facts (ES_STATE keeps it), a deleted one stays gone.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Client } from 'es8';
import { startNats, type TestNats } from '../../support/natsServer';
import { spawnCli } from '../../support/cli';
import { poll } from '../../support/poll';
import { freePort } from '../../../actors/natsCluster';
import { readFacts, readStream, STATE_STREAM, type Envelope } from '../../../streams';

jest.setTimeout(180_000);
const PASSWORD = 'retention-test-pw';
let nats: TestNats;
let dataDir: string;
let port: number;
let node: ChildProcess | undefined;
let out = '';
const url = () => `http://127.0.0.1:${port}`;
const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

async function startNode(): Promise<void> {
  out = '';
  node = spawnCli('start', [], {
    ...nats.env('node'), DATA_DIR: dataDir, CONFIG_DIR: join(dataDir, 'config'), CONFIG: '/dev/null', HOST: '127.0.0.1', PORT: String(port),
    ELASTIC_PASSWORD: PASSWORD, LOG_LEVEL: 'info', ES_SETTING_EVENTS_RETENTION: '5s', ES_SETTING_XPACK_SECURITY_AUTHC_TOKEN_TIMEOUT: '1h',
  });
  node.stdout!.on('data', (d) => (out = (out + d).slice(-50_000)));
  node.stderr!.on('data', (d) => (out = (out + d).slice(-50_000)));
  const p = node;
  await poll(async () => {
    if (p.exitCode !== null) throw new Error(`node exited ${p.exitCode}: ${out}`);
    return (await fetch(url()).catch(() => undefined))?.status === 401;
  }, 60_000, 'node up');
}

async function kill9(): Promise<void> {
  const p = node!;
  const gone = new Promise((r) => p.once('exit', r));
  p.kill('SIGKILL');
  await gone;
}

const status = async (authorization: string) => (await fetch(`${url()}/_security/_authenticate`, { headers: { authorization } })).status;

async function factsOf(id: string): Promise<Envelope[]> {
  const nc = await nats.connect('subscriber');
  const got: Envelope[] = [];
  for await (const f of readFacts(nc)) if (f.aggregateId === id) got.push(f);
  await nc.close();
  return got;
}

beforeAll(async () => {
  nats = await startNats();
  dataDir = await mkdtemp(join(tmpdir(), 'retention-'));
  port = await freePort();
  await startNode();
});
afterAll(async () => {
  if (node && node.exitCode === null) await kill9();
  await nats?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

it('keeps every credential and open context across the retention, a kill -9 and lost checkpoints', async () => {
  const es = new Client({ node: url(), auth: { username: 'elastic', password: PASSWORD } });
  await es.security.putRole({ name: 'reader', cluster: ['manage_own_api_key', 'manage_token'], indices: [{ names: ['books'], privileges: ['read'] }] });
  await es.security.putUser({ username: 'bob', password: 'bob-password-1', roles: ['reader'] });
  const bob = new Client({ node: url(), auth: { username: 'bob', password: 'bob-password-1' } });
  const key = await bob.security.createApiKey({ name: 'live' });
  const dead = await bob.security.createApiKey({ name: 'dead' });
  await es.security.invalidateApiKey({ ids: [dead.id] });
  const token = await bob.security.getToken({ grant_type: 'password', username: 'bob', password: 'bob-password-1' });
  const svc = await es.security.createServiceToken({ namespace: 'elastic', service: 'fleet-server', name: 'kept' });
  await es.indices.create({ index: 'books', settings: { number_of_shards: 1, number_of_replicas: 0 } });
  await es.bulk({ refresh: true, operations: [1, 2, 3].flatMap((n) => [{ index: { _index: 'books', _id: String(n) } }, { n }]) });
  const scroll = await es.search({ index: 'books', scroll: '2m', size: 1, sort: ['_doc'] });
  const pit = await es.openPointInTime({ index: 'books', keep_alive: '2m' });
  // an async search kept after it completed, and one deleted: the first outlives its facts, the second stays gone
  const kept = await es.asyncSearch.submit({ index: 'books', keep_alive: '10m', wait_for_completion_timeout: '5s', keep_on_completion: true, size: 10 });
  const gone = await es.asyncSearch.submit({ index: 'books', keep_alive: '10m', wait_for_completion_timeout: '5s', keep_on_completion: true });
  await es.asyncSearch.delete({ id: gone.id! });
  const cleared = await es.search({ index: 'books', scroll: '2m', size: 1 });
  await es.clearScroll({ scroll_id: cleared._scroll_id! });
  // The cleared scroll's uuid: the scroll context whose facts end with `cleared`.
  const nc = await nats.connect('subscriber');
  const byId = new Map<string, string[]>();
  for await (const f of readFacts(nc)) if (f.type.startsWith('scroll.')) byId.set(f.aggregateId, [...(byId.get(f.aggregateId) ?? []), f.type]);
  await nc.close();
  const clearedUuid = [...byId].find(([, t]) => t.includes('scroll.cleared'))![0];

  // Past the retention: the history goes (the cleared scroll's facts, the users' and keys' facts)...
  await poll(async () => (await factsOf(clearedUuid)).length === 0, 30_000, 'the cleared scroll\'s facts aged out', 500);
  const left = await (async () => {
    const c = await nats.connect('subscriber');
    const types: string[] = [];
    for await (const f of readFacts(c)) types.push(f.type);
    await c.close();
    return types;
  })();
  expect(left).not.toContain('user.created');
  expect(left).not.toContain('apikey.created');
  // ...and ES_STATE (node-only) holds the live state.
  const nodeNc = await nats.connect();
  const states: string[] = [];
  for await (const m of readStream(nodeNc, STATE_STREAM)) states.push(m.subject);
  await nodeNc.close();
  expect(states).toEqual(expect.arrayContaining(['es.v1.state.position', `es.v1.state.apikey.${key.id}`, `es.v1.state.apikey.${dead.id}`]));
  expect(states).not.toContain(`es.v1.state.scroll.${clearedUuid}`);
  expect(states.filter((x) => x.startsWith('es.v1.state.asyncsearch.'))).toHaveLength(1);

  // Replay and time travel say when the asked-for moment is older than the kept history.
  const { runCli } = await import('../../support/cli');
  const tooOld = await runCli('replay', ['--at', new Date(Date.now() - 3_600_000).toISOString()], nats.env('subscriber'));
  expect(tooOld.code).not.toBe(0);
  expect(tooOld.stderr).toMatch(/is older than the kept history: ES_EVT keeps facts from \S+ on \(older ones were removed once compacted, events\.retention\), so the state then cannot be rebuilt/);
  const whole = await runCli('replay', ['--json'], nats.env('subscriber'));
  expect(whole.code).toBe(0);
  expect(JSON.parse(whole.stdout).history_from).toMatch(/^\d{4}-/);

  // kill -9, the node's local checkpoints deleted, start again.
  await kill9();
  await rm(join(dataDir, 'contexts-checkpoint.json'), { force: true });
  await rm(join(dataDir, 'security-checkpoint.bin'), { force: true });
  await startNode();

  expect(await status(basic('bob', 'bob-password-1'))).toBe(200);
  expect(await status(`ApiKey ${key.encoded}`)).toBe(200);
  expect(await status(`ApiKey ${dead.encoded}`)).toBe(401);
  expect(await status(`Bearer ${token.access_token}`)).toBe(200);
  expect(await status(`Bearer ${svc.token.value}`)).toBe(200);
  const es2 = new Client({ node: url(), auth: { username: 'elastic', password: PASSWORD } });
  const page2 = await es2.scroll({ scroll_id: scroll._scroll_id!, scroll: '2m' });
  expect(page2.hits.hits.map((h) => h._id)).toEqual(['2']);
  const inPit = await es2.search({ pit: { id: pit.id, keep_alive: '2m' }, size: 10 });
  expect(inPit.hits.hits).toHaveLength(3);
  const result = await es2.asyncSearch.get({ id: kept.id! });
  expect(result.is_running).toBe(false);
  expect(result.response.hits.hits.map((h) => h._id).sort()).toEqual(['1', '2', '3']);
  expect((await fetch(`${url()}/_async_search/${gone.id}`, { headers: { authorization: basic('elastic', PASSWORD) } })).status).toBe(404);
  const refreshed = await bob.security.getToken({ grant_type: 'refresh_token', refresh_token: token.refresh_token });
  expect(await status(`Bearer ${refreshed.access_token}`)).toBe(200);
  await Promise.all([es.close(), es2.close(), bob.close()]);
});
