import { makeEnvelope, type Envelope } from '../../streams';

/** Keep-alive of the synthetic contexts, and the time of the first fact. */
export const KEEP_ALIVE = 60_000;
export const T0 = Date.parse('2024-05-01T00:00:00.000Z');

/**
 * N facts of interleaved lifecycles, `live` aggregates at a time, 1 ms of log time per fact:
 * scroll opened, extended x2, cleared | expired; PIT opened, extended, closed | expired.
 */
export function syntheticFacts(n: number, live = 1000): Envelope[] {
  const out: Envelope[] = [];
  type Agg = { kind: 'scroll' | 'pit'; id: string; seq: number; plan: string[]; last: number };
  const slots: Array<Agg | undefined> = new Array(live);
  let made = 0;
  const fresh = (): Agg => {
    made++;
    const kind = made % 2 ? 'scroll' : 'pit';
    const end = made % 3 === 0 ? 'expired' : kind === 'scroll' ? 'cleared' : 'closed';
    const plan = kind === 'scroll' ? ['opened', 'extended', 'extended', end] : ['opened', 'extended', end];
    return { kind, id: crypto.randomUUID(), seq: 0, plan, last: 0 };
  };
  const pinned = [{ index: 'books', indexUuid: 'aW5kZXgtdXVpZC0x', n: 0, shardIndex: 0, searcher: { maxDoc: 1000, seqNo: 999 } }];
  for (let i = 0; out.length < n; i++) {
    const slot = i % live;
    const a = (slots[slot] ??= fresh());
    const fact = a.plan[a.seq];
    const now = T0 + i;
    // An expiry happens one keep-alive after the last use (per aggregate clocks; the log interleaves).
    const time = fact === 'expired' ? a.last + KEEP_ALIVE + 3 : now;
    const data =
      fact === 'opened' ? { keepAliveMs: KEEP_ALIVE, indices: ['books'], shards: 1, pinned, owner: { username: 'elastic', realm: 'reserved' } }
      : fact === 'extended' ? { keepAliveMs: KEEP_ALIVE }
      : {};
    out.push(makeEnvelope({ type: `${a.kind}.${fact}`, aggregateId: a.id, seq: ++a.seq, data, time }));
    a.last = time;
    if (a.seq === a.plan.length) slots[slot] = undefined;
  }
  return out;
}
