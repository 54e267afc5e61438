/**
 * Two of issue 22's "things no engine has", on one node through the official client (the cluster
 * test covers them across nodes): refresh-token reuse detection (`xpack.security.authc.token.
 * reuse_detection: revoke_family`) and derived API keys (`xpack.security.authc.api_key.derived_keys.
 * enabled`). Both are off by default, where the node answers as ES does.
 */
import { Client, errors } from 'es8';
import { jetstreamManager } from '@nats-io/jetstream';
import { EVENT_STREAM, readFacts, subjects, Aggregate, type Envelope } from '../../../streams';
import { ELASTIC_PASSWORD, startSecurityHarness, type SecurityHarness } from '../../support/securityHarness';
import { scanFacts } from '../../support/secretScan';
import { validateFact } from '../../../streams/eventSchemas';

const elastic = { username: 'elastic', password: ELASTIC_PASSWORD };
const clients: Client[] = [];
const client = (url: string, auth: ConstructorParameters<typeof Client>[0]['auth']) => {
  const c = new Client({ node: url, auth, maxRetries: 0 });
  clients.push(c);
  return c;
};
const status = (url: string, auth: string) => fetch(`${url}/_security/_authenticate`, { headers: { authorization: auth } }).then((r) => r.status);
const oauthError = async (p: Promise<unknown>) => ((await p.catch((x: unknown) => x)) as errors.ResponseError).body;

async function factsOf(h: SecurityHarness, aggregate: Aggregate, id: string): Promise<Envelope[]> {
  const out: Envelope[] = [];
  for await (const e of readFacts(h.nc, { filterSubject: subjects.factsOf(aggregate, id) })) out.push(e);
  return out;
}

let on: SecurityHarness;
let off: SecurityHarness;
beforeAll(async () => {
  on = await startSecurityHarness({ settings: { 'xpack.security.authc.token.reuse_detection': 'revoke_family', 'xpack.security.authc.api_key.derived_keys.enabled': true } });
  off = await startSecurityHarness();
  for (const h of [on, off]) {
    const es = client(h.url, elastic);
    await es.security.putRole({ name: 'keys_and_logs', cluster: ['manage_own_api_key', 'manage_token', 'monitor'], indices: [{ names: ['logs-*'], privileges: ['read', 'write'] }] });
    await es.security.putUser({ username: 'alice', password: 'alice-password', roles: ['keys_and_logs'] });
  }
}, 60_000);
afterAll(async () => {
  for (const c of clients) await c.close();
  await on.stop();
  await off.stop();
});

describe('refresh-token reuse detection (revoke_family)', () => {
  it('revokes every pair of the family when a spent refresh token comes back after 30 s', async () => {
    const es = client(on.url, elastic);
    const first = await es.security.getToken({ grant_type: 'password', username: 'alice', password: 'alice-password' });
    const second = await es.security.getToken({ grant_type: 'refresh_token', refresh_token: first.refresh_token! });
    const third = await es.security.getToken({ grant_type: 'refresh_token', refresh_token: second.refresh_token! });
    // a retry within the window is no attack: the same pair
    expect((await es.security.getToken({ grant_type: 'refresh_token', refresh_token: second.refresh_token! })).access_token).toBe(third.access_token);
    for (const t of [first, second, third]) expect(await status(on.url, `Bearer ${t.access_token}`)).toBe(200);
    on.advance(31_000);
    expect(await oauthError(es.security.getToken({ grant_type: 'refresh_token', refresh_token: first.refresh_token! }))).toEqual({
      error: 'invalid_grant',
      error_description: 'token has already been refreshed more than 30 seconds in the past',
    });
    for (const t of [first, second, third]) expect(await status(on.url, `Bearer ${t.access_token}`)).toBe(401);
    // the newest refresh token, unspent until now, is dead too
    expect(await oauthError(es.security.getToken({ grant_type: 'refresh_token', refresh_token: third.refresh_token! }))).toEqual({ error: 'invalid_grant', error_description: 'token has been invalidated' });
    // the facts: reuse_detected on the re-used pair, one invalidated (reason reuse_detected) per pair
    const ids = (await Promise.all((await tokenIds(on)).map((id) => factsOf(on, Aggregate.Token, id)))).filter((fs) => fs.some((f) => f.type === 'token.invalidated'));
    const reused = ids.find((fs) => fs.some((f) => f.type === 'token.reuse_detected'))!;
    expect(reused.map((f) => f.type)).toEqual(['token.created', 'token.refreshed', 'token.reuse_detected', 'token.invalidated']);
    expect(reused[2].data).toEqual({ at: expect.any(Number), family: reused[0].aggregateId });
    expect(ids).toHaveLength(3);
    for (const fs of ids) expect(fs.find((f) => f.type === 'token.invalidated')!.data).toMatchObject({ access: true, refresh: true, reason: 'reuse_detected' });
  });

  it('answers as ES when off: invalid_grant, and the family lives on', async () => {
    const es = client(off.url, elastic);
    const first = await es.security.getToken({ grant_type: 'password', username: 'alice', password: 'alice-password' });
    const second = await es.security.getToken({ grant_type: 'refresh_token', refresh_token: first.refresh_token! });
    off.advance(31_000);
    expect((await oauthError(es.security.getToken({ grant_type: 'refresh_token', refresh_token: first.refresh_token! }))).error).toBe('invalid_grant');
    expect(await status(off.url, `Bearer ${second.access_token}`)).toBe(200);
    expect((await es.security.getToken({ grant_type: 'refresh_token', refresh_token: second.refresh_token! })).access_token).toBeTruthy();
  });
});

