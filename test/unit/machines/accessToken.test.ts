import { createActor, SimulatedClock } from 'xstate';
import { accessTokenMachine, evolveToken, inRefreshWindow, type AccessTokenInput, type AccessTokenRecord, type TokenCreated } from '../../../machines/accessToken.machine';

const MIN = 60_000;
const DAY = 24 * 60 * MIN;

const created = (refresh = true, now = 0): TokenCreated => ({
  accessHash: 'a',
  ...(refresh ? { refreshHash: 'r', refreshExpiresAt: now + DAY } : {}),
  createdAt: now,
  accessExpiresAt: now + 20 * MIN,
  grantType: refresh ? 'password' : 'client_credentials',
  subject: { username: 'u', roles: [], full_name: null, email: null, metadata: {}, realm: { name: 'native1', type: 'native' }, authenticationType: 'realm' },
  client: { username: 'u', realm: 'native1' },
});

function run(input: AccessTokenInput, clock = new SimulatedClock()) {
  const facts: string[] = [];
  const actor = createActor(accessTokenMachine, { clock, input });
  actor.on('*', (f) => facts.push(f.type));
  actor.start();
  return { actor, facts, clock };
}

/** The record a sequence of facts folds to (what a hydrated actor resumes from). */
function recordOf(...facts: Array<[string, unknown]>): AccessTokenRecord {
  let r: AccessTokenRecord | undefined;
  facts.forEach(([type, data], i) => (r = evolveToken(r, { type, aggregateId: 't1', seq: i + 1, data })));
  return r!;
}

