/**
 * A secured node for the console suites: an index `books`, and three users besides `elastic`:
 * - `ops`: cluster `monitor` and `manage_api_key` (sees contexts and every API key);
 * - `app`: `read` on books and `manage_own_api_key` (opens scrolls; sees only its own keys, no contexts);
 * - `tokens`: `manage_token` only (sees token pairs).
 */
import { Client } from 'es8';
import { startTestNode, type TestNode } from '../../support/node';
import { raw, type RawResponse } from '../search/helpers';
import { poll } from '../../support/poll';

export const PASSWORD = 'console-test-pw';
export const basic = (user: string, password = PASSWORD) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

export interface ConsoleNode {
  t: TestNode;
  /** Official v8 client as `user` (Basic) or with an encoded API key. */
  client(auth: { user: string } | { apiKey: string }): Client;
  /** One raw request with an Authorization header value (or none). */
  as(authorization: string | undefined, method: string, path: string, body?: unknown): Promise<RawResponse>;
  stop(): Promise<void>;
}

export async function startConsoleNode(settings: Record<string, unknown> = {}): Promise<ConsoleNode> {
  const t = await startTestNode({ security: true, settings });
  const clients: Client[] = [];
  const es = t.es;
  await es.indices.create({ index: 'books', settings: { number_of_shards: 1, number_of_replicas: 1 } });
  await es.bulk({ refresh: true, operations: [1, 2, 3, 4, 5, 6].flatMap((n) => [{ index: { _index: 'books', _id: String(n) } }, { n, title: `book ${n}` }]) });
  await es.security.putRole({ name: 'console_ops', cluster: ['monitor', 'manage_api_key'] });
  await es.security.putRole({ name: 'books_reader', cluster: ['manage_own_api_key'], indices: [{ names: ['books'], privileges: ['read'] }] });
  await es.security.putRole({ name: 'token_admin', cluster: ['manage_token'] });
  await es.security.putUser({ username: 'ops', password: PASSWORD, roles: ['console_ops'] });
  await es.security.putUser({ username: 'app', password: PASSWORD, roles: ['books_reader'] });
  await es.security.putUser({ username: 'tokens', password: PASSWORD, roles: ['token_admin'] });
  return {
    t,
    client(auth) {
      const c = new Client({ node: t.url, auth: 'user' in auth ? { username: auth.user, password: PASSWORD } : { apiKey: auth.apiKey } });
      clients.push(c);
      return c;
    },
    as: (authorization, method, path, body) => raw(t, method, path, body, authorization ? { authorization } : {}),
    async stop() {
      await Promise.all(clients.map((c) => c.close()));
      await t.stop();
    },
  };
}

/** The context uuid behind a scroll id (the node's own codec). */
export const contextOf = (t: TestNode, scrollId: string) => t.sys.services.ids.parseScrollId(scrollId).contextId;

/** Polls `check` until it returns a value (not undefined/false), or fails after `timeoutMs`. */
export const eventually = <T>(check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 10_000, what = 'condition'): Promise<T> =>
  poll(check, timeoutMs, what, 100);

/** A server-sent-events reader over fetch: collects `{event, data}` until closed. */
export interface Feed {
  status: number;
  events: Array<{ event: string; data: any }>;
  /** Resolves with the first event matching `pred` (already received or later). */
  next(pred: (e: { event: string; data: any }) => boolean, ms?: number): Promise<{ event: string; data: any }>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

export async function openFeed(url: string, authorization: string | undefined, query = ''): Promise<Feed> {
  const ac = new AbortController();
  const res = await fetch(`${url}/_console/api/feed${query}`, { headers: authorization ? { authorization } : {}, signal: ac.signal });
  const events: Feed['events'] = [];
  const waiters: Array<{ pred: (e: Feed['events'][number]) => boolean; resolve: (e: Feed['events'][number]) => void }> = [];
  const ended = (async () => {
    if (!res.body) return;
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += value;
        let cut;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (!event || data === undefined) continue;
          const e = { event, data: JSON.parse(data) };
          events.push(e);
          for (const w of [...waiters]) if (w.pred(e)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(e);
          }
        }
      }
    } catch {
      // aborted
    }
  })();
  return {
    status: res.status,
    events,
    ended,
    next(pred, ms = 10_000) {
      const hit = events.find(pred);
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const w = { pred, resolve: (e: Feed['events'][number]) => (clearTimeout(timer), resolve(e)) };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(w), 1);
          reject(new Error(`no matching feed event within ${ms} ms; got ${events.map((e) => e.data?.type ?? e.event).join(', ')}`));
        }, ms);
        waiters.push(w);
      });
    },
    close: () => ac.abort(),
  };
}
