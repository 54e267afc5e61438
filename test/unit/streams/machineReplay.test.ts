import { MachineReplay, stateName } from '../../../streams/machineReplay';
import { ReplayClock } from '../../../streams/replayClock';
import type { FactLike } from '../../../streams/evolve';

const T0 = Date.parse('2024-05-01T10:00:00.000Z');
const f = (type: string, id: string, seq: number, ms: number, data: Record<string, unknown> = {}): FactLike => ({
  type,
  aggregateId: id,
  seq,
  time: new Date(T0 + ms).toISOString(),
  data,
});
const opened = (kind: string, keepAliveMs: number, id = 'c1') => f(`${kind}.opened`, id, 1, 0, { keepAliveMs, indices: ['i'], shards: 1, pinned: [] });
const DAY = 86_400_000;
const tokenCreated = (refresh: boolean) => ({
  accessHash: 'a',
  ...(refresh ? { refreshHash: 'r', refreshExpiresAt: T0 + DAY } : {}),
  createdAt: T0,
  accessExpiresAt: T0 + 1_200_000,
  grantType: refresh ? 'password' : 'client_credentials',
  subject: {},
  client: { username: 'u', realm: 'r' },
});
const keyCreated = (expiration?: number) => ({ name: 'k', keyType: 'rest', creation: T0, ...(expiration ? { expiration } : {}), owner: {}, hash: 'h', roleDescriptors: {}, limitedBy: {}, metadata: {} });

function replay(facts: FactLike[]) {
  const r = new MachineReplay({ timeline: true });
  for (const e of facts) r.feed(e);
  return r.finish();
}

