import type { NatsConnection } from '@nats-io/transport-node';
import type { Owner } from '../../streams';
import { foldLog } from '../../streams/factReader';
import type { ServiceTokenRecord } from '../../machines/serviceToken.machine';
import type { ContextRecord, ContextRegistry } from '../contexts/registry';
import type { SecurityServices } from '../security/services';
import { SERVICE_ACCOUNTS } from '../security/serviceAccountDefs';
import { keepAliveLimits, type PagingServices } from '../search';
import { liveOf, type LiveContext } from '../edge/routes/contextList';
import { clusterNodes } from '../edge/views/nodes';
import { shardCopies } from '../edge/views/health';
import type { ContextState } from '../../streams/evolve';
import { seesApiKey, type Access } from './access';
import type { LastUse } from './lastUse';

/** Rows of a credential list beyond this are counted, not sent. */
export const MAX_ROWS = 1000;

const ownerKey = (o: Owner | undefined) => (o ? `${o.username}\u0000${o.realm}` : '');

/** One open scroll or PIT as the "Now" table shows it. */
export function contextRow(c: ContextRegistry, rec: ContextRecord, node: { id: string; name: string }, now: number) {
  return {
    id: rec.id,
    kind: rec.kind,
    owner: rec.owner ?? null,
    indices: rec.indices,
    shards: rec.shards.length,
    created: rec.createdAt,
    age_ms: now - rec.createdAt,
    keep_alive_ms: rec.keepAliveMs,
    expires_at: c.expiresAt(rec),
    in_use: rec.inUse > 0,
    // The first page of a scroll is served by the search that opened it.
    pages: rec.kind === 'scroll' ? rec.uses + 1 : rec.uses,
    node,
    ...(rec.opened?.slice ? { slice: rec.opened.slice } : {}),
  };
}

/**
 * The "Now" view of contexts: every open scroll and PIT of the cluster (the lifecycle log), with
 * their live expiry from their owner nodes, and per owner how many shard-level scroll contexts it
 * holds on this node against `search.max_open_scroll_context` (a per-node limit, as in ES: one
 * owner's share shows who is using it up).
 */
export async function contextsView(s: PagingServices, now = Date.now()) {
  const node = { id: s.ctx.node.id, name: s.ctx.node.name };
  const max = keepAliveLimits(s).maxOpenScroll;
  const local = s.contexts.list();
  const owners = new Map<string, { owner: Owner | null; scrolls: number; scroll_shard_contexts: number; pits: number }>();
  for (const rec of local) {
    const k = ownerKey(rec.owner);
    let o = owners.get(k);
    if (!o) owners.set(k, (o = { owner: rec.owner ?? null, scrolls: 0, scroll_shard_contexts: 0, pits: 0 }));
    if (rec.kind === 'scroll') {
      o.scrolls++;
      o.scroll_shard_contexts += rec.shards.length;
    } else o.pits++;
  }
  const mine = new Set(local.map((r) => r.id));
  const others = s.directory.open().filter((st) => !mine.has(st.id));
  const live = await liveOf(s, others);
  const names = new Map(clusterNodes(s).map((n) => [n.id, n.name]));
  const rows = [
    ...local.map((rec) => contextRow(s.contexts, rec, node, now)),
    ...others.map((st) => remoteRow(st, live.get(st.id), { id: st.node ?? '', name: names.get(st.node ?? '') ?? st.node ?? '' }, now)),
    // async searches (running or kept): their expiry is in the log; progress when they run here
    ...(s.asyncSearches?.open() ?? []).map((a) => ({
      id: a.id, kind: 'async_search', owner: a.owner ?? null, indices: a.indices, shards: a.completion?.shards.total ?? s.asyncSearches!.progressOf(a.id)?.total ?? 0,
      created: a.submittedAt, age_ms: now - a.submittedAt, keep_alive_ms: a.keepAliveMs, expires_at: a.expiresAt, in_use: a.status === 'running',
      pages: null, node: { id: a.node ?? '', name: names.get(a.node ?? '') ?? a.node ?? '' }, status: a.status,
    })),
  ];
  return {
    now,
    node,
    limit: { setting: 'search.max_open_scroll_context', max, open_scroll_shard_contexts: s.contexts.shardContexts('scroll') },
    total: rows.length,
    // The oldest first: a leak shows as old contexts that stay.
    contexts: rows.sort((a, b) => a.created - b.created).slice(0, MAX_ROWS),
    owners: [...owners.values()]
      .map((o) => ({ ...o, share: max > 0 ? o.scroll_shard_contexts / max : 0 }))
      .sort((a, b) => b.scroll_shard_contexts - a.scroll_shard_contexts || b.pits - a.pits),
  };
}

