/**
 * Who may do what on the bus (README "Security model of the bus"): the roles of the NATS users a
 * node's nats-server knows, as nats-server 2.9 `permissions` blocks. Every subject a node uses must
 * match one of {@link NODE_SUBJECTS}; `test/unit/streams/busPermissions.test.ts` builds every subject
 * of `subjects.ts` and fails when one is not covered. Adding a subject family: add its pattern here.
 */
import { DATA_STREAM, EVENT_STREAM, STATE_STREAM } from './subjects';

/**
 * Inbox prefix of subscriber connections (nats.js `inboxPrefix`, nats CLI `--inbox-prefix`). Nodes
 * keep the default `_INBOX.`: their replies (shard pages, KV values, JetStream deliveries of the
 * document log) go there, and a subscriber may subscribe only under its own prefix.
 */
export const SUBSCRIBER_INBOX_PREFIX = '_INBOX_es_sub';

/**
 * Subject patterns a node publishes and subscribes to: every `es.v1.*` family of subjects.ts, the
 * JetStream and KV APIs, and its inboxes. Extend this list when a new family of subjects appears.
 */
export const NODE_SUBJECTS: readonly string[] = [
  'es.v1.evt.>', // lifecycle facts (ES_EVT)
  'es.v1.state.>', // compacted credential and context state (ES_STATE, node-only)
  'es.v1.cmd.>', // commands to context actors (scroll, pit, asyncsearch: es.v1.cmd.asyncsearch.<id>.get|delete)
  'es.v1.shard.>', // shard request/reply
  'es.v1.reply.>', // the rest of a reply too large for one message (actors/shard/replyChunks.ts)
  'es.v1.data.>', // document log (ES_DATA)
  'es.v1.node.>', // node request/reply
  'es.v1.members.>', // heartbeats
  'es.v1.auth.>', // credential cache invalidation
  '$JS.API.>', // streams, consumers, direct gets
  '$JS.ACK.>',
  '$JS.FC.>',
  '$KV.>', // cluster identity, leases (ES_CLUSTER, ES_LEASES), async search results (ES_ASYNC_SEARCH) and any bucket a node adds
  '$O.>', // object stores: segment files of copies in peer recovery (ES_SEGMENTS)
  '_INBOX.>', // replies and push deliveries
];

/** A nats-server `permissions` block. */
export interface BusPermissions {
  publish: { allow: string[] };
  subscribe: { allow: string[] };
}

/** The JetStream API a read-only ES_EVT consumer needs on nats-server 2.9 (no domains, no accounts). */
const readEvents = (stream: string) => [
  '$JS.API.INFO',
  `$JS.API.STREAM.INFO.${stream}`,
  `$JS.API.CONSUMER.CREATE.${stream}`,
  `$JS.API.CONSUMER.CREATE.${stream}.>`,
  `$JS.API.CONSUMER.INFO.${stream}.>`,
  `$JS.API.CONSUMER.DELETE.${stream}.>`,
  `$JS.API.CONSUMER.MSG.NEXT.${stream}.>`,
  `$JS.FC.${stream}.>`,
  `$JS.ACK.${stream}.>`,
];

export const ROLES = {
  /** A node: everything the service does (streams, KV, shard and command subjects, inboxes). */
  node: { publish: { allow: [...NODE_SUBJECTS] }, subscribe: { allow: [...NODE_SUBJECTS] } },
  /**
   * Read-only: core subscriptions to lifecycle facts and JetStream consumers on ES_EVT. Cannot
   * publish under es.v1.>, store, purge or delete anything, read ES_DATA, ES_STATE or KV, nor see
   * a node's replies (its inboxes are `_INBOX.`, not {@link SUBSCRIBER_INBOX_PREFIX}).
   */
  subscriber: { publish: { allow: readEvents(EVENT_STREAM) }, subscribe: { allow: ['es.v1.evt.>', `${SUBSCRIBER_INBOX_PREFIX}.>`] } },
} as const satisfies Record<string, BusPermissions>;
export type BusRole = keyof typeof ROLES;

/**
 * Every subject: only for the benchmarks' and tests' own servers (`startEmbeddedNats(dir, { admin: true })`),
 * which publish their baselines outside the node's subjects. No product server has this user.
 */
export const ADMIN_PERMISSIONS: BusPermissions = { publish: { allow: ['>'] }, subscribe: { allow: ['>'] } };
/** A key of a server's users: a role, or the benchmarks' admin. */
export type KeyRole = BusRole | 'admin';

/**
 * Streams only nodes may read: the subscriber role names none of them (test/int/bus/roles.test.ts
 * tries each). `KV_ES_SECRETS` holds the key that seals credential facts' secret fields.
 */
export const NODE_ONLY_STREAMS = [DATA_STREAM, STATE_STREAM, 'KV_ES_CLUSTER', 'KV_ES_LEASES', 'KV_ES_SECRETS', 'KV_ES_ASYNC_SEARCH', 'OBJ_ES_SEGMENTS'] as const;

/**
 * Whether a NATS subject pattern (`*` one token, `>` the rest) covers a concrete subject.
 * @example subjectMatches('es.v1.evt.>', 'es.v1.evt.scroll.x.opened') // true
 */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length) return false;
    if (p[i] !== '*' && p[i] !== s[i]) return false;
  }
  return p.length === s.length;
}

/** Whether `role` may publish (or subscribe to) `subject`. */
export const roleAllows = (role: BusRole, op: 'publish' | 'subscribe', subject: string): boolean =>
  ROLES[role][op].allow.some((p) => subjectMatches(p, subject));
