import type { Router } from '../router';
import type { EsRequest, EsResponse } from '../../wire/rest';
import { RawJson } from '../../wire/rest';
import { illegalArgument } from '../../wire/esErrors';
import type { PagingServices } from '../../search';
import { resolveOptions } from '../../search';
import { catResponse, type Column, type Row } from '../views/catTable';
import { clusterNodes } from '../views/nodes';
import { activePercent, clusterHealth, indexHealth } from '../views/health';
import { collectShardStats, type ShardStat } from '../views/indexStats';
import { globMatch } from '../../cluster/aliases';
import type { ComposableTemplate, LegacyTemplate } from '../../cluster/templates';
import { formatDate } from '../../shard/engine/aggregations/aggDates';
import { visibleIndices } from '../views/visible';

/**
 * `_cat` APIs (ES RestIndicesAction, RestHealthAction, RestCountAction, RestNodesAction,
 * RestShardsAction, RestAliasAction, RestTemplatesAction): the columns operators and tools use,
 * with ES's names, aliases and defaults; text, `v`, `h`, `s`, `bytes`, `format=json`, `help`.
 */

const R = 'right' as const;
const ts = (now: number) => ({ epoch: Math.floor(now / 1000), timestamp: formatDate(now, 'HH:mm:ss') });
const split = (x: string | undefined) => (x ?? '').split(',').map((v) => v.trim()).filter(Boolean);

const INDICES: Column[] = [
  { name: 'health', aliases: ['h'], desc: 'current health status' },
  { name: 'status', aliases: ['s'], desc: 'open/close status' },
  { name: 'index', aliases: ['i', 'idx'], desc: 'index name' },
  { name: 'uuid', aliases: ['id', 'uuid'], desc: 'index uuid' },
  { name: 'pri', aliases: ['p', 'shards.primary', 'shardsPrimary'], desc: 'number of primary shards', align: R, kind: 'number' },
  { name: 'rep', aliases: ['r', 'shards.replica', 'shardsReplica'], desc: 'number of replica shards', align: R, kind: 'number' },
  { name: 'docs.count', aliases: ['dc', 'docsCount'], desc: 'available docs', align: R, kind: 'number' },
  { name: 'docs.deleted', aliases: ['dd', 'docsDeleted'], desc: 'deleted docs', align: R, kind: 'number' },
  { name: 'creation.date', aliases: ['cd'], desc: 'index creation date (millisecond value)', default: false, align: R, kind: 'number' },
  { name: 'creation.date.string', aliases: ['cds'], desc: 'index creation date (as string)', default: false },
  { name: 'store.size', aliases: ['ss', 'storeSize'], desc: 'store size of primaries & replicas', align: R, kind: 'bytes' },
  { name: 'pri.store.size', desc: 'store size of primaries', align: R, kind: 'bytes' },
  { name: 'dataset.size', desc: 'total size of dataset (including the cache for partially mounted indices)', align: R, kind: 'bytes' },
  { name: 'indexing.index_total', aliases: ['iito', 'indexingIndexTotal'], desc: 'number of indexing ops', default: false, align: R, kind: 'number' },
  { name: 'indexing.delete_total', aliases: ['idto', 'indexingDeleteTotal'], desc: 'number of delete ops', default: false, align: R, kind: 'number' },
  { name: 'search.open_contexts', aliases: ['so', 'searchOpenContexts'], desc: 'open search contexts', default: false, align: R, kind: 'number' },
  { name: 'search.scroll_current', aliases: ['scc', 'searchScrollCurrent'], desc: 'open scroll contexts', default: false, align: R, kind: 'number' },
  { name: 'segments.count', aliases: ['sc', 'segmentsCount'], desc: 'number of segments', default: false, align: R, kind: 'number' },
];

