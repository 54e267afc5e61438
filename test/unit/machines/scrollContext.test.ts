import { createActor, SimulatedClock } from 'xstate';
import { scrollContextMachine } from '../../../machines/scrollContext.machine';

function start(keepAliveMs = 60_000, resumeInMs?: number) {
  const clock = new SimulatedClock();
  const facts: string[] = [];
  const actor = createActor(scrollContextMachine, { clock, input: { contextId: 'c1', keepAliveMs, resumeInMs } });
  actor.on('*', (f) => facts.push(f.type));
  actor.start();
  return { clock, facts, actor };
}

describe('scroll context machine', () => {
  it('expires keepAlive after the shard is done, never while in use', () => {
    const { clock, facts, actor } = start();
    actor.send({ type: 'extend', keepAliveMs: 120_000 });
    clock.increment(600_000); // in use: still active
    expect(actor.getSnapshot().status).toBe('active');
    actor.send({ type: 'used' });
    clock.increment(119_999);
    expect(actor.getSnapshot().status).toBe('active');
    clock.increment(1);
    expect(actor.getSnapshot().value).toBe('expired');
    expect(facts).toEqual(['scroll.opened', 'scroll.extended', 'scroll.expired']);
  });

  it('expires an untouched context after its first keep-alive', () => {
    const { clock, actor, facts } = start(1000);
    clock.increment(1000);
    expect(actor.getSnapshot().value).toBe('expired');
    expect(facts).toEqual(['scroll.opened', 'scroll.expired']);
  });

  it('is cleared on request and then ignores timers', () => {
    const { clock, actor, facts } = start(1000);
    actor.send({ type: 'clear' });
    clock.increment(5000);
    expect(actor.getSnapshot().value).toBe('cleared');
    expect(facts).toEqual(['scroll.opened', 'scroll.cleared']);
  });

  it('is released by the server with a reason', () => {
    const { actor } = start();
    const released: unknown[] = [];
    actor.on('scroll.released', (f) => released.push(f));
    actor.send({ type: 'release', reason: 'no_scroll_param' });
    expect(actor.getSnapshot().value).toBe('released');
    expect(released).toEqual([{ type: 'scroll.released', reason: 'no_scroll_param' }]);
  });

  it('records who cleared it', () => {
    const { actor } = start();
    const cleared: unknown[] = [];
    actor.on('scroll.cleared', (f) => cleared.push(f));
    actor.send({ type: 'clear', by: 'alice' });
    expect(cleared).toEqual([{ type: 'scroll.cleared', by: 'alice' }]);
  });

  describe('revived after a restart (resumeInMs)', () => {
    it('emits no opened fact and expires when the rest of its keep-alive runs out', () => {
      const { clock, actor, facts } = start(60_000, 15_000);
      clock.increment(14_999);
      expect(actor.getSnapshot().status).toBe('active');
      clock.increment(1);
      expect(actor.getSnapshot().value).toBe('expired');
      expect(facts).toEqual(['scroll.expired']);
    });

    it('expires at once when nothing was left', () => {
      const { clock, actor, facts } = start(60_000, 0);
      clock.increment(0);
      expect(actor.getSnapshot().value).toBe('expired');
      expect(facts).toEqual(['scroll.expired']);
    });

    it('counts the full keep-alive again from its next use', () => {
      const { clock, actor, facts } = start(60_000, 1000);
      actor.send({ type: 'extend', keepAliveMs: 30_000 });
      actor.send({ type: 'used' });
      clock.increment(29_999);
      expect(actor.getSnapshot().status).toBe('active');
      clock.increment(1);
      expect(facts).toEqual(['scroll.extended', 'scroll.expired']);
    });
  });
});

describe('scroll context machine with usage counted by the registry (no event per search)', () => {
  function withUsage(keepAliveMs: number, resumeInMs?: number) {
    const clock = new SimulatedClock();
    const usage = { inUse: 0, lastUsedAt: clock.now() - (resumeInMs === undefined ? 0 : keepAliveMs - resumeInMs) };
    const facts: string[] = [];
    const actor = createActor(scrollContextMachine, { clock, input: { contextId: 'c1', keepAliveMs, resumeInMs, usage, now: () => clock.now() } });
    actor.on('*', (f) => facts.push(f.type));
    actor.start();
    return { clock, usage, facts, actor };
  }

  it('expires a keep-alive after the end of the last search, never while one runs', () => {
    const { clock, usage, facts, actor } = withUsage(1000);
    clock.increment(600);
    usage.inUse++; // a page starts …
    clock.increment(5000); // … and runs past the keep-alive: the timer finds it in use
    expect(actor.getSnapshot().status).toBe('active');
    usage.inUse--;
    usage.lastUsedAt = clock.now(); // … and ends
    clock.increment(999);
    expect(actor.getSnapshot().status).toBe('active');
    clock.increment(1000); // the timer armed while in use fires, then the one for what was left
    expect(actor.getSnapshot().value).toBe('expired');
    expect(facts).toEqual(['scroll.opened', 'scroll.expired']);
  });

  it('arms again for what is left when used since the timer was armed', () => {
    const { clock, usage, actor } = withUsage(1000);
    clock.increment(700);
    usage.lastUsedAt = clock.now(); // a page came and went
    clock.increment(300); // the first timer: used since, 700 ms left
    expect(actor.getSnapshot().status).toBe('active');
    clock.increment(699);
    expect(actor.getSnapshot().status).toBe('active');
    clock.increment(1);
    expect(actor.getSnapshot().value).toBe('expired');
  });

  it('a revived context expires on what was left unless used', () => {
    const { clock, facts, actor } = withUsage(60_000, 15_000);
    clock.increment(15_000);
    expect(actor.getSnapshot().value).toBe('expired');
    expect(facts).toEqual(['scroll.expired']);
  });

  it('an extend (a keep-alive worth logging) emits its fact; used brings the timer back', () => {
    const { clock, usage, facts, actor } = withUsage(1000);
    usage.inUse++;
    actor.send({ type: 'extend', keepAliveMs: 2000 });
    clock.increment(10_000);
    usage.inUse--;
    usage.lastUsedAt = clock.now();
    actor.send({ type: 'used' });
    clock.increment(1999);
    expect(actor.getSnapshot().status).toBe('active');
    clock.increment(1);
    expect(facts).toEqual(['scroll.opened', 'scroll.extended', 'scroll.expired']);
  });
});
