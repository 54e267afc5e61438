/**
 * Issue 18: no fact a subscriber can read holds a password hash, an API key hash, a token or
 * service-token hash, or any issued secret; events and replay still show every credential's
 * lifecycle. A whole node (security on) on a real nats-server, driven with the official client; the
 * subscriber reads ES_EVT through JetStream and the lifecycle subjects through core NATS.
 */
import { createHash } from 'node:crypto';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { startTestNode, type TestNode } from '../../support/node';
import { scanFacts } from '../../support/secretScan';
import { Client } from 'es8';

let t: TestNode;
let sub: NatsConnection;
let live: Subscription;
const core: string[] = [];
const secrets: string[] = [];
const sha256Url = (s: string) => createHash('sha256').update(s).digest('base64url');

beforeAll(async () => {
  // issue 22's derived keys and reuse detection on: their facts must hold no secret either
  t = await startTestNode({ security: true, settings: { 'xpack.security.authc.api_key.derived_keys.enabled': true, 'xpack.security.authc.token.reuse_detection': 'revoke_family' } });
  sub = await t.nats.connect('subscriber');
  live = sub.subscribe('es.v1.evt.>', { callback: (_e, m) => void core.push(new TextDecoder().decode(m.data)) });
  await sub.flush();

  await t.es.security.putRole({ name: 'reader', cluster: ['manage_own_api_key', 'manage_token'], indices: [{ names: ['books'], privileges: ['read'] }] });
  await t.es.security.putUser({ username: 'bob', password: 'bob-password-1', roles: ['reader'] });
  await t.es.security.changePassword({ username: 'bob', password: 'bob-password-2' });
  const bob = new Client({ node: t.url, auth: { username: 'bob', password: 'bob-password-2' } });
  const key = await bob.security.createApiKey({ name: 'k1' });
  const gone = await bob.security.createApiKey({ name: 'k2' });
  await t.es.security.invalidateApiKey({ ids: [gone.id] });
  const pair = await bob.security.getToken({ grant_type: 'password', username: 'bob', password: 'bob-password-2' });
  const next = await bob.security.getToken({ grant_type: 'refresh_token', refresh_token: pair.refresh_token });
  await t.es.security.invalidateToken({ token: next.access_token });
  const child = await new Client({ node: t.url, auth: { apiKey: key.encoded } }).security.createApiKey({ name: 'child' });
  await t.es.security.invalidateApiKey({ ids: [child.id] });
  const st = await t.es.security.createServiceToken({ namespace: 'elastic', service: 'fleet-server', name: 't1' });
  await bob.close();
  const stSecret = Buffer.from(st.token.value, 'base64').toString().split(':')[1];
  secrets.push('bob-password-1', 'bob-password-2', key.api_key, key.encoded, gone.api_key, st.token.value, stSecret);
  for (const tok of [pair.access_token, pair.refresh_token!, next.access_token, next.refresh_token!]) secrets.push(tok, sha256Url(tok));
  secrets.push(child.api_key, child.encoded);
});
afterAll(async () => {
  live?.unsubscribe();
  await sub?.close();
  await t?.stop();
});

it('no fact in ES_EVT holds a hash or a secret', async () => {
  const { found } = await scanFacts(sub, secrets);
  expect(found).toEqual([]);
});

it('nor does any fact seen on the lifecycle subjects (core NATS)', async () => {
  expect(core.length).toBeGreaterThan(5);
  const hits = core.filter((text) => /\{PBKDF2|\{SSHA256\}|\$2[aby]?\$|"(passwordHash|accessHash|refreshHash|hash|superseding)"/.test(text) || secrets.some((s) => text.includes(s)));
  expect(hits).toEqual([]);
});

it('the subscriber still sees every credential\'s lifecycle', async () => {
  const { types } = await scanFacts(sub);
  expect(types).toEqual(expect.arrayContaining([
    'role.created', 'user.created', 'user.password_changed', 'apikey.created', 'apikey.invalidated',
    'token.created', 'token.refreshed', 'token.invalidated', 'servicetoken.created',
  ]));
});

it('every credential still works (the node opens what it sealed)', async () => {
  const res = await fetch(`${t.url}/_security/_authenticate`, { headers: { authorization: `Basic ${Buffer.from('bob:bob-password-2').toString('base64')}` } });
  expect(res.status).toBe(200);
  const key = secrets[3];
  expect((await fetch(`${t.url}/_security/_authenticate`, { headers: { authorization: `ApiKey ${key}` } })).status).toBe(200);
  const svc = secrets[5];
  expect((await fetch(`${t.url}/_security/_authenticate`, { headers: { authorization: `Bearer ${svc}` } })).status).toBe(200);
});
