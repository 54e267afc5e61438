import { formatTimeValue as formatKeepAlive } from '../../actors/wire/timeValue';
import type { Envelope } from '../../streams';

type D = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- data of many fact shapes

const iso = (ms: unknown) => (typeof ms === 'number' ? new Date(ms).toISOString() : String(ms));
const who = (o: D | undefined) => (o ? `${o.username}@${o.realm}` : undefined);

/** The few fields worth a glance, per fact type (never hashes or ciphertext). */
function keyData(type: string, d: D, appendedBy: string | undefined): Array<[string, unknown]> {
  const fact = type.slice(type.indexOf('.') + 1);
  switch (type) {
    case 'scroll.opened':
    case 'pit.opened':
      return [
        ['indices', (d.indices ?? []).join(',')], ['shards', d.shards], ['keep_alive', formatKeepAlive(d.keepAliveMs)], ['owner', who(d.owner)], ['slice', d.slice && `${d.slice.id}/${d.slice.max}`],
        // The owner node; shown when it is not the appending node (node=…), which it normally is.
        ['owner_node', d.node !== undefined && d.node !== appendedBy ? d.node : undefined],
      ];
    case 'scroll.adopted':
    case 'pit.adopted':
      return [['from', d.from === '' ? '(no owner)' : d.from], ['to', d.to]];
    case 'node.joined':
      return [['name', d.name], ['http', d.http_address], ['version', d.version], ['started', d.started_at !== undefined ? iso(d.started_at) : undefined]];
    case 'node.left':
      return [['reason', d.reason], ['by', d.by], ['silent', typeof d.silent_ms === 'number' ? `${(d.silent_ms / 1000).toFixed(1)}s` : undefined]];
    case 'scroll.extended':
    case 'pit.extended':
      return [['keep_alive', formatKeepAlive(d.keepAliveMs)]];
    case 'scroll.cleared':
    case 'pit.closed':
      return [['by', d.by]];
    case 'token.created':
      return [['grant', d.grantType], ['user', d.subject?.username], ['access_expires', iso(d.accessExpiresAt)], ['refresh_expires', d.refreshExpiresAt && iso(d.refreshExpiresAt)], ['supersedes', d.supersedes]];
    case 'token.refreshed':
      return [['superseded_by', d.supersededBy]];
    case 'token.invalidated':
      return [['access', d.access], ['refresh', d.refresh]];
    case 'apikey.created':
      return [['name', d.name], ['owner', who(d.owner)], ['expiration', d.expiration && iso(d.expiration)]];
    case 'apikey.updated':
      return [['expiration', d.expiration === null ? 'none' : d.expiration && iso(d.expiration)], ['metadata', d.metadata && 'changed'], ['role_descriptors', d.roleDescriptors && 'changed']];
    case 'servicetoken.created':
      return [['token', `${d.account}/${d.name}`], ['creator', who(d.creator)]];
    default:
      if (fact === 'released') return [['reason', d.reason]];
      if (type.startsWith('user.')) return [['user', d.username], ['realm', d.realm], ['roles', d.roles?.join(',')]];
      if (type.startsWith('role.')) return [['name', d.name]];
      return [];
  }
}

/**
 * One readable line per fact: time, type, aggregate id, key data, correlation id, and the node that
 * appended it (the envelope's `node`; absent in logs written before nodes clustered).
 *
 * @example
 * formatFact(env) // '2024-05-01T10:00:00.000Z  scroll.extended     5d7e…  #2  node=n0dE… keep_alive=1m'
 */
export function formatFact(e: Pick<Envelope, 'time' | 'type' | 'aggregateId' | 'seq' | 'data' | 'correlationId' | 'node'>): string {
  const kv = keyData(e.type, (e.data ?? {}) as D, e.node)
    .filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => `${k}=${v}`);
  if (e.node) kv.unshift(`node=${e.node}`);
  if (e.correlationId) kv.push(`opaque_id=${e.correlationId}`);
  return `${e.time}  ${e.type.padEnd(22)} ${e.aggregateId}  #${e.seq}${kv.length ? '  ' + kv.join(' ') : ''}`;
}
