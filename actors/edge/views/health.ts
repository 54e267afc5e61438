import type { IndexState } from '../../cluster';
import type { NodeDescriptor } from './nodes';

/**
 * Shard copies and health as the views report them, from the allocation facts (where each copy is)
 * and what each live node says of its copies (started, recovering): red while a primary is not
 * active, yellow while a replica is missing or still recovering, else green.
 */

export type HealthStatus = 'green' | 'yellow' | 'red';
const RANK: Record<HealthStatus, number> = { green: 0, yellow: 1, red: 2 };
export const worst = (a: HealthStatus, b: HealthStatus): HealthStatus => (RANK[a] >= RANK[b] ? a : b);
export const atLeast = (have: HealthStatus, want: HealthStatus) => RANK[have] <= RANK[want];

/** One copy of a shard: on a live node (started or initializing), or unassigned. */
export interface ShardCopy {
  primary: boolean;
  state: 'STARTED' | 'INITIALIZING' | 'UNASSIGNED';
  node: NodeDescriptor | null;
  /** A replica being moved here from this node (it leaves once this copy has started). */
  relocatingFrom?: NodeDescriptor;
}

export interface ShardHealth {
  n: number;
  status: HealthStatus;
  primaryActive: boolean;
  active: number;
  initializing: number;
  relocating: number;
  unassigned: number;
  copies: ShardCopy[];
}

export interface IndexHealth {
  name: string;
  status: HealthStatus;
  shards: number;
  replicas: number;
  activePrimary: number;
  active: number;
  initializing: number;
  relocating: number;
  unassigned: number;
  perShard: ShardHealth[];
}

/** The copies of shard `n`: its primary, its replicas, and unassigned slots up to number_of_replicas. */
export function shardCopies(idx: IndexState, n: number, nodes: NodeDescriptor[]): ShardCopy[] {
  const byId = new Map(nodes.map((x) => [x.id, x]));
  const a = idx.allocation?.[n];
  const stateOf = (id: string): ShardCopy['state'] => (byId.get(id)?.copies[`${idx.uuid}/${n}`] === 'started' ? 'STARTED' : 'INITIALIZING');
  const out: ShardCopy[] = [];
  const primary = a?.primary && byId.has(a.primary) ? a.primary : undefined;
  out.push(primary ? { primary: true, state: stateOf(primary), node: byId.get(primary)! } : { primary: true, state: 'UNASSIGNED', node: null });
  const replicas = (a?.replicas ?? []).filter((r) => byId.has(r));
  for (const r of replicas) {
    const moving = a?.relocating?.to === r ? byId.get(a.relocating.from) : undefined;
    out.push({ primary: false, state: stateOf(r), node: byId.get(r)!, ...(moving ? { relocatingFrom: moving } : {}) });
  }
  const kept = replicas.filter((r) => !(a?.relocating?.from === r && replicas.includes(a.relocating.to))).length;
  for (let i = kept; i < idx.settings.numberOfReplicas; i++) out.push({ primary: false, state: 'UNASSIGNED', node: null });
  return out;
}

export function indexHealth(idx: IndexState, nodes: NodeDescriptor[]): IndexHealth {
  const perShard: ShardHealth[] = [];
  for (let n = 0; n < idx.settings.numberOfShards; n++) {
    const copies = shardCopies(idx, n, nodes);
    const primaryActive = copies[0].state === 'STARTED';
    const active = copies.filter((c) => c.state === 'STARTED').length;
    const initializing = copies.filter((c) => c.state === 'INITIALIZING').length;
    const unassigned = copies.filter((c) => c.state === 'UNASSIGNED').length;
    const relocating = copies.filter((c) => c.relocatingFrom).length;
    const status: HealthStatus = !primaryActive ? 'red' : initializing || unassigned ? 'yellow' : 'green';
    perShard.push({ n, status, primaryActive, active, initializing, relocating, unassigned, copies });
  }
  const sum = (f: (s: ShardHealth) => number) => perShard.reduce((a, s) => a + f(s), 0);
  return {
    name: idx.name,
    status: perShard.reduce<HealthStatus>((a, s) => worst(a, s.status), 'green'),
    shards: idx.settings.numberOfShards,
    replicas: idx.settings.numberOfReplicas,
    activePrimary: sum((s) => (s.primaryActive ? 1 : 0)),
    active: sum((s) => s.active),
    initializing: sum((s) => s.initializing),
    relocating: sum((s) => s.relocating),
    unassigned: sum((s) => s.unassigned),
    perShard,
  };
}

export interface ClusterHealth {
  status: HealthStatus;
  nodes: number;
  dataNodes: number;
  activePrimary: number;
  active: number;
  initializing: number;
  relocating: number;
  unassigned: number;
  unassignedPrimary: number;
  indices: IndexHealth[];
}

export function clusterHealth(indices: IndexState[], nodes: NodeDescriptor[]): ClusterHealth {
  const per = indices.map((i) => indexHealth(i, nodes)).sort((a, b) => (a.name < b.name ? -1 : 1));
  const sum = (f: (i: IndexHealth) => number) => per.reduce((a, i) => a + f(i), 0);
  return {
    status: per.reduce<HealthStatus>((a, i) => worst(a, i.status), 'green'),
    nodes: nodes.length,
    dataNodes: nodes.filter((n) => n.roles.includes('data')).length,
    activePrimary: sum((i) => i.activePrimary),
    active: sum((i) => i.active),
    initializing: sum((i) => i.initializing),
    relocating: sum((i) => i.relocating),
    unassigned: sum((i) => i.unassigned),
    unassignedPrimary: sum((i) => i.perShard.filter((s) => s.copies[0].state === 'UNASSIGNED').length),
    indices: per,
  };
}

export const activePercent = (h: { active: number; initializing: number; unassigned: number }) => {
  const all = h.active + h.initializing + h.unassigned;
  return all ? (100 * h.active) / all : 100;
};
