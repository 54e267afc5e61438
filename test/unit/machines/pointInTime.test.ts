import { createActor, SimulatedClock } from 'xstate';
import { pointInTimeMachine } from '../../../machines/pointInTime.machine';

function start(keepAliveMs = 60_000) {
  const clock = new SimulatedClock();
  const facts: string[] = [];
  const actor = createActor(pointInTimeMachine, { clock, input: { contextId: 'p1', keepAliveMs } });
  actor.on('*', (f) => facts.push(f.type));
  actor.start();
  return { clock, facts, actor };
}

describe('point in time machine', () => {
  it('extends its keep-alive from the end of each search', () => {
    const { clock, actor, facts } = start(60_000);
    clock.increment(50_000);
    actor.send({ type: 'extend', keepAliveMs: 30_000 });
    actor.send({ type: 'used' });
    clock.increment(29_000);
    expect(actor.getSnapshot().status).toBe('active');
    clock.increment(1_000);
    expect(actor.getSnapshot().value).toBe('expired');
    expect(facts).toEqual(['pit.opened', 'pit.extended', 'pit.expired']);
  });

  it('keeps the current keep-alive when a search sends none', () => {
    const { clock, actor, facts } = start(10_000);
    actor.send({ type: 'touch' });
    actor.send({ type: 'used' });
    clock.increment(9_999);
    expect(actor.getSnapshot().status).toBe('active');
    clock.increment(1);
    expect(actor.getSnapshot().value).toBe('expired');
    expect(facts).toEqual(['pit.opened', 'pit.expired']);
  });

  it('closes on request', () => {
    const { actor, facts } = start();
    actor.send({ type: 'close' });
    expect(actor.getSnapshot().value).toBe('closed');
    expect(facts).toEqual(['pit.opened', 'pit.closed']);
  });

  it('is released when its index is deleted', () => {
    const { actor, facts } = start();
    actor.send({ type: 'release', reason: 'index_deleted' });
    expect(actor.getSnapshot().value).toBe('released');
    expect(facts).toEqual(['pit.opened', 'pit.released']);
  });
});
