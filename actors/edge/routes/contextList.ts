import type { EsRequest } from '../../wire/rest';
import type { ContextKind, ContextState } from '../../../streams/evolve';
import { callNodes } from '../../cluster/nodeRpc';
import { isSuperuser, mayUse, type PagingServices } from '../../search';

/** What the owner node knows of one of its contexts that the log does not: its live expiry. */
export interface LiveContext {
  id: string;
  keepAliveMs: number;
  /** null while in use. */
  expiresAt: number | null;
  inUse: boolean;
  /** Pages served so far (a scroll's first page counts). */
  pages: number;
}

/** The `contexts` node op: this node's own open contexts, as its timers see them. */
export function liveContexts(s: PagingServices, kind?: ContextKind): LiveContext[] {
  return s.contexts.list(kind).map((r) => ({ id: r.id, keepAliveMs: r.keepAliveMs, expiresAt: s.contexts.expiresAt(r), inUse: r.inUse > 0, pages: r.kind === 'scroll' ? r.uses + 1 : r.uses }));
}

/**
 * The live expiry of open contexts, asked of their owner nodes (one request per owner; this node's
 * own from memory). A context whose owner does not answer is absent: the caller falls back on the
 * log (last activity + keep-alive).
 */
export async function liveOf(s: PagingServices, states: ContextState[]): Promise<Map<string, LiveContext>> {
  const out = new Map<string, LiveContext>();
  const owners = new Set(states.map((st) => st.node).filter((n): n is string => !!n && n !== s.membership.id));
  for (const l of liveContexts(s)) out.set(l.id, l);
  if (owners.size) {
    const answers = await callNodes<LiveContext[]>(s.ctx.nc, [...owners], 'contexts', undefined, 2_000);
    for (const a of answers.values()) if (a.ok) for (const l of a.result) out.set(l.id, l);
  }
  return out;
}

/**
 * `GET /_scroll` and `GET /_pit` (our extensions): the open contexts of the whole cluster the caller
 * may see (its own; every one for a superuser), from the lifecycle log, with their live expiry.
 */
export async function listContexts(s: PagingServices, req: EsRequest, kind: ContextKind) {
  const now = Date.now();
  const states = s.directory.open(kind).filter((st) => isSuperuser(req) || mayUse(s, req, st.owner));
  const live = await liveOf(s, states);
  return states.map((st) => {
    const l = live.get(st.id);
    const exp = l ? l.expiresAt : st.lastActivityAt + st.keepAliveMs;
    return {
      id: kind === 'pit' ? s.ids.pitId(st.id) : st.id,
      ...(kind === 'pit' ? { context_id: st.id } : {}),
      indices: st.indices,
      owner: st.owner ?? null,
      node: st.node ?? null,
      shards: st.shards,
      created: new Date(st.openedAt).toISOString(),
      age_in_millis: now - st.openedAt,
      keep_alive: `${l?.keepAliveMs ?? st.keepAliveMs}ms`,
      expires_at: exp === null ? null : new Date(exp).toISOString(),
    };
  });
}
