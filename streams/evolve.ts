import type { Envelope } from './envelope';
import type { Owner, ReleaseReason, Slice } from './events';
import { evolveToken, type AccessTokenRecord } from '../machines/accessToken.machine';
import { evolveApiKey, type ApiKeyRecord } from '../machines/apiKey.machine';
import { evolveServiceToken, type ServiceTokenRecord } from '../machines/serviceToken.machine';

/**
 * Pure folds of lifecycle facts into state (plain functions, tested table-driven). One
 * `evolve*` per aggregate, `(state | undefined, envelope) -> state | undefined`, idempotent by the
 * per-aggregate `seq` (a fact at or below the state's seq is ignored, so re-delivery is harmless).
 * Token, API key and service token folds are the security module's own (machines/*.machine.ts),
 * re-used here so the node and the replay tool agree on one definition.
 *
 * `foldAll` folds a whole log into a {@link World}; the node can call it at start-up and revive the
 * contexts {@link openContexts} returns; `scripts/replay.ts` prints it.
 */

/** The fields of a fact the folds read. */
export type FactLike = Pick<Envelope, 'type' | 'aggregateId' | 'seq' | 'time' | 'data'> & { correlationId?: string; node?: string };

/** The two kinds of search context. */
export type ContextKind = 'scroll' | 'pit';
/** Where a context stands: open, or how it ended. */
export type ContextStatus = 'open' | 'expired' | 'cleared' | 'closed' | 'released';

/** A shard searcher as the opened fact records it. */
export interface PinnedShardFact {
  index: string;
  indexUuid: string;
  n: number;
  shardIndex: number;
  searcher: { maxDoc: number; seqNo: number };
  slice?: { id: number; max: number; field?: string; mode: 'scroll' | 'pit' };
}

/** A scroll context or PIT as its facts describe it. */
export interface ContextState {
  kind: ContextKind;
  id: string;
  seq: number;
  status: ContextStatus;
  indices: string[];
  shards: number;
  pinned: PinnedShardFact[];
  owner?: Owner;
  slice?: Slice;
  keepAliveMs: number;
  /** ms since epoch. */
  openedAt: number;
  /** Time of the last opened/extended fact (a PIT may also be used without a fact). */
  lastActivityAt: number;
  extensions: number;
  endedAt?: number;
  reason?: ReleaseReason;
  /** Who cleared/closed it (username), when a client did. */
  by?: string;
  /**
   * Node that owns it (runs its actor and appends its facts): the opener, or the last adopter.
   * Absent in logs written before nodes clustered.
   */
  node?: string;
  /** Scroll: the search it pages through, as the client sent it (revived after a restart). */
  request?: ScrollRequestFact;
  /** Scroll: total hits of its first page (every page repeats it). */
  total?: { value: number; relation: 'eq' | 'gte' };
  correlationId?: string;
}

/** The search a scroll pages through: body JSON text (lossless) and the query-string parameters. */
export interface ScrollRequestFact {
  body?: string;
  params: Record<string, string>;
}

/** A native user or reserved-user override, without its password hash. */
export interface UserState {
  id: string;
  seq: number;
  username: string;
  realm: string;
  roles: string[];
  enabled: boolean;
  deleted: boolean;
  passwordChangedAt?: number;
}

/** A role, a role mapping or an application privilege (all live in the `role` aggregate). */
export interface RoleState {
  id: string;
  seq: number;
  /** The role or mapping name; `<application>/<name>` for an application privilege. */
  name: string;
  kind: 'role' | 'mapping' | 'privilege';
  deleted: boolean;
  roles?: string[];
}

