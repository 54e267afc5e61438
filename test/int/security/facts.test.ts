import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { readFacts, subjects } from '../../../streams';
import { basic, call, ELASTIC_PASSWORD, startSecurityHarness, type SecurityHarness } from '../../support/securityHarness';

const dec = new TextDecoder();

describe('security facts on NATS and in the event log', () => {
  let h: SecurityHarness;
  let subs: Subscription[];
  let nc: NatsConnection;
  const seen: Array<{ subject: string; text: string }> = [];
  const invalidations: unknown[] = [];
  const elastic = basic('elastic', ELASTIC_PASSWORD);
  const secrets: string[] = [];

  beforeAll(async () => {
    h = await startSecurityHarness();
    nc = await h.nats.connect();
    // The node role subscribes to each family of es.v1 subjects, not to es.v1.> as a whole.
    subs = [subjects.allFacts, subjects.authInvalidate].map((s) =>
      nc.subscribe(s, {
        callback: (_e, m) => {
          const text = dec.decode(m.data);
          if (m.subject === subjects.authInvalidate) invalidations.push(JSON.parse(text));
          else seen.push({ subject: m.subject, text });
        },
      }),
    );
    await nc.flush();
  });
  afterAll(async () => {
    for (const s of subs) s.unsubscribe();
    await nc.drain();
    await h.stop();
  });

  const waitFor = async (pred: () => boolean) => {
    for (let i = 0; i < 100 && !pred(); i++) await new Promise((r) => setTimeout(r, 20));
    expect(pred()).toBe(true);
  };

  it('publishes user and role facts on es.v1.evt.<aggregate>.<uuid>.<fact>, the password hash sealed', async () => {
    await call(h.url, 'PUT', '/_security/role/r1', { auth: elastic, body: { cluster: ['manage_token', 'manage_own_api_key'] } });
    await call(h.url, 'PUT', '/_security/user/bob', { auth: elastic, body: { password: 'bob-secret-pw', roles: ['r1'] } });
    secrets.push('bob-secret-pw');
    await waitFor(() => seen.some((s) => s.subject.endsWith('.created') && s.subject.startsWith('es.v1.evt.user.')));
    const user = seen.find((s) => s.subject.startsWith('es.v1.evt.user.'))!;
    expect(user.subject).toMatch(/^es\.v1\.evt\.user\.[0-9a-f-]{36}\.created$/);
    const env = JSON.parse(user.text);
    expect(env).toMatchObject({ v: 1, type: 'user.created', seq: 1, data: { username: 'bob', realm: 'native', roles: ['r1'] } });
    expect(env.data.passwordHash).toBeUndefined();
    expect(Object.keys(env.data.sealed).sort()).toEqual(['data', 'iv', 'kid', 'tag']);
    // The node opens it: bob's password hash is what the fact sealed.
    expect(h.security.services!.facts.seal.open(env).data.passwordHash).toMatch(/^\{PBKDF2\}10000\$/);
    expect(seen.some((s) => /^es\.v1\.evt\.role\.[0-9a-f-]{36}\.created$/.test(s.subject))).toBe(true);
  });

  it('publishes API key created/invalidated facts keyed by the key id, the {SSHA256} hash sealed, and broadcasts the invalidation', async () => {
    const k = (await call(h.url, 'POST', '/_security/api_key', { auth: basic('bob', 'bob-secret-pw'), body: { name: 'k1' } })).body;
    secrets.push(k.api_key, k.encoded);
    await call(h.url, 'DELETE', '/_security/api_key', { auth: elastic, body: { ids: [k.id] } });
    await waitFor(() => seen.some((s) => s.subject === `es.v1.evt.apikey.${k.id}.invalidated`));
    const created = JSON.parse(seen.find((s) => s.subject === `es.v1.evt.apikey.${k.id}.created`)!.text);
    expect(created.data).toMatchObject({ name: 'k1', keyType: 'rest', owner: { username: 'bob', realm: 'default_native', realmType: 'native' }, roleDescriptors: {}, metadata: {} });
    expect(created.data.hash).toBeUndefined();
    expect(h.security.services!.facts.seal.open(created).data.hash).toMatch(/^\{SSHA256\}/);
    expect(created.data.limitedBy).toHaveProperty('r1');
    await waitFor(() => invalidations.some((m) => (m as { kind: string }).kind === 'apikey'));
    expect(invalidations).toContainEqual(expect.objectContaining({ kind: 'apikey', ids: [k.id] }));
  });

  it('publishes token pair facts (created, refreshed, invalidated) keyed by our token id, hashes and the superseding pair sealed', async () => {
    const t = (await call(h.url, 'POST', '/_security/oauth2/token', { auth: basic('bob', 'bob-secret-pw'), body: { grant_type: 'password', username: 'bob', password: 'bob-secret-pw' } })).body;
    const n = (await call(h.url, 'POST', '/_security/oauth2/token', { auth: basic('bob', 'bob-secret-pw'), body: { grant_type: 'refresh_token', refresh_token: t.refresh_token } })).body;
    await call(h.url, 'DELETE', '/_security/oauth2/token', { auth: elastic, body: { token: n.access_token } });
    secrets.push(t.access_token, t.refresh_token, n.access_token, n.refresh_token);
    await waitFor(() => seen.some((s) => /^es\.v1\.evt\.token\.[0-9a-f-]{36}\.invalidated$/.test(s.subject)));
    const types = seen.filter((s) => s.subject.startsWith('es.v1.evt.token.')).map((s) => JSON.parse(s.text).type);
    expect(types).toEqual(['token.created', 'token.created', 'token.refreshed', 'token.invalidated']);
    const refreshed = JSON.parse(seen.find((s) => s.subject.endsWith('.refreshed'))!.text);
    expect(refreshed.data.superseding).toBeUndefined();
    expect(Object.keys(h.security.services!.facts.seal.open(refreshed).data.superseding).sort()).toEqual(['data', 'iv', 'salt', 'tag']);
    const created = JSON.parse(seen.find((s) => s.subject.endsWith('.created') && s.subject.startsWith('es.v1.evt.token.'))!.text);
    expect([created.data.accessHash, created.data.refreshHash]).toEqual([undefined, undefined]);
  });

  it('publishes service token facts and never puts a secret in any fact', async () => {
    const st = (await call(h.url, 'POST', '/_security/service/elastic/fleet-server/credential/token/t1', { auth: elastic })).body;
    const secret = Buffer.from(st.token.value, 'base64').toString().split(':')[1];
    secrets.push(st.token.value, secret, ELASTIC_PASSWORD);
    await call(h.url, 'DELETE', '/_security/service/elastic/fleet-server/credential/token/t1', { auth: elastic });
    await waitFor(() => seen.some((s) => /^es\.v1\.evt\.servicetoken\.[0-9a-f-]{36}\.invalidated$/.test(s.subject)));
    const all = seen.map((s) => s.text).join('\n') + JSON.stringify(invalidations);
    for (const s of secrets) expect(all).not.toContain(s);
  });

  it('appends every fact to ES_EVT (what a restart replays)', async () => {
    const types: string[] = [];
    for await (const e of readFacts(h.nc)) types.push(e.type);
    expect(types).toEqual(expect.arrayContaining(['user.created', 'role.created', 'apikey.created', 'apikey.invalidated', 'token.refreshed', 'servicetoken.created', 'servicetoken.invalidated']));
  });
});
