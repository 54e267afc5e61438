/**
 * Counting lifecycle facts on NATS for the bench's events section: how many arrived, of which kind,
 * and whether a run of context lifecycles produced every fact it should have.
 */
import type { NatsConnection } from '@nats-io/transport-node';

/** Counts messages on a subject: how many, their bytes, first and last arrival, and per fact (`scroll.opened`…). */
export function factCounter(nc: NatsConnection, subject: string) {
  const c = { n: 0, bytes: 0, first: 0, last: 0, byFact: new Map<string, number>() };
  nc.subscribe(subject, {
    callback: (_e, m) => {
      const t = performance.now();
      if (!c.n) c.first = t;
      c.last = t;
      c.n++;
      c.bytes += m.data.length;
      // es.v1.evt.<aggregate>.<id>.<fact>
      const parts = m.subject.split('.');
      const fact = `${parts[3]}.${parts[parts.length - 1]}`;
      c.byFact.set(fact, (c.byFact.get(fact) ?? 0) + 1);
    },
  });
  return {
    reset: () => Object.assign(c, { n: 0, bytes: 0, first: 0, last: 0, byFact: new Map<string, number>() }),
    /** Waits until no message came for `quietMs`, then returns the counts. */
    settle: async (quietMs = 300) => {
      for (;;) {
        const n = c.n;
        await new Promise((r) => setTimeout(r, quietMs));
        if (c.n === n) return { ...c, byFact: new Map(c.byFact) };
      }
    },
  };
}

/**
 * The facts `scrolls` scroll contexts and `pits` PITs opened, extended once and freed must produce
 * (a PIT extension with a new keep-alive is logged; repeating the same one would be coalesced).
 * Throws, naming what is missing, when the log saw fewer.
 */
export function checkLifecycleFacts(byFact: Map<string, number>, scrolls: number, pits: number): void {
  const want: Record<string, number> = {
    'scroll.opened': scrolls,
    'scroll.extended': scrolls,
    'scroll.cleared': scrolls,
    'pit.opened': pits,
    'pit.extended': pits,
    'pit.closed': pits,
  };
  const short = Object.entries(want).filter(([f, n]) => (byFact.get(f) ?? 0) < n);
  if (short.length) {
    const seen = [...byFact].map(([f, n]) => `${f} ${n}`).join(', ') || 'none';
    throw new Error(`lifecycle facts missing for ${scrolls} scrolls + ${pits} PITs: ${short.map(([f, n]) => `${f} ${byFact.get(f) ?? 0} of ${n}`).join(', ')} (seen: ${seen})`);
  }
}
