/**
 * Every kind of request, for the NATS-outage fault (issue 21 item 2): with the nats-server gone each
 * must answer 503 within 2 s, or succeed from what the node holds; once it is back each must be served
 * again at once. Shared by `npm run faults` (scripts/faults.ts, repeated outages against a node in a
 * child process) and its bounded CI version (test/int/reliability/failFast.test.ts).
 */
import { request } from 'node:http';

export type Probe = [name: string, method: string, path: string, body?: unknown, headers?: Record<string, string>];

export interface ProbeAnswer {
  status?: number;
  ms: number;
  text: string;
  err?: string;
  /** Parsed body, when JSON. */
  json?: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** Ids made before the outage, for the requests that continue or end something. */
export type FaultFixtures = Record<'scroll' | 'scroll2' | 'pit' | 'pit2' | 'apiKey' | 'keyId' | 'token' | 'refresh', string>;

/** One request, with the time to its answer (at most `limitMs`: then `err`). */
export function send(url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}, limitMs = 15_000): Promise<ProbeAnswer> {
  const payload = body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  const type = typeof body === 'string' && (path.includes('_bulk') || path.includes('_msearch')) ? 'application/x-ndjson' : 'application/json';
  const start = Date.now();
  return new Promise((resolve) => {
    const req = request(`${url}${path}`, { method, headers: { ...(payload ? { 'content-type': type, 'content-length': String(payload.length) } : {}), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          /* not JSON */
        }
        resolve({ status: res.statusCode, ms: Date.now() - start, text, json });
      });
    });
    const timer = setTimeout(() => {
      req.destroy();
      resolve({ ms: Date.now() - start, text: '', err: `no answer in ${limitMs / 1000} s` });
    }, limitMs);
    req.on('error', (e) => {
      clearTimeout(timer);
      resolve({ ms: Date.now() - start, text: '', err: e.message });
    });
    req.end(payload);
  });
}

/** Index `o` (2 shards, 40 docs), two scrolls, two PITs, an API key and a token, caches warm. */
export async function faultFixtures(url: string, auth: Record<string, string>, password: string): Promise<FaultFixtures> {
  const call = async (method: string, path: string, body?: unknown, headers = auth) => {
    const r = await send(url, method, path, body, headers);
    if (!r.status || r.status >= 300) throw new Error(`fixture ${method} ${path}: ${r.status ?? r.err} ${r.text.slice(0, 300)}`);
    return r.json;
  };
  await send(url, 'DELETE', '/o,o2,later?ignore_unavailable=true', undefined, auth);
  await call('PUT', '/o', { settings: { number_of_shards: 2 } });
  await call('POST', '/_bulk?refresh=true', Array.from({ length: 40 }, (_, i) => `{"index":{"_index":"o","_id":"${i}"}}\n{"n":${i}}\n`).join(''));
  const fx = {} as FaultFixtures;
  fx.scroll = (await call('POST', '/o/_search?scroll=5m', { size: 2 }))._scroll_id;
  fx.scroll2 = (await call('POST', '/o/_search?scroll=5m', { size: 2 }))._scroll_id;
  fx.pit = (await call('POST', '/o/_pit?keep_alive=5m')).id;
  fx.pit2 = (await call('POST', '/o/_pit?keep_alive=5m')).id;
  const key = await call('POST', '/_security/api_key', { name: 'k1' });
  fx.apiKey = key.encoded;
  fx.keyId = key.id;
  const tok = await call('POST', '/_security/oauth2/token', { grant_type: 'password', username: 'elastic', password });
  fx.token = tok.access_token;
  fx.refresh = tok.refresh_token;
  // warm the credential caches, as a running node has them
  await call('GET', '/_security/_authenticate', undefined, { authorization: `ApiKey ${fx.apiKey}` });
  await call('GET', '/_security/_authenticate', undefined, { authorization: `Bearer ${fx.token}` });
  return fx;
}

