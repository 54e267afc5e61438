import { AGGREGATION_TYPES } from '../../shard/engine';
import { type Router } from '../router';
import { RawJson, type EsRequest, type EsResponse } from '../../wire/rest';
import type { PagingServices } from '../../search';
import { VERSION } from './cluster';
import { clusterNodes, localRuntime, nodesHeader, selectNodes, type NodeDescriptor } from '../views/nodes';
import { callNodes } from '../../cluster/nodeRpc';
import { collectShardStats, commonStats, INDEX_METRICS, parseMetrics, type IndexMetric, type ShardStat } from '../views/indexStats';
import { illegalArgument } from '../../wire/esErrors';
import { uptimeMs } from '../views/runtime';
import { loopStats } from '../views/eventLoop';
import { followerStats } from '../../../streams';
import { CircuitBreakerService } from '../../wire/circuitBreaker';

/** `GET /_nodes` metrics (NodesInfoMetrics). */
const INFO_METRICS = ['settings', 'os', 'process', 'jvm', 'thread_pool', 'transport', 'http', 'remote_cluster_server', 'plugins', 'ingest', 'aggregations', 'indices'] as const;
type InfoMetric = (typeof INFO_METRICS)[number];

/** `GET /_nodes/stats` metrics (NodesStatsRequestParameters.Metric); `breaker` renders as `breakers`. */
const STATS_METRICS = [
  'indices', 'os', 'process', 'jvm', 'thread_pool', 'fs', 'transport', 'http', 'breaker', 'script', 'discovery', 'ingest',
  'adaptive_selection', 'script_cache', 'indexing_pressure', 'repositories', 'allocations',
  // ours: the event loop's delay, and the log followers (position, stalls)
  'event_loop', 'log_followers',
] as const;
type StatsMetric = (typeof STATS_METRICS)[number];

const THREAD_POOLS = ['analyze', 'fetch_shard_started', 'fetch_shard_store', 'flush', 'force_merge', 'generic', 'get', 'management', 'refresh', 'search', 'search_coordination', 'snapshot', 'warmer', 'write'];

/** ES AggregationInfo: the aggregations this node runs (what `_nodes` `aggregations` lists). */
const AGGREGATIONS = Object.keys(AGGREGATION_TYPES);

/** `_nodes/<x>`: metrics when every part is a known metric, node ids otherwise (RestNodesInfoAction). */
function splitNodesPath(first: string | undefined, second: string | undefined): { nodes?: string; metrics?: string } {
  if (second !== undefined) return { nodes: first, metrics: second };
  if (first === undefined) return {};
  const parts = first.split(',');
  if (parts.every((p) => (INFO_METRICS as readonly string[]).includes(p))) return { metrics: first };
  return { nodes: first };
}

function nodeHead(n: NodeDescriptor): Record<string, unknown> {
  return { name: n.name, transport_address: n.transportAddress, host: n.host, ip: n.ip };
}

function nodeInfo(s: PagingServices, n: NodeDescriptor, metrics: Set<InfoMetric>): Record<string, unknown> {
  const facts = n.info();
  const maxContent = 100 * 1024 * 1024;
  const sections: Record<InfoMetric, () => unknown> = {
    settings: () => ({
      cluster: { name: s.ctx.node.clusterName },
      node: { name: n.name },
      path: { data: [s.ctx.dataDir], home: process.cwd() },
      http: { type: 'netty4', port: n.httpAddress.split(':').pop() },
      transport: { type: 'netty4' },
    }),
    os: () => facts.os,
    process: () => facts.process,
    jvm: () => facts.jvm,
    thread_pool: () => Object.fromEntries(THREAD_POOLS.map((p) => [p, { type: p === 'generic' ? 'scaling' : 'fixed', size: 1, queue_size: -1 }])),
    transport: () => ({ bound_address: [n.transportAddress], publish_address: n.transportAddress, profiles: {} }),
    http: () => ({ bound_address: [n.httpAddress], publish_address: n.httpAddress, max_content_length_in_bytes: maxContent }),
    remote_cluster_server: () => ({ bound_address: [], publish_address: '' }),
    plugins: () => [],
    ingest: () => ({ processors: [] }),
    aggregations: () => Object.fromEntries(AGGREGATIONS.map((a) => [a, { types: ['other'] }])),
    indices: () => ({ analysis: { tokenizer: ['standard'], analyzer: ['standard'], filter: ['lowercase'] } }),
  };
  const out: Record<string, unknown> = {
    ...nodeHead(n),
    version: n.version,
    transport_version: '8702003',
    index_version: '8512000',
    component_versions: {},
    build_flavor: VERSION.build_flavor,
    build_type: VERSION.build_type,
    build_hash: VERSION.build_hash,
    total_indexing_buffer: 0,
    roles: n.roles,
    attributes: n.attributes,
  };
  for (const m of INFO_METRICS) {
    if (!metrics.has(m)) continue;
    out[m === 'plugins' ? 'plugins' : m] = sections[m]();
    if (m === 'plugins') out.modules = [];
  }
  return out;
}

