import type { NatsConnection } from '@nats-io/transport-node';
import type { Owner } from '../../streams';
import { foldLog } from '../../streams/factReader';
import type { ServiceTokenRecord } from '../../machines/serviceToken.machine';
import type { ContextRecord, ContextRegistry } from '../contexts/registry';
import type { SecurityServices } from '../security/services';
import { SERVICE_ACCOUNTS } from '../security/serviceAccountDefs';
import { keepAliveLimits, type PagingServices } from '../edge/routes/search';
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
 * The "Now" view of contexts on this node: every open scroll and PIT, and per owner how many
 * shard-level scroll contexts it holds against `search.max_open_scroll_context` (a node-wide limit:
 * one owner's share shows who is using it up).
 */
export function contextsView(s: PagingServices, now = Date.now()) {
  const node = { id: s.ctx.node.id, name: s.ctx.node.name };
  const max = keepAliveLimits(s).maxOpenScroll;
  const live = s.contexts.list();
  const owners = new Map<string, { owner: Owner | null; scrolls: number; scroll_shard_contexts: number; pits: number }>();
  for (const rec of live) {
    const k = ownerKey(rec.owner);
    let o = owners.get(k);
    if (!o) owners.set(k, (o = { owner: rec.owner ?? null, scrolls: 0, scroll_shard_contexts: 0, pits: 0 }));
    if (rec.kind === 'scroll') {
      o.scrolls++;
      o.scroll_shard_contexts += rec.shards.length;
    } else o.pits++;
  }
  const open = s.contexts.shardContexts('scroll');
  return {
    now,
    node,
    limit: { setting: 'search.max_open_scroll_context', max, open_scroll_shard_contexts: open },
    total: live.length,
    // The oldest first: a leak shows as old contexts that stay.
    contexts: live.sort((a, b) => a.createdAt - b.createdAt).slice(0, MAX_ROWS).map((rec) => contextRow(s.contexts, rec, node, now)),
    owners: [...owners.values()]
      .map((o) => ({ ...o, share: max > 0 ? o.scroll_shard_contexts / max : 0 }))
      .sort((a, b) => b.scroll_shard_contexts - a.scroll_shard_contexts || b.pits - a.pits),
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

/**
 * Where shard copies live. Today one node holds every primary and replicas stay unassigned (as
 * `_cluster/health` reports); a clustered node can pass its allocation here instead.
 */
export type ShardCopySource = () => ShardCopy[];

export function localShardCopies(s: PagingServices): ShardCopySource {
  return () => {
    const out: ShardCopy[] = [];
    for (const name of s.cluster.names()) {
      const idx = s.cluster.get(name);
      if (!idx) continue;
      for (let n = 0; n < idx.settings.numberOfShards; n++) {
        out.push({ index: name, shard: n, primary: true, state: 'STARTED', node: s.ctx.node.id });
        for (let r = 0; r < idx.settings.numberOfReplicas; r++) out.push({ index: name, shard: n, primary: false, state: 'UNASSIGNED', node: null });
      }
    }
    return out;
  };
}

/** Nodes with their shard copies and open contexts, and the copies no node holds. */
export function clusterView(s: PagingServices, copies: ShardCopySource) {
  const all = copies();
  const me = s.ctx.node;
  const nodes = [
    {
      id: me.id,
      name: me.name,
      host: me.host,
      roles: ['data', 'ingest', 'master'],
      local: true,
      contexts: { scroll: s.contexts.list('scroll').length, pit: s.contexts.list('pit').length },
      shards: all.filter((c) => c.node === me.id),
    },
  ];
  // Copies on nodes this one does not know yet (clustering) are listed under their node id.
  const others = new Map<string, ShardCopy[]>();
  for (const c of all) if (c.node && c.node !== me.id) others.set(c.node, [...(others.get(c.node) ?? []), c]);
  for (const [id, shards] of others) nodes.push({ id, name: id, host: '', roles: [], local: false, contexts: { scroll: 0, pit: 0 }, shards });
  return { cluster_name: me.clusterName, nodes, unassigned: all.filter((c) => c.node === null) };
}
