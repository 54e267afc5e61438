import { createActor, SimulatedClock } from 'xstate';
import { pointInTimeMachine } from '../../../machines/pointInTime.machine';

function start(keepAliveMs = 60_000, resumeInMs?: number) {
  const clock = new SimulatedClock();
  const facts: string[] = [];
  const actor = createActor(pointInTimeMachine, { clock, input: { contextId: 'p1', keepAliveMs, resumeInMs } });
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

  it('records who closed it', () => {
    const { actor } = start();
    const closed: unknown[] = [];
    actor.on('pit.closed', (f) => closed.push(f));
    actor.send({ type: 'close', by: 'bob' });
    expect(closed).toEqual([{ type: 'pit.closed', by: 'bob' }]);
  });

  it('revived (resumeInMs): no opened fact, expires after what was left, a touch restarts the full keep-alive', () => {
    const revived = start(60_000, 5000);
    revived.clock.increment(5000);
    expect(revived.facts).toEqual(['pit.expired']);

    const touched = start(60_000, 5000);
    touched.actor.send({ type: 'touch' });
    touched.actor.send({ type: 'used' });
    touched.clock.increment(59_999);
    expect(touched.actor.getSnapshot().status).toBe('active');
    touched.clock.increment(1);
    expect(touched.facts).toEqual(['pit.expired']);
  });
});
