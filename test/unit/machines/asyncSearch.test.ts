import { createActor, SimulatedClock } from 'xstate';
import { asyncSearchMachine } from '../../../machines/asyncSearch.machine';

const shards = { total: 2, successful: 2, skipped: 0, failed: 0 };
function start(input: Parameters<typeof createActor<typeof asyncSearchMachine>>[1] extends infer O ? (O extends { input?: infer I } ? I : never) : never) {
  const clock = new SimulatedClock();
  const facts: string[] = [];
  const actor = createActor(asyncSearchMachine, { clock, input });
  actor.on('*', (f) => facts.push(f.type));
  actor.start();
  return { clock, facts, actor };
}

describe('asyncSearch machine', () => {
  it('submitted -> completed -> expired at keep_alive after submission', () => {
    const { clock, facts, actor } = start({ id: 'a', keepAliveMs: 60_000 });
    clock.increment(10_000);
    actor.send({ type: 'complete', status: 200, partial: false, shards });
    clock.increment(49_999);
    expect(actor.getSnapshot().value).toEqual({ live: 'completed' });
    clock.increment(1);
    expect(actor.getSnapshot().value).toBe('expired');
    expect(facts).toEqual(['asyncsearch.submitted', 'asyncsearch.completed', 'asyncsearch.expired']);
  });

  it('expires while running (ES cancels a search past its expiration)', () => {
    const { clock, facts, actor } = start({ id: 'a', keepAliveMs: 1000 });
    clock.increment(1000);
    expect(actor.getSnapshot().status).toBe('done');
    expect(facts).toEqual(['asyncsearch.submitted', 'asyncsearch.expired']);
  });

  it('an extension restarts the expiry from now and keeps a completed search completed', () => {
    const { clock, facts, actor } = start({ id: 'a', keepAliveMs: 1000 });
    actor.send({ type: 'complete', status: 200, partial: false, shards });
    clock.increment(900);
    actor.send({ type: 'extend', keepAliveMs: 5000 });
    clock.increment(4999);
    expect(actor.getSnapshot().value).toEqual({ live: 'completed' });
    actor.send({ type: 'delete', by: 'u' });
    expect(facts).toEqual(['asyncsearch.submitted', 'asyncsearch.completed', 'asyncsearch.extended', 'asyncsearch.deleted']);
  });

  it('a DELETE of a running search cancels it', () => {
    const { facts, actor } = start({ id: 'a', keepAliveMs: 1000 });
    actor.send({ type: 'delete' });
    expect(actor.getSnapshot().value).toBe('cancelled');
    expect(facts).toEqual(['asyncsearch.submitted', 'asyncsearch.cancelled']);
  });

  it('a revived search emits no submitted fact and expires when what was left runs out', () => {
    const { clock, facts, actor } = start({ id: 'a', keepAliveMs: 60_000, resume: { expiresInMs: 500, completed: true } });
    actor.send({ type: 'adopt', from: 'n1', to: 'n2' });
    clock.increment(500);
    expect(facts).toEqual(['asyncsearch.adopted', 'asyncsearch.expired']);
  });
});
