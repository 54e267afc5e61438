/**
 * Issue 18: a node started on a DATA_DIR written by the build before it (test/fixtures/pre18-*:
 * credential hashes in clear in ES_EVT, an open nats-server; made by makePre18DataDir.ts) keeps every
 * user, key, token and service token working, its nats-server lets no anonymous client in, and after
 * the start no fact a subscriber can read holds a hash. The node's clock is set to just after the
 * fixture was made, so its tokens are as valid as they were then.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pino from 'pino';
import { connect } from '@nats-io/transport-node';
import { Client } from 'es8';
import { startSystem, type System } from '../../../actors/system';
import { Settings } from '../../../actors/config';
import { connectBus } from '../../../streams/busConnection';
import { openStoppedLog } from '../../../scripts/cli/stoppedNode';
import { scanFacts } from '../../support/secretScan';

jest.setTimeout(120_000);

const FIXTURES = resolve(__dirname, '../../fixtures');
interface Creds {
  made: number;
  elastic: string;
  alice: string;
  apiKey: string;
  invalidatedApiKey: string;
  token: { access: string; refresh: string; spentAccess: string };
  serviceToken: string;
  scrollId: string;
}

let dir: string;
let dataDir: string;
let creds: Creds;
let sys: System | undefined;
const t0 = Date.now();
const clock = { now: () => creds.made + 60_000 + (Date.now() - t0) };
const logs: string[] = [];

const boot = () =>
  startSystem({
    host: '127.0.0.1', port: 0, dataDir, configDir: join(dataDir, 'config'), clock,
    settings: new Settings({ 'xpack.security.authc.token.timeout': '1h' }),
    log: pino({ level: 'info' }, { write: (l: string) => void logs.push(l) }),
  });
const status = async (authorization: string) =>
  (await fetch(`${sys!.url}/_security/_authenticate`, { headers: { authorization } })).status;
const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'upgrade-'));
  expect(spawnSync('tar', ['-xzf', join(FIXTURES, 'pre18-datadir.tar.gz'), '-C', dir]).status).toBe(0);
  dataDir = join(dir, 'data');
  creds = JSON.parse(await readFile(join(FIXTURES, 'pre18-credentials.json'), 'utf8')) as Creds;
});
afterAll(async () => {
  await sys?.stop();
  await rm(dir, { recursive: true, force: true });
});

it('the fixture is what the old build wrote: hashes in clear in ES_EVT', async () => {
  const copy = await openStoppedLog(join(dataDir, 'nats'));
  try {
    const nc = await connectBus(copy.conn);
    const { found } = await scanFacts(nc);
    await nc.close();
    expect(found.length).toBeGreaterThan(3);
    expect(found.join('\n')).toMatch(/\{PBKDF2\}/);
  } finally {
    await copy.close();
  }
});

it('starts on it: the log is rewritten once with the secrets sealed, and no fact a subscriber reads holds a hash', async () => {
  sys = await boot();
  expect(logs.join('')).toMatch(/rewriting it once with them sealed/);
  await expect(connect({ servers: sys.nats!.url, reconnect: false })).rejects.toThrow('Authorization Violation');
  const sub = await connectBus(sys.nats!.connection('subscriber'));
  const { found, types } = await scanFacts(sub, [creds.elastic, creds.alice, creds.apiKey, creds.token.access, creds.token.refresh, creds.serviceToken]);
  await sub.close();
  expect(found).toEqual([]);
  expect(types).toEqual(expect.arrayContaining(['user.password_changed', 'role.created', 'user.created', 'apikey.created', 'apikey.invalidated', 'token.created', 'token.refreshed', 'servicetoken.created', 'scroll.opened']));
});

it('keeps every user, API key, token and service token working (and the invalidated key refused), and its open scroll', async () => {
  expect(await status(basic('elastic', creds.elastic))).toBe(200);
  expect(await status(basic('alice', creds.alice))).toBe(200);
  expect(await status(`ApiKey ${creds.apiKey}`)).toBe(200);
  expect(await status(`ApiKey ${creds.invalidatedApiKey}`)).toBe(401);
  expect(await status(`Bearer ${creds.token.access}`)).toBe(200);
  expect(await status(`Bearer ${creds.serviceToken}`)).toBe(200);
  const alice = new Client({ node: sys!.url, auth: { username: 'alice', password: creds.alice } });
  const refreshed = await alice.security.getToken({ grant_type: 'refresh_token', refresh_token: creds.token.refresh });
  expect(await status(`Bearer ${refreshed.access_token}`)).toBe(200);
  await alice.close();
});

it('a restart does not rewrite it again, and everything still works', async () => {
  await sys!.stop();
  logs.length = 0;
  sys = await boot();
  expect(logs.join('')).not.toMatch(/rewriting it once/);
  expect(await status(basic('alice', creds.alice))).toBe(200);
  expect(await status(`ApiKey ${creds.apiKey}`)).toBe(200);
  expect(await status(`Bearer ${creds.serviceToken}`)).toBe(200);
});