/** Every kind of request. */
export const faultProbes = (fx: FaultFixtures, password: string): Probe[] => [
  ['root', 'GET', '/'],
  ['search', 'POST', '/o/_search', { size: 3 }],
  ['search (uri)', 'GET', '/o/_search?q=n:3'],
  ['count', 'GET', '/o/_count'],
  ['get', 'GET', '/o/_doc/3'],
  ['mget', 'POST', '/o/_mget', { ids: ['1', '2'] }],
  ['msearch', 'POST', '/_msearch', '{"index":"o"}\n{"size":1}\n'],
  ['index doc', 'PUT', '/o/_doc/new', { n: 99 }],
  ['create doc', 'POST', '/o/_doc', { n: 98 }],
  ['delete doc', 'DELETE', '/o/_doc/5'],
  ['update doc', 'POST', '/o/_update/6', { doc: { n: 600 } }],
  ['bulk', 'POST', '/_bulk', '{"index":{"_index":"o","_id":"b1"}}\n{"n":1}\n'],
  ['delete by query', 'POST', '/o/_delete_by_query', { query: { term: { n: 7 } } }],
  ['reindex', 'POST', '/_reindex', { source: { index: 'o' }, dest: { index: 'o2' } }],
  ['refresh', 'POST', '/o/_refresh'],
  ['create index', 'PUT', '/later', {}],
  ['delete index', 'DELETE', '/o2'],
  ['put mapping', 'PUT', '/o/_mapping', { properties: { k: { type: 'keyword' } } }],
  ['put settings', 'PUT', '/o/_settings', { index: { refresh_interval: '2s' } }],
  ['cluster settings', 'PUT', '/_cluster/settings', { persistent: { 'search.max_open_scroll_context': 400 } }],
  ['health', 'GET', '/_cluster/health'],
  ['cat indices', 'GET', '/_cat/indices'],
  ['node stats', 'GET', '/_nodes/stats'],
  ['scroll open', 'POST', '/o/_search?scroll=1m', { size: 2 }],
  ['scroll next', 'POST', '/_search/scroll', { scroll: '1m', scroll_id: fx.scroll }],
  ['scroll clear', 'DELETE', '/_search/scroll', { scroll_id: fx.scroll2 }],
  ['scroll list', 'GET', '/_scroll'],
  ['pit open', 'POST', '/o/_pit?keep_alive=1m'],
  ['pit search', 'POST', '/_search', { pit: { id: fx.pit, keep_alive: '1m' }, size: 2 }],
  ['pit search (no keep_alive)', 'POST', '/_search', { pit: { id: fx.pit }, size: 2 }],
  ['pit close', 'DELETE', '/_pit', { id: fx.pit2 }],
  ['pit list', 'GET', '/_pit'],
  ['authenticate (api key)', 'GET', '/_security/_authenticate', undefined, { authorization: `ApiKey ${fx.apiKey}` }],
  ['authenticate (token)', 'GET', '/_security/_authenticate', undefined, { authorization: `Bearer ${fx.token}` }],
  ['create api key', 'POST', '/_security/api_key', { name: 'k2' }],
  ['invalidate api key', 'DELETE', '/_security/api_key', { ids: [fx.keyId] }],
  ['get token', 'POST', '/_security/oauth2/token', { grant_type: 'password', username: 'elastic', password }],
  ['refresh token', 'POST', '/_security/oauth2/token', { grant_type: 'refresh_token', refresh_token: fx.refresh }],
  ['put user', 'PUT', '/_security/user/u1', { password: 'u1-password', roles: ['viewer'] }],
  ['put role', 'PUT', '/_security/role/r1', { cluster: ['monitor'] }],
];

export interface ProbeRound {
  /** One line per probe: name, status, time. */
  lines: string[];
  /** Probes that broke the rule of the round. */
  bad: string[];
  /** Slowest answer. */
  maxMs: number;
}

/**
 * Sends every probe once. `down`: NATS is gone, each must answer 503 (or a success from what the node
 * holds) within 2 s; else each must be served (no 5xx) within `servedMs`.
 */
export async function probeRound(url: string, auth: Record<string, string>, probes: Probe[], down: boolean, servedMs = 1_000): Promise<ProbeRound> {
  const round: ProbeRound = { lines: [], bad: [], maxMs: 0 };
  for (const [name, method, path, body, headers] of probes) {
    const r = await send(url, method, path, body, headers ?? auth);
    round.maxMs = Math.max(round.maxMs, r.ms);
    const item = name === 'bulk' ? r.json?.items?.[0]?.index?.status : undefined;
    round.lines.push(`${name.padEnd(28)} ${String(r.status ?? r.err).padEnd(5)} ${item ? `item ${item} ` : ''}${r.ms} ms ${r.status && r.status >= 500 ? r.json?.error?.type ?? '' : ''}`);
    const fine = down
      ? r.status !== undefined && (r.status < 500 ? r.status !== 408 : r.status === 503) && r.ms < 2_000
      : r.status !== undefined && r.status < 500 && r.ms <= servedMs;
    if (!fine) round.bad.push(`${name}: ${r.status ?? r.err} after ${r.ms} ms ${r.text.slice(0, 200)}`);
  }
  return round;
}