describe('access token machine', () => {
  it('publishes created, then expires when the refresh token ends after 24h', () => {
    const { actor, facts, clock } = run({ tokenId: 't1', now: 0, created: created() });
    clock.increment(DAY - 1);
    expect(actor.getSnapshot().value).toEqual({ live: 'active' });
    clock.increment(1);
    expect(actor.getSnapshot().value).toBe('expired');
    expect(facts).toEqual(['token.created', 'token.expired']);
  });

  it('ends with its access token when there is no refresh token (client_credentials)', () => {
    const { actor, facts, clock } = run({ tokenId: 't1', now: 0, created: created(false) });
    clock.increment(20 * MIN);
    expect(actor.getSnapshot().value).toBe('expired');
    expect(facts).toEqual(['token.created', 'token.expired']);
  });

  it('refreshes once: the refresh token is spent and a second refresh emits nothing', () => {
    const { actor, facts } = run({ tokenId: 't1', now: 0, created: created() });
    const refresh = { type: 'refresh' as const, refreshedAt: 5, supersededBy: 't2', superseding: { salt: 's', iv: 'i', tag: 't', data: 'd' } };
    actor.send(refresh);
    actor.send(refresh);
    expect(actor.getSnapshot().value).toEqual({ live: { refreshed: 'window' } });
    expect(facts).toEqual(['token.created', 'token.refreshed']);
  });

  it('keeps the re-use window of a spent refresh token open for 30 s after the refresh', () => {
    const { actor, clock, facts } = run({ tokenId: 't1', now: 0, created: created() });
    clock.increment(MIN);
    actor.send({ type: 'refresh', refreshedAt: MIN, supersededBy: 't2', superseding: { salt: '', iv: '', tag: '', data: '' } });
    expect(actor.getSnapshot().value).toEqual({ live: { refreshed: 'window' } });
    clock.increment(29_999);
    expect(actor.getSnapshot().value).toEqual({ live: { refreshed: 'window' } });
    clock.increment(1);
    expect(actor.getSnapshot().value).toEqual({ live: { refreshed: 'closed' } });
    expect(facts).toEqual(['token.created', 'token.refreshed']); // the window needs no fact
  });

  it('reports a re-use of the spent refresh token only once its window is closed (reuse detection)', () => {
    const { actor, clock, facts } = run({ tokenId: 't1', now: 0, created: created() });
    actor.send({ type: 'refresh', refreshedAt: 0, supersededBy: 't2', superseding: { salt: '', iv: '', tag: '', data: '' } });
    actor.send({ type: 'reuse', at: 1_000, family: 't1' }); // a retry within 30 s: the same pair, no fact
    clock.increment(30_000);
    actor.send({ type: 'reuse', at: 30_000, family: 't1' });
    actor.send({ type: 'invalidate', access: true, refresh: true, at: 30_000, reason: 'reuse_detected' });
    expect(facts).toEqual(['token.created', 'token.refreshed', 'token.reuse_detected', 'token.invalidated']);
    expect(actor.getSnapshot().value).toBe('invalidated');
    const rec = recordOf(['token.created', created()], ['token.refreshed', { refreshedAt: 0, supersededBy: 't2', superseding: { salt: '', iv: '', tag: '', data: '' } }], ['token.reuse_detected', { at: 30_000, family: 't1' }]);
    expect(rec).toMatchObject({ status: 'refreshed', seq: 3, reuseDetectedAt: 30_000 });
  });

  it('resumes a refreshed record inside or outside its window from refreshedAt', () => {
    const rec = recordOf(['token.created', created()], ['token.refreshed', { refreshedAt: MIN, supersededBy: 't2', superseding: { salt: '', iv: '', tag: '', data: '' } }]);
    expect(inRefreshWindow(rec, MIN + 29_999)).toBe(true);
    expect(inRefreshWindow(rec, MIN + 30_001)).toBe(false);
    const { actor, clock } = run({ tokenId: 't1', now: MIN + 10_000, record: rec });
    clock.increment(19_999);
    expect(actor.getSnapshot().value).toEqual({ live: { refreshed: 'window' } });
    clock.increment(1);
    expect(actor.getSnapshot().value).toEqual({ live: { refreshed: 'closed' } });
  });

  it('keeps the pair live while only the access token is invalidated, and ends it once both are', () => {
    const { actor, facts } = run({ tokenId: 't1', now: 0, created: created() });
    actor.send({ type: 'invalidate', access: true, refresh: false, at: 1 });
    expect(actor.getSnapshot().value).toEqual({ live: 'active' });
    actor.send({ type: 'invalidate', access: true, refresh: false, at: 2 }); // nothing new
    actor.send({ type: 'invalidate', access: false, refresh: true, at: 3 });
    expect(actor.getSnapshot().value).toBe('invalidated');
    expect(facts).toEqual(['token.created', 'token.invalidated', 'token.invalidated']);
  });

  it('invalidates a client_credentials token with its access token alone', () => {
    const { actor } = run({ tokenId: 't1', now: 0, created: created(false) });
    actor.send({ type: 'invalidate', access: true, refresh: false, at: 1 });
    expect(actor.getSnapshot().value).toBe('invalidated');
  });

  it('never expires after invalidation', () => {
    const { actor, facts, clock } = run({ tokenId: 't1', now: 0, created: created() });
    actor.send({ type: 'invalidate', access: true, refresh: true, at: 1 });
    clock.increment(2 * DAY);
    expect(facts).toEqual(['token.created', 'token.invalidated']);
  });

  it('resumes a refreshed record at rest without re-publishing anything', () => {
    const rec = recordOf(['token.created', created()], ['token.refreshed', { refreshedAt: 5, supersededBy: 't2', superseding: { salt: '', iv: '', tag: '', data: '' } }]);
    const { actor, facts } = run({ tokenId: 't1', now: 10 * MIN, record: rec });
    expect(actor.getSnapshot().value).toEqual({ live: { refreshed: 'closed' } });
    expect(facts).toEqual([]);
  });

  it('resumes an invalidated record as final: a restart never resurrects it', () => {
    const rec = recordOf(['token.created', created()], ['token.invalidated', { access: true, refresh: true, at: 1 }]);
    const { actor, facts } = run({ tokenId: 't1', now: 1, record: rec });
    actor.send({ type: 'refresh', refreshedAt: 2, supersededBy: 't3', superseding: { salt: '', iv: '', tag: '', data: '' } });
    expect(actor.getSnapshot().value).toBe('invalidated');
    expect(facts).toEqual([]);
  });

  it('expires at once when hydrated after its end (the sweep)', () => {
    const rec = recordOf(['token.created', created()]);
    const { actor, facts } = run({ tokenId: 't1', now: DAY + 1, record: rec });
    expect(actor.getSnapshot().value).toBe('expired');
    expect(facts).toEqual(['token.expired']);
  });

  it('expires a hydrated record at its remaining time, not its full life', () => {
    const clock = new SimulatedClock();
    const rec = recordOf(['token.created', created()]);
    const { actor } = run({ tokenId: 't1', now: DAY - 1_000, record: rec }, clock);
    clock.increment(999);
    expect(actor.getSnapshot().value).toEqual({ live: 'active' });
    clock.increment(1);
    expect(actor.getSnapshot().value).toBe('expired');
  });
});

describe('evolveToken', () => {
  it('ignores facts at or below the record seq (live echo after replay)', () => {
    const r1 = evolveToken(undefined, { type: 'token.created', aggregateId: 't1', seq: 1, data: created() })!;
    const r2 = evolveToken(r1, { type: 'token.invalidated', aggregateId: 't1', seq: 1, data: { access: true, refresh: true, at: 1 } });
    expect(r2).toBe(r1);
  });

  it('keeps invalidated when an expiry arrives later', () => {
    const r = recordOf(['token.created', created()], ['token.invalidated', { access: true, refresh: true, at: 1 }], ['token.expired', {}]);
    expect(r.status).toBe('invalidated');
  });
});