/** A node of the cluster as its `node.joined` / `node.left` facts describe it (actors/cluster/nodeFacts.ts). */
export interface NodeState {
  id: string;
  seq: number;
  status: 'joined' | 'left';
  name?: string;
  host?: string;
  /** `host:port` of its HTTP edge. */
  httpAddress?: string;
  version?: string;
  /** ms since epoch: when the process started (from its last `joined`). */
  startedAt?: number;
  /** Time of its last `joined` fact. */
  joinedAt?: number;
  /** Time of its last `left` fact (absent once it joined again). */
  leftAt?: number;
  reason?: 'stopped' | 'timed_out';
  /** The node that noticed it left (the allocator lease holder), when not the node itself. */
  by?: string;
  silentMs?: number;
  /** How many times it joined. */
  joins: number;
}

/** Folds one `node.*` fact: a join (again after a restart) or a leave. */
export function evolveNode(s: NodeState | undefined, e: FactLike): NodeState | undefined {
  if (s && e.seq <= s.seq) return s;
  const at = Date.parse(e.time);
  const base: NodeState = s ?? { id: e.aggregateId, seq: 0, status: 'left', joins: 0 };
  if (e.type === 'node.joined') {
    const d = e.data as { name?: string; host?: string; http_address?: string; version?: string; started_at?: number };
    const { leftAt: _l, reason: _r, by: _b, silentMs: _s, ...rest } = base;
    return {
      ...rest,
      seq: e.seq,
      status: 'joined',
      ...(d.name !== undefined ? { name: d.name } : {}),
      ...(d.host !== undefined ? { host: d.host } : {}),
      ...(d.http_address !== undefined ? { httpAddress: d.http_address } : {}),
      ...(d.version !== undefined ? { version: d.version } : {}),
      ...(d.started_at !== undefined ? { startedAt: d.started_at } : {}),
      joinedAt: at,
      joins: base.joins + 1,
    };
  }
  if (e.type === 'node.left') {
    const d = e.data as { reason?: NodeState['reason']; by?: string; silent_ms?: number };
    const { by: _b, silentMs: _s, ...rest } = base;
    return {
      ...rest,
      seq: e.seq,
      status: 'left',
      leftAt: at,
      ...(d.reason ? { reason: d.reason } : {}),
      ...(d.by ? { by: d.by } : {}),
      ...(d.silent_ms !== undefined ? { silentMs: d.silent_ms } : {}),
    };
  }
  return s && { ...s, seq: e.seq };
}

const END: Record<string, ContextStatus> = { expired: 'expired', cleared: 'cleared', closed: 'closed', released: 'released' };

/** Folds one scroll or PIT fact (pure: `s` is left as it was). */
export function evolveContext(s: ContextState | undefined, e: FactLike): ContextState | undefined {
  if (s && e.seq <= s.seq) return s;
  return applyContext(s && { ...s }, e);
}

/**
 * {@link evolveContext} that changes `s` in place: what `applyFact` uses, so a long replay does not
 * copy a state per fact (states live across many facts, and the copies would all reach the old
 * generation of the heap). Only for states the caller owns.
 */
export function applyContext(s: ContextState | undefined, e: FactLike): ContextState | undefined {
  if (s && e.seq <= s.seq) return s;
  const dot = e.type.indexOf('.');
  const fact = e.type.slice(dot + 1);
  if (fact === 'opened') return s ?? openedContext(e.type.slice(0, dot) as ContextKind, e);
  if (!s) return s;
  // Only the owner speaks for a context: a node that lost it (adopted while it was cut off) may
  // still append a fact or two before it learns; every fold ignores them alike.
  if (s.node && e.node && e.node !== s.node && fact !== 'adopted') return s;
  s.seq = e.seq;
  if (s.status !== 'open') return s;
  if (fact === 'adopted') {
    s.node = (e.data as { to: string }).to;
    return s;
  }
  if (fact === 'extended') {
    s.keepAliveMs = (e.data as { keepAliveMs: number }).keepAliveMs;
    s.lastActivityAt = Date.parse(e.time);
    s.extensions++;
    return s;
  }
  const status = END[fact];
  if (!status) return s;
  s.status = status;
  s.endedAt = Date.parse(e.time);
  const { reason, by } = e.data as { reason?: ReleaseReason; by?: string };
  if (reason) s.reason = reason;
  if (by) s.by = by;
  return s;
}