async function catIndices(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const wantHealth = req.query.health;
  // ClusterHealthStatus.fromString
  if (wantHealth !== undefined && !['green', 'yellow', 'red'].includes(wantHealth.toLowerCase())) throw illegalArgument(`unknown cluster health status [${wantHealth}]`);
  // RestIndicesAction: IndicesOptions.strictExpand() (open and closed, not hidden) unless expand_wildcards says otherwise
  const indices = visibleIndices(s, req, 'indices:monitor/settings/get', s.cluster.resolve(req.params.index, { ...resolveOptions(req), expandWildcards: req.query.expand_wildcards ?? 'open,closed' }));
  const nodes = clusterNodes(s);
  const stats = await collectShardStats(s, indices);
  const rows: Row[] = [];
  for (const i of indices) {
    const mine = stats.filter((x) => x.uuid === i.uuid);
    const h = indexHealth(i, nodes);
    if (wantHealth && wantHealth.toLowerCase() !== h.status) continue;
    const size = mine.reduce((a, x) => a + x.sizeBytes, 0);
    const copies = h.active / Math.max(1, h.shards);
    rows.push({
      health: h.status,
      status: i.settings.closed ? 'close' : 'open',
      index: i.name,
      uuid: i.uuid,
      pri: i.settings.numberOfShards,
      rep: i.settings.numberOfReplicas,
      'docs.count': mine.reduce((a, x) => a + x.docs, 0),
      'docs.deleted': mine.reduce((a, x) => a + x.deleted, 0),
      'creation.date': i.creationDate,
      'creation.date.string': new Date(i.creationDate).toISOString(),
      'store.size': size * copies,
      'pri.store.size': size,
      'dataset.size': size * copies,
      'indexing.index_total': mine.reduce((a, x) => a + x.indexTotal, 0),
      'indexing.delete_total': mine.reduce((a, x) => a + x.deleteTotal, 0),
      'search.open_contexts': mine.reduce((a, x) => a + x.openContexts, 0),
      'search.scroll_current': mine.reduce((a, x) => a + x.scrollContexts, 0),
      'segments.count': mine.filter((x) => x.indexTotal > 0).length,
    });
  }
  return catResponse(req, INDICES, rows);
}

const HEALTH: Column[] = [
  { name: 'epoch', aliases: ['t', 'time'], desc: 'seconds since 1970-01-01 00:00:00', align: R, kind: 'number' },
  { name: 'timestamp', aliases: ['ts', 'hms', 'hhmmss'], desc: 'time in HH:MM:SS' },
  { name: 'cluster', aliases: ['cl'], desc: 'cluster name' },
  { name: 'status', aliases: ['st'], desc: 'health status' },
  { name: 'node.total', aliases: ['nt', 'nodeTotal'], desc: 'total number of nodes', align: R, kind: 'number' },
  { name: 'node.data', aliases: ['nd', 'nodeData'], desc: 'number of nodes that can store data', align: R, kind: 'number' },
  { name: 'shards', aliases: ['t', 'sh', 'shards.total', 'shardsTotal'], desc: 'total number of shards', align: R, kind: 'number' },
  { name: 'pri', aliases: ['p', 'shards.primary', 'shardsPrimary'], desc: 'number of primary shards', align: R, kind: 'number' },
  { name: 'relo', aliases: ['r', 'shards.relocating', 'shardsRelocating'], desc: 'number of relocating nodes', align: R, kind: 'number' },
  { name: 'init', aliases: ['i', 'shards.initializing', 'shardsInitializing'], desc: 'number of initializing nodes', align: R, kind: 'number' },
  { name: 'unassign', aliases: ['u', 'shards.unassigned', 'shardsUnassigned'], desc: 'number of unassigned shards', align: R, kind: 'number' },
  { name: 'pending_tasks', aliases: ['pt', 'pendingTasks'], desc: 'number of pending tasks', align: R, kind: 'number' },
  { name: 'max_task_wait_time', aliases: ['mtwt', 'maxTaskWaitTime'], desc: 'wait time of longest task pending', align: R },
  { name: 'active_shards_percent', aliases: ['asp', 'activeShardsPercent'], desc: 'active number of shards in percent', align: R },
];

