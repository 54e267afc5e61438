import { formatTimeValue as formatKeepAlive } from '../actors/wire/timeValue';
import { tokenDocExpiresAt } from '../machines/accessToken.machine';
import { earliestExpiry, type AsyncSearchState, type ContextState, type NodeState, type World } from './evolve';
import type { ActorResult } from './machineReplay';

/** One node, context or credential as printed by `replay` (never a hash, ciphertext or secret). */
export interface StateRow {
  aggregate: string;
  id: string;
  status: string;
  /** Machine state after the replay, when checked (`active.idle`, `diverged`, `partial`…). */
  machine?: string;
  fields: Record<string, string | number | boolean>;
  /** What a reader should know (overdue keep-alive, past expiration). */
  note?: string;
}

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

function compact(o: Record<string, string | number | boolean | undefined | null>): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined && v !== null && v !== '') out[k] = v;
  return out;
}

function contextRow(c: ContextState, nowMs: number | undefined): StateRow {
  const overdue = c.status === 'open' && nowMs !== undefined && c.kind === 'scroll' && earliestExpiry(c) < nowMs;
  return {
    aggregate: c.kind,
    id: c.id,
    status: c.status,
    fields: compact({
      indices: c.indices.join(','),
      shards: c.shards,
      owner: c.owner && `${c.owner.username}@${c.owner.realm}`,
      node: c.node,
      keep_alive: formatKeepAlive(c.keepAliveMs),
      opened: iso(c.openedAt),
      last_activity: c.extensions ? iso(c.lastActivityAt) : undefined,
      extensions: c.extensions || undefined,
      ended: iso(c.endedAt),
      reason: c.reason,
    }),
    ...(overdue ? { note: `keep-alive elapsed at ${iso(earliestExpiry(c))}; no expiry recorded yet` } : {}),
  };
}

/** An async search: running or kept (its result stored), or how it ended; never its request or ES id. */
function asyncSearchRow(a: AsyncSearchState, nowMs: number | undefined): StateRow {
  const overdue = (a.status === 'running' || a.status === 'completed') && nowMs !== undefined && a.expiresAt < nowMs;
  return {
    aggregate: 'asyncsearch',
    id: a.id,
    status: a.status,
    fields: compact({
      indices: a.indices.join(','),
      owner: a.owner && `${a.owner.username}@${a.owner.realm}`,
      node: a.node,
      keep_alive: formatKeepAlive(a.keepAliveMs),
      submitted: iso(a.submittedAt),
      expires: iso(a.expiresAt),
      completed: iso(a.completedAt),
      completion_status: a.completion?.status,
      partial: a.completion ? a.completion.partial : undefined,
      extensions: a.extensions || undefined,
      ended: iso(a.endedAt),
      by: a.by,
    }),
    ...(overdue ? { note: `keep-alive elapsed at ${iso(a.expiresAt)}; no expiry recorded yet` } : {}),
  };
}

/** A cluster node: its last join (name, HTTP address), or its last leave (why, and who noticed). */
function nodeRow(n: NodeState): StateRow {
  return {
    aggregate: 'node',
    id: n.id,
    status: n.status,
    fields: compact({
      name: n.name,
      http: n.httpAddress,
      version: n.version,
      joins: n.joins,
      joined: iso(n.joinedAt),
      left: iso(n.leftAt),
      reason: n.reason,
      by: n.by,
      silent_ms: n.silentMs,
    }),
  };
}

/**
 * Rows for every node, context and credential in `world`. With `nowMs` (the `--at` moment, or the end of
 * the log), open scrolls past their keep-alive and credentials past their expiration get a note.
 */
export function stateRows(world: World, opts: { nowMs?: number; machines?: ActorResult[] } = {}): StateRow[] {
  const now = opts.nowMs;
  const rows: StateRow[] = [];
  for (const n of world.node.values()) rows.push(nodeRow(n));
  for (const c of world.scroll.values()) rows.push(contextRow(c, now));
  for (const c of world.pit.values()) rows.push(contextRow(c, now));
  for (const a of world.asyncsearch.values()) rows.push(asyncSearchRow(a, now));
  for (const t of world.token.values()) {
    const end = tokenDocExpiresAt(t);
    rows.push({
      aggregate: 'token',
      id: t.tokenId,
      status: t.status,
      fields: compact({
        user: t.subject?.username,
        grant: t.grantType,
        created: iso(t.createdAt),
        access_expires: iso(t.accessExpiresAt),
        refresh_expires: iso(t.refreshExpiresAt),
        access_invalidated: t.accessInvalidated || undefined,
        refresh_invalidated: t.refreshInvalidated || undefined,
        superseded_by: t.supersededBy,
      }),
      ...((t.status === 'active' || t.status === 'refreshed') && now !== undefined && end <= now ? { note: `past expiration (${iso(end)})` } : {}),
    });
  }
  for (const k of world.apikey.values()) {
    rows.push({
      aggregate: 'apikey',
      id: k.keyId,
      status: k.status,
      fields: compact({ name: k.name, owner: k.owner && `${k.owner.username}@${k.owner.realm}`, created: iso(k.creation), expiration: iso(k.expiration), invalidated: iso(k.invalidation) }),
      ...(k.status === 'active' && now !== undefined && k.expiration !== undefined && k.expiration <= now ? { note: `past expiration (${iso(k.expiration)})` } : {}),
    });
  }
  for (const s of world.servicetoken.values()) {
    rows.push({ aggregate: 'servicetoken', id: s.tokenId, status: s.status, fields: compact({ token: `${s.account}/${s.name}`, created: iso(s.creation), creator: s.creator && `${s.creator.username}@${s.creator.realm}` }) });
  }
  for (const u of world.user.values()) {
    rows.push({ aggregate: 'user', id: u.id, status: u.deleted ? 'deleted' : u.enabled ? 'enabled' : 'disabled', fields: compact({ username: u.username, realm: u.realm, roles: u.roles.join(',') }) });
  }
  for (const r of world.role.values()) {
    rows.push({ aggregate: 'role', id: r.id, status: r.deleted ? 'deleted' : 'present', fields: compact({ name: r.name, kind: r.kind, roles: r.roles?.join(',') }) });
  }
  if (opts.machines) {
    // Only machine-checked actors: a node's "state" is its fold, already the row's status.
    const byKey = new Map(opts.machines.filter((m) => !m.folded).map((m) => [`${m.aggregate}/${m.id}`, m.state]));
    for (const row of rows) {
      const m = byKey.get(`${row.aggregate}/${row.id}`);
      if (m !== undefined) row.machine = m;
    }
  }
  return rows;
}

/** A row as one line: `scroll  <id>  expired  [machine expired]  indices=… owner=…  (note)`. */
export function formatRow(r: StateRow): string {
  const fields = Object.entries(r.fields).map(([k, v]) => `${k}=${v}`).join(' ');
  const machine = r.machine && r.machine !== r.status ? `  [machine ${r.machine}]` : '';
  return `${r.aggregate.padEnd(12)} ${r.id}  ${r.status.padEnd(11)}${machine}  ${fields}${r.note ? `  (${r.note})` : ''}`;
}
