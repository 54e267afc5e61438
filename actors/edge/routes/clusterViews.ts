import { createHash } from 'node:crypto';
import type { IndexState } from '../../cluster';
import { renderSettings } from '../../cluster';
import type { ComponentTemplate, ComposableTemplate, LegacyTemplate } from '../../cluster/templates';
import { renderLegacy, renderTemplateBody } from '../../cluster/templateRender';
import type { Router } from '../router';
import type { EsRequest, EsResponse } from '../../wire/rest';
import type { PagingServices } from '../../search';
import { VERSION } from './cluster';
import { clusterNodes, nodesHeader, type NodeDescriptor } from '../views/nodes';
import { clusterHealth, shardCopies } from '../views/health';
import { collectShardStats, commonStats, INDEX_METRICS, parseMetrics } from '../views/indexStats';
import { resolveOptions } from '../../search';

/** `GET /_cluster/state` metrics (ClusterState.Metric). */
const STATE_METRICS = ['version', 'master_node', 'blocks', 'nodes', 'metadata', 'routing_table', 'routing_nodes', 'customs'] as const;

/** The cluster state version: the position of the last metadata fact in the document log. */
const stateVersion = (s: PagingServices) => s.cluster.metaAccepted;
const stateUuid = (s: PagingServices, v: number) => createHash('sha256').update(`${s.ctx.node.clusterUuid}:${v}`).digest('base64url').slice(0, 22);
const allocationId = (idx: IndexState, n: number, copy: number) => createHash('sha256').update(`${idx.uuid}/${n}/${copy}`).digest('base64url').slice(0, 22);

interface ShardRouting {
  state: 'STARTED' | 'INITIALIZING' | 'UNASSIGNED';
  primary: boolean;
  node: string | null;
  relocating_node: string | null;
  shard: number;
  index: string;
  allocation_id?: { id: string };
  recovery_source?: { type: string };
  unassigned_info?: Record<string, unknown>;
}

/** Every copy of every shard of `idx`, where the allocation facts put it (views/health.ts). */
function routing(idx: IndexState, nodes: NodeDescriptor[]): ShardRouting[][] {
  return Array.from({ length: idx.settings.numberOfShards }, (_, n) =>
    shardCopies(idx, n, nodes).map((c, k): ShardRouting => {
      if (!c.node) {
        return {
          state: 'UNASSIGNED', primary: c.primary, node: null, relocating_node: null, shard: n, index: idx.name,
          recovery_source: { type: c.primary ? 'EMPTY_STORE' : 'PEER' },
          unassigned_info: { reason: 'INDEX_CREATED', at: new Date(idx.creationDate).toISOString(), delayed: false, allocation_status: 'no_attempt' },
        };
      }
      return {
        state: c.state, primary: c.primary, node: c.node.id, relocating_node: c.relocatingFrom?.id ?? null, shard: n, index: idx.name,
        allocation_id: { id: allocationId(idx, n, k) },
      };
    }),
  );
}

function indexMetadata(s: PagingServices, idx: IndexState, nodes: NodeDescriptor[]): Record<string, unknown> {
  const shards = routing(idx, nodes);
  const range = (f: (n: number) => unknown) => Object.fromEntries(Array.from({ length: idx.settings.numberOfShards }, (_, n) => [String(n), f(n)]));
  return {
    version: 1,
    mapping_version: 1,
    settings_version: 1,
    aliases_version: 1,
    routing_num_shards: idx.settings.numberOfShards,
    state: 'open',
    settings: renderSettings(idx.settings, idx),
    mappings: { _doc: idx.mapping.toJSON() },
    aliases: s.cluster.metadata.aliases.of(idx.uuid).map(([a]) => a),
    primary_terms: range(() => 1),
    in_sync_allocations: range((n) => shards[n].filter((c) => c.state === 'STARTED').map((c) => c.allocation_id!.id)),
    rollover_info: {},
    system: false,
    timestamp_range: { shards: [] },
  };
}

function metadata(s: PagingServices, indices: IndexState[], nodes: NodeDescriptor[]): Record<string, unknown> {
  const t = s.cluster.metadata.templates;
  return {
    cluster_uuid: s.ctx.node.clusterUuid,
    cluster_uuid_committed: true,
    cluster_coordination: {
      term: 1,
      last_committed_config: nodes.filter((n) => n.roles.includes('master')).map((n) => n.id),
      last_accepted_config: nodes.filter((n) => n.roles.includes('master')).map((n) => n.id),
      voting_config_exclusions: [],
    },
    templates: Object.fromEntries(t.entries<LegacyTemplate>('legacy').map(([n, x]) => {
      const r = renderLegacy(x);
      return [n, { ...r, mappings: Object.keys(x.mappings).length ? { _doc: x.mappings } : {} }];
    })),
    indices: Object.fromEntries(indices.map((i) => [i.name, indexMetadata(s, i, nodes)])),
    'index-graveyard': { tombstones: [] },
    component_template: {
      component_template: Object.fromEntries(t.entries<ComponentTemplate>('component').map(([n, x]) => [n, { template: renderTemplateBody(x.template), ...(x.version !== undefined ? { version: x.version } : {}) }])),
    },
    index_template: {
      index_template: Object.fromEntries(
        t.entries<ComposableTemplate>('index').map(([n, x]) => [
          n,
          { index_patterns: x.index_patterns, ...(x.template ? { template: renderTemplateBody(x.template) } : {}), composed_of: x.composed_of, ...(x.priority !== undefined ? { priority: x.priority } : {}) },
        ]),
      ),
    },
  };
}

