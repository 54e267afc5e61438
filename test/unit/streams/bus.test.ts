import type { NatsConnection } from '@nats-io/transport-node';
import { Bus } from '../../../streams/bus';

/** A JetStream stand-in whose acks the test releases by hand; records the order of publishes. */
function fakeBus(window: number) {
  const sent: string[] = [];
  const acks: Array<() => void> = [];
  const bus = new Bus({ options: { inboxPrefix: '_INBOX' } } as unknown as NatsConnection, window);
  (bus as unknown as { js: unknown }).js = {
    publish: (subject: string) => {
      sent.push(subject);
      return new Promise((r) => acks.push(() => r({ seq: sent.length, duplicate: false, stream: 'S' })));
    },
  };
  return { bus, sent, acks };
}

describe('Bus publish window', () => {
  it('hands a finished slot to the oldest waiter before a caller that arrives meanwhile', async () => {
    const { bus, sent, acks } = fakeBus(1);
    const data = new Uint8Array();
    const a = bus.publish('a', data);
    const b = bus.publish('b', data); // waits for the slot
    await Promise.resolve();
    expect(sent).toEqual(['a']);
    acks[0]();
    // A caller whose turn comes between a's ack and b's wake-up must queue behind b.
    let c: Promise<unknown> | undefined;
    queueMicrotask(() => (c = bus.publish('c', data)));
    await a;
    await new Promise((r) => setImmediate(r));
    expect(sent).toEqual(['a', 'b']);
    acks[1]();
    await b;
    await new Promise((r) => setImmediate(r));
    expect(sent).toEqual(['a', 'b', 'c']);
    acks[2]();
    await c;
  });

  it('never has more than `window` publishes in flight', async () => {
    const { bus, sent, acks } = fakeBus(3);
    const all = Array.from({ length: 10 }, (_, i) => bus.publish(`s${i}`, new Uint8Array()));
    await new Promise((r) => setImmediate(r));
    expect(sent).toHaveLength(3);
    for (let i = 0; i < 10; i++) {
      acks[i]();
      await new Promise((r) => setImmediate(r));
      expect(sent.length - (i + 1)).toBeLessThanOrEqual(3);
    }
    await Promise.all(all);
    expect(sent).toEqual(Array.from({ length: 10 }, (_, i) => `s${i}`));
  });
});