describe('MachineReplay', () => {
  const agreeing: Array<[string, FactLike[], string]> = [
    ['a scroll opened, continued twice and cleared', [opened('scroll', 60_000), f('scroll.extended', 'c1', 2, 1_000, { keepAliveMs: 60_000 }), f('scroll.extended', 'c1', 3, 2_000, { keepAliveMs: 30_000 }), f('scroll.cleared', 'c1', 4, 3_000)], 'cleared'],
    ['a scroll left idle after opening expires on its first keep-alive', [opened('scroll', 1_000), f('scroll.expired', 'c1', 2, 1_004)], 'expired'],
    // continuations within a quarter of the keep-alive of the last logged activity log nothing
    ['a scroll continued without facts outlives its first keep-alive', [opened('scroll', 1_000), f('scroll.extended', 'c1', 2, 1_500, { keepAliveMs: 1_000 }), f('scroll.expired', 'c1', 3, 3_000)], 'expired'],
    ['a scroll continuation with a long-running search expires a keep-alive after the search', [opened('scroll', 1_000), f('scroll.extended', 'c1', 2, 500, { keepAliveMs: 1_000 }), f('scroll.expired', 'c1', 3, 9_000)], 'expired'],
    ['a scroll released for a continuation without scroll', [opened('scroll', 1_000), f('scroll.extended', 'c1', 2, 500, { keepAliveMs: 1_000 }), f('scroll.released', 'c1', 3, 505, { reason: 'no_scroll_param' })], 'released'],
    ['a PIT searched without keep_alive outlives its keep-alive without facts', [opened('pit', 1_000), f('pit.closed', 'c1', 2, 60_000)], 'closed'],
    ['a PIT extended then expired', [opened('pit', 1_000), f('pit.extended', 'c1', 2, 10_000, { keepAliveMs: 5_000 }), f('pit.expired', 'c1', 3, 40_000)], 'expired'],
    ['a PIT released when its index is deleted', [opened('pit', 1_000), f('pit.released', 'c1', 2, 10, { reason: 'index_deleted' })], 'released'],
    ['a token pair refreshed then invalidated', [f('token.created', 't1', 1, 0, tokenCreated(true)), f('token.refreshed', 't1', 2, 10, { refreshedAt: T0 + 10, supersededBy: 't2', superseding: { salt: 's', iv: 'i', tag: 't', data: 'd' } }), f('token.invalidated', 't1', 3, 20, { access: true, refresh: true, at: T0 + 20 })], 'invalidated'],
    ['a client_credentials token expiring with its access token', [f('token.created', 't1', 1, 0, tokenCreated(false)), f('token.expired', 't1', 2, 1_200_050)], 'expired'],
    ['a token pair expiring with its refresh token', [f('token.created', 't1', 1, 0, tokenCreated(true)), f('token.expired', 't1', 2, DAY + 5)], 'expired'],
    ['an API key expiring after a year (long-delay countdown)', [f('apikey.created', 'k1', 1, 0, keyCreated(T0 + 365 * DAY)), f('apikey.expired', 'k1', 2, 365 * DAY + 1)], 'expired'],
    ['an API key updated then invalidated', [f('apikey.created', 'k1', 1, 0, keyCreated()), f('apikey.updated', 'k1', 2, 5, { at: T0 + 5, limitedBy: {}, metadata: { a: 1 } }), f('apikey.invalidated', 'k1', 3, 9, { invalidation: T0 + 9 })], 'invalidated'],
    ['a service token deleted', [f('servicetoken.created', 's1', 1, 0, { account: 'a/b', name: 'n', hash: 'h', creation: T0, creator: { username: 'u', realm: 'r' } }), f('servicetoken.invalidated', 's1', 2, 5, { at: T0 + 5 })], 'invalidated'],
  ];
  it.each(agreeing)('reproduces %s', (_name, facts, final) => {
    const out = replay(facts);
    expect(out.divergences).toEqual([]);
    expect(out.actors).toHaveLength(1);
    expect(out.actors[0]).toMatchObject({ state: final, done: true, lastSeq: facts.length, facts: facts.length });
    expect(out.actors[0].timeline!.map((s) => s.type)).toEqual(facts.map((e) => e.type));
  });

  const diverging: Array<[string, FactLike[], RegExp]> = [
    ['a token used after its access token expired', [f('token.created', 't1', 1, 0, tokenCreated(false)), f('token.invalidated', 't1', 2, 1_201_000, { access: true, refresh: false, at: T0 + 1_201_000 })], /machine emitted token.expired before this fact/],
    ['a scroll that expired before its keep-alive', [opened('scroll', 60_000), f('scroll.expired', 'c1', 2, 1_000)], /emitted nothing/],
    ['a PIT that expired before its extended keep-alive', [opened('pit', 1_000), f('pit.extended', 'c1', 2, 100, { keepAliveMs: 60_000 }), f('pit.expired', 'c1', 3, 2_000)], /emitted nothing/],
    ['a fact after the final state', [opened('pit', 1_000), f('pit.closed', 'c1', 2, 1), f('pit.extended', 'c1', 3, 2, { keepAliveMs: 1 })], /after the actor reached its final state "closed"/],
    ['an invalidation that changes nothing', [f('token.created', 't1', 1, 0, tokenCreated(false)), f('token.invalidated', 't1', 2, 1, { access: true, refresh: false, at: 1 }), f('token.invalidated', 't1', 3, 2, { access: true, refresh: false, at: 2 })], /after the actor reached its final state|emitted nothing/],
    ['a history whose first fact is not its creation', [f('scroll.extended', 'c1', 1, 0, { keepAliveMs: 1 })], /first fact is not scroll.opened/],
  ];
  it.each(diverging)('reports a divergence for %s', (_name, facts, detail) => {
    const out = replay(facts);
    expect(out.divergences).toHaveLength(1);
    expect(out.divergences[0].detail).toMatch(detail);
  });

  it('stops checking an aggregate after its divergence', () => {
    const out = replay([opened('scroll', 60_000), f('scroll.expired', 'c1', 2, 5_000), f('scroll.cleared', 'c1', 3, 5_001)]);
    expect(out.divergences).toHaveLength(1);
    expect(out.actors[0]).toMatchObject({ state: 'diverged', lastSeq: 3 });
    expect(out.unchecked).toBe(1);
  });

  it('takes a history that starts after the creation (retention, --since) as partial, not a divergence', () => {
    const out = replay([f('scroll.extended', 'c1', 3, 0, { keepAliveMs: 1 }), f('scroll.cleared', 'c1', 4, 5)]);
    expect(out.divergences).toEqual([]);
    expect(out.actors[0]).toMatchObject({ state: 'partial', lastSeq: 4 });
  });

  it('ignores a re-delivered fact', () => {
    const out = replay([opened('pit', 1_000), f('pit.closed', 'c1', 2, 1), f('pit.closed', 'c1', 2, 1)]);
    expect(out.divergences).toEqual([]);
  });

  it('keeps open actors in their machine state', () => {
    const out = replay([opened('scroll', 60_000), opened('pit', 60_000, 'p1')]);
    expect(out.actors.map((a) => [a.id, a.state, a.done])).toEqual([
      ['c1', 'active.inUse', false], // a continuation may use it without a fact
      ['p1', 'open.inUse', false],
    ]);
  });
});

