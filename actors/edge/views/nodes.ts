import { VERSION } from '../routes/cluster';
import type { PagingServices } from '../routes/search';
import { fsStats, httpPort, httpStats, jvmInfo, jvmStats, osInfo, osStats, processInfo, processStats } from './runtime';

/**
 * The nodes of the cluster as every view (`_nodes`, `_nodes/stats`, `_cat/nodes`, cluster state,
 * cluster stats and health) sees them. `clusterNodes` is the one place that knows who they are:
 * today just this node; with cluster membership it lists every member, and a remote member's
 * `runtime()` asks that node (the views need not change).
 */
export interface NodeDescriptor {
  id: string;
  name: string;
  host: string;
  ip: string;
  transportAddress: string;
  httpAddress: string;
  roles: string[];
  attributes: Record<string, string>;
  version: string;
  /** The elected master (the node that writes cluster metadata). */
  master: boolean;
  /** The node answering this request. */
  local: boolean;
  /** os/process/jvm/fs/http figures of the node, under ES's keys. */
  runtime(): Promise<NodeRuntime>;
  /** Static facts for `GET /_nodes` (os, process, jvm). */
  info(): NodeInfo;
}

export interface NodeRuntime {
  os: Record<string, unknown>;
  process: Record<string, unknown>;
  jvm: Record<string, unknown>;
  fs: Record<string, unknown>;
  http: { current_open: number; total_opened: number };
}

export interface NodeInfo {
  os: Record<string, unknown>;
  process: Record<string, unknown>;
  jvm: Record<string, unknown>;
}

export const NODE_ROLES = ['data', 'ingest', 'master'];

/** Every node of the cluster (today: this one). */
export function clusterNodes(s: PagingServices): NodeDescriptor[] {
  const n = s.ctx.node;
  const port = httpPort() ?? 9200;
  return [
    {
      id: n.id,
      name: n.name,
      host: n.host,
      ip: n.host,
      transportAddress: `${n.host}:9300`,
      httpAddress: `${n.host}:${port}`,
      roles: NODE_ROLES,
      attributes: {},
      version: VERSION.number,
      master: true,
      local: true,
      runtime: async () => ({ os: osStats(), process: processStats(), jvm: jvmStats(), fs: fsStats(s.ctx.dataDir), http: await httpStats() }),
      info: () => ({ os: osInfo(), process: processInfo(), jvm: jvmInfo() }),
    },
  ];
}

/**
 * ES node filters (`_all`, `_local`, `_master`, ids, names, wildcards, `role:true|false`,
 * `master:true`, `data:false`, attribute `k:v`), applied left to right, a comma list.
 */
export function selectNodes(nodes: NodeDescriptor[], filter: string | undefined): NodeDescriptor[] {
  if (filter === undefined || filter === '' || filter === '_all') return nodes;
  let out = new Set<NodeDescriptor>();
  for (const part of filter.split(',').map((x) => x.trim()).filter(Boolean)) {
    if (part === '_all' || part === '*') out = new Set(nodes);
    else if (part === '_local') nodes.filter((x) => x.local).forEach((x) => out.add(x));
    else if (part === '_master') nodes.filter((x) => x.master).forEach((x) => out.add(x));
    else if (part.includes(':')) {
      const [k, v] = part.split(':', 2);
      const role = ['master', 'data', 'ingest', 'ml', 'remote_cluster_client', 'transform'].includes(k) || k.startsWith('data_');
      for (const x of nodes) {
        if (!role) {
          if (k in x.attributes && globLike(v, x.attributes[k])) out.add(x);
        } else if (x.roles.includes(k)) {
          // `role:true` adds the nodes with the role, `role:false` takes them out again (`_all,master:false`)
          if (v === 'true') out.add(x);
          else out.delete(x);
        }
      }
    } else {
      for (const x of nodes) if (globLike(part, x.id) || globLike(part, x.name) || globLike(part, x.host) || globLike(part, x.ip)) out.add(x);
    }
  }
  return nodes.filter((x) => out.has(x));
}

function globLike(pattern: string, value: string): boolean {
  if (!pattern.includes('*')) return pattern === value;
  return new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`).test(value);
}

/** `_nodes` header: how many nodes answered. */
export const nodesHeader = (n: number) => ({ total: n, successful: n, failed: 0 });
