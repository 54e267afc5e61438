import { VERSION } from '../routes/cluster';
import type { PagingServices } from '../../search';
import type { NodeRecord } from '../../cluster/membership';
import { callNodes } from '../../cluster/nodeRpc';
import { simpleMatch } from '../../automaton';
import { fsStats, httpPort, httpStats, jvmInfo, jvmStats, osInfo, osStats, processInfo, processStats } from './runtime';

/**
 * The nodes of the cluster as every view (`_nodes`, `_nodes/stats`, `_cat/nodes`, cluster state,
 * cluster stats and health) sees them. `clusterNodes` is the one place that knows who they are:
 * every live member (actors/cluster/membership.ts); a remote member's `runtime()` asks that node
 * over NATS (`es.v1.node.<id>.runtime`).
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
  /** The elected master (here: the node holding the shard allocator lease). */
  master: boolean;
  /** State of each shard copy the node holds, by `<indexUuid>/<n>`. */
  copies: NodeRecord['copies'];
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

/** This node's own runtime figures (what it answers to `es.v1.node.<id>.runtime`). */
export async function localRuntime(s: PagingServices): Promise<NodeRuntime> {
  return { os: osStats(), process: processStats(), jvm: jvmStats(), fs: withStore(fsStats(s.ctx.dataDir), s), http: await httpStats() };
}

/**
 * The `fs` section with the document log's store in it: its room as the disk watermarks see it (a
 * `data` entry of type `jetstream`, and `total` from it when its size is known) and the flood-stage
 * decision (`fs.document_log`: level, read-only-allow-delete block).
 */
function withStore(fs: Record<string, unknown>, s: PagingServices): Record<string, unknown> {
  const room = s.flood?.room();
  if (!room) return fs;
  const entries = room.readings.map((r) => ({
    path: r.source === 'jetstream' ? 'jetstream' : r.from, mount: r.from, type: r.source,
    total_in_bytes: r.totalBytes, free_in_bytes: r.freeBytes, available_in_bytes: r.freeBytes,
  }));
  const js = entries.find((e) => e.type === 'jetstream');
  return {
    ...fs,
    ...(js ? { total: { total_in_bytes: js.total_in_bytes, free_in_bytes: js.free_in_bytes, available_in_bytes: js.available_in_bytes } } : {}),
    data: [...((fs.data as unknown[]) ?? []), ...entries],
    document_log: { watermark_level: room.level, read_only_allow_delete: room.blocked },
  };
}

/** This node's static facts (kept in its membership record for the others' `GET /_nodes`). */
export const localInfo = (): NodeInfo => ({ os: osInfo(), process: processInfo(), jvm: jvmInfo() });

/** Every live node of the cluster, this one included. */
export function clusterNodes(s: PagingServices): NodeDescriptor[] {
  const me = s.ctx.node;
  const port = httpPort() ?? 9200;
  return s.membership.live().map((rec) => {
    const local = rec.id === me.id;
    const http = rec.http ? new URL(rec.http) : undefined;
    return {
      id: rec.id,
      name: rec.name,
      host: rec.host,
      ip: rec.host,
      transportAddress: `${rec.host}:9300`,
      httpAddress: local ? `${me.host}:${port}` : http ? `${http.hostname}:${http.port}` : `${rec.host}:9200`,
      roles: rec.roles,
      attributes: {},
      version: rec.version,
      master: !!rec.master,
      local,
      copies: rec.copies,
      runtime: local
        ? () => localRuntime(s)
        : async () => {
            const a = (await callNodes<NodeRuntime>(s.ctx.nc, [rec.id], 'runtime')).get(rec.id);
            if (a?.ok) return a.result;
            return { os: {}, process: {}, jvm: { mem: { heap_max_in_bytes: 0, heap_used_in_bytes: 0 } }, fs: {}, http: { current_open: 0, total_opened: 0 } };
          },
      info: () => (local ? localInfo() : ((rec.info as NodeInfo | undefined) ?? { os: {}, process: {}, jvm: {} })),
    };
  });
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

/** `*` patterns in linear time (a node filter is user input). */
const globLike = (pattern: string, value: string): boolean => simpleMatch(pattern, value);

/** `_nodes` header: how many nodes answered. */
export const nodesHeader = (n: number) => ({ total: n, successful: n, failed: 0 });
