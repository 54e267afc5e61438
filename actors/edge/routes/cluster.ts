import { flatten } from '../../config';
import { illegalArgument } from '../../wire/esErrors';
import type { Router } from '../router';
import type { PagingServices } from './search';
import { clusterHealth } from '../../cluster/health';
import { callNodes, serveNode } from '../../cluster/nodeRpc';

export const VERSION = {
  number: '8.15.0',
  build_flavor: 'default',
  build_type: 'tar',
  build_hash: 'natsactors',
  build_date: '2026-11-01T00:00:00.000Z',
  build_snapshot: false,
  lucene_version: '9.11.1',
  minimum_wire_compatibility_version: '7.17.0',
  minimum_index_compatibility_version: '7.0.0',
};

/** Dynamic cluster settings this node accepts. */
const DYNAMIC = new Set(['search.max_open_scroll_context', 'search.default_keep_alive', 'search.max_keep_alive', 'search.keep_alive_interval', 'action.destructive_requires_name']);

function nestedSettings(flat: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(flat)) {
    const parts = k.split('.');
    let o = out;
    for (const p of parts.slice(0, -1)) o = (o[p] ??= {}) as Record<string, unknown>;
    o[parts[parts.length - 1]] = String(v);
  }
  return out;
}

/** `GET /`, cluster health and settings, node stats. */
export function clusterRoutes(r: Router, s: PagingServices): void {
  const node = s.ctx.node;
  r.add(['GET', 'HEAD'], '/', () => ({
    body: {
      name: node.name,
      cluster_name: node.clusterName,
      cluster_uuid: node.clusterUuid,
      version: VERSION,
      tagline: 'You Know, for Search',
    },
  }), { kind: 'cluster', action: 'cluster:monitor/main' });

  const health = (req: { params: Record<string, string> }) => {
    const live = s.membership.liveIds();
    const indices = req.params.index ? s.cluster.resolve(req.params.index) : s.cluster.indices();
    const h = clusterHealth(s.cluster, live, indices);
    return {
      body: {
        cluster_name: node.clusterName,
        status: h.status,
        timed_out: false,
        number_of_nodes: h.number_of_nodes,
        number_of_data_nodes: h.number_of_nodes,
        active_primary_shards: h.active_primary_shards,
        active_shards: h.active_shards,
        relocating_shards: h.relocating_shards,
        initializing_shards: h.initializing_shards,
        unassigned_shards: h.unassigned_shards,
        unassigned_primary_shards: h.unassigned_primary_shards,
        delayed_unassigned_shards: 0,
        number_of_pending_tasks: 0,
        number_of_in_flight_fetch: 0,
        task_max_waiting_in_queue_millis: 0,
        active_shards_percent_as_number: h.active_shards_percent_as_number,
      },
    };
  };
  r.add('GET', '/_cluster/health', health, { kind: 'cluster', action: 'cluster:monitor/health' });
  r.add('GET', '/_cluster/health/{index}', health, { kind: 'cluster', action: 'cluster:monitor/health' });

  r.add('GET', '/_cluster/settings', () => ({
    body: { persistent: nestedSettings(s.ctx.settings.dynamicEntries()), transient: {} },
  }), { kind: 'cluster', action: 'cluster:monitor/settings' });
  r.add('PUT', '/_cluster/settings', async (req) => {
    const body = req.json<{ persistent?: unknown; transient?: unknown }>() ?? {};
    const changes = { ...flatten(body.persistent ?? {}), ...flatten(body.transient ?? {}) };
    for (const [k, v] of Object.entries(changes)) {
      if (!DYNAMIC.has(k)) throw illegalArgument(`${s.ctx.settings.get(k, undefined) === undefined ? 'persistent' : 'persistent'} setting [${k}], not recognized`);
      if (k === 'search.max_open_scroll_context' && v !== null && !(Number.isInteger(Number(v)) && Number(v) >= 0)) {
        throw illegalArgument(`Failed to parse value [${String(v)}] for setting [${k}] must be >= 0`);
      }
    }
    await s.cluster.putClusterSettings(changes);
    return {
      body: {
        acknowledged: true,
        persistent: nestedSettings(flatten(body.persistent ?? {})),
        transient: nestedSettings(flatten(body.transient ?? {})),
      },
    };
  }, { kind: 'cluster', action: 'cluster:admin/settings/update' });

  /** This node's entry of `_nodes/stats`. */
  const localStats = () => {
    const st = s.stats;
    const search = {
      open_contexts: s.contexts.shardContexts(),
      query_total: st.queryTotal,
      query_time_in_millis: st.queryTimeMs,
      query_current: st.queryCurrent,
      query_failure: st.queryFailure,
      fetch_total: st.fetchTotal,
      fetch_time_in_millis: st.fetchTimeMs,
      fetch_current: st.fetchCurrent,
      fetch_failure: st.fetchFailure,
      scroll_total: s.contexts.freed.scrollTotal,
      scroll_time_in_millis: s.contexts.freed.scrollTimeMs,
      scroll_current: s.contexts.shardContexts('scroll'),
      suggest_total: 0,
      suggest_time_in_millis: 0,
      suggest_current: 0,
    };
    return {
      timestamp: Date.now(),
      name: node.name,
      transport_address: `${node.host}:9300`,
      host: node.host,
      ip: node.host,
      roles: ['data', 'ingest', 'master'],
      indices: { search },
    };
  };
  // Every node answers for itself; the node that got the request asks every live node.
  const sub = serveNode(s.ctx.nc, node.id, { stats: () => localStats() });
  s.ctx.nc.closed().then(() => sub.unsubscribe()).catch(() => undefined);
  const nodeStats = async () => {
    const live = s.membership.liveIds();
    const answers = await callNodes<ReturnType<typeof localStats>>(s.ctx.nc, live.filter((id) => id !== node.id), 'stats');
    const nodes: Record<string, unknown> = { [node.id]: localStats() };
    let failed = 0;
    for (const [id, a] of answers) {
      if (a.ok) nodes[id] = a.result;
      else failed++;
    }
    return {
      body: {
        _nodes: { total: live.length, successful: live.length - failed, failed },
        cluster_name: node.clusterName,
        nodes,
      },
    };
  };
  const monitor = { kind: 'cluster' as const, action: 'cluster:monitor/nodes/stats' };
  for (const p of ['/_nodes/stats', '/_nodes/stats/{metric}', '/_nodes/stats/{metric}/{index_metric}', '/_nodes/{node_id}/stats', '/_nodes/{node_id}/stats/{metric}', '/_nodes/{node_id}/stats/{metric}/{index_metric}']) {
    r.add('GET', p, nodeStats, monitor);
  }
}