/** A context another node owns, as the log tells it plus what its owner said (when it answered). */
function remoteRow(st: ContextState, l: LiveContext | undefined, node: { id: string; name: string }, now: number) {
  return {
    id: st.id,
    kind: st.kind,
    owner: st.owner ?? null,
    indices: st.indices,
    shards: st.shards,
    created: st.openedAt,
    age_ms: now - st.openedAt,
    keep_alive_ms: l?.keepAliveMs ?? st.keepAliveMs,
    expires_at: l ? l.expiresAt : st.lastActivityAt + st.keepAliveMs,
    in_use: l?.inUse ?? false,
    pages: l?.pages ?? null,
    node,
    ...(st.slice ? { slice: st.slice } : {}),
  };
}

/** REST-created service tokens folded from the log (creation, creator), cached briefly. */
export class ServiceTokenIndex {
  private cached?: { at: number; records: ServiceTokenRecord[] };
  constructor(private readonly nc: NatsConnection, private readonly ttlMs = 5_000) {}

  async records(now = Date.now()): Promise<ServiceTokenRecord[]> {
    if (this.cached && now - this.cached.at < this.ttlMs) return this.cached.records;
    const world = await foldLog(this.nc, { filterSubject: 'es.v1.evt.servicetoken.>' });
    this.cached = { at: now, records: [...world.servicetoken.values()] };
    return this.cached.records;
  }

  forget(): void {
    this.cached = undefined;
  }
}

/**
 * The "Now" view of credentials, each part only for who may see it (see access.ts): API keys with
 * their expiry and last use on this node, live token pairs, and service account tokens (REST-created
 * and file-backed).
 */