/** `GET /_cluster/state[/<metrics>[/<indices>]]`. */
function clusterState(s: PagingServices, req: EsRequest): EsResponse {
  const metrics = parseMetrics(req.params.metric, STATE_METRICS, req.uri);
  const nodes = clusterNodes(s);
  const master = nodes.find((n) => n.master);
  const indices = (req.params.index !== undefined ? s.cluster.resolve(req.params.index, resolveOptions(req)) : s.cluster.resolve('*', { expandWildcards: 'all' })).sort((a, b) =>
    a.name < b.name ? -1 : 1,
  );
  const version = stateVersion(s);
  const body: Record<string, unknown> = { cluster_name: s.ctx.node.clusterName, cluster_uuid: s.ctx.node.clusterUuid };
  if (metrics.has('version')) {
    body.version = version;
    body.state_uuid = stateUuid(s, version);
  }
  if (metrics.has('master_node')) body.master_node = master?.id ?? null;
  if (metrics.has('blocks')) body.blocks = {};
  if (metrics.has('nodes')) {
    body.nodes = Object.fromEntries(
      nodes.map((n) => [
        n.id,
        { name: n.name, ephemeral_id: createHash('sha256').update(`${n.id}:eph`).digest('base64url').slice(0, 22), transport_address: n.transportAddress, external_id: n.name, attributes: n.attributes, roles: n.roles, version: n.version, min_index_version: 7000099, max_index_version: 8512000 },
      ]),
    );
  }
  if (metrics.has('metadata')) body.metadata = metadata(s, indices, nodes);
  if (metrics.has('routing_table')) {
    body.routing_table = {
      indices: Object.fromEntries(indices.map((i) => [i.name, { shards: Object.fromEntries(routing(i, nodes).map((copies, n) => [String(n), copies])) }])),
    };
  }
  if (metrics.has('routing_nodes')) {
    const all = indices.flatMap((i) => routing(i, nodes).flat());
    body.routing_nodes = {
      unassigned: all.filter((c) => c.state === 'UNASSIGNED'),
      nodes: Object.fromEntries(nodes.filter((n) => n.roles.includes('data')).map((n) => [n.id, all.filter((c) => c.node === n.id)])),
    };
  }
  return { body };
}

