import { v5 as uuidv5 } from 'uuid';
import { EsError } from '../wire/esErrors';
import { makeEnvelope, type Owner } from '../../streams';
import type { EsRequest } from '../wire/rest';
import { mayUse } from './contextUse';
import type { PagingServices } from './services';

/**
 * Per-principal context quotas (ours; README Differences): `search.max_open_contexts_per_user` (0 =
 * off, the default; dynamic) caps the scrolls + PITs + async searches one principal holds open across
 * the cluster (the lifecycle log's folds on this node), so a client that leaks contexts runs into its
 * own limit instead of `search.max_open_scroll_context`, which every user shares. The refusal is a
 * 429 with `Retry-After` (until the principal's first context expires) naming its open contexts, and
 * a `quota.rejected` fact on the lifecycle log.
 */

export const QUOTA_SETTING = 'search.max_open_contexts_per_user';
const NS = '3d1f2b6a-7c4e-4a9b-8e21-5f0c9d7a6b13';
const LISTED = 10;

/** The open contexts of the caller's principal: kind, id, indices, expiry. */
export function openContextsOf(s: PagingServices, req: Pick<EsRequest, 'auth'>) {
  const out: Array<{ kind: string; id: string; indices: string[]; expiresAt: number }> = [];
  for (const st of s.directory.open()) {
    if (mayUse(s, req, st.owner)) out.push({ kind: st.kind, id: st.id, indices: st.indices, expiresAt: st.lastActivityAt + st.keepAliveMs });
  }
  for (const a of s.asyncSearches?.open() ?? []) {
    if (mayUse(s, req, a.owner)) out.push({ kind: 'async_search', id: a.id, indices: a.indices, expiresAt: a.expiresAt });
  }
  return out;
}

/** Throws the quota's 429 when the caller already holds its limit of open contexts (`what` is being opened). */
export function checkContextQuota(s: PagingServices, req: Pick<EsRequest, 'auth' | 'opaqueId'>, what: 'scroll' | 'pit' | 'async_search'): void {
  const limit = s.ctx.settings.num(QUOTA_SETTING, 0);
  if (!(limit > 0)) return;
  const open = openContextsOf(s, req);
  if (open.length < limit) return;
  const owner: Owner | undefined = s.security?.ownerOf(req.auth);
  const who = owner ? `${owner.username}` : '_anonymous';
  const byKind = (k: string) => open.filter((c) => c.kind === k).length;
  const soonest = Math.min(...open.map((c) => c.expiresAt));
  const retryAfter = Math.max(1, Math.ceil((soonest - Date.now()) / 1000));
  const listed = [...open].sort((a, b) => a.expiresAt - b.expiresAt).slice(0, LISTED)
    .map((c) => `${c.kind} [${c.id}] on [${c.indices.join(',')}] expiring at ${new Date(c.expiresAt).toISOString()}`);
  const reason =
    `Trying to open a ${what.replace('_', ' ')} for user [${who}] who holds [${open.length}] open search contexts ` +
    `(scroll [${byKind('scroll')}], point in time [${byKind('pit')}], async search [${byKind('async_search')}]); the limit is [${limit}]. ` +
    `Open: ${listed.join('; ')}${open.length > LISTED ? `; and ${open.length - LISTED} more` : ''}. ` +
    `Clear some, or change the [${QUOTA_SETTING}] setting.`;
  // the refusal is a fact too: who hit the quota, when, with how many open (never a credential)
  const principal = uuidv5(`${owner?.realm ?? ''}/${who}`, NS);
  void s.ctx.bus
    .append(makeEnvelope({ type: 'quota.rejected', aggregateId: principal, seq: Date.now(), data: { owner: owner ?? null, kind: what, open: open.length, limit }, correlationId: req.opaqueId, node: s.ctx.node.id }))
    .catch(() => undefined);
  throw new EsError('too_many_open_contexts_exception', 429, reason, { header: { 'Retry-After': [String(retryAfter)] } });
}