function catHealth(s: PagingServices, req: EsRequest): EsResponse {
  const now = Date.now();
  const h = clusterHealth(s.cluster.resolve('*', { expandWildcards: 'all' }), clusterNodes(s));
  const cols = req.query.ts === 'false' ? HEALTH.filter((c) => c.name !== 'epoch' && c.name !== 'timestamp') : HEALTH;
  return catResponse(req, cols, [
    {
      ...ts(now),
      cluster: s.ctx.node.clusterName,
      status: h.status,
      'node.total': h.nodes,
      'node.data': h.dataNodes,
      shards: h.active,
      pri: h.activePrimary,
      relo: 0,
      init: 0,
      unassign: h.unassigned,
      pending_tasks: 0,
      max_task_wait_time: '-',
      active_shards_percent: `${activePercent(h).toFixed(1)}%`,
    },
  ]);
}

const COUNT: Column[] = [
  { name: 'epoch', aliases: ['t', 'time'], desc: 'seconds since 1970-01-01 00:00:00', align: R, kind: 'number' },
  { name: 'timestamp', aliases: ['ts', 'hms', 'hhmmss'], desc: 'time in HH:MM:SS' },
  { name: 'count', aliases: ['dc', 'docs.count', 'docsCount'], desc: 'the document count', align: R, kind: 'number' },
];

async function catCount(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const indices = visibleIndices(s, req, 'indices:data/read/search', s.cluster.resolve(req.params.index, resolveOptions(req)));
  const refs = indices.flatMap((i) => i.shards.map((sh) => sh.ref));
  const counts = await Promise.all(refs.map((ref) => s.shards.call<number>(ref, 'count', {})));
  return catResponse(req, COUNT, [{ ...ts(Date.now()), count: counts.reduce((a, n) => a + n, 0) }]);
}

const NODES: Column[] = [
  { name: 'id', aliases: ['id', 'nodeId'], desc: 'unique node id', default: false },
  { name: 'pid', aliases: ['p'], desc: 'process id', default: false, align: R, kind: 'number' },
  { name: 'ip', aliases: ['i'], desc: 'ip address' },
  { name: 'port', aliases: ['po'], desc: 'bound transport port', default: false, align: R, kind: 'number' },
  { name: 'http_address', aliases: ['http'], desc: 'bound http address', default: false },
  { name: 'version', aliases: ['v'], desc: 'es version', default: false },
  { name: 'heap.current', aliases: ['hc', 'heapCurrent'], desc: 'used heap', default: false, align: R, kind: 'bytes' },
  { name: 'heap.percent', aliases: ['hp', 'heapPercent'], desc: 'used heap ratio', align: R, kind: 'number' },
  { name: 'heap.max', aliases: ['hm', 'heapMax'], desc: 'max configured heap', default: false, align: R, kind: 'bytes' },
  { name: 'ram.current', aliases: ['rc', 'ramCurrent'], desc: 'used machine memory', default: false, align: R, kind: 'bytes' },
  { name: 'ram.percent', aliases: ['rp', 'ramPercent'], desc: 'used machine memory ratio', align: R, kind: 'number' },
  { name: 'ram.max', aliases: ['rm', 'ramMax'], desc: 'total machine memory', default: false, align: R, kind: 'bytes' },
  { name: 'file_desc.current', aliases: ['fdc', 'fileDescriptorCurrent'], desc: 'used file descriptors', default: false, align: R, kind: 'number' },
  { name: 'file_desc.max', aliases: ['fdm', 'fileDescriptorMax'], desc: 'max file descriptors', default: false, align: R, kind: 'number' },
  { name: 'cpu', aliases: ['cpu'], desc: 'recent cpu usage', align: R, kind: 'number' },
  { name: 'load_1m', aliases: ['l'], desc: '1m load avg', align: R },
  { name: 'load_5m', aliases: ['l'], desc: '5m load avg', align: R },
  { name: 'load_15m', aliases: ['l'], desc: '15m load avg', align: R },
  { name: 'uptime', aliases: ['u'], desc: 'node uptime', default: false, align: R, kind: 'time' },
  { name: 'node.role', aliases: ['r', 'role', 'nodeRole'], desc: 'm:master eligible node, d:data node, i:ingest node, -:coordinating node only' },
  { name: 'master', aliases: ['m'], desc: '*:current master' },
  { name: 'name', aliases: ['n'], desc: 'node name' },
  { name: 'disk.total', aliases: ['dt', 'diskTotal'], desc: 'total disk space', default: false, align: R, kind: 'bytes' },
  { name: 'disk.used', aliases: ['du', 'diskUsed'], desc: 'used disk space', default: false, align: R, kind: 'bytes' },
  { name: 'disk.avail', aliases: ['d', 'da', 'disk', 'diskAvail'], desc: 'available disk space', default: false, align: R, kind: 'bytes' },
  { name: 'disk.used_percent', aliases: ['dup', 'diskUsedPercent'], desc: 'used disk space percentage', default: false, align: R },
  { name: 'search.open_contexts', aliases: ['so', 'searchOpenContexts'], desc: 'open search contexts', default: false, align: R, kind: 'number' },
  { name: 'search.query_total', aliases: ['sqto', 'searchQueryTotal'], desc: 'total query phase ops', default: false, align: R, kind: 'number' },
];