/** `GET /_nodes[/<filter>][/<metric>]`, `GET /_nodes/<filter>/info/<metric>`. */
function nodesInfo(s: PagingServices, req: EsRequest): EsResponse {
  const { nodes: filter, metrics: m } = splitNodesPath(req.params.node_id, req.params.metric);
  const metrics = parseMetrics(m, INFO_METRICS, req.uri);
  const chosen = selectNodes(clusterNodes(s), filter);
  return {
    body: {
      _nodes: nodesHeader(chosen.length),
      cluster_name: s.ctx.node.clusterName,
      nodes: Object.fromEntries(chosen.map((n) => [n.id, nodeInfo(s, n, metrics)])),
    },
  };
}

function searchSection(s: PagingServices): Record<string, number> {
  const st = s.stats;
  return {
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
}

/** `breakers`: the node's breakers as they stand (CircuitBreakerService.stats). */
function breakers(s: PagingServices): Record<string, unknown> {
  if (s.ctx.breakers) return s.ctx.breakers.stats();
  return new CircuitBreakerService(() => undefined).stats(); // a harness without breakers: ES's defaults, nothing used
}

async function nodeStats(s: PagingServices, n: NodeDescriptor, metrics: Set<StatsMetric>, indexMetrics: Set<IndexMetric>, level: string, shards: ShardStat[]): Promise<Record<string, unknown>> {
  const rt = await n.runtime();
  const jvm = rt.jvm as { mem: { heap_max_in_bytes: number; heap_used_in_bytes: number } };
  const nats = s.ctx.nc.stats();
  const out: Record<string, unknown> = { timestamp: Date.now(), ...nodeHead(n), roles: n.roles, attributes: n.attributes };
  const sections: Record<StatsMetric, () => unknown> = {
    indices: () => {
      const mine = shards;
      const body = commonStats(mine, indexMetrics, { search: searchSection(s) });
      if (level === 'indices') {
        const by = new Map<string, ShardStat[]>();
        for (const x of mine) by.set(x.index, [...(by.get(x.index) ?? []), x]);
        body.indices = Object.fromEntries([...by].map(([name, xs]) => [name, commonStats(xs, indexMetrics)]));
      } else if (level === 'shards') {
        const by = new Map<string, ShardStat[]>();
        for (const x of mine) by.set(x.index, [...(by.get(x.index) ?? []), x]);
        body.shards = Object.fromEntries([...by].map(([name, xs]) => [name, xs.map((x) => ({ [String(x.n)]: commonStats([x], indexMetrics) }))]));
      }
      return body;
    },
    os: () => rt.os,
    process: () => rt.process,
    jvm: () => rt.jvm,
    thread_pool: () =>
      Object.fromEntries(
        THREAD_POOLS.map((p) => [p, { threads: p === 'search' || p === 'write' ? 1 : 0, queue: 0, active: 0, rejected: 0, largest: 1, completed: p === 'search' ? s.stats.queryTotal : 0 }]),
      ),
    fs: () => rt.fs,
    transport: () => ({
      server_open: 0,
      total_outbound_connections: 0,
      rx_count: nats.inMsgs,
      rx_size_in_bytes: nats.inBytes,
      tx_count: nats.outMsgs,
      tx_size_in_bytes: nats.outBytes,
      inbound_handling_time_histogram: [],
      outbound_handling_time_histogram: [],
      actions: {},
    }),
    http: () => ({ ...rt.http, clients: [], routes: {} }),
    breaker: () => breakers(s),
    script: () => ({ compilations: 0, cache_evictions: 0, compilation_limit_triggered: 0 }),
    discovery: () => ({
      cluster_state_queue: { total: 0, pending: 0, committed: 0 },
      published_cluster_states: { full_states: 0, incompatible_diffs: 0, compatible_diffs: 0 },
    }),
    ingest: () => ({ total: { count: 0, time_in_millis: 0, current: 0, failed: 0 }, pipelines: {} }),
    adaptive_selection: () => ({}),
    script_cache: () => ({ sum: { compilations: 0, cache_evictions: 0, compilation_limit_triggered: 0 } }),
    indexing_pressure: () => ({
      memory: {
        current: { combined_coordinating_and_primary_in_bytes: 0, coordinating_in_bytes: 0, primary_in_bytes: 0, replica_in_bytes: 0, all_in_bytes: 0 },
        total: {
          combined_coordinating_and_primary_in_bytes: 0, coordinating_in_bytes: 0, primary_in_bytes: 0, replica_in_bytes: 0, all_in_bytes: 0,
          coordinating_rejections: 0, primary_rejections: 0, replica_rejections: 0,
        },
        limit_in_bytes: Math.floor(jvm.mem.heap_max_in_bytes * 0.1),
      },
    }),
    repositories: () => ({}),
    allocations: () => ({}),
    event_loop: () => loopStats(),
    log_followers: () => followerStats(s.ctx.nc),
  };
  for (const m of STATS_METRICS) if (metrics.has(m)) out[m === 'breaker' ? 'breakers' : m] = sections[m]();
  return out;
}

/** `GET /_nodes[/<filter>]/stats[/<metric>[/<index_metric>]]`. */
async function nodesStats(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const metrics = parseMetrics(req.params.metric, STATS_METRICS, req.uri);
  const indexMetrics = parseMetrics(req.params.index_metric, INDEX_METRICS, req.uri);
  if (req.params.index_metric !== undefined && !metrics.has('indices')) {
    throw illegalArgument(`request [${req.uri.split('?')[0]}] contains index metrics [${req.params.index_metric}] but indices stats not requested`);
  }
  const level = (req.query.level ?? 'node').toLowerCase();
  if (!['node', 'indices', 'shards'].includes(level)) throw illegalArgument(`level parameter must be one of [node] or [indices] or [shards] but was [${req.query.level}]`);
  const chosen = selectNodes(clusterNodes(s), req.params.node_id);
  const nodes: Record<string, unknown> = {};
  let failed = 0;
  const ask = { metric: req.params.metric, index_metric: req.params.index_metric, level };
  const remote = await callNodes<Record<string, unknown>>(s.ctx.nc, chosen.filter((n) => !n.local).map((n) => n.id), 'node_stats', ask);
  for (const n of chosen) {
    if (n.local) nodes[n.id] = await localNodeStats(s, n, metrics, indexMetrics, level);
    else {
      const a = remote.get(n.id);
      if (a?.ok) nodes[n.id] = a.result;
      else failed++;
    }
  }
  return { body: { _nodes: { total: chosen.length, successful: chosen.length - failed, failed }, cluster_name: s.ctx.node.clusterName, nodes } };
}

/** This node's `_nodes/stats` entry: the index figures of the shard copies it holds. */
async function localNodeStats(s: PagingServices, self: NodeDescriptor, metrics: Set<StatsMetric>, indexMetrics: Set<IndexMetric>, level: string): Promise<Record<string, unknown>> {
  const held = s.cluster.resolve('*', { expandWildcards: 'all' }).filter((i) => i.shards.some((_, n) => s.cluster.localCopy(i.uuid, n)));
  const shards = metrics.has('indices') ? (await collectShardStats(s, held)).filter((x) => s.cluster.localCopy(x.uuid, x.n)) : [];
  return nodeStats(s, self, metrics, indexMetrics, level, shards);
}

/** `GET /_nodes[/<filter>]/usage`: no REST or aggregation usage is counted here (empty maps). */
function nodesUsage(s: PagingServices, req: EsRequest): EsResponse {
  const chosen = selectNodes(clusterNodes(s), req.params.node_id);
  const since = Date.now() - uptimeMs();
  return {
    body: {
      _nodes: nodesHeader(chosen.length),
      cluster_name: s.ctx.node.clusterName,
      nodes: Object.fromEntries(chosen.map((n) => [n.id, { timestamp: Date.now(), since, rest_actions: {}, aggregations: {} }])),
    },
  };
}

/** `GET /_nodes[/<filter>]/hot_threads`: ES's text header per node; one event loop has no thread dump to show. */
function hotThreads(s: PagingServices, req: EsRequest): EsResponse {
  delete (req.query as Record<string, string>).pretty; // text, not JSON
  const chosen = selectNodes(clusterNodes(s), req.params.node_id);
  const text = chosen
    .map((n) => `::: {${n.name}}{${n.id}}{${n.ip}}{${n.transportAddress}}\n   Hot threads at ${new Date().toISOString()}, interval=500ms, busiestThreads=3, ignoreIdleThreads=true:\n`)
    .join('\n');
  return { body: new RawJson([text]), headers: { 'content-type': 'text/plain; charset=UTF-8' } };
}

export function nodeRoutes(r: Router, s: PagingServices): void {
  // What other nodes ask this one for (views/nodes.ts asks them the same).
  s.nodeOps.runtime = () => localRuntime(s);
  s.nodeOps.node_stats = async (body) => {
    const b = (body ?? {}) as { metric?: string; index_metric?: string; level?: string };
    const self = clusterNodes(s).find((n) => n.local)!;
    return localNodeStats(s, self, parseMetrics(b.metric, STATS_METRICS, ''), parseMetrics(b.index_metric, INDEX_METRICS, ''), b.level ?? 'node');
  };
  const info = { kind: 'cluster' as const, action: 'cluster:monitor/nodes/info' };
  const stats = { kind: 'cluster' as const, action: 'cluster:monitor/nodes/stats' };
  r.add('GET', '/_nodes', (req) => nodesInfo(s, req), info);
  r.add('GET', '/_nodes/{node_id}', (req) => nodesInfo(s, req), info);
  r.add('GET', '/_nodes/{node_id}/{metric}', (req) => nodesInfo(s, req), info);
  r.add('GET', '/_nodes/{node_id}/info/{metric}', (req) => nodesInfo(s, req), info);
  r.add('GET', '/_nodes/usage', (req) => nodesUsage(s, req), { kind: 'cluster', action: 'cluster:monitor/nodes/usage' });
  r.add('GET', '/_nodes/{node_id}/usage', (req) => nodesUsage(s, req), { kind: 'cluster', action: 'cluster:monitor/nodes/usage' });
  r.add('GET', '/_nodes/hot_threads', (req) => hotThreads(s, req), { kind: 'cluster', action: 'cluster:monitor/nodes/hot_threads' });
  r.add('GET', '/_nodes/{node_id}/hot_threads', (req) => hotThreads(s, req), { kind: 'cluster', action: 'cluster:monitor/nodes/hot_threads' });
  for (const p of ['/_nodes/stats', '/_nodes/stats/{metric}', '/_nodes/stats/{metric}/{index_metric}', '/_nodes/{node_id}/stats', '/_nodes/{node_id}/stats/{metric}', '/_nodes/{node_id}/stats/{metric}/{index_metric}']) {
    r.add('GET', p, (req) => nodesStats(s, req), stats);
  }
}
