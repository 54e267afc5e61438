import type { NodeContext } from '../nodeContext';
import type { ClusterState } from '../cluster';
import type { ShardClient } from './shardClient';
import type { Membership } from '../cluster/membership';
import type { ContextDirectory, ContextRegistry, ContextService } from '../contexts';
import type { AsyncSearchRegistry } from '../contexts/asyncSearches';
import type { IdCodec } from './ids';
import type { EsRequest } from '../wire/rest';
import type { Authentication } from '../wire/security';
import type { QueryPageHead } from '../shard/pageCodec';

/** Security hooks the search side needs (implemented by actors/security; absent when disabled). */
export interface SecurityHooks {
  allowedIndices(auth: Authentication | undefined, action: string, indices: string[]): string[];
  ownerOf(auth: Authentication | undefined): { username: string; realm: string } | undefined;
  sameOwner(a: { username: string; realm: string } | undefined, b: { username: string; realm: string } | undefined): boolean;
  authorize(auth: Authentication | undefined, action: string, indices?: string[]): void | Promise<void>;
}

/**
 * The node's services the search service and the routes above it share: the node context, the
 * cluster state, the shard client, the security hooks, search stats and membership.
 */
export interface SearchServices {
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
  /** The flood-stage block on writes (actors/cluster/floodStage.ts); absent: never blocked. */
  flood?: WriteGate;
  /** Updates this node found to be no-ops, by `<index uuid>/<shard>` (`indexing.noop_update_total`). */
  noopUpdates?: Map<string, number>;
}

/** ES's read-only-allow-delete block as the write paths see it. */
export interface WriteGate {
  /** Throws ES's 429 `cluster_block_exception` when writes (not deletes) to these indices are refused. */
  checkWrite(...indices: string[]): void;
  /** The store refused an append for lack of room (look at it again now). */
  noteFull(): void;
  /** Bytes written to the log through this node (counted as used until the next look). */
  noteWritten(bytes: number): void;
  /** The log has no room for a deletion that would free some: lend it some of the lifecycle reserve. */
  borrowRoom(): Promise<boolean>;
  /** Room was freed (an index deleted): look at the store again now. */
  poll(): Promise<void>;
  /** The room the document log has, for `_nodes/stats` `fs`. */
  room(): { level: string; blocked: boolean; readings: Array<{ source: string; totalBytes: number; freeBytes: number; from: string; level: string }> };
}

/** What the paging services add: the contexts (this node's, the cluster's) and the id codec. */
export interface PagingServices extends SearchServices {
  /** This node's own contexts (their actors). */
  contexts: ContextRegistry;
  /** Every context of the cluster, as the lifecycle log tells them. */
  directory: ContextDirectory;
  /** Uses, clears and adoptions of contexts wherever their owner runs. */
  contextService: ContextService;
  ids: IdCodec;
  /** Async searches of the cluster (absent in harnesses that start parts of a node). */
  asyncSearches?: AsyncSearchRegistry;
}

/**
 * One search as the search service runs it, whether it came as its own REST request, as an
 * `_msearch` item or as a reindex's scroll: the index expression, URL-style parameters, the parsed
 * body and who is calling.
 */
export interface SearchCall {
  /** `index`: comma list, wildcards, `_all`; absent = all indices. */
  readonly params: Record<string, string>;
  /** URL parameters (an msearch item: its header's options plus the msearch URL's). */
  readonly query: Record<string, string>;
  /** Parsed body (lossless longs); undefined when there is none. */
  readonly body: unknown;
  /** The body as received (a scroll's opened fact keeps it for revival; parse errors locate in it). */
  readonly text?: string;
  readonly auth?: EsRequest['auth'];
  readonly opaqueId?: string;
  /** A node-internal search (reindex, update/delete-by-query scrolls): no per-user context quota. */
  readonly internal?: boolean;
  /** Told as each shard answers (async search shows partial progress with it). */
  readonly onShard?: (ok: boolean, total: number, head?: QueryPageHead) => void;
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
