import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHECKPOINT_FILE, decodeFactCheckpoint, encodeFactCheckpoint } from '../../../actors/security/factCheckpoint';
import { basic, call, ELASTIC_PASSWORD, startSecurityHarness, type SecurityHarness } from '../../support/securityHarness';

const elastic = basic('elastic', ELASTIC_PASSWORD);
const status = async (h: SecurityHarness, auth: string) => (await call(h.url, 'GET', '/_security/_authenticate', { auth })).status;

describe('security state rebuilt from the event log', () => {
  let h: SecurityHarness;
  const s: Record<string, string> = {};

  beforeAll(async () => {
    h = await startSecurityHarness();
    await call(h.url, 'PUT', '/_security/role/r1', { auth: elastic, body: { cluster: ['manage_token', 'manage_own_api_key'], indices: [{ names: ['ab*'], privileges: ['read'] }] } });
    await call(h.url, 'PUT', '/_security/user/bob', { auth: elastic, body: { password: 'bob-password', roles: ['r1'] } });
    await call(h.url, 'PUT', '/_security/role_mapping/m1', { auth: elastic, body: { roles: ['r1'], rules: { field: { username: '*' } } } });
    const bob = basic('bob', 'bob-password');
    const key = (name: string) => call(h.url, 'POST', '/_security/api_key', { auth: bob, body: { name } }).then((r) => r.body);
    const live = await key('live');
    const dead = await key('dead');
    await call(h.url, 'DELETE', '/_security/api_key', { auth: elastic, body: { ids: [dead.id] } });
    s.liveKey = `ApiKey ${live.encoded}`;
    s.deadKey = `ApiKey ${dead.encoded}`;
    const grant = () => call(h.url, 'POST', '/_security/oauth2/token', { auth: bob, body: { grant_type: 'password', username: 'bob', password: 'bob-password' } }).then((r) => r.body);
    const t1 = await grant();
    const t2 = await grant();
    await call(h.url, 'DELETE', '/_security/oauth2/token', { auth: elastic, body: { token: t2.access_token } });
    const refreshed = (await call(h.url, 'POST', '/_security/oauth2/token', { auth: bob, body: { grant_type: 'refresh_token', refresh_token: t1.refresh_token } })).body;
    s.liveToken = `Bearer ${t1.access_token}`;
    s.deadToken = `Bearer ${t2.access_token}`;
    s.refresh = t1.refresh_token;
    s.refreshedAccess = refreshed.access_token;
    const st = (await call(h.url, 'POST', '/_security/service/elastic/fleet-server/credential/token/keep', { auth: elastic })).body;
    const gone = (await call(h.url, 'POST', '/_security/service/elastic/fleet-server/credential/token/gone', { auth: elastic })).body;
    await call(h.url, 'DELETE', '/_security/service/elastic/fleet-server/credential/token/gone', { auth: elastic });
    s.liveService = `Bearer ${st.token.value}`;
    s.deadService = `Bearer ${gone.token.value}`;
  });
  afterAll(async () => {
    await h.stop();
  });

  const checkAll = async () => {
    expect(await status(h, basic('bob', 'bob-password'))).toBe(200);
    expect((await call(h.url, 'GET', '/_security/role/r1', { auth: elastic })).body.r1.indices[0].names).toEqual(['ab*']);
    expect((await call(h.url, 'GET', '/_security/role_mapping/m1', { auth: elastic })).status).toBe(200);
    expect(await status(h, s.liveKey)).toBe(200);
    const dead = await call(h.url, 'GET', '/_security/_authenticate', { auth: s.deadKey });
    expect(dead.status).toBe(401);
    expect(dead.body.error.additional_unsuccessful_credentials).toMatch(/has been invalidated$/);
    expect(await status(h, s.liveToken)).toBe(200);
    expect((await call(h.url, 'GET', '/_security/_authenticate', { auth: s.deadToken })).body.error.reason).toBe('token expired');
    expect(await status(h, s.liveService)).toBe(200);
    expect(await status(h, s.deadService)).toBe(401);
    // the spent refresh token still answers the same pair inside the 30 s window
    const again = await call(h.url, 'POST', '/_security/oauth2/token', { auth: basic('bob', 'bob-password'), body: { grant_type: 'refresh_token', refresh_token: s.refresh } });
    expect(again.body.access_token).toBe(s.refreshedAccess);
  };

  it('serves every credential as created before the restart', async () => {
    await checkAll();
  });

  it('rebuilds users, roles, mappings, keys, tokens and service tokens after a restart of the security module', async () => {
    await h.restart();
    await checkAll();
  });

  it('rebuilds after the nats-server itself was killed (SIGKILL) and restarted on the same store', async () => {
    h.nats.proc.kill('SIGKILL');
    // restart() right away: its stop() waits for the 'exit' event (it misses a process that already died by signal)
    await h.nats.restart();
    await h.restart();
    await checkAll();
  });

  it('starts from the credential checkpoint plus the log after it (node down after more writes)', async () => {
    const path = join(h.dataDir, CHECKPOINT_FILE);
    const older = readFileSync(path); // as written when the node last stopped
    const k = (await call(h.url, 'POST', '/_security/api_key', { auth: basic('bob', 'bob-password'), body: { name: 'after-checkpoint' } })).body;
    await h.restart(() => writeFileSync(path, older)); // the newer checkpoint is lost: only the log tail has k
    await checkAll();
    expect(await status(h, `ApiKey ${k.encoded}`)).toBe(200);
    await h.restart(); // a clean stop writes the next checkpoint: the older one plus the log after it
    const bytes = readFileSync(path);
    expect(decodeFactCheckpoint(bytes).apiKeys.map((r) => r.keyId)).toContain(k.id);
    const text = bytes.toString('latin1');
    for (const secret of [k.api_key, 'bob-password', ELASTIC_PASSWORD, s.liveToken.slice(7)]) expect(text).not.toContain(secret);
  });

  it('really folds the checkpoint: a user and an API key only the checkpoint knows exist after the start', async () => {
    const path = join(h.dataDir, CHECKPOINT_FILE);
    const cp = decodeFactCheckpoint(readFileSync(path));
    const bobFact = cp.facts.find((f) => f.type === 'user.created' && (f.data as { username: string }).username === 'bob')!;
    // (bob's sealed password hash is bound to bob's aggregate: the ghost gets none)
    const { sealed: _sealed, ...bobData } = bobFact.data as Record<string, unknown>;
    const ghost = { ...bobFact, aggregateId: '3f0c7d1e-8b2a-4c5d-9e6f-0a1b2c3d4e5f', id: '0195f0c7-d1e8-7b2a-8c5d-9e6f0a1b2c3d', data: { ...bobData, username: 'ghost' } };
    // a key record with the live key's hash under another id: its secret opens it only if the record is used
    const [liveId, liveSecret] = Buffer.from(s.liveKey.slice(7), 'base64').toString().split(':');
    const live = cp.apiKeys.find((r) => r.keyId === liveId)!;
    const ghostKey = { ...live, keyId: 'ghostKeyId0123456789', name: 'ghost-key' };
    await h.restart(() => writeFileSync(path, encodeFactCheckpoint({ seq: cp.seq, facts: [...cp.facts, ghost], apiKeys: [...cp.apiKeys, ghostKey] }, cp.stream)));
    expect((await call(h.url, 'GET', '/_security/user/ghost', { auth: elastic })).status).toBe(200);
    const who = await call(h.url, 'GET', '/_security/_authenticate', { auth: `ApiKey ${Buffer.from(`ghostKeyId0123456789:${liveSecret}`).toString('base64')}` });
    expect(who.status).toBe(200);
    expect(who.body.api_key).toEqual({ id: 'ghostKeyId0123456789', name: 'ghost-key' });
  });

  it('folds the whole log when the credential checkpoint is damaged', async () => {
    const path = join(h.dataDir, CHECKPOINT_FILE);
    await h.restart(() => {
      const bytes = readFileSync(path);
      bytes[bytes.length >> 1] ^= 0x20;
      writeFileSync(path, bytes);
    });
    expect(h.security.services!.apiKeys.records.has('ghostKeyId0123456789')).toBe(false); // the doctored file was not used
    await checkAll();
  });

  it('keeps the generated elastic password hashed in the log and reuses it', async () => {
    const g = await startSecurityHarness({ settings: { 'bootstrap.password': '' } });
    try {
      expect(g.printed).toHaveLength(1);
      const pw = /elastic user[^\n]*\n\s+(\S+)/.exec(g.printed[0])![1];
      expect(pw).toHaveLength(20);
      expect(await status(g, basic('elastic', pw))).toBe(200);
      await g.restart();
      expect(g.printed).toHaveLength(1); // printed once, at first start
      expect(await status(g, basic('elastic', pw))).toBe(200);
    } finally {
      await g.stop();
    }
  });
});

