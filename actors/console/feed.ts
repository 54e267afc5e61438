import { PassThrough, type Readable } from 'node:stream';
import { illegalArgument } from '../wire/esErrors';
import { seesAggregate, seesApiKey, type Access } from './access';
import type { FactHub, HubFact } from './factHub';

/** Aggregates a feed may be narrowed to. */
export const AGGREGATES = ['scroll', 'pit', 'asyncsearch', 'apikey', 'token', 'servicetoken', 'user', 'role', 'node'] as const;

/** Server-side narrowing of a feed (`?aggregate=scroll,pit&owner=bob&index=logs-*`). */
export interface FeedFilters {
  aggregates?: Set<string>;
  owner?: string;
  index?: RegExp;
}

const globRe = (g: string) => new RegExp(`^${g.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);

/** Parses the feed's query parameters; ES's 400 for an unknown aggregate. */
export function parseFeedFilters(q: Record<string, string>): FeedFilters {
  const f: FeedFilters = {};
  if (q.aggregate) {
    const list = q.aggregate.split(',').map((x) => x.trim()).filter(Boolean);
    const bad = list.filter((a) => !(AGGREGATES as readonly string[]).includes(a));
    if (bad.length) throw illegalArgument(`unknown aggregate [${bad.join(',')}], expected one of [${AGGREGATES.join(', ')}]`);
    f.aggregates = new Set(list);
  }
  if (q.owner) f.owner = q.owner;
  if (q.index) f.index = globRe(q.index);
  return f;
}

/** May `access` see this fact? Contexts need monitor; API keys the key's owner or manage_api_key; … */
export function visible(access: Access, f: HubFact): boolean {
  const a = f.view.aggregate;
  if (!seesAggregate(access, a)) return false;
  if (a === 'apikey' && !access.apiKeysAll) return seesApiKey(access, f.view.owner ?? undefined);
  return true;
}

/** Does the fact pass the feed's filters? */
export function matches(filters: FeedFilters, f: HubFact): boolean {
  const v = f.view;
  if (filters.aggregates && !filters.aggregates.has(v.aggregate)) return false;
  if (filters.owner && v.owner?.username !== filters.owner) return false;
  if (filters.index && !v.indices.some((i) => filters.index!.test(i))) return false;
  return true;
}

export interface FeedOptions {
  hub: FactHub;
  access: Access;
  filters: FeedFilters;
  /**
   * Re-checks the caller's credentials (and privileges: roles may have changed); throws when they are
   * no longer good, which ends the feed.
   */
  revalidate: () => Promise<Access>;
  revalidateMs: number;
  heartbeatMs: number;
  /** Bytes a slow reader may have queued before the feed gives up on it. */
  maxBuffered: number;
  hello: Record<string, unknown>;
}

const frame = (event: string, data: unknown, id?: string) => `${id ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * A server-sent-events stream of the facts `access` may see. Ends on client disconnect, when the
 * credentials stop being valid (checked every `revalidateMs`), or when the reader falls too far
 * behind (`event: overflow`; the page reconnects).
 */
export function openFeed(o: FeedOptions): Readable {
  const out = new PassThrough();
  let access = o.access;
  let closed = false;
  const finish = (event?: string, data?: unknown) => {
    if (closed) return;
    closed = true;
    stopListening();
    clearInterval(beat);
    clearInterval(check);
    if (out.destroyed) return;
    if (event) out.end(frame(event, data));
    else out.end();
  };
  const send = (text: string) => {
    if (closed || out.destroyed) return;
    if (out.writableLength > o.maxBuffered) return finish('overflow', { reason: 'the reader fell behind; reconnect' });
    out.write(text);
  };
  out.write(`retry: 3000\n\n${frame('hello', o.hello)}`);
  const stopListening = o.hub.listen((f) => {
    if (visible(access, f) && matches(o.filters, f)) send(frame('fact', f.view, f.view.id));
  });
  const beat = setInterval(() => send(`: ${Date.now()}\n\n`), o.heartbeatMs);
  const check = setInterval(() => {
    o.revalidate().then(
      (a) => (access = a),
      (e: Error) => finish('end', { reason: e.message }),
    );
  }, o.revalidateMs);
  beat.unref();
  check.unref();
  out.on('close', () => finish());
  out.on('error', () => finish());
  return out;
}
