import { createMachine, emit } from 'xstate';
import { ACTORS_PER_SYSTEM, ActorHost } from '../../../actors/contexts/actorHost';
import { pointInTimeMachine } from '../../../machines/pointInTime.machine';

const ticker = createMachine({
  id: 'ticker',
  initial: 'waiting',
  states: {
    waiting: { after: { 30: { target: 'done', actions: emit({ type: 'fired' }) } } },
    done: { type: 'final' },
  },
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('ActorHost: many actors in one XState system', () => {
  it('shares one system, runs each actor its own timers and reports done to its observers', async () => {
    const host = new ActorHost();
    const a = host.create(ticker, {}).start();
    const b = host.create(ticker, {}).start();
    expect(a.system).toBe(b.system);
    const fired: string[] = [];
    a.on('fired', () => fired.push('a'));
    b.on('fired', () => fired.push('b'));
    const done = new Promise<string>((r) => a.subscribe((s) => s.status === 'done' && r(String(s.value))));
    await sleep(80);
    expect(fired.sort()).toEqual(['a', 'b']);
    await expect(done).resolves.toBe('done');
  });

  it('starts a new system after ACTORS_PER_SYSTEM actors (a stop scans only its own system)', () => {
    const host = new ActorHost();
    const actors = Array.from({ length: ACTORS_PER_SYSTEM + 1 }, () => host.create(ticker, {}));
    expect(new Set(actors.map((a) => a.system)).size).toBe(2);
    expect(actors[ACTORS_PER_SYSTEM - 1].system).toBe(actors[0].system);
  });

  it('stops an actor: its pending timer never fires, the others run on', async () => {
    const host = new ActorHost();
    const a = host.create(ticker, {}).start();
    const b = host.create(ticker, {}).start();
    const fired: string[] = [];
    a.on('fired', () => fired.push('a'));
    b.on('fired', () => fired.push('b'));
    host.stop(a);
    expect(a.getSnapshot().status).toBe('stopped');
    await sleep(80);
    expect(fired).toEqual(['b']);
  });

  it('runs the PIT machine as before: opened fact, then expiry after its keep-alive', async () => {
    const host = new ActorHost();
    const usage = { inUse: 0, uses: 0, lastUsedAt: Date.now() };
    const actor = host.create(pointInTimeMachine, { input: { contextId: 'p1', keepAliveMs: 40, usage, now: () => Date.now() } as never });
    const facts: string[] = [];
    actor.on('*', (e: { type: string }) => facts.push(e.type));
    actor.start();
    await sleep(150);
    expect(facts).toEqual(['pit.opened', 'pit.expired']);
    expect(actor.getSnapshot().status).toBe('done');
  });
});