const ROLE_LETTERS: Record<string, string> = { data: 'd', ingest: 'i', master: 'm', ml: 'l', remote_cluster_client: 'r', transform: 't', data_content: 's', data_hot: 'h', data_warm: 'w', data_cold: 'c', data_frozen: 'f' };

async function catNodes(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const rows: Row[] = [];
  for (const n of clusterNodes(s)) {
    const rt = await n.runtime();
    const jvm = rt.jvm.mem as { heap_used_in_bytes: number; heap_max_in_bytes: number; heap_used_percent: number };
    const os = rt.os as { mem: { used_in_bytes: number; total_in_bytes: number; used_percent: number }; cpu: { load_average: Record<string, number> } };
    const proc = rt.process as { open_file_descriptors: number; max_file_descriptors: number; cpu: { percent: number } };
    const fs = rt.fs.total as { total_in_bytes: number; available_in_bytes: number; free_in_bytes: number };
    const full = req.query.full_id === 'true' || req.query.full_id === '';
    const letters = n.roles.map((r) => ROLE_LETTERS[r] ?? '').sort().join('');
    rows.push({
      id: full ? n.id : n.id.slice(0, 4),
      pid: process.pid,
      ip: n.ip,
      port: Number(n.transportAddress.split(':').pop()),
      http_address: n.httpAddress,
      version: n.version,
      'heap.current': jvm.heap_used_in_bytes,
      'heap.percent': jvm.heap_used_percent,
      'heap.max': jvm.heap_max_in_bytes,
      'ram.current': os.mem.used_in_bytes,
      'ram.percent': os.mem.used_percent,
      'ram.max': os.mem.total_in_bytes,
      'file_desc.current': proc.open_file_descriptors,
      'file_desc.max': proc.max_file_descriptors,
      cpu: proc.cpu.percent,
      load_1m: os.cpu.load_average['1m'].toFixed(2),
      load_5m: os.cpu.load_average['5m'].toFixed(2),
      load_15m: os.cpu.load_average['15m'].toFixed(2),
      uptime: Number(rt.jvm.uptime_in_millis),
      'node.role': letters || '-',
      master: n.master ? '*' : '-',
      name: n.name,
      'disk.total': fs.total_in_bytes,
      'disk.used': fs.total_in_bytes - fs.available_in_bytes,
      'disk.avail': fs.available_in_bytes,
      'disk.used_percent': fs.total_in_bytes ? ((100 * (fs.total_in_bytes - fs.available_in_bytes)) / fs.total_in_bytes).toFixed(2) : '0.00',
      'search.open_contexts': s.contexts.shardContexts(),
      'search.query_total': s.stats.queryTotal,
    });
  }
  return catResponse(req, NODES, rows);
}