describe('MachineReplay across nodes', () => {
  const on = (e: FactLike, node: string): FactLike => ({ ...e, node });
  const openedOn = (kind: string, node: string) => on({ ...opened(kind, 60_000), data: { ...(opened(kind, 60_000).data as object), node } }, node);

  it('replays an adoption and shows the old and new owner in the timeline', () => {
    const out = replay([openedOn('scroll', 'A'), on(f('scroll.adopted', 'c1', 2, 5_000, { from: 'A', to: 'B' }), 'B'), on(f('scroll.cleared', 'c1', 3, 6_000), 'B')]);
    expect(out.divergences).toEqual([]);
    expect(out.actors[0].timeline!.map((s) => [s.type, s.detail])).toEqual([['scroll.opened', undefined], ['scroll.adopted', 'from=A to=B'], ['scroll.cleared', undefined]]);
    expect(out.actors[0].state).toBe('cleared');
  });

  it('skips a fact the old owner appended after the adoption, and says so in the timeline', () => {
    const out = replay([openedOn('pit', 'A'), on(f('pit.adopted', 'c1', 2, 5_000, { from: 'A', to: 'B' }), 'B'), on(f('pit.closed', 'c1', 3, 6_000), 'A'), on(f('pit.closed', 'c1', 3, 6_000), 'B')]);
    expect(out.divergences).toEqual([]);
    const tl = out.actors[0].timeline!;
    expect(tl[2]).toMatchObject({ type: 'pit.closed', detail: 'ignored: appended by A, not the owner B' });
    expect(tl[3]).toMatchObject({ type: 'pit.closed', state: 'closed' });
    expect(out.unchecked).toBe(1);
  });

  it('checks no node fact and reports no divergence for them (nodes have no machine)', () => {
    const out = replay([f('node.joined', 'n1', 1, 0, { name: 'a' }), f('node.left', 'n1', 2, 1, { reason: 'timed_out', by: 'n2' }), f('node.joined', 'n1', 3, 2, { name: 'a' })]);
    expect(out).toMatchObject({ divergences: [], checked: 0, unchecked: 3 });
  });
});

describe('ReplayClock', () => {
  it('fires a timer started by another timer at its own deadline', () => {
    const clock = new ReplayClock(1_000);
    const fired: number[] = [];
    clock.setTimeout(() => {
      fired.push(clock.now());
      clock.setTimeout(() => fired.push(clock.now()), 100);
    }, 100);
    clock.advanceTo(10_000);
    expect(fired).toEqual([1_100, 1_200]);
    expect(clock.now()).toBe(10_000);
  });

  it('never moves backwards', () => {
    const clock = new ReplayClock(5_000);
    clock.advanceTo(1_000);
    expect(clock.now()).toBe(5_000);
  });
});

describe('stateName', () => {
  it.each([
    ['expired', 'expired'],
    [{ active: 'idle' }, 'active.idle'],
    [{ live: { refreshed: {} } }, 'live.refreshed'],
  ])('flattens %j', (v, s) => expect(stateName(v)).toBe(s));
});

describe('MachineReplay timer tolerance', () => {
  it('accepts an expiry a millisecond before the keep-alive (Node timers round)', () => {
    expect(replay([opened('pit', 250), f('pit.expired', 'c1', 2, 249)]).divergences).toEqual([]);
  });

  const invalidatedAt = (ms: number) => [f('token.created', 't1', 1, 0, tokenCreated(false)), f('token.invalidated', 't1', 2, ms, { access: true, refresh: false, at: T0 + ms })];

  it('accepts a command a little after the deadline (a busy event loop delays the timer)', () => {
    expect(replay(invalidatedAt(1_200_020)).divergences).toEqual([]);
  });

  it('reports a command past the tolerance with the deadline it missed', () => {
    const out = replay(invalidatedAt(1_200_050));
    expect(out.divergences[0].detail).toBe('machine emitted token.expired before this fact (timer due at 2024-05-01T10:20:00.000Z, 50 ms earlier)');
  });

  it('can be strict', () => {
    const r = new MachineReplay({ toleranceMs: 0 });
    for (const e of [opened('pit', 250), f('pit.expired', 'c1', 2, 249)]) r.feed(e);
    expect(r.finish().divergences).toHaveLength(1);
  });
});