describe('several nodes on one event log', () => {
  let a: SecurityHarness;
  let b: SecurityHarness;
  beforeAll(async () => {
    a = await startSecurityHarness({ nodeName: 'a' });
    b = await startSecurityHarness({ nats: a.nats, nodeName: 'b' });
  });
  afterAll(async () => {
    await b.stop();
    await a.stop();
  });

  const eventually = async (f: () => Promise<boolean>) => {
    for (let i = 0; i < 100; i++) {
      if (await f()) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error('condition not reached');
  };

  it('sees credentials created on another node', async () => {
    const k = (await call(a.url, 'POST', '/_security/api_key', { auth: elastic, body: { name: 'shared' } })).body;
    await eventually(async () => (await status(b, `ApiKey ${k.encoded}`)) === 200);
  });

  it('refuses a key invalidated on another node at once, though node B had it cached', async () => {
    const k = (await call(a.url, 'POST', '/_security/api_key', { auth: elastic, body: { name: 'doomed' } })).body;
    await eventually(async () => (await status(b, `ApiKey ${k.encoded}`)) === 200); // warm on B
    await call(a.url, 'DELETE', '/_security/api_key', { auth: elastic, body: { ids: [k.id] } });
    await eventually(async () => (await status(b, `ApiKey ${k.encoded}`)) === 401);
  });

  it('refuses an access token invalidated on another node', async () => {
    const t = (await call(a.url, 'POST', '/_security/oauth2/token', { auth: elastic, body: { grant_type: 'client_credentials' } })).body;
    await eventually(async () => (await status(b, `Bearer ${t.access_token}`)) === 200);
    await call(b.url, 'DELETE', '/_security/oauth2/token', { auth: elastic, body: { token: t.access_token } });
    await eventually(async () => (await status(a, `Bearer ${t.access_token}`)) === 401);
  });

  it('forgets a cached password changed on another node', async () => {
    await call(a.url, 'PUT', '/_security/user/zoe', { auth: elastic, body: { password: 'zoe-password-1', roles: [] } });
    await eventually(async () => (await status(b, basic('zoe', 'zoe-password-1'))) === 200);
    await call(a.url, 'PUT', '/_security/user/zoe/_password', { auth: elastic, body: { password: 'zoe-password-2' } });
    await eventually(async () => (await status(b, basic('zoe', 'zoe-password-1'))) === 401);
    expect(await status(b, basic('zoe', 'zoe-password-2'))).toBe(200);
  });
});
