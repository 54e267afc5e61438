import { ContextRegistry } from '../../../actors/contexts';
import type { Bus, Envelope } from '../../../streams';
import type { ContextState } from '../../../streams/evolve';

/**
 * Issue 10 item 23: every fact carries the X-Opaque-Id (`correlationId`) of the request that caused
 * it; the keep-alive timer's `expired` carries none.
 */
function setup() {
  const facts: Envelope[] = [];
  const bus = { append: async (env: Envelope) => (facts.push(env), { seq: facts.length, duplicate: false, stream: 'ES_EVT' }) } as unknown as Bus;
  const reg = new ContextRegistry(bus);
  const shards = [{ index: 'i', indexUuid: 'u', n: 0, shardIndex: 0, searcher: { maxDoc: 1, seqNo: 0 } }];
  const seen = () => facts.map((f) => [f.type, f.correlationId ?? null]);
  return { facts, reg, shards, seen };
}

const until = async (cond: () => boolean, ms = 5_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('correlation ids of context facts', () => {
  it('a scroll continuation and a clear carry their own requests’ ids, not the opener’s', async () => {
    const { reg, shards, seen, facts } = setup();
    const sc = reg.open({ kind: 'scroll', indices: ['i'], shards, keepAliveMs: 60_000, correlationId: 'open-1' });
    reg.use(sc, 120_000, 'page-2'); // a new keep-alive: logged
    reg.done(sc);
    reg.use(sc, 90_000); // a continuation without X-Opaque-Id
    reg.done(sc);
    await reg.clear(sc, 'bob', 'clear-3');
    expect(seen()).toEqual([
      ['scroll.opened', 'open-1'],
      ['scroll.extended', 'page-2'],
      ['scroll.extended', null],
      ['scroll.cleared', 'clear-3'],
    ]);
    expect(facts[3].data).toEqual({ by: 'bob' });
  });

  it('a PIT search with keep_alive and a close carry their requests’ ids', async () => {
    const { reg, shards, seen } = setup();
    const pit = reg.open({ kind: 'pit', indices: ['i'], shards, keepAliveMs: 60_000, correlationId: 'open-1' });
    reg.use(pit, 120_000, 'search-2');
    reg.done(pit);
    await reg.clear(pit, undefined, 'close-3');
    expect(seen()).toEqual([
      ['pit.opened', 'open-1'],
      ['pit.extended', 'search-2'],
      ['pit.closed', 'close-3'],
    ]);
  });

  it('the keep-alive timer’s expired carries none', async () => {
    const { reg, shards, seen } = setup();
    reg.open({ kind: 'scroll', indices: ['i'], shards, keepAliveMs: 30, correlationId: 'open-1' });
    const pit = reg.open({ kind: 'pit', indices: ['i'], shards, keepAliveMs: 60_000, correlationId: 'open-2' });
    reg.use(pit, 40, 'search-3');
    reg.done(pit);
    await until(() => seen().filter(([t]) => String(t).endsWith('.expired')).length === 2);
    expect(seen()).toEqual(
      expect.arrayContaining([
        ['scroll.expired', null],
        ['pit.expired', null],
      ]),
    );
  });

  it('a release caused by a request carries its id; one caused by an index deletion carries none', async () => {
    const { reg, shards, seen } = setup();
    const a = reg.open({ kind: 'scroll', indices: ['i'], shards, keepAliveMs: 60_000, correlationId: 'open-1' });
    reg.use(a, 300_000, 'last-page-2'); // a continuation without `scroll`: the default keep-alive, logged
    reg.done(a);
    await reg.release(a, 'no_scroll_param', 'last-page-2');
    reg.open({ kind: 'scroll', indices: ['i'], shards, keepAliveMs: 60_000, correlationId: 'open-3' });
    reg.releaseIndex('u');
    await until(() => seen().length === 5);
    expect(seen()).toEqual([
      ['scroll.opened', 'open-1'],
      ['scroll.extended', 'last-page-2'],
      ['scroll.released', 'last-page-2'],
      ['scroll.opened', 'open-3'],
      ['scroll.released', null],
    ]);
  });

  it('a revived context logs its later facts with their own requests’ ids, and an overdue expiry with none', async () => {
    const { reg, shards, seen } = setup();
    const now = Date.now();
    const state = (id: string, lastActivityAt: number): ContextState => ({
      kind: 'scroll',
      id,
      seq: 1,
      status: 'open',
      indices: ['i'],
      shards: 1,
      pinned: shards,
      keepAliveMs: 60_000,
      openedAt: lastActivityAt,
      lastActivityAt,
      extensions: 0,
      correlationId: 'open-before-restart',
    });
    const live = reg.revive(state('c-live', now));
    reg.use(live, 120_000, 'page-after-restart');
    reg.done(live);
    reg.revive(state('c-overdue', now - 120_000));
    await until(() => seen().length === 2);
    expect(seen()).toEqual(
      expect.arrayContaining([
        ['scroll.extended', 'page-after-restart'],
        ['scroll.expired', null],
      ]),
    );
    reg.stopAll();
  });
});
