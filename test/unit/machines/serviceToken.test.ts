import { createActor, SimulatedClock } from 'xstate';
import { evolveServiceToken, serviceTokenMachine, type ServiceTokenInput } from '../../../machines/serviceToken.machine';

const created = { account: 'elastic/fleet-server', name: 'token1', hash: '{PBKDF2_STRETCH}x', creation: 0, creator: { username: 'elastic', realm: 'reserved' } };

function run(input: ServiceTokenInput) {
  const clock = new SimulatedClock();
  const facts: string[] = [];
  const actor = createActor(serviceTokenMachine, { clock, input });
  actor.on('*', (f) => facts.push(f.type));
  actor.start();
  return { actor, facts, clock };
}

describe('service token machine', () => {
  it('publishes created and never expires', () => {
    const { actor, facts, clock } = run({ tokenId: 's1', created });
    clock.increment(10 * 365 * 86_400_000);
    expect(actor.getSnapshot().value).toBe('active');
    expect(facts).toEqual(['servicetoken.created']);
  });

  it('is invalidated (deleted) once', () => {
    const { actor, facts } = run({ tokenId: 's1', created });
    actor.send({ type: 'invalidate', at: 1 });
    actor.send({ type: 'invalidate', at: 2 });
    expect(actor.getSnapshot().value).toBe('invalidated');
    expect(facts).toEqual(['servicetoken.created', 'servicetoken.invalidated']);
  });

  it('resumes a deleted record as final without facts', () => {
    let rec = evolveServiceToken(undefined, { type: 'servicetoken.created', aggregateId: 's1', seq: 1, data: created });
    rec = evolveServiceToken(rec, { type: 'servicetoken.invalidated', aggregateId: 's1', seq: 2, data: { at: 1 } });
    const { actor, facts } = run({ tokenId: 's1', record: rec });
    expect(actor.getSnapshot().value).toBe('invalidated');
    expect(facts).toEqual([]);
  });
});
