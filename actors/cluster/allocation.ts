/**
 * Shard allocation as a pure function: given the indices, where their copies are, the live nodes
 * and which copies have started, decide where copies should be. The elected allocator
 * (allocator.ts) runs it and records the result as `allocation` facts on the metadata log, so
 * every node applies the same decisions in the same order.
 *
 * Rules (ES's, simplified): one primary and `number_of_replicas` replicas per shard, never two
 * copies of a shard on one node; a primary whose node left is replaced at once by a started
 * replica (primary term + 1), or, with no replica, by a new copy rebuilt from the log on the least
 * loaded node; replicas of a node that left are re-created elsewhere only after
 * `index.unassigned.node_left.delayed_timeout` (1m), in case it comes back; and when one node holds
 * at least two copies more than another, a replica moves (added on the target first, removed from
 * the source once the target has started).
 */

/** Where the copies of one shard are. */
export interface ShardAllocation {
  /** Node of the primary copy; null while no live node holds it. */
  primary: string | null;
  /** Nodes of the replica copies. */
  replicas: string[];
  /** Primary term: + 1 whenever the primary moves to another node. */
  term: number;
  /** A replica being moved: `to` is in `replicas`; `from` is removed once `to` has started. */
  relocating?: { from: string; to: string };
}

export interface IndexToAllocate {
  uuid: string;
  shards: number;
  replicas: number;
  /** `index.unassigned.node_left.delayed_timeout` in ms. */
  delayMs: number;
  allocation?: ShardAllocation[];
}

export interface AllocationInput {
  indices: IndexToAllocate[];
  /** Live node ids. */
  live: string[];
  /** Whether a node reports its copy of a shard as started. */
  started: (node: string, uuid: string, n: number) => boolean;
  /** When each node that left was last seen (ms). */
  leftAt: ReadonlyMap<string, number>;
  now: number;
  /**
   * Whether a shard's document log was trimmed behind its copies' commits: its documents then live
   * only in those copies' segments, and a new empty copy cannot be rebuilt from the log.
   */
  trimmed?: (uuid: string, n: number) => boolean;
}

const same = (a: ShardAllocation, b: ShardAllocation | undefined) =>
  !!b && a.primary === b.primary && a.term === b.term && a.replicas.join() === b.replicas.join() &&
  a.relocating?.from === b.relocating?.from && a.relocating?.to === b.relocating?.to;

/**
 * New allocations of the indices that change (uuid -> one entry per shard), and the earliest time
 * a delayed replica becomes due (so the allocator knows when to look again).
 */