describe('derived API keys', () => {
  it('lets a key create a narrower child, limited to its privileges and expiry', async () => {
    const alice = client(on.url, { username: 'alice', password: 'alice-password' });
    const parent = await alice.security.createApiKey({ name: 'parent', expiration: '2d', role_descriptors: { r: { cluster: ['manage_own_api_key', 'monitor'], indices: [{ names: ['logs-*'], privileges: ['read', 'write'] }] } } });
    const asParent = client(on.url, { apiKey: parent.encoded });
    const child = await asParent.security.createApiKey({ name: 'child', role_descriptors: { r: { cluster: ['monitor'], indices: [{ names: ['logs-app'], privileges: ['read'] }] } } });
    expect(child.expiration).toBe(parent.expiration); // no later than its parent's
    const asChild = client(on.url, { apiKey: child.encoded });
    expect(await asChild.security.authenticate()).toMatchObject({ username: 'alice', authentication_type: 'api_key', api_key: { id: child.id, name: 'child' } });
    const has = await asChild.security.hasPrivileges({ cluster: ['monitor', 'manage_own_api_key'], index: [{ names: ['logs-app', 'logs-db'], privileges: ['read', 'write'] }] });
    expect(has.cluster).toEqual({ monitor: true, manage_own_api_key: false });
    expect(has.index).toEqual({ 'logs-app': { read: true, write: false }, 'logs-db': { read: false, write: false } });
    // a privilege the parent lacks, or a later expiry, is refused
    const e1 = (await asParent.security.createApiKey({ name: 'greedy', role_descriptors: { r: { cluster: ['manage_security'], indices: [{ names: ['secrets'], privileges: ['read'] }] } } }).catch((x: unknown) => x)) as errors.ResponseError;
    expect([e1.statusCode, e1.body.error.type, e1.body.error.reason]).toEqual([
      400,
      'illegal_argument_exception',
      `derived API key [greedy] may only have privileges of its API key [${parent.id}], which does not grant cluster [manage_security], index [secrets] privilege [read]`,
    ]);
    const e2 = (await asParent.security.createApiKey({ name: 'late', expiration: '30d' }).catch((x: unknown) => x)) as errors.ResponseError;
    expect(e2.body.error.reason).toMatch(new RegExp(`^derived API key \\[late\\] may not expire after its API key \\[${parent.id}\\]`));
  });

  it('invalidates a key\'s descendants with it, one fact each', async () => {
    const alice = client(on.url, { username: 'alice', password: 'alice-password' });
    const root = await alice.security.createApiKey({ name: 'root', role_descriptors: { r: { cluster: ['manage_own_api_key'] } } });
    const kid = await client(on.url, { apiKey: root.encoded }).security.createApiKey({ name: 'kid' }); // no descriptors: the parent's own
    const grandkid = await client(on.url, { apiKey: kid.encoded }).security.createApiKey({ name: 'grandkid' });
    expect(await status(on.url, `ApiKey ${grandkid.encoded}`)).toBe(200);
    const r = await alice.security.invalidateApiKey({ ids: [root.id], owner: true });
    expect(r.invalidated_api_keys).toEqual([root.id, kid.id, grandkid.id]);
    for (const k of [root, kid, grandkid]) expect(await status(on.url, `ApiKey ${k.encoded}`)).toBe(401);
    const kidFacts = await factsOf(on, Aggregate.ApiKey, kid.id);
    expect(kidFacts.map((f) => [f.type, (f.data as { parentId?: string; cascadeOf?: string }).parentId ?? (f.data as { cascadeOf?: string }).cascadeOf])).toEqual([
      ['apikey.created', root.id],
      ['apikey.invalidated', root.id],
    ]);
    expect((await factsOf(on, Aggregate.ApiKey, grandkid.id))[1].data).toMatchObject({ cascadeOf: root.id });
  });

  it('keeps ES\'s rule when off: an API key may only create a key without privileges', async () => {
    const alice = client(off.url, { username: 'alice', password: 'alice-password' });
    const parent = await alice.security.createApiKey({ name: 'p' });
    const e = (await client(off.url, { apiKey: parent.encoded }).security.createApiKey({ name: 'c', role_descriptors: { r: { cluster: ['monitor'] } } }).catch((x: unknown) => x)) as errors.ResponseError;
    expect([e.statusCode, e.body.error.reason]).toEqual([400, 'creating derived api keys requires an explicit role descriptor that is empty (has no privileges)']);
  });
});

describe('the facts of both', () => {
  it('match their schemas and hold no hash or secret', async () => {
    const { texts, found } = await scanFacts(on.nc);
    expect(found).toEqual([]);
    const facts = texts.map((t) => JSON.parse(t) as Envelope);
    expect(facts.map((f) => f.type)).toEqual(expect.arrayContaining(['token.reuse_detected', 'apikey.invalidated']));
    expect(facts.flatMap((f) => validateFact(f).map((e) => `${f.type}: ${JSON.stringify(e)}`))).toEqual([]);
  });
});

/** Every token pair id in the log. */
async function tokenIds(h: SecurityHarness): Promise<string[]> {
  await jetstreamManager(h.nc).then((m) => m.streams.info(EVENT_STREAM));
  const ids = new Set<string>();
  for await (const e of readFacts(h.nc, { filterSubject: subjects.factsOfType(Aggregate.Token) })) ids.add(e.aggregateId);
  return [...ids];
}
