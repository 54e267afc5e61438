import { applyFact, earliestExpiry, emptyWorld, evolve, evolveContext, evolveNode, evolveRole, evolveUser, foldAll, openContexts, type FactLike } from '../../../streams/evolve';

const T0 = Date.parse('2024-05-01T10:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
/** A fact of aggregate id `id` at second `s`; seq counts per test from the table. */
const f = (type: string, id: string, seq: number, s: number, data: Record<string, unknown> = {}): FactLike => ({ type, aggregateId: id, seq, time: at(s), data });
const pinned = [{ index: 'books', indexUuid: 'u1', n: 0, shardIndex: 0, searcher: { maxDoc: 3, seqNo: 2 } }];
const opened = (kind: 'scroll' | 'pit', id = 'c1', s = 0, keepAliveMs = 60_000) =>
  f(`${kind}.opened`, id, 1, s, { keepAliveMs, indices: ['books'], shards: 1, pinned, owner: { username: 'u', realm: 'native' } });

describe('evolveContext', () => {
  const cases: Array<[string, FactLike[], Record<string, unknown> | undefined]> = [
    ['opens a scroll with its indices, shards, owner and keep-alive', [opened('scroll')], { kind: 'scroll', status: 'open', indices: ['books'], shards: 1, keepAliveMs: 60_000, openedAt: T0, lastActivityAt: T0, extensions: 0, owner: { username: 'u', realm: 'native' } }],
    ['extends: new keep-alive, activity time, count', [opened('scroll'), f('scroll.extended', 'c1', 2, 30, { keepAliveMs: 5_000 })], { status: 'open', keepAliveMs: 5_000, lastActivityAt: T0 + 30_000, extensions: 1, seq: 2 }],
    ['clears a scroll', [opened('scroll'), f('scroll.cleared', 'c1', 2, 5)], { status: 'cleared', endedAt: T0 + 5_000 }],
    ['expires a scroll', [opened('scroll'), f('scroll.expired', 'c1', 2, 61)], { status: 'expired', endedAt: T0 + 61_000 }],
    ['releases with the reason', [opened('scroll'), f('scroll.released', 'c1', 2, 1, { reason: 'no_scroll_param' })], { status: 'released', reason: 'no_scroll_param' }],
    ['closes a PIT', [opened('pit'), f('pit.closed', 'c1', 2, 1)], { kind: 'pit', status: 'closed' }],
    ['ignores a re-delivered fact (same seq)', [opened('pit'), f('pit.extended', 'c1', 2, 1, { keepAliveMs: 1 }), f('pit.extended', 'c1', 2, 9, { keepAliveMs: 2 })], { keepAliveMs: 1, extensions: 1 }],
    ['keeps the end state when a fact follows it', [opened('pit'), f('pit.closed', 'c1', 2, 1), f('pit.extended', 'c1', 3, 2, { keepAliveMs: 9 })], { status: 'closed', keepAliveMs: 60_000, seq: 3 }],
    ['has no state for facts of a context it never saw open', [f('scroll.extended', 'c1', 4, 1, { keepAliveMs: 1 })], undefined],
  ];
  it.each(cases)('%s', (_name, facts, expected) => {
    const s = facts.reduce<ReturnType<typeof evolveContext>>((acc, e) => evolveContext(acc, e), undefined);
    if (expected === undefined) expect(s).toBeUndefined();
    else expect(s).toMatchObject(expected);
  });

  it('does not change the state it was given', () => {
    const s0 = evolveContext(undefined, opened('scroll'))!;
    const copy = structuredClone(s0);
    evolveContext(s0, f('scroll.extended', 'c1', 2, 1, { keepAliveMs: 1 }));
    expect(s0).toEqual(copy);
  });
});

describe('ownership of a context across nodes', () => {
  const on = (e: FactLike, node: string): FactLike => ({ ...e, node });
  const openedOn = (node: string) => on({ ...opened('scroll'), data: { ...(opened('scroll').data as object), node } }, node);
  const cases: Array<[string, FactLike[], Record<string, unknown>]> = [
    ['takes the owner node from the opened fact', [openedOn('A')], { node: 'A', seq: 1 }],
    ['takes the appending node when the opened fact names none', [on(opened('pit'), 'A')], { node: 'A' }],
    ['moves ownership to the adopter', [openedOn('A'), on(f('scroll.adopted', 'c1', 2, 5, { from: 'A', to: 'B' }), 'B')], { node: 'B', seq: 2, status: 'open' }],
    ['ignores a fact from a node that is not the owner', [openedOn('A'), on(f('scroll.adopted', 'c1', 2, 5, { from: 'A', to: 'B' }), 'B'), on(f('scroll.cleared', 'c1', 3, 6), 'A')], { node: 'B', seq: 2, status: 'open' }],
    ['takes the new owner facts after an adoption', [openedOn('A'), on(f('scroll.adopted', 'c1', 2, 5, { from: 'A', to: 'B' }), 'B'), on(f('scroll.cleared', 'c1', 3, 6), 'B')], { node: 'B', seq: 3, status: 'cleared' }],
    ['adopts a context no node owned (older log)', [opened('scroll'), on(f('scroll.adopted', 'c1', 2, 5, { from: '', to: 'B' }), 'B')], { node: 'B' }],
  ];
  it.each(cases)('%s', (_name, facts, expected) => {
    expect(facts.reduce<ReturnType<typeof evolveContext>>((acc, e) => evolveContext(acc, e), undefined)).toMatchObject(expected);
  });
});

describe('evolveNode', () => {
  const joined = (seq: number, s: number, name = 'node-0') => ({ ...f('node.joined', 'n1', seq, s, { name, host: '127.0.0.1', http_address: '127.0.0.1:9200', version: '8.15.0', started_at: T0 }), node: 'n1' });
  const left = (seq: number, s: number, data: Record<string, unknown>) => f('node.left', 'n1', seq, s, data);
  const cases: Array<[string, FactLike[], Record<string, unknown>]> = [
    ['joins with its name, address, version and start', [joined(1, 0)], { id: 'n1', status: 'joined', seq: 1, name: 'node-0', httpAddress: '127.0.0.1:9200', version: '8.15.0', startedAt: T0, joinedAt: T0, joins: 1 }],
    ['leaves on a clean stop', [joined(1, 0), left(2, 9, { reason: 'stopped' })], { status: 'left', reason: 'stopped', leftAt: T0 + 9_000, seq: 2, name: 'node-0' }],
    ['leaves timed out, noticed by the lease holder', [joined(1, 0), left(2, 9, { reason: 'timed_out', by: 'n2', silent_ms: 2100 })], { status: 'left', reason: 'timed_out', by: 'n2', silentMs: 2100 }],
    ['joins again after a restart, forgetting the leave', [joined(1, 0), left(2, 9, { reason: 'timed_out', by: 'n2', silent_ms: 1 }), joined(3, 20, 'node-0b')], { status: 'joined', seq: 3, joins: 2, name: 'node-0b', joinedAt: T0 + 20_000 }],
    ['joins again after a crash nobody recorded', [joined(1, 0), joined(2, 5)], { status: 'joined', seq: 2, joins: 2 }],
    ['ignores a second fact of one seq (two appenders, past the de-duplication window)', [joined(1, 0), left(2, 9, { reason: 'stopped' }), left(2, 9, { reason: 'timed_out', by: 'n2' })], { status: 'left', reason: 'stopped', seq: 2 }],
  ];
  it.each(cases)('%s', (_name, facts, expected) => {
    const s = facts.reduce<ReturnType<typeof evolveNode>>((acc, e) => evolveNode(acc, e), undefined);
    expect(s).toMatchObject(expected);
    if (expected.status === 'joined') expect(s).not.toHaveProperty('reason');
  });

  it('folds node facts into the world, not as unknown', () => {
    const w = foldAll([joined(1, 0), left(2, 1, { reason: 'stopped' })]);
    expect(w.unknown).toBe(0);
    expect(w.node.get('n1')).toMatchObject({ status: 'left', reason: 'stopped' });
  });
});

describe('credential folds through evolve', () => {
  const created = { accessHash: 'a'.repeat(43), refreshHash: 'r'.repeat(43), createdAt: T0, accessExpiresAt: T0 + 1_200_000, refreshExpiresAt: T0 + 86_400_000, grantType: 'password', subject: {}, client: { username: 'u', realm: 'native' } };
  const key = { name: 'k', keyType: 'rest', creation: T0, owner: { username: 'u', realm: 'native', realmType: 'native' }, hash: '{SSHA256}x', roleDescriptors: {}, limitedBy: {}, metadata: {} };
  const cases: Array<[string, FactLike[], Record<string, unknown>]> = [
    ['creates a token pair', [f('token.created', 't1', 1, 0, created)], { tokenId: 't1', status: 'active', grantType: 'password' }],
    ['refreshes a token pair', [f('token.created', 't1', 1, 0, created), f('token.refreshed', 't1', 2, 5, { refreshedAt: T0 + 5000, supersededBy: 't2', superseding: {} })], { status: 'refreshed', supersededBy: 't2' }],
    ['invalidates a token pair only once both halves are', [f('token.created', 't1', 1, 0, created), f('token.invalidated', 't1', 2, 5, { access: true, refresh: false, at: 1 })], { status: 'active', accessInvalidated: true }],
    ['invalidates both halves', [f('token.created', 't1', 1, 0, created), f('token.invalidated', 't1', 2, 5, { access: true, refresh: true, at: 1 })], { status: 'invalidated' }],
    ['expires a token pair', [f('token.created', 't1', 1, 0, created), f('token.expired', 't1', 2, 86_400)], { status: 'expired' }],
    ['creates an API key', [f('apikey.created', 'k1', 1, 0, key)], { keyId: 'k1', status: 'active', name: 'k' }],
    ['updates an API key expiration', [f('apikey.created', 'k1', 1, 0, key), f('apikey.updated', 'k1', 2, 1, { at: 1, limitedBy: {}, expiration: T0 + 5 })], { expiration: T0 + 5 }],
    ['invalidates an API key', [f('apikey.created', 'k1', 1, 0, key), f('apikey.invalidated', 'k1', 2, 1, { invalidation: 7 })], { status: 'invalidated', invalidation: 7 }],
    ['creates a service token', [f('servicetoken.created', 's1', 1, 0, { account: 'elastic/fleet-server', name: 'n', hash: '{PBKDF2_STRETCH}x', creation: T0, creator: { username: 'u', realm: 'r' } })], { status: 'active', account: 'elastic/fleet-server' }],
    ['deletes a service token', [f('servicetoken.created', 's1', 1, 0, { account: 'a/b', name: 'n' }), f('servicetoken.invalidated', 's1', 2, 1, { at: 1 })], { status: 'invalidated' }],
  ];
  it.each(cases)('%s', (_name, facts, expected) => {
    expect(facts.reduce<unknown>((acc, e) => evolve(acc, e), undefined)).toMatchObject(expected);
  });
});

describe('users and roles', () => {
  const cases: Array<[string, FactLike[], Record<string, unknown>]> = [
    ['creates a user without keeping its password hash', [f('user.created', 'u1', 1, 0, { username: 'bob', realm: 'native', roles: ['r'], enabled: true, passwordHash: '{PBKDF2}x' })], { username: 'bob', roles: ['r'], enabled: true, deleted: false }],
    ['disables a user', [f('user.created', 'u1', 1, 0, { username: 'bob', realm: 'native', roles: [], enabled: true }), f('user.disabled', 'u1', 2, 1, { username: 'bob', realm: 'native' })], { enabled: false }],
    ['deletes a user', [f('user.created', 'u1', 1, 0, { username: 'bob', realm: 'native', roles: [], enabled: true }), f('user.deleted', 'u1', 2, 1, { username: 'bob', realm: 'native' })], { deleted: true }],
    ['notes a reserved user password change', [f('user.password_changed', 'u2', 1, 3, { username: 'elastic', realm: 'reserved', passwordHash: '{x}' })], { username: 'elastic', realm: 'reserved', passwordChangedAt: T0 + 3000 }],
  ];
  it.each(cases)('%s', (_name, facts, expected) => {
    const s = facts.reduce<ReturnType<typeof evolveUser>>((acc, e) => evolveUser(acc, e), undefined);
    expect(s).toMatchObject(expected);
    expect(JSON.stringify(s)).not.toContain('PBKDF2');
  });

  it('folds roles and role mappings', () => {
    const r = [f('role.mapping_created', 'm1', 1, 0, { name: 'm', mapping: { roles: ['a'] } }), f('role.mapping_deleted', 'm1', 2, 1, { name: 'm' })].reduce<ReturnType<typeof evolveRole>>(
      (acc, e) => evolveRole(acc, e),
      undefined,
    );
    expect(r).toMatchObject({ name: 'm', kind: 'mapping', deleted: true, roles: ['a'] });
  });
});

describe('foldAll', () => {
  it('folds interleaved aggregates and lists the contexts a restart would revive', () => {
    const w = foldAll([
      opened('scroll', 's1', 0, 10_000),
      opened('pit', 'p1', 1),
      f('scroll.extended', 's1', 2, 5, { keepAliveMs: 10_000 }),
      opened('pit', 'p2', 2),
      f('pit.closed', 'p1', 2, 6),
      f('cursor.opened', 'x', 1, 7),
    ]);
    expect(w.events).toBe(6);
    expect(w.unknown).toBe(1);
    expect(w.lastTime).toBe(at(7));
    expect(openContexts(w).map((c) => c.id).sort()).toEqual(['p2', 's1']);
    expect(earliestExpiry(w.scroll.get('s1')!)).toBe(T0 + 15_000);
  });

  it('gives the same world fact by fact with applyFact', () => {
    const facts = [opened('scroll'), f('scroll.cleared', 'c1', 2, 1)];
    const w = emptyWorld();
    for (const e of facts) applyFact(w, e);
    expect(w.scroll).toEqual(foldAll(facts).scroll);
  });
});

describe('applyContext (in place) agrees with evolveContext (pure)', () => {
  const histories: Array<[string, FactLike[]]> = [
    ['extend then clear', [opened('scroll'), f('scroll.extended', 'c1', 2, 1, { keepAliveMs: 5 }), f('scroll.cleared', 'c1', 3, 2)]],
    ['release with reason', [opened('pit'), f('pit.released', 'c1', 2, 1, { reason: 'index_deleted' })]],
    ['re-delivery and a fact after the end', [opened('pit'), f('pit.closed', 'c1', 2, 1), f('pit.closed', 'c1', 2, 1), f('pit.extended', 'c1', 3, 2, { keepAliveMs: 1 })]],
  ];
  it.each(histories)('%s', (_name, facts) => {
    const pure = facts.reduce<ReturnType<typeof evolveContext>>((acc, e) => evolveContext(acc, e), undefined);
    const w = foldAll(facts);
    expect(w.scroll.get('c1') ?? w.pit.get('c1')).toEqual(pure);
  });
});
