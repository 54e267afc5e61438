/**
 * The console's pure parts, no node needed: what of a fact is shown, who may see it, last-use
 * bookkeeping, the fold limiter and time parameters. (Kept beside the console's other tests.)
 */
import { accessOf, seesAggregate, seesApiKey, type Access } from '../../../actors/console/access';
import { matches, parseFeedFilters, visible } from '../../../actors/console/feed';
import { FoldGate, ownerLabel, timeParam } from '../../../actors/console/history';
import { credentialKey, LastUse } from '../../../actors/console/lastUse';
import { factView, redactData } from '../../../actors/console/redact';
import type { HubFact } from '../../../actors/console/factHub';
import type { Authentication } from '../../../actors/wire/security';

const fact = (type: string, data: unknown, aggregateId = 'a1') => ({ type, aggregateId, seq: 1, time: '2026-01-01T00:00:00.000Z', data });

describe('redaction', () => {
  it.each([
    ['apikey.created', { name: 'k', keyType: 'rest', creation: 1, hash: '{SSHA256}x', roleDescriptors: { r: {} }, limitedBy: { r: {} }, metadata: { m: 1 }, owner: { username: 'u', realm: 'native', realmType: 'native', email: 'e@x', metadata: { secret: 1 } } }],
    ['token.created', { accessHash: 'h1', refreshHash: 'h2', createdAt: 1, accessExpiresAt: 2, grantType: 'password', subject: { username: 'u', roles: ['r'], realm: { name: 'native', type: 'native' }, metadata: { x: 1 }, email: 'e@x' }, client: { username: 'u', realm: 'native' } }],
    ['token.refreshed', { refreshedAt: 1, supersededBy: 't2', superseding: { salt: 's', iv: 'i', tag: 't', data: 'd' } }],
    ['servicetoken.created', { account: 'elastic/fleet-server', name: 't', hash: '{PBKDF2_STRETCH}x', creation: 1, creator: { username: 'u', realm: 'r' } }],
    ['user.password_changed', { username: 'u', realm: 'native', passwordHash: '{PBKDF2}x' }],
    ['scroll.opened', { indices: ['i'], keepAliveMs: 1, shards: 1, pinned: [{ index: 'i' }], request: { body: '{"query":"secret"}' }, owner: { username: 'u', realm: 'r' } }],
  ])('shows no hash, sealed pair, descriptor, metadata, pinned searcher or request text of %s', (type, data) => {
    const text = JSON.stringify(factView(fact(type, data)));
    expect(text).not.toMatch(/hash|SSHA256|PBKDF2|superseding|"salt"|descriptors|limitedBy|metadata|pinned|request|secret|e@x/i);
  });

  it('keeps who and when, reduced to username and realm', () => {
    expect(redactData('token.created', { createdAt: 5, grantType: 'password', subject: { username: 'u', realm: { name: 'n', type: 'native' } }, accessHash: 'h' })).toEqual({
      createdAt: 5,
      grantType: 'password',
      subject: { username: 'u', realm: 'n' },
    });
  });

  it('names what an update changed without showing it', () => {
    expect(redactData('apikey.updated', { at: 1, limitedBy: { r: {} }, metadata: { a: 1 } })).toEqual({ at: 1, changed: ['limitedBy', 'metadata'] });
  });

  it('hides the fields of an aggregate it does not know', () => {
    expect(redactData('future.thing', { anything: 1 })).toEqual({});
  });
});

describe('who sees what', () => {
  const none: Access = { monitor: false, apiKeysAll: false, apiKeysOwn: false, tokens: false, serviceTokens: false, users: false };
  const hub = (type: string, owner: { username: string; realm: string } | null): HubFact => ({
    envelope: { v: 1, id: 'x', schema: 1, ...fact(type, {}) },
    view: { ...factView(fact(type, {})), owner },
  });

  it('shows everything when security is off', () => {
    const a = accessOf(undefined);
    for (const agg of ['scroll', 'pit', 'apikey', 'token', 'servicetoken', 'user', 'role', 'node', 'unknown']) expect(seesAggregate(a, agg)).toBe(true);
  });

  it('shows contexts only with monitor, and unknown aggregates only with monitor and security reads', () => {
    expect(visible(none, hub('scroll.opened', null))).toBe(false);
    expect(visible({ ...none, monitor: true }, hub('scroll.opened', null))).toBe(true);
    expect(seesAggregate({ ...none, monitor: true }, 'unknown')).toBe(false);
    expect(seesAggregate({ ...none, monitor: true, users: true }, 'unknown')).toBe(true);
  });

  it('shows own API keys only under manage_own_api_key', () => {
    const own = { ...none, apiKeysOwn: true, self: { username: 'u', realm: 'native' } };
    expect(visible(own, hub('apikey.created', { username: 'u', realm: 'native' }))).toBe(true);
    expect(visible(own, hub('apikey.created', { username: 'u', realm: 'other' }))).toBe(false);
    expect(visible(own, hub('apikey.expired', null))).toBe(false);
    expect(seesApiKey({ ...none, apiKeysAll: true }, undefined)).toBe(true);
  });

  it('filters by aggregate, owner and index glob, and refuses unknown aggregates', () => {
    const f = parseFeedFilters({ aggregate: 'scroll', owner: 'u', index: 'lo*s' });
    const v = hub('scroll.opened', { username: 'u', realm: 'r' });
    v.view.indices = ['logs'];
    expect(matches(f, v)).toBe(true);
    v.view.indices = ['metrics'];
    expect(matches(f, v)).toBe(false);
    expect(() => parseFeedFilters({ aggregate: 'scroll,nope' })).toThrow('unknown aggregate [nope]');
  });
});