/**
 * One copy of the strings every open context repeats (index names and UUIDs, node ids, owners):
 * each fold parses its own from JSON, and 10,000 open contexts would hold 10,000 copies of each.
 */
const interned = new Map<string, string>();
function intern(s: string): string {
  const have = interned.get(s);
  if (have !== undefined) return have;
  if (interned.size >= 4096) interned.clear(); // names churn (indices made and deleted): stay small
  interned.set(s, s);
  return s;
}
function internPinned(p: PinnedShardFact): PinnedShardFact {
  p.index = intern(p.index);
  p.indexUuid = intern(p.indexUuid);
  return p;
}
function internOwner(o: Owner): Owner {
  return { ...o, username: intern(o.username), realm: intern(o.realm) };
}

function openedContext(kind: ContextKind, e: FactLike): ContextState {
  const at = Date.parse(e.time);
  const d = e.data as {
    keepAliveMs: number;
    node?: string;
    indices?: string[];
    shards?: number;
    pinned?: PinnedShardFact[];
    owner?: Owner;
    slice?: Slice;
    request?: ScrollRequestFact;
    total?: ContextState['total'];
  };
  const node = d.node ?? e.node;
  return {
    kind,
    id: e.aggregateId,
    seq: e.seq,
    status: 'open',
    indices: (d.indices ?? []).map(intern),
    shards: d.shards ?? d.pinned?.length ?? 0,
    pinned: (d.pinned ?? []).map(internPinned),
    ...(d.owner ? { owner: internOwner(d.owner) } : {}),
    ...(node ? { node: intern(node) } : {}),
    ...(d.slice ? { slice: d.slice } : {}),
    ...(d.request ? { request: d.request } : {}),
    ...(d.total ? { total: d.total } : {}),
    keepAliveMs: d.keepAliveMs,
    openedAt: at,
    lastActivityAt: at,
    extensions: 0,
    ...(e.correlationId ? { correlationId: e.correlationId } : {}),
  };
}

/** Folds one `user.*` fact. */
export function evolveUser(s: UserState | undefined, e: FactLike): UserState | undefined {
  if (s && e.seq <= s.seq) return s;
  const d = e.data as { username: string; realm: string; roles?: string[]; enabled?: boolean };
  const base: UserState = s ?? { id: e.aggregateId, seq: 0, username: d.username, realm: d.realm, roles: [], enabled: true, deleted: false };
  switch (e.type) {
    case 'user.created':
    case 'user.updated':
      return { ...base, seq: e.seq, realm: d.realm, roles: d.roles ?? base.roles, enabled: d.enabled ?? base.enabled, deleted: false };
    case 'user.password_changed':
      return { ...base, seq: e.seq, passwordChangedAt: Date.parse(e.time) };
    case 'user.enabled':
    case 'user.disabled':
      return { ...base, seq: e.seq, enabled: e.type === 'user.enabled' };
    case 'user.deleted':
      return { ...base, seq: e.seq, deleted: true };
    default:
      return s && { ...s, seq: e.seq };
  }
}

/** Folds one `role.*` fact (roles and role mappings). */
export function evolveRole(s: RoleState | undefined, e: FactLike): RoleState | undefined {
  if (s && e.seq <= s.seq) return s;
  const d = e.data as { name: string; application?: string; mapping?: { roles?: string[] } };
  const kind = e.type.startsWith('role.mapping_') ? 'mapping' : e.type.startsWith('role.privilege_') ? 'privilege' : 'role';
  const deleted = e.type.endsWith('deleted');
  const name = kind === 'privilege' ? `${d.application}/${d.name}` : d.name;
  return { id: e.aggregateId, seq: e.seq, name, kind, deleted, ...(d.mapping?.roles ? { roles: d.mapping.roles } : s?.roles ? { roles: s.roles } : {}) };
}