/** `GET /_cluster/stats[/nodes/<filter>]`. */
async function clusterStats(s: PagingServices): Promise<EsResponse> {
  const nodes = clusterNodes(s);
  const indices = s.cluster.resolve('*', { expandWildcards: 'all' });
  const health = clusterHealth(indices, nodes);
  const shards = await collectShardStats(s, indices);
  const common = commonStats(shards, new Set(INDEX_METRICS));
  const runtimes = await Promise.all(nodes.map((n) => n.runtime()));
  const per = indices.map((i) => i.settings.numberOfShards);
  const fieldTypes = new Map<string, { count: number; indices: Set<string> }>();
  for (const i of indices) {
    const walk = (props: Record<string, unknown> | undefined) => {
      for (const def of Object.values(props ?? {})) {
        const d = def as { type?: string; properties?: Record<string, unknown> };
        const type = d.type ?? (d.properties ? 'object' : undefined);
        if (type) {
          const e = fieldTypes.get(type) ?? { count: 0, indices: new Set<string>() };
          e.count++;
          e.indices.add(i.name);
          fieldTypes.set(type, e);
        }
        walk(d.properties);
      }
    };
    walk((i.mapping.toJSON() as { properties?: Record<string, unknown> }).properties);
  }
  const heapUsed = runtimes.reduce((a, r) => a + ((r.jvm.mem as { heap_used_in_bytes: number }).heap_used_in_bytes ?? 0), 0);
  const heapMax = runtimes.reduce((a, r) => a + ((r.jvm.mem as { heap_max_in_bytes: number }).heap_max_in_bytes ?? 0), 0);
  const osMem = runtimes[0]?.os.mem as Record<string, number> | undefined;
  const fds = runtimes.map((r) => Number((r.process as { open_file_descriptors: number }).open_file_descriptors));
  const stat = (xs: number[]) => ({ min: xs.length ? Math.min(...xs) : 0, max: xs.length ? Math.max(...xs) : 0, avg: xs.length ? xs.reduce((a, x) => a + x, 0) / xs.length : 0 });
  const role = (r: string) => nodes.filter((n) => n.roles.includes(r)).length;
  return {
    body: {
      _nodes: nodesHeader(nodes.length),
      cluster_name: s.ctx.node.clusterName,
      cluster_uuid: s.ctx.node.clusterUuid,
      timestamp: Date.now(),
      status: health.status,
      indices: {
        count: indices.length,
        shards: {
          total: health.active,
          primaries: health.activePrimary,
          replication: health.activePrimary ? (health.active - health.activePrimary) / health.activePrimary : 0,
          index: {
            shards: stat(per),
            primaries: stat(per),
            replication: stat(indices.map(() => 0)),
          },
        },
        docs: common.docs,
        store: common.store,
        fielddata: common.fielddata,
        query_cache: common.query_cache,
        completion: common.completion,
        segments: common.segments,
        mappings: { field_types: [...fieldTypes].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, e]) => ({ name, count: e.count, index_count: e.indices.size })), runtime_field_types: [] },
        analysis: { char_filter_types: [], tokenizer_types: [], filter_types: [], analyzer_types: [], built_in_char_filters: [], built_in_tokenizers: [], built_in_filters: [], built_in_analyzers: [] },
        versions: indices.length ? [{ version: VERSION.number, index_count: indices.length, primary_shard_count: health.activePrimary, total_primary_bytes: (common.store as { size_in_bytes: number }).size_in_bytes }] : [],
      },
      nodes: {
        count: { total: nodes.length, coordinating_only: nodes.filter((n) => !n.roles.length).length, data: role('data'), data_cold: 0, data_content: role('data'), data_frozen: 0, data_hot: 0, data_warm: 0, index: 0, ingest: role('ingest'), master: role('master'), ml: 0, remote_cluster_client: 0, search: 0, transform: 0, voting_only: 0 },
        versions: [...new Set(nodes.map((n) => n.version))],
        os: {
          available_processors: runtimes.length ? nodes.length * ((nodes[0].info().os as { available_processors: number }).available_processors) : 0,
          allocated_processors: runtimes.length ? nodes.length * ((nodes[0].info().os as { allocated_processors: number }).allocated_processors) : 0,
          names: [{ name: String(nodes[0]?.info().os.name ?? ''), count: nodes.length }],
          pretty_names: [{ pretty_name: String(nodes[0]?.info().os.pretty_name ?? ''), count: nodes.length }],
          architectures: [{ arch: String(nodes[0]?.info().os.arch ?? ''), count: nodes.length }],
          mem: osMem ?? {},
        },
        process: { cpu: { percent: runtimes.reduce((a, r) => a + Number((r.process.cpu as { percent: number }).percent), 0) }, open_file_descriptors: stat(fds) },
        jvm: {
          max_uptime_in_millis: Math.max(0, ...runtimes.map((r) => Number(r.jvm.uptime_in_millis))),
          versions: [{ version: process.versions.node, vm_name: 'Node.js', vm_version: process.versions.v8, vm_vendor: 'OpenJS Foundation', bundled_jdk: false, using_bundled_jdk: null, count: nodes.length }],
          mem: { heap_used_in_bytes: heapUsed, heap_max_in_bytes: heapMax },
          threads: runtimes.reduce((a, r) => a + Number((r.jvm.threads as { count: number }).count), 0),
        },
        fs: runtimes[0]?.fs.total ?? {},
        plugins: [],
        network_types: { transport_types: { nats: nodes.length }, http_types: { 'node:http': nodes.length } },
        discovery_types: { 'multi-node': nodes.length },
        packaging_types: [{ flavor: 'default', type: 'tar', count: nodes.length }],
        ingest: { number_of_pipelines: 0, processor_stats: {} },
        indexing_pressure: { memory: { current: {}, total: {}, limit_in_bytes: 0 } },
      },
    },
  };
}

export function clusterViewRoutes(r: Router, s: PagingServices): void {
  const state = { kind: 'cluster' as const, action: 'cluster:monitor/state' };
  r.add('GET', '/_cluster/state', (req) => clusterState(s, req), state);
  r.add('GET', '/_cluster/state/{metric}', (req) => clusterState(s, req), state);
  r.add('GET', '/_cluster/state/{metric}/{index}', (req) => clusterState(s, req), state);
  const stats = { kind: 'cluster' as const, action: 'cluster:monitor/stats' };
  r.add('GET', '/_cluster/stats', () => clusterStats(s), stats);
  r.add('GET', '/_cluster/stats/nodes/{node_id}', () => clusterStats(s), stats);
}