const SHARDS: Column[] = [
  { name: 'index', aliases: ['i', 'idx'], desc: 'index name' },
  { name: 'shard', aliases: ['s', 'sh'], desc: 'shard name', align: R, kind: 'number' },
  { name: 'prirep', aliases: ['p', 'pr', 'primaryOrReplica'], desc: 'primary or replica' },
  { name: 'state', aliases: ['st'], desc: 'shard state' },
  { name: 'docs', aliases: ['d', 'dc'], desc: 'number of docs in shard', align: R, kind: 'number' },
  { name: 'store', aliases: ['sto'], desc: 'store size of shard (how much disk it uses)', align: R, kind: 'bytes' },
  { name: 'dataset', desc: 'total size of dataset', align: R, kind: 'bytes' },
  { name: 'ip', desc: 'ip of node where it lives' },
  { name: 'id', desc: 'unique id of node where it lives', default: false },
  { name: 'node', aliases: ['n'], desc: 'name of node where it lives' },
  { name: 'unassigned.reason', aliases: ['ur'], desc: 'reason shard became unassigned', default: false },
  { name: 'seq_no.max', aliases: ['sqm', 'maxSeqNo'], desc: 'max sequence number', default: false, align: R, kind: 'number' },
];

async function catShards(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const indices = visibleIndices(s, req, 'indices:monitor/stats', s.cluster.resolve(req.params.index, { ...resolveOptions(req), expandWildcards: 'all' })).sort((a, b) => (a.name < b.name ? -1 : 1));
  const nodes = clusterNodes(s);
  const stats = await collectShardStats(s, indices);
  const rows: Row[] = [];
  for (const i of indices) {
    const h = indexHealth(i, nodes);
    for (let n = 0; n < i.settings.numberOfShards; n++) {
      const x = stats.find((st) => st.uuid === i.uuid && st.n === n) as ShardStat;
      for (const c of h.perShard[n].copies) {
        const prirep = c.primary ? 'p' : 'r';
        if (!c.node) {
          rows.push({ index: i.name, shard: n, prirep, state: 'UNASSIGNED', docs: null, store: null, dataset: null, ip: null, id: null, node: null, 'unassigned.reason': 'INDEX_CREATED', 'seq_no.max': null });
          continue;
        }
        const node = c.relocatingFrom ? `${c.relocatingFrom.name} -> ${c.node.ip} ${c.node.id} ${c.node.name}` : c.node.name;
        rows.push({ index: i.name, shard: n, prirep, state: c.state, docs: x.docs, store: x.sizeBytes, dataset: x.sizeBytes, ip: c.node.ip, id: c.node.id, node, 'seq_no.max': x.maxSeqNo });
      }
    }
  }
  return catResponse(req, SHARDS, rows);
}

const ALIASES: Column[] = [
  { name: 'alias', aliases: ['a'], desc: 'alias name' },
  { name: 'index', aliases: ['i', 'idx'], desc: 'index alias points to' },
  { name: 'filter', aliases: ['f', 'fi'], desc: 'filter' },
  { name: 'routing.index', aliases: ['ri', 'routingIndex'], desc: 'index routing' },
  { name: 'routing.search', aliases: ['rs', 'routingSearch'], desc: 'search routing' },
  { name: 'is_write_index', aliases: ['w', 'isWriteIndex'], desc: 'write index' },
];

function catAliases(s: PagingServices, req: EsRequest): EsResponse {
  const wanted = split(req.params.name);
  const rows: Row[] = [];
  for (const i of visibleIndices(s, req, 'indices:admin/aliases/get', s.cluster.resolve('*', { expandWildcards: 'all' }))) {
    for (const [alias, m] of s.cluster.metadata.aliases.of(i.uuid)) {
      if (wanted.length && !wanted.some((w) => w === '_all' || globMatch(w, alias))) continue;
      rows.push({
        alias,
        index: i.name,
        filter: m.filter !== undefined ? '*' : '-',
        'routing.index': m.index_routing ?? '-',
        'routing.search': m.search_routing ?? '-',
        is_write_index: m.is_write_index === undefined ? '-' : String(m.is_write_index),
      });
    }
  }
  rows.sort((a, b) => (String(a.alias) + String(a.index) < String(b.alias) + String(b.index) ? -1 : 1));
  return catResponse(req, ALIASES, rows);
}

