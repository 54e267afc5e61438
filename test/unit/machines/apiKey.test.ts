import { createActor, SimulatedClock } from 'xstate';
import { MAX_DELAY_MS } from '../../../machines/longDelay';
import { apiKeyMachine, evolveApiKey, type ApiKeyCreated, type ApiKeyInput, type ApiKeyRecord } from '../../../machines/apiKey.machine';

const DAY = 86_400_000;

const created = (expiration?: number): ApiKeyCreated => ({
  name: 'k',
  keyType: 'rest',
  creation: 0,
  ...(expiration !== undefined ? { expiration } : {}),
  owner: { username: 'u', realm: 'native1', realmType: 'native' },
  hash: '{SSHA256}x',
  roleDescriptors: {},
  limitedBy: {},
  metadata: {},
});

function run(input: ApiKeyInput) {
  const clock = new SimulatedClock();
  const facts: Array<{ type: string } & Record<string, unknown>> = [];
  const actor = createActor(apiKeyMachine, { clock, input });
  actor.on('*', (f) => facts.push(f as { type: string } & Record<string, unknown>));
  actor.start();
  return { actor, facts, clock, types: () => facts.map((f) => f.type) };
}

const recordOf = (...facts: Array<[string, unknown]>): ApiKeyRecord => {
  let r: ApiKeyRecord | undefined;
  facts.forEach(([type, data], i) => (r = evolveApiKey(r, { type, aggregateId: 'k1', seq: i + 1, data })));
  return r!;
};

describe('API key machine', () => {
  it('never expires without an expiration', () => {
    const { actor, clock, types } = run({ keyId: 'k1', now: 0, created: created() });
    clock.increment(3650 * DAY);
    expect(actor.getSnapshot().value).toEqual({ active: 'forever' });
    expect(types()).toEqual(['apikey.created']);
  });

  it('expires exactly at a one-year expiration, past the setTimeout limit', () => {
    const { actor, clock, types } = run({ keyId: 'k1', now: 0, created: created(365 * DAY) });
    // Visit each step boundary, as real time would (SimulatedClock starts a timer set while flushing
    // at the clock's current time, so one big increment would drift).
    for (let t = MAX_DELAY_MS; t < 365 * DAY; t += MAX_DELAY_MS) clock.set(t);
    clock.set(365 * DAY - 1);
    expect(actor.getSnapshot().value).toEqual({ active: 'expiring' });
    clock.set(365 * DAY);
    expect(actor.getSnapshot().value).toBe('expired');
    expect(types()).toEqual(['apikey.created', 'apikey.expired']);
  });

  it('restarts the expiry timer when an update changes the expiration', () => {
    const { actor, clock, types } = run({ keyId: 'k1', now: 0, created: created(DAY) });
    clock.increment(DAY / 2);
    actor.send({ type: 'update', at: DAY / 2, limitedBy: {}, expiration: 2 * DAY });
    clock.increment(DAY);
    expect(actor.getSnapshot().value).toEqual({ active: 'expiring' });
    clock.increment(DAY / 2);
    expect(actor.getSnapshot().value).toBe('expired');
    expect(types()).toEqual(['apikey.created', 'apikey.updated', 'apikey.expired']);
  });

  it('stops expiring when an update removes the expiration', () => {
    const { actor, clock } = run({ keyId: 'k1', now: 0, created: created(DAY) });
    actor.send({ type: 'update', at: 1, limitedBy: {}, expiration: null });
    clock.increment(10 * DAY);
    expect(actor.getSnapshot().value).toEqual({ active: 'forever' });
  });

  it('is invalidated once and ignores later commands', () => {
    const { actor, clock, facts, types } = run({ keyId: 'k1', now: 0, created: created(DAY) });
    actor.send({ type: 'invalidate', at: 7 });
    actor.send({ type: 'invalidate', at: 8 });
    actor.send({ type: 'update', at: 9, limitedBy: {} });
    clock.increment(2 * DAY);
    expect(actor.getSnapshot().value).toBe('invalidated');
    expect(types()).toEqual(['apikey.created', 'apikey.invalidated']);
    expect(facts[1]).toEqual({ type: 'apikey.invalidated', invalidation: 7 });
  });

  it('puts the hash, never a secret, in the created fact', () => {
    const { facts } = run({ keyId: 'k1', now: 0, created: created() });
    expect(facts[0]).toMatchObject({ type: 'apikey.created', hash: '{SSHA256}x', keyType: 'rest' });
  });

  it('resumes an invalidated record as final', () => {
    const rec = recordOf(['apikey.created', created()], ['apikey.invalidated', { invalidation: 3 }]);
    const { actor, types } = run({ keyId: 'k1', now: 5, record: rec });
    expect(actor.getSnapshot().value).toBe('invalidated');
    expect(types()).toEqual([]);
  });

  it('publishes expired when a record at rest is hydrated after its expiration (the sweep)', () => {
    const rec = recordOf(['apikey.created', created(DAY)]);
    const { actor, types } = run({ keyId: 'k1', now: DAY, record: rec });
    expect(actor.getSnapshot().value).toBe('expired');
    expect(types()).toEqual(['apikey.expired']);
  });
});

describe('evolveApiKey', () => {
  it('replaces descriptors and metadata and re-snapshots limited_by on update', () => {
    const rec = recordOf(
      ['apikey.created', created(DAY)],
      ['apikey.updated', { at: 1, limitedBy: { r: { cluster: ['monitor'] } }, metadata: { a: 1 }, expiration: null }],
    );
    expect(rec).toMatchObject({ limitedBy: { r: { cluster: ['monitor'] } }, metadata: { a: 1 }, status: 'active', seq: 2 });
    expect(rec.expiration).toBeUndefined();
  });
});
