/**
 * Issue 6: every fact a whole node emits matches its JSON Schema (streams/schemas), carries no secret
 * and no opaque id the client saw, and replays through the machines without divergence.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { ELASTIC_PASSWORD, startTestNode, type TestNode } from '../../support/node';
import { readFacts, type Envelope } from '../../../streams';
import { validateFact } from '../../../streams/eventSchemas';
import { foldAll } from '../../../streams/evolve';
import { MachineReplay } from '../../../streams/machineReplay';

jest.setTimeout(60_000);

type Fact = Envelope & { streamSeq?: number };

async function facts(nc: NatsConnection): Promise<Fact[]> {
  const out: Fact[] = [];
  for await (const f of readFacts(nc)) out.push(f);
  return out;
}

/** Polls the log until `ok` holds; returns the facts (never a fixed sleep). */
async function factsUntil(nc: NatsConnection, ok: (fs: Fact[]) => boolean, what: string, timeoutMs = 15_000): Promise<Fact[]> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const fs = await facts(nc);
    if (ok(fs)) return fs;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; log has ${fs.map((f) => f.type).join(', ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const wire = ({ streamSeq: _s, ...env }: Fact) => env;

/** Drives PITs and scrolls through the official client; returns the ids the client saw. */
async function driveContexts(t: TestNode): Promise<string[]> {
  const seen: string[] = [];
  await t.es.indices.create({ index: 'events-books', settings: { number_of_shards: 2 } });
  await t.es.bulk({ refresh: true, operations: Array.from({ length: 30 }, (_, i) => [{ index: { _index: 'events-books', _id: String(i) } }, { n: i }]).flat() });
  // PIT: open, extend (search with keep_alive), search without keep_alive, close.
  const pit = await t.es.openPointInTime({ index: 'events-books', keep_alive: '1m' });
  seen.push(pit.id);
  const page = await t.es.search({ pit: { id: pit.id, keep_alive: '2m' }, size: 5, sort: [{ n: 'asc' }] });
  if (page.pit_id) seen.push(page.pit_id);
  await t.es.search({ pit: { id: pit.id }, size: 5, sort: [{ n: 'asc' }] });
  await t.es.closePointInTime({ id: pit.id });
  // A PIT left to expire (1s keep-alive).
  seen.push((await t.es.openPointInTime({ index: 'events-books', keep_alive: '1s' })).id);
  // Scroll: open, continue, clear.
  const first = await t.es.search({ index: 'events-books', scroll: '1m', size: 10, sort: [{ n: 'asc' }] });
  seen.push(first._scroll_id!);
  const next = await t.es.scroll({ scroll_id: first._scroll_id!, scroll: '1m' });
  seen.push(next._scroll_id!);
  await t.es.clearScroll({ scroll_id: next._scroll_id! });
  // Scroll: a continuation without `scroll` releases it (no_scroll_param).
  const once = await t.es.search({ index: 'events-books', scroll: '1m', size: 10 });
  seen.push(once._scroll_id!);
  await t.es.scroll({ scroll_id: once._scroll_id! });
  // A sliced scroll left to expire (1s keep-alive).
  // The v8 client types slice.id as a string id; ES (and we) take the number.
  const sliced = await t.es.search({ index: 'events-books', scroll: '1s', size: 5, slice: { id: 0 as unknown as string, max: 2 } });
  seen.push(sliced._scroll_id!);
  return seen;
}

/** Every fact valid, none holding a secret or opaque id, and the machines agree with the log. */
function checkLog(all: Fact[], secrets: string[]) {
  const invalid = all.map((f) => ({ type: f.type, errors: validateFact(wire(f)) })).filter((x) => x.errors.length);
  expect(invalid).toEqual([]);
  expect(all.length).toBeGreaterThan(10);
  const text = all.map((f) => JSON.stringify(wire(f)));
  for (const s of secrets.filter((x) => x && x.length >= 8)) {
    expect({ secret: s, in: text.filter((x) => x.includes(s)) }).toEqual({ secret: s, in: [] });
  }
  const replay = new MachineReplay();
  for (const f of all) replay.feed(f);
  const out = replay.finish();
  expect(out.divergences).toEqual([]);
  return { world: foldAll(all), actors: out.actors };
}

const CONTEXT_FACTS = ['pit.opened', 'pit.extended', 'pit.closed', 'pit.expired', 'scroll.opened', 'scroll.extended', 'scroll.cleared', 'scroll.released', 'scroll.expired'];
const hasAll = (types: string[]) => (fs: Fact[]) => types.every((t) => fs.some((f) => f.type === t));

describe('event contract with security off', () => {
  let t: TestNode;
  let nc: NatsConnection;
  beforeAll(async () => {
    t = await startTestNode();
    nc = await t.nats.connect();
  }, 60_000);
  afterAll(async () => {
    await nc?.drain();
    await t?.stop();
  });

  it('validates every PIT and scroll fact against its schema, with no opaque id in any fact', async () => {
    const ids = await driveContexts(t);
    const all = await factsUntil(nc, hasAll(CONTEXT_FACTS), 'every context fact, expiries included');
    const { world } = checkLog(all, ids);
    const scrolls = [...world.scroll.values()];
    expect(scrolls.map((s) => s.status).sort()).toEqual(['cleared', 'expired', 'released']);
    expect(scrolls.find((s) => s.status === 'released')!.reason).toBe('no_scroll_param');
    expect(scrolls.find((s) => s.status === 'expired')!.slice).toEqual({ id: 0, max: 2 });
    expect([...world.pit.values()].map((p) => p.status).sort()).toEqual(['closed', 'expired']);
    expect(all.find((f) => f.type === 'pit.opened')!.data).toMatchObject({ indices: ['events-books'], shards: 2, keepAliveMs: 60_000 });
  });
});

describe('event contract with security on', () => {
  let t: TestNode;
  let nc: NatsConnection;
  beforeAll(async () => {
    t = await startTestNode({ security: true });
    nc = await t.nats.connect();
  }, 60_000);
  afterAll(async () => {
    await nc?.drain();
    await t?.stop();
  });

  it('validates every credential, user, role and context fact, and no fact holds a secret', async () => {
    const secrets: string[] = [ELASTIC_PASSWORD, 'bob-password-42'];
    await t.es.security.putRole({ name: 'events_reader', cluster: ['manage_own_api_key'], indices: [{ names: ['events-*'], privileges: ['read'] }] });
    await t.es.security.putUser({ username: 'bob', password: 'bob-password-42', roles: ['events_reader'] });
    // API key: create, invalidate.
    const key = await t.es.security.createApiKey({ name: 'events-key', expiration: '1d', metadata: { team: 'a' } });
    secrets.push(key.api_key, key.encoded);
    await t.es.security.invalidateApiKey({ ids: [key.id] });
    // Token: get (password grant), refresh, invalidate.
    const tok = await t.es.security.getToken({ grant_type: 'password', username: 'bob', password: 'bob-password-42' });
    secrets.push(tok.access_token, tok.refresh_token!);
    const refreshed = await t.es.security.getToken({ grant_type: 'refresh_token', refresh_token: tok.refresh_token });
    secrets.push(refreshed.access_token, refreshed.refresh_token!);
    await t.es.security.invalidateToken({ token: refreshed.access_token });
    await t.es.security.invalidateToken({ refresh_token: refreshed.refresh_token });
    // Service token: create, delete.
    const st = await t.es.security.createServiceToken({ namespace: 'elastic', service: 'fleet-server', name: 'events-token' });
    secrets.push(st.token.value);
    await t.es.security.deleteServiceToken({ namespace: 'elastic', service: 'fleet-server', name: 'events-token' });
    // Application privilege: create, update, delete.
    await t.es.security.putPrivileges({ privileges: { eventsapp: { read: { actions: ['data:read/*'] } } } });
    await t.es.security.putPrivileges({ privileges: { eventsapp: { read: { actions: ['data:read/*', 'ui:read/*'], metadata: { v: 2 } } } } });
    await t.es.security.deletePrivileges({ application: 'eventsapp', name: 'read' });
    secrets.push(...(await driveContexts(t)));

    const want = [
      ...CONTEXT_FACTS,
      ...['apikey.created', 'apikey.invalidated', 'token.created', 'token.refreshed', 'token.invalidated', 'servicetoken.created', 'servicetoken.invalidated'],
      ...['user.created', 'role.created', 'role.privilege_created', 'role.privilege_updated', 'role.privilege_deleted'],
    ];
    const all = await factsUntil(nc, hasAll(want), 'every fact type');
    const { world } = checkLog(all, secrets);

    expect(world.apikey.get(key.id)).toMatchObject({ status: 'invalidated', name: 'events-key' });
    const tokens = [...world.token.values()];
    expect(tokens.map((x) => x.status).sort()).toEqual(['invalidated', 'refreshed']);
    expect([...world.servicetoken.values()]).toEqual([expect.objectContaining({ account: 'elastic/fleet-server', name: 'events-token', status: 'invalidated' })]);
    expect([...world.user.values()].find((u) => u.username === 'bob')).toMatchObject({ roles: ['events_reader'], deleted: false });
    expect([...world.role.values()].find((r) => r.kind === 'privilege')).toMatchObject({ name: 'eventsapp/read', deleted: true });
    // Contexts carry their owner principal.
    expect(all.find((f) => f.type === 'pit.opened')!.data).toMatchObject({ owner: { username: 'elastic' } });
  });
});