/** An async search as its facts describe it (actors/contexts/asyncSearches.ts runs it). */
export interface AsyncSearchState {
  id: string;
  seq: number;
  status: 'running' | 'completed' | 'expired' | 'deleted' | 'cancelled';
  /** ES's id (base64 of the doc id and the task id), as the client knows it. */
  esId: string;
  /** The node that runs it (the submitter, or the last adopter). */
  node?: string;
  owner?: Owner;
  indices: string[];
  /** The search as submitted (URL parameters and body text): an adopter runs it again if it was still running. */
  request: { params: Record<string, string>; query: Record<string, string>; body?: string };
  keepAliveMs: number;
  submittedAt: number;
  expiresAt: number;
  completedAt?: number;
  completion?: { status: number; partial: boolean; shards: { total: number; successful: number; skipped: number; failed: number } };
  extensions: number;
  endedAt?: number;
  by?: string;
  correlationId?: string;
}

const ASYNC_END: Record<string, AsyncSearchState['status']> = { expired: 'expired', deleted: 'deleted', cancelled: 'cancelled' };

/** Folds one `asyncsearch.*` fact (pure). */
export function evolveAsyncSearch(s: AsyncSearchState | undefined, e: FactLike): AsyncSearchState | undefined {
  if (s && e.seq <= s.seq) return s;
  const dot = e.type.indexOf('.');
  const fact = e.type.slice(dot + 1);
  const at = Date.parse(e.time);
  if (fact === 'submitted') {
    if (s) return s;
    const d = e.data as { keepAliveMs: number; esId: string; node?: string; owner?: Owner; indices?: string[]; request: AsyncSearchState['request']; submittedAt?: number };
    const submittedAt = d.submittedAt ?? at;
    return {
      id: e.aggregateId, seq: e.seq, status: 'running', esId: d.esId, ...((d.node ?? e.node) ? { node: d.node ?? e.node } : {}),
      ...(d.owner ? { owner: d.owner } : {}), indices: d.indices ?? [], request: d.request, keepAliveMs: d.keepAliveMs,
      submittedAt, expiresAt: submittedAt + d.keepAliveMs, extensions: 0, ...(e.correlationId ? { correlationId: e.correlationId } : {}),
    };
  }
  if (!s) return s;
  // only the owner speaks for it (as for contexts): a node that lost it may append a stray fact
  if (s.node && e.node && e.node !== s.node && fact !== 'adopted') return s;
  const n: AsyncSearchState = { ...s, seq: e.seq };
  if (fact === 'adopted') return { ...n, node: (e.data as { to: string }).to };
  if (s.status !== 'running' && s.status !== 'completed') return n;
  if (fact === 'completed') return { ...n, status: 'completed', completedAt: at, completion: e.data as AsyncSearchState['completion'] };
  if (fact === 'extended') {
    const keepAliveMs = (e.data as { keepAliveMs: number }).keepAliveMs;
    return { ...n, keepAliveMs, expiresAt: at + keepAliveMs, extensions: s.extensions + 1 };
  }
  const end = ASYNC_END[fact];
  if (!end) return n;
  const by = (e.data as { by?: string }).by;
  return { ...n, status: end, endedAt: at, ...(by ? { by } : {}) };
}

/** Everything the log says, by aggregate then id. */
export interface World {
  scroll: Map<string, ContextState>;
  pit: Map<string, ContextState>;
  token: Map<string, AccessTokenRecord>;
  apikey: Map<string, ApiKeyRecord>;
  servicetoken: Map<string, ServiceTokenRecord>;
  user: Map<string, UserState>;
  role: Map<string, RoleState>;
  /** Cluster nodes, by node id (`node.joined` / `node.left`). */
  node: Map<string, NodeState>;
  asyncsearch: Map<string, AsyncSearchState>;
  /** Facts folded, and facts of aggregates nobody folds (counted, not kept). */
  events: number;
  unknown: number;
  /** `time` of the last fact folded. */
  lastTime?: string;
}