describe('last use', () => {
  const auth = (over: Partial<Authentication>): Authentication =>
    ({ user: { username: 'u' }, authenticationRealm: { name: 'native', type: 'native' }, authenticationType: 'realm', ...over }) as Authentication;

  it('keys API keys, access tokens and service tokens; passwords have no credential', () => {
    expect(credentialKey(auth({ authenticationType: 'api_key', apiKey: { id: 'k1', name: null } }))).toBe('apikey:k1');
    expect(credentialKey(auth({ authenticationType: 'token', tokenId: 't1' }))).toBe('token:t1');
    expect(credentialKey(auth({ authenticationType: 'token', token: { name: 'n', type: '_service_account_index' }, authenticationRealm: { name: '_service_account', type: '_service_account' }, user: { username: 'elastic/fleet-server' } as Authentication['user'] }))).toBe('servicetoken:elastic/fleet-server/n');
    expect(credentialKey(auth({}))).toBeUndefined();
  });

  it('drops the least recently used beyond its bound', () => {
    let t = 0;
    const l = new LastUse(2, () => ++t);
    const key = (id: string) => auth({ authenticationType: 'api_key', apiKey: { id, name: null } });
    l.note(key('a'));
    l.note(key('b'));
    l.note(key('a')); // a is young again
    l.note(key('c'));
    expect(l.get('apikey:b')).toBeUndefined();
    expect(l.get('apikey:a')).toBe(3);
    expect(l.get('apikey:c')).toBe(4);
    expect(l.size).toBe(2);
  });

  it('records a credential used again within a second once, to the second (no Map work per request)', () => {
    let t = 10_000;
    const l = new LastUse(10, () => t);
    const a = auth({ authenticationType: 'api_key', apiKey: { id: 'a', name: null } });
    l.note(a);
    t += 999;
    l.note(a);
    expect(l.get('apikey:a')).toBe(10_000);
    t += 1;
    l.note(a);
    expect(l.get('apikey:a')).toBe(11_000);
  });
});

describe('fold limiter', () => {
  it('runs two at once, queues four, and answers ES 429 beyond', async () => {
    const g = new FoldGate(2, 4);
    const gates: Array<() => void> = [];
    let started = 0;
    const job = () => g.run(() => new Promise<number>((r) => { started++; gates.push(() => r(started)); }));
    const runs = [job(), job(), job(), job(), job(), job()];
    await new Promise((r) => setImmediate(r));
    expect(started).toBe(2);
    await expect(job()).rejects.toMatchObject({ type: 'es_rejected_execution_exception', status: 429 });
    while (gates.length) {
      gates.shift()!();
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(runs);
    expect(started).toBe(6);
  });
});

describe('time parameters', () => {
  it('reads what npm run replay --at reads, and refuses the rest with ES 400', () => {
    expect(timeParam('at', '2026-01-01T00:00:00Z', 0)).toBe(Date.parse('2026-01-01T00:00:00Z'));
    expect(timeParam('at', '-1m', 0, 100_000)).toBe(40_000);
    expect(timeParam('at', undefined, 7)).toBe(7);
    for (const bad of ['soon', '99999999999999999999', 'NaN']) expect(() => timeParam('at', bad, 0)).toThrow(/failed to parse \[at\]/);
  });

  it('labels owners for people', () => {
    expect(ownerLabel({ username: 'bob', realm: '_es_api_key/k1' })).toBe('bob (API key k1)');
    expect(ownerLabel({ username: 'bob', realm: 'native' })).toBe('bob (native)');
    expect(ownerLabel(null)).toBe('(no owner: security off)');
  });
});
