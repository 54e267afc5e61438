import type { IndexState } from '../../cluster';
import type { NodeDescriptor } from './nodes';

/**
 * Shard allocation as this cluster can report it: every primary is active on its node; a replica
 * needs another data node than its primary's, so with N data nodes at most N-1 copies of each
 * shard are assigned (today N = 1: every replica unassigned, status yellow, as ES on one node).
 */

export type HealthStatus = 'green' | 'yellow' | 'red';
const RANK: Record<HealthStatus, number> = { green: 0, yellow: 1, red: 2 };
export const worst = (a: HealthStatus, b: HealthStatus): HealthStatus => (RANK[a] >= RANK[b] ? a : b);
export const atLeast = (have: HealthStatus, want: HealthStatus) => RANK[have] <= RANK[want];

export interface ShardHealth {
  n: number;
  status: HealthStatus;
  primaryActive: boolean;
  active: number;
  unassigned: number;
}

export interface IndexHealth {
  name: string;
  status: HealthStatus;
  shards: number;
  replicas: number;
  activePrimary: number;
  active: number;
  unassigned: number;
  perShard: ShardHealth[];
}

/** Replica copies of each shard that have a node to live on. */
export const assignedReplicas = (replicas: number, dataNodes: number) => Math.max(0, Math.min(replicas, dataNodes - 1));

export function indexHealth(idx: IndexState, nodes: NodeDescriptor[]): IndexHealth {
  const dataNodes = nodes.filter((n) => n.roles.includes('data')).length;
  const shards = idx.settings.numberOfShards;
  const replicas = idx.settings.numberOfReplicas;
  const assigned = assignedReplicas(replicas, dataNodes);
  const status: HealthStatus = dataNodes === 0 ? 'red' : assigned < replicas ? 'yellow' : 'green';
  const perShard: ShardHealth[] = Array.from({ length: shards }, (_, n) => ({
    n,
    status,
    primaryActive: dataNodes > 0,
    active: dataNodes > 0 ? 1 + assigned : 0,
    unassigned: replicas - assigned + (dataNodes > 0 ? 0 : 1),
  }));
  return {
    name: idx.name,
    status,
    shards,
    replicas,
    activePrimary: dataNodes > 0 ? shards : 0,
    active: perShard.reduce((a, s) => a + s.active, 0),
    unassigned: perShard.reduce((a, s) => a + s.unassigned, 0),
    perShard,
  };
}

export interface ClusterHealth {
  status: HealthStatus;
  nodes: number;
  dataNodes: number;
  activePrimary: number;
  active: number;
  unassigned: number;
  indices: IndexHealth[];
}

export function clusterHealth(indices: IndexState[], nodes: NodeDescriptor[]): ClusterHealth {
  const per = indices.map((i) => indexHealth(i, nodes)).sort((a, b) => (a.name < b.name ? -1 : 1));
  return {
    status: per.reduce<HealthStatus>((a, i) => worst(a, i.status), 'green'),
    nodes: nodes.length,
    dataNodes: nodes.filter((n) => n.roles.includes('data')).length,
    activePrimary: per.reduce((a, i) => a + i.activePrimary, 0),
    active: per.reduce((a, i) => a + i.active, 0),
    unassigned: per.reduce((a, i) => a + i.unassigned, 0),
    indices: per,
  };
}

export const activePercent = (h: { active: number; unassigned: number }) =>
  h.active + h.unassigned ? (100 * h.active) / (h.active + h.unassigned) : 100;
