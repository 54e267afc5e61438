import type { Owner } from '../../streams';
import type { FactLike } from '../../streams/evolve';

/**
 * What of a fact's data the console shows. Facts never hold a secret, but some hold what only the
 * node needs: salted hashes (`hash`, `accessHash`, `refreshHash`, `passwordHash`), the sealed
 * superseding token pair, pinned searchers and the scroll's request text, role descriptors and user
 * metadata. The console keeps an allow-list per aggregate, so a field added to a fact later stays
 * hidden until someone decides it may be shown.
 */
const ALLOWED: Record<string, readonly string[]> = {
  scroll: ['indices', 'keepAliveMs', 'shards', 'slice', 'reason', 'by', 'total'],
  pit: ['indices', 'keepAliveMs', 'shards', 'reason', 'by'],
  // not `request` (the search as sent) nor `esId` (what reads the stored result)
  asyncsearch: ['indices', 'keepAliveMs', 'status', 'partial', 'shards', 'by', 'from', 'to'],
  apikey: ['name', 'keyType', 'creation', 'expiration', 'invalidation', 'at'],
  token: ['grantType', 'createdAt', 'accessExpiresAt', 'refreshExpiresAt', 'supersedes', 'refreshedAt', 'supersededBy', 'access', 'refresh', 'at'],
  servicetoken: ['account', 'name', 'creation', 'at'],
  user: ['username', 'realm', 'roles', 'enabled'],
  role: ['name'],
  node: ['name', 'host'],
};

/** Principals inside facts, reduced to who they are. */
const PRINCIPALS = ['owner', 'subject', 'client', 'creator'] as const;

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function principal(v: unknown): Owner | undefined {
  if (!isObj(v) || typeof v.username !== 'string') return undefined;
  const realm = isObj(v.realm) ? v.realm.name : v.realm;
  return { username: v.username, realm: typeof realm === 'string' ? realm : '' };
}

/** The shown part of a fact's data (see {@link ALLOWED}); `type` is the fact's (`apikey.updated`). */
export function redactData(type: string, data: unknown): Record<string, unknown> {
  const aggregate = type.slice(0, type.indexOf('.'));
  const out: Record<string, unknown> = {};
  if (!isObj(data)) return out;
  for (const k of ALLOWED[aggregate] ?? []) if (data[k] !== undefined) out[k] = data[k];
  for (const k of PRINCIPALS) {
    const p = principal(data[k]);
    if (p) out[k] = p;
  }
  // Changed descriptors or metadata are named, not shown.
  const changed = ['roleDescriptors', 'limitedBy', 'metadata', 'descriptor', 'mapping'].filter((k) => data[k] !== undefined);
  if (changed.length && /\.(updated|mapping_updated)$/.test(type)) out.changed = changed;
  return out;
}

/** One fact as the console shows it (feed entries, credential timelines). */
export interface FactView {
  id?: string;
  type: string;
  aggregate: string;
  aggregate_id: string;
  seq: number;
  time: string;
  correlation_id?: string;
  owner: Owner | null;
  indices: string[];
  data: Record<string, unknown>;
}

/** A fact with its owner and indices resolved (facts after `opened`/`created` do not repeat them). */
export function factView(e: FactLike & { id?: string }, resolved: { owner?: Owner; indices?: string[] } = {}): FactView {
  const aggregate = e.type.slice(0, e.type.indexOf('.'));
  const data = redactData(e.type, e.data);
  const owner = resolved.owner ?? ownerIn(aggregate, e.data) ?? null;
  const indices = resolved.indices ?? (Array.isArray((e.data as { indices?: unknown })?.indices) ? ((e.data as { indices: string[] }).indices) : []);
  return {
    ...(e.id ? { id: e.id } : {}),
    type: e.type,
    aggregate,
    aggregate_id: e.aggregateId,
    seq: e.seq,
    time: e.time,
    ...(e.correlationId ? { correlation_id: e.correlationId } : {}),
    owner,
    indices,
    data,
  };
}

/** The principal a fact names, by aggregate: context/key owner, token subject, service token account. */
export function ownerIn(aggregate: string, data: unknown): Owner | undefined {
  if (!isObj(data)) return undefined;
  switch (aggregate) {
    case 'scroll':
    case 'pit':
    case 'asyncsearch':
    case 'apikey':
      return principal(data.owner);
    case 'token':
      return principal(data.subject);
    case 'servicetoken':
      return typeof data.account === 'string' ? { username: data.account, realm: '_service_account' } : undefined;
    case 'user':
      return typeof data.username === 'string' ? { username: data.username, realm: typeof data.realm === 'string' ? data.realm : '' } : undefined;
    default:
      return undefined;
  }
}
