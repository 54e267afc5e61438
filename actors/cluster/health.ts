import type { ClusterState, IndexState } from './clusterState';

export type HealthStatus = 'green' | 'yellow' | 'red';

export interface ShardHealth {
  status: HealthStatus;
  active_primary_shards: number;
  active_shards: number;
  relocating_shards: number;
  initializing_shards: number;
  unassigned_shards: number;
  unassigned_primary_shards: number;
}

const worst = (a: HealthStatus, b: HealthStatus): HealthStatus => (a === 'red' || b === 'red' ? 'red' : a === 'yellow' || b === 'yellow' ? 'yellow' : 'green');

/**
 * ES's health of one index from its allocation facts and the copies nodes report started: red
 * while a primary is not active, yellow while a replica is missing or initializing, else green.
 */
export function indexHealth(cluster: ClusterState, idx: IndexState, live: ReadonlySet<string>): ShardHealth & { shards: HealthStatus[] } {
  const h: ShardHealth & { shards: HealthStatus[] } = {
    status: 'green', active_primary_shards: 0, active_shards: 0, relocating_shards: 0, initializing_shards: 0, unassigned_shards: 0, unassigned_primary_shards: 0, shards: [],
  };
  for (let n = 0; n < idx.settings.numberOfShards; n++) {
    const a = idx.allocation?.[n];
    let status: HealthStatus = 'green';
    const primary = a?.primary && live.has(a.primary) ? a.primary : undefined;
    if (!primary) {
      h.unassigned_primary_shards++;
      h.unassigned_shards++;
      status = 'red';
    } else if (cluster.copyStarted(primary, idx.uuid, n)) {
      h.active_primary_shards++;
      h.active_shards++;
    } else {
      h.initializing_shards++;
      status = 'red';
    }
    const replicas = (a?.replicas ?? []).filter((r) => live.has(r) && r !== a?.relocating?.to);
    for (const r of replicas.slice(0, idx.settings.numberOfReplicas)) {
      if (cluster.copyStarted(r, idx.uuid, n)) h.active_shards++;
      else {
        h.initializing_shards++;
        status = worst(status, 'yellow');
      }
    }
    if (a?.relocating) h.relocating_shards++;
    const missing = Math.max(0, idx.settings.numberOfReplicas - replicas.length);
    if (missing) {
      h.unassigned_shards += missing;
      status = worst(status, 'yellow');
    }
    h.shards.push(status);
    h.status = worst(h.status, status);
  }
  return h;
}

/** `GET /_cluster/health` figures over some indices (all by default). */
export function clusterHealth(cluster: ClusterState, liveNodes: string[], indices: IndexState[] = cluster.indices()) {
  const live = new Set(liveNodes);
  const out: ShardHealth = { status: 'green', active_primary_shards: 0, active_shards: 0, relocating_shards: 0, initializing_shards: 0, unassigned_shards: 0, unassigned_primary_shards: 0 };
  const perIndex = new Map<string, ReturnType<typeof indexHealth>>();
  for (const idx of indices) {
    const h = indexHealth(cluster, idx, live);
    perIndex.set(idx.name, h);
    out.status = worst(out.status, h.status);
    out.active_primary_shards += h.active_primary_shards;
    out.active_shards += h.active_shards;
    out.relocating_shards += h.relocating_shards;
    out.initializing_shards += h.initializing_shards;
    out.unassigned_shards += h.unassigned_shards;
    out.unassigned_primary_shards += h.unassigned_primary_shards;
  }
  const total = out.active_shards + out.initializing_shards + out.unassigned_shards;
  return { ...out, number_of_nodes: liveNodes.length, active_shards_percent_as_number: total ? (100 * out.active_shards) / total : 100, perIndex };
}
