import type { NodeContext } from '../nodeContext';
import type { ClusterState } from '../cluster';
import type { ShardClient } from './shardClient';
import type { Membership } from '../cluster/membership';

/** Security hooks the search side needs (implemented by actors/security; absent when disabled). */
export interface SecurityHooks {
  allowedIndices(auth: unknown, action: string, indices: string[]): string[];
  ownerOf(auth: unknown): { username: string; realm: string } | undefined;
  sameOwner(a: { username: string; realm: string } | undefined, b: { username: string; realm: string } | undefined): boolean;
  authorize(auth: unknown, action: string, indices?: string[]): void | Promise<void>;
}

/** What route modules are given. */
export interface EdgeServices {
  ctx: NodeContext;
  cluster: ClusterState;
  shards: ShardClient;
  security?: SecurityHooks;
  /** Counters for `_nodes/stats` (query/fetch phases). */
  stats: SearchStats;
  /** The live nodes of the cluster (this one included). */
  membership: Membership;
  /**
   * What this node answers to other nodes over `es.v1.node.<id>.<op>` (its runtime figures, its
   * node stats, its open contexts): route modules add handlers, the system serves them.
   */
  nodeOps: Record<string, (body: unknown) => unknown>;
}

export interface SearchStats {
  queryTotal: number;
  queryTimeMs: number;
  queryCurrent: number;
  fetchTotal: number;
  fetchTimeMs: number;
  fetchCurrent: number;
  queryFailure: number;
  fetchFailure: number;
  scrollTotal: number;
  scrollTimeMs: number;
}

export const newSearchStats = (): SearchStats => ({
  queryTotal: 0,
  queryTimeMs: 0,
  queryCurrent: 0,
  fetchTotal: 0,
  fetchTimeMs: 0,
  fetchCurrent: 0,
  queryFailure: 0,
  fetchFailure: 0,
  scrollTotal: 0,
  scrollTimeMs: 0,
});