const TEMPLATES: Column[] = [
  { name: 'name', aliases: ['n'], desc: 'template name' },
  { name: 'index_patterns', aliases: ['t'], desc: 'template index patterns' },
  { name: 'order', aliases: ['o', 'p'], desc: 'template application order/priority number', kind: 'number' },
  { name: 'version', aliases: ['v'], desc: 'version' },
  { name: 'composed_of', aliases: ['c'], desc: 'component templates comprising index template' },
];

function catTemplates(s: PagingServices, req: EsRequest): EsResponse {
  const t = s.cluster.metadata.templates;
  const wanted = req.params.name;
  const pick = (n: string) => !wanted || split(wanted).some((w) => globMatch(w, n));
  const rows: Row[] = [];
  for (const [name, x] of t.entries<LegacyTemplate>('legacy')) {
    if (pick(name)) rows.push({ name, index_patterns: `[${x.index_patterns.join(', ')}]`, order: x.order, version: x.version ?? null, composed_of: '' });
  }
  for (const [name, x] of t.entries<ComposableTemplate>('index')) {
    if (pick(name)) rows.push({ name, index_patterns: `[${x.index_patterns.join(', ')}]`, order: x.priority ?? 0, version: x.version ?? null, composed_of: `[${x.composed_of.join(', ')}]` });
  }
  return catResponse(req, TEMPLATES, rows);
}

const CAT_HELP = ['aliases', 'count', 'health', 'indices', 'nodes', 'shards', 'templates'];

export function catRoutes(r: Router, s: PagingServices): void {
  const monitor = (action: string) => ({ kind: 'cluster' as const, action });
  r.add('GET', '/_cat', () => ({
    body: new RawJson([`=^.^=\n${CAT_HELP.flatMap((n) => [`/_cat/${n}`, ...(['aliases', 'count', 'indices', 'shards', 'templates'].includes(n) ? [`/_cat/${n}/{${n === 'aliases' || n === 'templates' ? 'name' : 'index'}}`] : [])]).join('\n')}\n`]),
    headers: { 'content-type': 'text/plain; charset=UTF-8' },
  }), monitor('cluster:monitor/state'));
  r.add('GET', '/_cat/indices', (req) => catIndices(s, req), monitor('cluster:monitor/state'));
  r.add('GET', '/_cat/indices/{index}', (req) => catIndices(s, req), monitor('cluster:monitor/state'));
  r.add('GET', '/_cat/health', (req) => catHealth(s, req), monitor('cluster:monitor/health'));
  r.add('GET', '/_cat/count', (req) => catCount(s, req), { kind: 'indices', action: 'indices:data/read/search', indices: () => ['*'] });
  r.add('GET', '/_cat/count/{index}', (req) => catCount(s, req), { kind: 'indices', action: 'indices:data/read/search', indices: (req) => [req.params.index] });
  r.add('GET', '/_cat/nodes', (req) => catNodes(s, req), monitor('cluster:monitor/nodes/stats'));
  r.add('GET', '/_cat/shards', (req) => catShards(s, req), monitor('cluster:monitor/state'));
  r.add('GET', '/_cat/shards/{index}', (req) => catShards(s, req), monitor('cluster:monitor/state'));
  r.add('GET', '/_cat/aliases', (req) => catAliases(s, req), monitor('cluster:monitor/state'));
  r.add('GET', '/_cat/aliases/{name}', (req) => catAliases(s, req), monitor('cluster:monitor/state'));
  r.add('GET', '/_cat/templates', (req) => catTemplates(s, req), monitor('cluster:monitor/state'));
  r.add('GET', '/_cat/templates/{name}', (req) => catTemplates(s, req), monitor('cluster:monitor/state'));
}
