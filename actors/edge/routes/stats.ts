import { illegalArgument } from '../../wire/esErrors';
import type { IndexState } from '../../cluster';
import type { Router } from '../router';
import type { EsRequest, EsResponse } from '../../wire/rest';
import type { PagingServices } from '../../search';
import { resolveOptions } from '../../search';
import { collectShardStats, commonStats, INDEX_METRICS, parseMetrics, type IndexMetric, type ShardStat } from '../views/indexStats';
import { clusterNodes, type NodeDescriptor } from '../views/nodes';
import { indexHealth } from '../views/health';
import { visibleIndices } from '../views/visible';

/**
 * `GET /_stats[/<metric>]`, `GET /<index>/_stats[/<metric>]` (`level=cluster|indices|shards`):
 * primaries are the shards themselves; `total` adds the replica copies that are assigned
 * (none on one node, so total equals primaries there).
 */
function copiesOf(idx: IndexState, nodes: NodeDescriptor[]): number {
  const h = indexHealth(idx, nodes);
  return Math.max(1, Math.round(h.active / Math.max(1, h.shards)));
}

function shardEntry(s: PagingServices, x: ShardStat, metrics: Set<IndexMetric>, primary: boolean): Record<string, unknown> {
  return {
    routing: { state: 'STARTED', primary, node: s.ctx.node.id, relocating_node: null },
    ...commonStats([x], metrics),
    commit: { id: `${x.uuid}-${x.n}`, generation: 1, user_data: {}, num_docs: x.docs },
    seq_no: { max_seq_no: x.maxSeqNo, local_checkpoint: x.maxSeqNo, global_checkpoint: x.maxSeqNo },
    retention_leases: { primary_term: 1, version: 1, leases: [] },
    shard_path: { state_path: s.ctx.dataDir, data_path: s.ctx.dataDir, is_custom_data_path: false },
  };
}

export async function indicesStats(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const metrics = parseMetrics(req.params.metric, INDEX_METRICS, req.uri);
  const level = (req.query.level ?? 'indices').toLowerCase();
  if (!['cluster', 'indices', 'shards'].includes(level)) throw illegalArgument(`level parameter must be one of [cluster] or [indices] or [shards] but was [${req.query.level}]`);
  const indices = visibleIndices(s, req, 'indices:monitor/stats', s.cluster.resolve(req.params.index, resolveOptions(req))).sort((a, b) => (a.name < b.name ? -1 : 1));
  const nodes = clusterNodes(s);
  const shards = await collectShardStats(s, indices);
  // Replica copies live on other nodes: their figures equal the primary's.
  // (no-op updates are counted on the primary only)
  const withCopies = (xs: ShardStat[], idx: IndexState) => xs.flatMap((x) => Array.from({ length: copiesOf(idx, nodes) }, (_, c) => (c === 0 ? x : { ...x, noopUpdates: 0 })));
  const byIndex = new Map(indices.map((i) => [i.uuid, shards.filter((x) => x.uuid === i.uuid)]));
  const totalShards = indices.reduce((a, i) => a + i.settings.numberOfShards * (1 + i.settings.numberOfReplicas), 0);
  const successful = indices.reduce((a, i) => a + i.settings.numberOfShards * copiesOf(i, nodes), 0);
  const body: Record<string, unknown> = {
    _shards: { total: totalShards, successful, failed: 0 },
    _all: {
      primaries: commonStats(shards, metrics),
      total: commonStats(indices.flatMap((i) => withCopies(byIndex.get(i.uuid)!, i)), metrics),
    },
  };
  if (level !== 'cluster') {
    body.indices = Object.fromEntries(
      indices.map((i) => {
        const mine = byIndex.get(i.uuid)!;
        return [
          i.name,
          {
            uuid: i.uuid,
            health: indexHealth(i, nodes).status,
            status: 'open',
            primaries: commonStats(mine, metrics),
            total: commonStats(withCopies(mine, i), metrics),
            ...(level === 'shards' ? { shards: Object.fromEntries(mine.map((x) => [String(x.n), [shardEntry(s, x, metrics, true)]])) } : {}),
          },
        ];
      }),
    );
  }
  return { body };
}

export function statsRoutes(r: Router, s: PagingServices): void {
  const monitor = (req: EsRequest) => [req.params.index ?? '*'];
  const authz = { kind: 'indices' as const, action: 'indices:monitor/stats', indices: monitor };
  r.add('GET', '/_stats', (req) => indicesStats(s, req), authz);
  r.add('GET', '/_stats/{metric}', (req) => indicesStats(s, req), authz);
  r.add('GET', '/{index}/_stats', (req) => indicesStats(s, req), authz);
  r.add('GET', '/{index}/_stats/{metric}', (req) => indicesStats(s, req), authz);
}