/** The state type of each aggregate in a {@link World}. */
export type StateOf<A extends keyof Folds> = ReturnType<Folds[A]>;

type Folds = {
  scroll: typeof evolveContext;
  pit: typeof evolveContext;
  token: typeof evolveToken;
  apikey: typeof evolveApiKey;
  servicetoken: typeof evolveServiceToken;
  user: typeof evolveUser;
  role: typeof evolveRole;
  node: typeof evolveNode;
  asyncsearch: typeof evolveAsyncSearch;
};

/** The fold of each aggregate. */
export const folds: Folds = {
  scroll: evolveContext,
  pit: evolveContext,
  token: evolveToken,
  apikey: evolveApiKey,
  servicetoken: evolveServiceToken,
  user: evolveUser,
  role: evolveRole,
  node: evolveNode,
  asyncsearch: evolveAsyncSearch,
};

/** A world with nothing in it. */
export function emptyWorld(): World {
  return { scroll: new Map(), pit: new Map(), token: new Map(), apikey: new Map(), servicetoken: new Map(), user: new Map(), role: new Map(), node: new Map(), asyncsearch: new Map(), events: 0, unknown: 0 };
}

/**
 * Folds one fact of any aggregate: `(state, envelope) -> state` through the aggregate's fold.
 * Returns undefined for an aggregate without a fold.
 */
export function evolve(state: unknown, e: FactLike): unknown {
  const a = e.type.slice(0, e.type.indexOf('.')) as keyof Folds;
  const f = folds[a] as ((s: unknown, e: FactLike) => unknown) | undefined;
  return f ? f(state, e) : undefined;
}

/**
 * Folds one fact into `world` in place and returns it. The world owns its maps and context states:
 * copying them per fact would make a long replay slow (take a state out with `structuredClone` to
 * keep it).
 */
export function applyFact(world: World, e: FactLike): World {
  const a = e.type.slice(0, e.type.indexOf('.')) as keyof Folds;
  const f = folds[a] as ((s: unknown, e: FactLike) => unknown) | undefined;
  world.events++;
  world.lastTime = e.time;
  if (!f) {
    world.unknown++;
    return world;
  }
  const map = world[a] as Map<string, unknown>;
  // Contexts are the bulk of a log: fold them in place (the world owns its states).
  const next = a === 'scroll' || a === 'pit' ? applyContext(map.get(e.aggregateId) as ContextState | undefined, e) : f(map.get(e.aggregateId), e);
  if (next !== undefined) map.set(e.aggregateId, next);
  return world;
}

/**
 * Folds a whole log (in log order) into a world.
 *
 * @example
 * const world = foldAll(events);
 * const stillOpen = openContexts(world);
 */
export function foldAll(events: Iterable<FactLike>, world: World = emptyWorld()): World {
  for (const e of events) applyFact(world, e);
  return world;
}

/** {@link foldAll} over an async source (a JetStream read, a file). */
export async function foldAllAsync(events: AsyncIterable<FactLike>, world: World = emptyWorld()): Promise<World> {
  for await (const e of events) applyFact(world, e);
  return world;
}

/** Scroll contexts and PITs whose last fact left them open: what a restarted node would revive. */
export function openContexts(world: World): ContextState[] {
  return [...world.scroll.values(), ...world.pit.values()].filter((c) => c.status === 'open');
}

/**
 * The earliest time an open context can expire: its last recorded activity plus keep-alive. A scroll
 * records every use, so past this it is overdue; a PIT searched without `keep_alive` may live longer.
 */
export const earliestExpiry = (c: ContextState): number => c.lastActivityAt + c.keepAliveMs;
