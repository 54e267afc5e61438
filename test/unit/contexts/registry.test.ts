import { ContextRegistry } from '../../../actors/contexts';
import type { Bus } from '../../../streams';

/** A registry on a recording bus and a hand-moved clock (the machines' own timers are not reached). */
function setup() {
  const types: string[] = [];
  const bus = { append: async (env: { type: string }) => (types.push(env.type), { seq: types.length, duplicate: false, stream: 'ES_EVT' }) } as unknown as Bus;
  const clock = { t: 1_000_000, now() { return this.t; } };
  const reg = new ContextRegistry(bus, clock);
  const shards = [{ index: 'i', indexUuid: 'u', n: 0, shardIndex: 0, searcher: { maxDoc: 1, seqNo: 0 } }];
  return { types, clock, reg, shards };
}

describe('ContextRegistry PIT extension facts', () => {
  it('logs one extended fact for a burst of searches repeating the same keep_alive, then another after a quarter of it', () => {
    const { types, clock, reg, shards } = setup();
    const pit = reg.open({ kind: 'pit', indices: ['i'], shards, keepAliveMs: 60_000 });
    for (let i = 0; i < 10; i++) {
      clock.t += 1000;
      reg.use(pit, 60_000);
      reg.done(pit);
    }
    expect(types).toEqual(['pit.opened']); // 10 s < 15 s: touches only
    clock.t += 5_000; // 15 s since the last logged activity
    reg.use(pit, 60_000);
    reg.done(pit);
    expect(types).toEqual(['pit.opened', 'pit.extended']);
    reg.use(pit, 120_000); // a new keep-alive is always logged
    reg.done(pit);
    expect(types).toEqual(['pit.opened', 'pit.extended', 'pit.extended']);
    expect(reg.expiresAt(pit)).toBe(clock.t + 120_000);
    reg.stopAll();
  });

  it('coalesces scroll continuations as PIT searches: a new keep-alive, or the same one a quarter of it later', () => {
    const { types, clock, reg, shards } = setup();
    const sc = reg.open({ kind: 'scroll', indices: ['i'], shards, keepAliveMs: 60_000 });
    for (let i = 0; i < 3; i++) {
      clock.t += 1000;
      expect(reg.use(sc, 60_000)).toBeUndefined(); // nothing to wait for
      reg.done(sc);
    }
    expect(types).toEqual(['scroll.opened']);
    clock.t += 12_000;
    expect(reg.use(sc, 60_000)).toBeDefined(); // 15 s since opened
    reg.done(sc);
    reg.use(sc, 90_000);
    reg.done(sc);
    expect(types).toEqual(['scroll.opened', 'scroll.extended', 'scroll.extended']);
    reg.stopAll();
  });

  it('keeps the usage on the record: in use, then counted from the end of the last search', () => {
    const { clock, reg, shards } = setup();
    const sc = reg.open({ kind: 'scroll', indices: ['i'], shards, keepAliveMs: 60_000 });
    reg.use(sc, 60_000);
    reg.use(sc, 60_000);
    clock.t += 5000;
    reg.done(sc);
    expect(reg.expiresAt(sc)).toBeNull(); // one search still runs
    clock.t += 5000;
    reg.done(sc);
    expect(reg.expiresAt(sc)).toBe(clock.t + 60_000);
    expect(sc.actor.getSnapshot().value).toEqual({ active: 'idle' });
    reg.stopAll();
  });
});
