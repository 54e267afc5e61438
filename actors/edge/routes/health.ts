import { setTimeout as sleep } from 'node:timers/promises';
import { illegalArgument } from '../../wire/esErrors';
import { parseTimeValue } from '../../wire/timeValue';
import type { IndexState } from '../../cluster';
import type { Router } from '../router';
import type { EsRequest, EsResponse } from '../../wire/rest';
import type { PagingServices } from '../../search';
import { resolveOptions } from '../../search';
import { activePercent, atLeast, clusterHealth, type HealthStatus, type IndexHealth } from '../views/health';
import { clusterNodes } from '../views/nodes';

const STATUSES = ['green', 'yellow', 'red'];
const LEVELS = ['cluster', 'indices', 'shards'];

/** `wait_for_nodes`: `N`, `>=N`, `<=N`, `>N`, `<N`, `ge(N)`, `le(N)`, `gt(N)`, `lt(N)`. */
export function nodesCondition(spec: string | undefined): (n: number) => boolean {
  if (spec === undefined || spec === '') return () => true;
  const m = /^(>=|<=|>|<|ge\(|le\(|gt\(|lt\()?\s*(\d+)\)?$/.exec(spec.trim());
  if (!m) throw illegalArgument(`failed to parse [wait_for_nodes] value [${spec}]`);
  const k = Number(m[2]);
  switch (m[1]) {
    case '>=': case 'ge(': return (n) => n >= k;
    case '<=': case 'le(': return (n) => n <= k;
    case '>': case 'gt(': return (n) => n > k;
    case '<': case 'lt(': return (n) => n < k;
    default: return (n) => n === k;
  }
}

/** `wait_for_active_shards` (ActiveShardCount.parseString): a count, `all`, or none by default. */
export function activeShardsCondition(spec: string | undefined): (active: number, copies: number) => boolean {
  if (spec === undefined || spec === '' || spec === 'index-setting' || spec === 'default') return () => true;
  if (spec === 'all') return (active, copies) => active === copies;
  if (!/^-?\d+$/.test(spec.trim())) throw illegalArgument(`cannot parse ActiveShardCount[${spec}]`);
  const k = Number(spec);
  if (k < 0) throw illegalArgument(`shard count cannot be a negative value`);
  return (active) => active >= k;
}

const flag = (v: string | undefined) => v === '' || v === 'true';

function renderIndex(i: IndexHealth, level: string): Record<string, unknown> {
  return {
    status: i.status,
    number_of_shards: i.shards,
    number_of_replicas: i.replicas,
    active_primary_shards: i.activePrimary,
    active_shards: i.active,
    relocating_shards: i.relocating,
    initializing_shards: i.initializing,
    unassigned_shards: i.unassigned,
    unassigned_primary_shards: i.perShard.filter((sh) => sh.copies[0].state === 'UNASSIGNED').length,
    ...(level === 'shards'
      ? {
          shards: Object.fromEntries(
            i.perShard.map((sh) => [
              String(sh.n),
              { status: sh.status, primary_active: sh.primaryActive, active_shards: sh.active, relocating_shards: sh.relocating, initializing_shards: sh.initializing, unassigned_shards: sh.unassigned, unassigned_primary_shards: sh.copies[0].state === 'UNASSIGNED' ? 1 : 0 },
            ]),
          ),
        }
      : {}),
  };
}

/**
 * `GET /_cluster/health[/<index>]`: waits (up to `timeout`, 30s) for `wait_for_status`,
 * `wait_for_nodes` and, when indices are named, for them to exist; answers 408 with
 * `timed_out: true` when the wait runs out, as ES does.
 */
export async function health(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const q = req.query;
  const want = q.wait_for_status?.toLowerCase();
  if (want !== undefined && !STATUSES.includes(want)) throw illegalArgument(`unknown cluster health status [${q.wait_for_status}]`);
  const level = (q.level ?? 'cluster').toLowerCase();
  if (!LEVELS.includes(level)) throw illegalArgument(`level [${q.level}] not supported, must be one of [cluster, indices, shards]`);
  const nodesOk = nodesCondition(q.wait_for_nodes);
  const shardsOk = activeShardsCondition(q.wait_for_active_shards);
  const noRelocating = flag(q.wait_for_no_relocating_shards);
  const noInitializing = flag(q.wait_for_no_initializing_shards);
  const waitsForShards = q.wait_for_active_shards !== undefined || noRelocating || noInitializing;
  const timeoutMs = parseTimeValue(q.timeout ?? '30s', 'timeout');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const nodes = clusterNodes(s);
    let indices: IndexState[] = [];
    let missing = false;
    try {
      // ClusterHealthRequest: lenient wildcards (expand_wildcards=none matches nothing, no 404)
      indices = req.params.index ? s.cluster.resolve(req.params.index, { ...resolveOptions(req), lenientNone: true }) : s.cluster.resolve('*', { expandWildcards: 'all' });
    } catch {
      missing = true; // a named index that does not exist: RED until it does
    }
    const h = clusterHealth(indices, nodes);
    const status: HealthStatus = missing ? 'red' : h.status;
    const copies = h.active + h.initializing + h.unassigned;
    const ok = !missing && (want === undefined || atLeast(status, want as HealthStatus)) && nodesOk(h.nodes) && shardsOk(h.active, copies) &&
      (!noRelocating || h.relocating === 0) && (!noInitializing || h.initializing === 0);
    const waited = want !== undefined || q.wait_for_nodes !== undefined || waitsForShards || !!req.params.index;
    const timedOut = !ok && waited && Date.now() >= deadline;
    if (ok || timedOut || !waited) {
      return {
        status: timedOut && !flag(q.return_200_for_cluster_health_timeout) ? 408 : 200,
        body: {
          cluster_name: s.ctx.node.clusterName,
          status,
          timed_out: timedOut,
          number_of_nodes: h.nodes,
          number_of_data_nodes: h.dataNodes,
          active_primary_shards: h.activePrimary,
          active_shards: h.active,
          relocating_shards: h.relocating,
          initializing_shards: h.initializing,
          unassigned_shards: h.unassigned,
          unassigned_primary_shards: h.unassignedPrimary,
          delayed_unassigned_shards: 0,
          number_of_pending_tasks: 0,
          number_of_in_flight_fetch: 0,
          task_max_waiting_in_queue_millis: 0,
          active_shards_percent_as_number: activePercent(h),
          ...(level !== 'cluster' ? { indices: Object.fromEntries(h.indices.map((i) => [i.name, renderIndex(i, level)])) } : {}),
        },
      };
    }
    await sleep(Math.min(100, Math.max(1, deadline - Date.now())));
  }
}

export function healthRoutes(r: Router, s: PagingServices): void {
  const authz = { kind: 'cluster' as const, action: 'cluster:monitor/health' };
  r.add('GET', '/_cluster/health', (req) => health(s, req), authz);
  r.add('GET', '/_cluster/health/{index}', (req) => health(s, req), authz);
}