export async function credentialsView(sec: SecurityServices, access: Access, lastUse: LastUse, serviceTokens: ServiceTokenIndex, now = Date.now()) {
  const keys = [];
  let totalKeys = 0;
  if (access.apiKeysAll || access.apiKeysOwn) {
    for (const r of sec.apiKeys.records.values()) {
      if (!seesApiKey(access, r.owner)) continue;
      totalKeys++;
      keys.push(r);
    }
    keys.sort((a, b) => b.creation - a.creation);
  }
  const api_keys = keys.slice(0, MAX_ROWS).map((r) => ({
    id: r.keyId,
    name: r.name,
    owner: { username: r.owner.username, realm: r.owner.realm },
    creation: r.creation,
    expiration: r.expiration ?? null,
    status: r.status === 'active' && r.expiration !== undefined && r.expiration <= now ? 'expired' : r.status,
    invalidation: r.invalidation ?? null,
    last_used: lastUse.get(`apikey:${r.keyId}`) ?? null,
  }));

  const pairs = access.tokens
    ? sec.tokens
        .activeFor()
        .sort((a, b) => b.createdAt - a.createdAt)
        .slice(0, MAX_ROWS)
        .map((t) => ({
          id: t.tokenId,
          username: t.subject.username,
          realm: t.subject.realm.name,
          grant_type: t.grantType,
          created: t.createdAt,
          access_expires: t.accessExpiresAt,
          refresh_expires: t.refreshExpiresAt ?? null,
          status: t.status,
          access_invalidated: t.accessInvalidated,
          refresh_invalidated: t.refreshInvalidated,
          last_used: lastUse.get(`token:${t.tokenId}`) ?? null,
        }))
    : [];

  const service = [];
  if (access.serviceTokens) {
    const byName = new Map((await serviceTokens.records(now)).filter((r) => r.status === 'active').map((r) => [`${r.account}/${r.name}`, r]));
    for (const account of Object.keys(SERVICE_ACCOUNTS)) {
      for (const name of sec.serviceAccounts.indexTokenNames(account)) {
        const r = byName.get(`${account}/${name}`);
        service.push({
          account,
          name,
          source: 'index',
          creation: r?.creation ?? null,
          creator: r?.creator ?? null,
          last_used: lastUse.get(`servicetoken:${account}/${name}`) ?? null,
        });
      }
    }
    for (const qualified of sec.serviceAccounts.files.tokens.keys()) {
      const cut = qualified.lastIndexOf('/');
      const account = qualified.slice(0, cut);
      service.push({ account, name: qualified.slice(cut + 1), source: 'file', creation: null, creator: null, last_used: lastUse.get(`servicetoken:${qualified}`) ?? null });
    }
  }

  return {
    now,
    api_keys: { visible: access.apiKeysAll ? 'all' : access.apiKeysOwn ? 'own' : 'none', total: totalKeys, keys: api_keys },
    tokens: { visible: access.tokens, total: pairs.length, pairs },
    service_tokens: { visible: access.serviceTokens, tokens: service },
  };
}

/** A shard copy as the Cluster tab lists it. */
export interface ShardCopy {
  index: string;
  shard: number;
  primary: boolean;
  state: 'STARTED' | 'INITIALIZING' | 'RELOCATING' | 'UNASSIGNED';
  node: string | null;
}

export type ShardCopySource = () => ShardCopy[];

/** Where shard copies live: the allocation the cluster state holds, as `_cat/shards` shows it. */
export function localShardCopies(s: PagingServices): ShardCopySource {
  return () => {
    const nodes = clusterNodes(s);
    const out: ShardCopy[] = [];
    for (const name of s.cluster.names()) {
      const idx = s.cluster.get(name);
      if (!idx) continue;
      for (let n = 0; n < idx.settings.numberOfShards; n++) {
        for (const c of shardCopies(idx, n, nodes)) {
          out.push({ index: name, shard: n, primary: c.primary, state: c.relocatingFrom ? 'RELOCATING' : c.state, node: c.node?.id ?? null });
        }
      }
    }
    return out;
  };
}

/** Nodes with their shard copies and open contexts, and the copies no node holds. */
export function clusterView(s: PagingServices, copies: ShardCopySource) {
  const all = copies();
  const me = s.ctx.node;
  const open = s.directory.open();
  const count = (node: string, kind: 'scroll' | 'pit') => open.filter((st) => st.node === node && st.kind === kind).length;
  const known = clusterNodes(s);
  const nodes = known.map((n) => ({
    id: n.id,
    name: n.name,
    host: n.host,
    roles: n.roles,
    local: n.local,
    contexts: { scroll: count(n.id, 'scroll'), pit: count(n.id, 'pit') },
    shards: all.filter((c) => c.node === n.id),
  }));
  // Copies on nodes this one does not know (yet) are listed under their node id.
  const ids = new Set(known.map((n) => n.id));
  const others = new Map<string, ShardCopy[]>();
  for (const c of all) if (c.node && !ids.has(c.node)) others.set(c.node, [...(others.get(c.node) ?? []), c]);
  for (const [id, shards] of others) nodes.push({ id, name: id, host: '', roles: [], local: false, contexts: { scroll: count(id, 'scroll'), pit: count(id, 'pit') }, shards });
  return { cluster_name: me.clusterName, nodes, unassigned: all.filter((c) => c.node === null) };
}
