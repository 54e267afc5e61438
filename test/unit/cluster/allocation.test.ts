/**
 * decideAllocation: where shard copies go when nodes come and go (pure; the allocator applies it).
 */
import { decideAllocation, type IndexToAllocate, type ShardAllocation } from '../../../actors/cluster/allocation';

const allStarted = () => true;

/** Applies decisions until nothing changes (every copy reported started at once), as the allocator would. */
function settle(indices: IndexToAllocate[], live: string[], rounds = 50): IndexToAllocate[] {
  let cur = indices;
  for (let i = 0; i < rounds; i++) {
    const { changes } = decideAllocation({ indices: cur, live, started: allStarted, leftAt: new Map(), now: 0 });
    if (!changes.size) return cur;
    cur = cur.map((x) => (changes.has(x.uuid) ? { ...x, allocation: changes.get(x.uuid) } : x));
  }
  throw new Error('allocation did not settle');
}

const loadOf = (indices: IndexToAllocate[], live: string[]) => {
  const load = new Map(live.map((n) => [n, 0]));
  for (const x of indices) for (const a of x.allocation ?? []) for (const n of [a.primary, ...a.replicas]) if (n) load.set(n, load.get(n)! + 1);
  return live.map((n) => load.get(n)!);
};

describe('decideAllocation', () => {
  it('places every primary and replica on distinct nodes, spread evenly', () => {
    const out = settle([{ uuid: 'u', shards: 3, replicas: 1, delayMs: 0 }], ['a', 'b', 'c']);
    for (const a of out[0].allocation!) expect(new Set([a.primary, ...a.replicas]).size).toBe(2);
    expect(loadOf(out, ['a', 'b', 'c'])).toEqual([2, 2, 2]);
  });

  it('gives a new empty node a copy when the busiest node holds only primaries', () => {
    // After failovers: a holds two primaries, b and c the replicas; d joins with nothing.
    const allocation: ShardAllocation[] = [
      { primary: 'a', replicas: ['b'], term: 2 },
      { primary: 'a', replicas: ['c'], term: 2 },
      { primary: 'c', replicas: ['b'], term: 1 },
    ];
    const live = ['a', 'b', 'c', 'd'];
    const out = settle([{ uuid: 'u', shards: 3, replicas: 1, delayMs: 0, allocation }], live);
    const load = loadOf(out, live);
    expect(load[3]).toBeGreaterThan(0);
    expect(Math.max(...load) - Math.min(...load)).toBeLessThan(2);
    // Primaries did not move (no hand-over), and no shard lost a copy.
    expect(out[0].allocation!.map((a) => a.primary)).toEqual(['a', 'a', 'c']);
    for (const a of out[0].allocation!) expect(a.replicas).toHaveLength(1);
  });

  it('promotes a started replica when the primary node leaves, with a new term', () => {
    const allocation: ShardAllocation[] = [{ primary: 'a', replicas: ['b'], term: 1 }];
    const { changes } = decideAllocation({ indices: [{ uuid: 'u', shards: 1, replicas: 1, delayMs: 0, allocation }], live: ['b', 'c'], started: allStarted, leftAt: new Map([['a', 0]]), now: 1 });
    const a = changes.get('u')![0];
    expect(a.primary).toBe('b');
    expect(a.term).toBe(2);
    expect(a.replicas).toEqual(['c']);
  });

  it('waits the delayed timeout before replacing a replica lost with its node', () => {
    const allocation: ShardAllocation[] = [{ primary: 'a', replicas: ['b'], term: 1 }];
    const r = decideAllocation({ indices: [{ uuid: 'u', shards: 1, replicas: 1, delayMs: 60_000, allocation }], live: ['a', 'c'], started: allStarted, leftAt: new Map([['b', 1_000]]), now: 2_000 });
    expect(r.changes.get('u')![0].replicas).toEqual([]);
    expect(r.nextCheckAt).toBe(61_000);
  });

  describe('a shard whose log was trimmed (its documents only in segments)', () => {
    const allocation: ShardAllocation[] = [{ primary: 'c', replicas: ['d'], term: 1 }];
    const idx = (): IndexToAllocate => ({ uuid: 'u', shards: 1, replicas: 1, delayMs: 60_000, allocation });
    const decide = (trimmed: boolean, started: (node: string) => boolean) =>
      decideAllocation({ indices: [idx()], live: ['a', 'b'], started: (node) => started(node), leftAt: new Map([['c', 0], ['d', 0]]), now: 1, trimmed: () => trimmed });

    it('keeps its primary on the node that left while no started replica can take over (red, not an empty copy)', () => {
      const a = decide(true, () => false).changes.get('u')?.[0] ?? allocation[0];
      // no new empty primary on a or b, no replica there recovering from nobody
      expect(a.primary).toBe('c');
      expect(a.term).toBe(1);
      expect(a.replicas.filter((r) => r === 'a' || r === 'b')).toEqual([]);
    });

    it('still promotes a started replica at once', () => {
      const live = { indices: [{ ...idx(), allocation: [{ primary: 'c', replicas: ['a'], term: 1 }] }], live: ['a', 'b'], started: (node: string) => node === 'a', leftAt: new Map([['c', 0]]), now: 1, trimmed: () => true };
      const a = decideAllocation(live).changes.get('u')![0];
      expect(a.primary).toBe('a');
      expect(a.term).toBe(2);
    });

    it('without a trimmed log, puts a new primary on a live node (rebuilt from the log)', () => {
      const a = decide(false, () => false).changes.get('u')![0];
      expect(['a', 'b']).toContain(a.primary);
      expect(a.term).toBe(2);
    });
  });
});
