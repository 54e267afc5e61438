import { EsError, allShardsFailed, searchContextMissing } from '../wire/esErrors';
import type { EsRequest } from '../wire/rest';
import type { ContextHandle } from '../contexts';
import type { PagingServices } from './services';

/**
 * Using a scroll or PIT context wherever its owner node runs (ES `SearchService.findReaderContext`
 * and `ReaderContext` use): who may use it, the 404 when it is gone, and the log it needs to open.
 */

type Caller = Pick<EsRequest, 'auth' | 'opaqueId'>;

/** The caller holds the built-in `superuser` role (sees every context in the listing extensions). */
export function isSuperuser(req: Pick<EsRequest, 'auth'>): boolean {
  return !!req.auth?.user.roles.includes('superuser');
}

/**
 * ES's 404 for a missing context, with why it is gone when we know. Who cleared it is told only to
 * that user (or to anyone when security is off): another user learns nothing about the owner.
 */
export function contextMissing(s: PagingServices, id: string, phase = 'query', req?: Pick<EsRequest, 'auth'>): EsError {
  // This node's own memory, else what the log says (a context another node owned)
  const st = s.directory.get(id);
  const t = s.contexts.tombstone(id) ?? (st && st.status !== 'open' ? { why: st.status, at: st.endedAt ?? st.lastActivityAt, detail: st.reason, by: st.by } : undefined);
  const showBy = t?.by && (!s.security || (req && s.security.ownerOf(req.auth)?.username === t.by));
  const why = t
    ? `${t.why}${t.detail ? ` (${t.detail})` : ''} at ${new Date(t.at).toISOString()}${showBy ? ` by [${t.by}]` : ''}`
    : 'never existed or no longer remembered';
  const e = searchContextMissing(id, why);
  return allShardsFailed([e], phase, [{ shard: -1, index: null, reason: { type: e.type, reason: e.message } }]);
}

/**
 * Starts a use of a live context the caller owns, wherever its owner node runs (ContextService), or
 * throws the 404. `keepAliveMs` extends it (undefined: as it is).
 */
export async function useContext(s: PagingServices, req: Caller, id: string, kind: 'scroll' | 'pit', keepAliveMs: number | undefined): Promise<ContextHandle> {
  const h = await s.contextService.acquire(id, kind, {
    keepAliveMs,
    correlationId: req.opaqueId,
    mayUse: (owner) => mayUse(s, req, owner),
    gone: () => contextMissing(s, id, 'query', req),
  });
  if (!h) throw contextMissing(s, id, 'query', req);
  return h;
}

/** Whether the caller may use (or free) a context opened by `owner`. */
export function mayUse(s: PagingServices, req: Pick<EsRequest, 'auth'>, owner: { username: string; realm: string } | undefined): boolean {
  return !s.security || s.security.sameOwner(owner, s.security.ownerOf(req.auth));
}

/**
 * A scroll or PIT cannot be opened without the lifecycle log (its `opened` fact must be logged
 * before the client gets its id): while the node is cut off from NATS, ES's 503 at once.
 */
export function requireLog(s: PagingServices): void {
  if (!s.shards.connected) {
    throw new EsError('no_shard_available_action_exception', 503, 'the node is not connected to NATS: search contexts cannot be opened');
  }
}
