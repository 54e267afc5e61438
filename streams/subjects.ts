/**
 * Every NATS subject the service uses, in one place (STYLE.md "NATS subjects").
 * `<id>` is always our own uuid: never an opaque pit/scroll id, never a secret.
 */

/** Lifecycle aggregates that publish facts on `es.v1.evt.<aggregate>.<id>.<fact>`. */
export const Aggregate = {
  Scroll: 'scroll',
  Pit: 'pit',
  Token: 'token',
  ApiKey: 'apikey',
  ServiceToken: 'servicetoken',
  User: 'user',
  Role: 'role',
  Node: 'node',
  /** An async search (`POST /_async_search`): submitted, completed, extended, deleted, cancelled, expired. */
  AsyncSearch: 'asyncsearch',
  /** Per-principal context quota refusals (`search.max_open_contexts_per_user`): `quota.rejected`. */
  Quota: 'quota',
  /**
   * A node's credential refusals while it was cut off from NATS (`xpack.security.authc.partition_policy:
   * fail_closed`): `partition.refused`, appended once it is back.
   */
  Partition: 'partition',
} as const;
export type Aggregate = (typeof Aggregate)[keyof typeof Aggregate];

/**
 * Operations a shard copy answers over request/reply. `write`, `get` and `refresh` go to the
 * primary (real-time, and where writes are sequenced); the others to any started copy.
 */
export const ShardOp = {
  Write: 'write', Query: 'query', Fetch: 'fetch', Get: 'get', Refresh: 'refresh', Count: 'count', Stats: 'stats', Searcher: 'searcher',
  Flush: 'flush', ForceMerge: 'forcemerge', Segments: 'segments', Recovery: 'recovery',
} as const;
export type ShardOp = (typeof ShardOp)[keyof typeof ShardOp];
/** Ops answered only by a shard's primary copy. */
export const PRIMARY_OPS: ReadonlySet<ShardOp> = new Set<ShardOp>([ShardOp.Write, ShardOp.Get, ShardOp.Refresh]);

/** JetStream stream of lifecycle facts (PIT, scroll, tokens, keys, users, roles). */
export const EVENT_STREAM = 'ES_EVT';
/** JetStream stream of the document log: index metadata and per-shard write batches. */
export const DATA_STREAM = 'ES_DATA';
/**
 * Node-only JetStream stream of compacted state (actors/compaction): the current state of every live
 * credential and open context, one message per aggregate (`max_msgs_per_subject: 1`), and the ES_EVT
 * position it covers. It holds secret material: no subscriber may read it.
 */
export const STATE_STREAM = 'ES_STATE';

export const subjects = {
  /** es.v1.evt.<aggregate>.<id>.<fact> */
  fact: (a: Aggregate, id: string, fact: string) => `es.v1.evt.${a}.${id}.${fact}`,
  /** Every fact of one aggregate instance. */
  factsOf: (a: Aggregate, id: string) => `es.v1.evt.${a}.${id}.>`,
  /** Every fact of one aggregate type. */
  factsOfType: (a: Aggregate) => `es.v1.evt.${a}.>`,
  allFacts: 'es.v1.evt.>',
  /** es.v1.state.<aggregate>.<id>: the compacted state of one aggregate (ES_STATE, node-only). */
  state: (a: Aggregate, id: string) => `es.v1.state.${a}.${id}`,
  /** The ES_EVT sequence the compacted state covers (ES_STATE). */
  statePosition: 'es.v1.state.position',
  allState: 'es.v1.state.>',
  /** es.v1.cmd.<aggregate>.<id>.<command>: request/reply to one context actor. */
  command: (a: Aggregate, id: string, cmd: string) => `es.v1.cmd.${a}.${id}.${cmd}`,
  /** One wildcard subscription routes all commands of an aggregate type (no subscription per context). */
  commandsOf: (a: Aggregate) => `es.v1.cmd.${a}.*.*`,
  /** es.v1.shard.<indexUuid>.<n>.<op>: any started copy of the shard (queue group). */
  shard: (indexUuid: string, n: number, op: ShardOp) => `es.v1.shard.${indexUuid}.${n}.${op}`,
  shardQueue: (indexUuid: string, n: number) => `shard.${indexUuid}.${n}`,
  /** es.v1.shard.<indexUuid>.<n>.p.<op>: the primary copy (write, get, refresh). */
  shardPrimary: (indexUuid: string, n: number, op: ShardOp) => `es.v1.shard.${indexUuid}.${n}.p.${op}`,
  shardPrimaryQueue: (indexUuid: string, n: number) => `shard.${indexUuid}.${n}.p`,
  /** es.v1.shard.<indexUuid>.<n>.c.<nodeId>.<op>: one copy, on one node (refresh every copy, stats). */
  shardCopy: (indexUuid: string, n: number, nodeId: string, op: ShardOp) => `es.v1.shard.${indexUuid}.${n}.c.${nodeId}.${op}`,
  /** Document log: index create/delete/settings/mapping. */
  dataMeta: 'es.v1.data.meta',
  /** Document log: write batches of one shard (single writer: its primary, fenced by expected sequence). */
  dataShard: (indexUuid: string, n: number) => `es.v1.data.shard.${indexUuid}.${n}`,
  /** Every shard subject of one index in the document log. */
  dataShards: (indexUuid: string) => `es.v1.data.shard.${indexUuid}.*`,
  allData: 'es.v1.data.>',
  /** es.v1.node.<nodeId>.<op>: request/reply to one node (its stats, its contexts). */
  node: (nodeId: string, op: string) => `es.v1.node.${nodeId}.${op}`,
  /** es.v1.members.<nodeId>.heartbeat|left: membership over core NATS (cluster/membership.ts). */
  member: (nodeId: string, what: 'heartbeat' | 'left') => `es.v1.members.${nodeId}.${what}`,
  /** Edge -> authenticator chain. */
  authenticate: 'es.v1.auth.authenticate',
  /** Credential cache invalidation broadcast (core NATS, every node). */
  authInvalidate: 'es.v1.auth.invalidate',
} as const;
