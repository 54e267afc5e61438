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

  it('logs every scroll continuation', () => {
    const { types, reg, shards } = setup();
    const sc = reg.open({ kind: 'scroll', indices: ['i'], shards, keepAliveMs: 60_000 });
    for (let i = 0; i < 3; i++) {
      reg.use(sc, 60_000);
      reg.done(sc);
    }
    expect(types).toEqual(['scroll.opened', 'scroll.extended', 'scroll.extended', 'scroll.extended']);
    reg.stopAll();
  });
});