export function decideAllocation(input: AllocationInput): { changes: Map<string, ShardAllocation[]>; nextCheckAt?: number } {
  const live = [...input.live].sort();
  const alive = new Set(live);
  const load = new Map(live.map((n) => [n, 0]));
  const bump = (node: string | null, d = 1) => node && load.has(node) && load.set(node, load.get(node)! + d);
  // Current copies on live nodes count toward load before anything is placed.
  for (const idx of input.indices) {
    for (const a of idx.allocation ?? []) {
      bump(a.primary);
      for (const r of a.replicas) bump(r);
    }
  }
  const leastLoaded = (exclude: Set<string>): string | undefined => {
    let best: string | undefined;
    for (const n of live) if (!exclude.has(n) && (best === undefined || load.get(n)! < load.get(best)!)) best = n;
    return best;
  };

  const changes = new Map<string, ShardAllocation[]>();
  let nextCheckAt: number | undefined;
  let settled = true;
  const decided = new Map<string, ShardAllocation[]>();
  for (const idx of input.indices) {
    const out: ShardAllocation[] = [];
    for (let n = 0; n < idx.shards; n++) {
      const cur = idx.allocation?.[n];
      const a: ShardAllocation = { primary: cur?.primary ?? null, replicas: [...(cur?.replicas ?? [])], term: cur?.term ?? 0, ...(cur?.relocating ? { relocating: { ...cur.relocating } } : {}) };
      // Copies on nodes that left are gone; remember how many replicas are only delayed.
      let delayed = 0;
      const lostReplicas = a.replicas.filter((r) => !alive.has(r));
      a.replicas = a.replicas.filter((r) => alive.has(r));
      for (const r of lostReplicas) {
        const due = (input.leftAt.get(r) ?? 0) + idx.delayMs;
        if (due > input.now) {
          delayed++;
          nextCheckAt = Math.min(nextCheckAt ?? due, due);
        }
      }
      if (a.primary && !alive.has(a.primary)) {
        a.primary = null;
        const due = (input.leftAt.get(cur!.primary!) ?? 0) + idx.delayMs;
        // The primary's own slot is not delayed (a shard must stay writable), but its replica slot is.
        if (due > input.now && idx.replicas > 0) delayed++;
      }
      // A move whose source or target left is over (the dead one's copy was dropped above).
      if (a.relocating && (!alive.has(a.relocating.to) || !alive.has(a.relocating.from))) delete a.relocating;
      // A trimmed shard whose primary left and that has no started replica keeps its primary on the
      // node that holds its segments, as ES leaves a primary unassigned rather than start an empty
      // one: red until that node (or a replica) is back; a full-cluster restart brings nodes up one
      // by one, and an empty copy elsewhere would have no source to recover from.
      const trimmed = input.trimmed?.(idx.uuid, n) ?? false;
      const waitFor = !a.primary && cur?.primary && trimmed && !a.replicas.some((r) => input.started(r, idx.uuid, n)) ? cur.primary : undefined;
      if (waitFor) a.primary = waitFor;
      else if (!a.primary && live.length) {
        const startedReplica = a.replicas.find((r) => input.started(r, idx.uuid, n)) ?? a.replicas[0];
        if (startedReplica) {
          a.primary = startedReplica;
          a.replicas = a.replicas.filter((r) => r !== startedReplica);
        } else {
          a.primary = leastLoaded(new Set())!;
          bump(a.primary);
        }
        a.term++;
      }
      // A finished move: drop the source.
      if (a.relocating && input.started(a.relocating.to, idx.uuid, n)) {
        const from = a.relocating.from;
        if (a.replicas.includes(from)) {
          a.replicas = a.replicas.filter((r) => r !== from);
          bump(from, -1);
        }
        delete a.relocating;
      }
      const want = Math.min(idx.replicas, Math.max(0, live.length - 1));
      while (a.primary && alive.has(a.primary) && a.replicas.length + delayed < want) {
        const node = leastLoaded(new Set([a.primary, ...a.replicas]));
        if (!node) break;
        a.replicas.push(node);
        bump(node);
      }
      const keep = want + (a.relocating ? 1 : 0);
      while (a.replicas.length > keep) {
        const drop = [...a.replicas].reverse().find((r) => !input.started(r, idx.uuid, n)) ?? a.replicas[a.replicas.length - 1];
        a.replicas = a.replicas.filter((r) => r !== drop);
        bump(drop, -1);
      }
      if (!a.primary || waitFor || a.replicas.length + delayed < want || a.relocating || delayed) settled = false;
      if (a.primary && !input.started(a.primary, idx.uuid, n)) settled = false;
      for (const r of a.replicas) if (!input.started(r, idx.uuid, n)) settled = false;
      out.push(a);
    }
    decided.set(idx.uuid, out);
  }
  // Balance: only when nothing is moving or missing, move one replica from the busiest node.
  if (settled && live.length > 1) rebalanceOne(decided, load, live);
  for (const idx of input.indices) {
    const out = decided.get(idx.uuid)!;
    if (out.some((a, n) => !same(a, idx.allocation?.[n])) || (idx.allocation?.length ?? 0) !== out.length) changes.set(idx.uuid, out);
  }
  return { changes, ...(nextCheckAt !== undefined ? { nextCheckAt } : {}) };
}

function rebalanceOne(decided: Map<string, ShardAllocation[]>, load: Map<string, number>, live: string[]): void {
  const byLoad = [...live].sort((a, b) => load.get(b)! - load.get(a)! || (a < b ? -1 : 1));
  const idlest = byLoad[byLoad.length - 1];
  // From the busiest node that has a replica to give: a node holding only primaries keeps them
  // (moving a primary would need a hand-over), and the next busiest gives one instead.
  for (const busiest of byLoad) {
    if (load.get(busiest)! - load.get(idlest)! < 2) return;
    for (const shards of decided.values()) {
      for (const a of shards) {
        if (!a.replicas.includes(busiest) || a.primary === idlest || a.replicas.includes(idlest)) continue;
        a.replicas.push(idlest);
        a.relocating = { from: busiest, to: idlest };
        load.set(idlest, load.get(idlest)! + 1);
        return;
      }
    }
  }
}
