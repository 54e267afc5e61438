/**
 * The soak's load (scripts/soak.ts; a bounded run in test/int/reliability/soak.test.ts): for a while,
 * a few workers send a mix of every kind of traffic that moves the two logs the nodes follow, through
 * every node in turn: bulk and single writes and deletes (ES_DATA), scrolls and PITs opened, used and
 * freed, API keys and tokens created, used, refreshed and invalidated (ES_EVT), and searches. Then it
 * reads every node's `_nodes/stats` (log followers: position, stalls; the event loop's delay) and
 * reports stalls, 5xx answers and failures.
 */
import { rng } from '../test/support/rng';

export interface SoakOptions {
  urls: string[];
  /** `Authorization` header value (Basic). */
  auth: string;
  seconds: number;
  concurrency?: number;
  seed?: number;
  /** Called every `tickMs` with the running report (progress lines). */
  onTick?: (r: SoakReport) => void;
  tickMs?: number;
}

export interface FollowerRow {
  node: string;
  stream: string;
  position: number;
  stalls: number;
  restarts: number;
  resets: number;
}

export interface SoakReport {
  seconds: number;
  requests: number;
  byKind: Record<string, { n: number; failed: number; maxMs: number }>;
  /** Answers ≥ 500 and requests that got no answer, with what was asked. */
  failures: string[];
  followers: FollowerRow[];
  stalls: number;
  /** Worst event-loop delay of each node over the last minute (ms). */
  loopMaxMs: Record<string, number>;
}

type Call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number; json: any }>;

function caller(url: string, auth: string, fail: (what: string) => void): Call {
  return async (method, path, body, headers = {}) => {
    const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const type = typeof body === 'string' ? 'application/x-ndjson' : 'application/json';
    try {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: auth, ...(text !== undefined ? { 'content-type': type } : {}), ...headers },
        body: text,
        signal: AbortSignal.timeout(30_000),
      });
      const raw = await res.text();
      let json: any;
      try {
        json = raw ? JSON.parse(raw) : undefined;
      } catch {
        json = undefined;
      }
      if (res.status >= 500) fail(`${method} ${path} -> ${res.status} ${raw.slice(0, 300)}`);
      return { status: res.status, json };
    } catch (e) {
      fail(`${method} ${path} -> no answer: ${(e as Error).message}`);
      return { status: 0, json: undefined };
    }
  };
}

/** One step of a worker: a small story through one node. */
type Step = (call: Call, r: () => number, w: number) => Promise<void>;

const INDICES = ['soak-a', 'soak-b', 'soak-c'];

const steps: Record<string, [weight: number, step: Step]> = {
  bulk: [4, async (call, r, w) => {
    const index = INDICES[Math.floor(r() * INDICES.length)];
    const lines = Array.from({ length: 100 }, () => {
      const id = `${w}-${Math.floor(r() * 5_000)}`;
      return `{"index":{"_index":"${index}","_id":"${id}"}}\n{"w":${w},"n":${Math.floor(r() * 1e6)},"t":"word${Math.floor(r() * 50)} other${Math.floor(r() * 9)}"}\n`;
    }).join('');
    await call('POST', '/_bulk', lines);
  }],
  write: [3, async (call, r, w) => {
    const index = INDICES[Math.floor(r() * INDICES.length)];
    await call('PUT', `/${index}/_doc/${w}-${Math.floor(r() * 5_000)}`, { w, n: Math.floor(r() * 1e6), t: `word${Math.floor(r() * 50)}` });
    if (r() < 0.3) await call('DELETE', `/${index}/_doc/${w}-${Math.floor(r() * 5_000)}`);
  }],
  search: [3, async (call, r) => {
    await call('POST', '/soak-*/_search', { size: 10, query: { match: { t: `word${Math.floor(r() * 50)}` } } });
    await call('POST', '/soak-*/_search', { size: 5, sort: [{ n: 'desc' }] });
  }],
  scroll: [2, async (call) => {
    const a = await call('POST', '/soak-*/_search?scroll=1m', { size: 50, sort: ['_doc'] });
    if (a.status !== 200) return;
    const b = await call('POST', '/_search/scroll', { scroll: '1m', scroll_id: a.json._scroll_id });
    await call('DELETE', '/_search/scroll', { scroll_id: b.json?._scroll_id ?? a.json._scroll_id });
  }],
  pit: [2, async (call) => {
    const p = await call('POST', '/soak-a/_pit?keep_alive=1m');
    if (p.status !== 200) return;
    await call('POST', '/_search', { pit: { id: p.json.id, keep_alive: '1m' }, size: 10, sort: [{ n: 'asc' }] });
    await call('POST', '/_search', { pit: { id: p.json.id }, size: 10 });
    await call('DELETE', '/_pit', { id: p.json.id });
  }],
  apiKey: [2, async (call, r, w) => {
    const k = await call('POST', '/_security/api_key', { name: `soak-${w}-${Math.floor(r() * 1e9)}` });
    if (k.status !== 200) return;
    await call('GET', '/_security/_authenticate', undefined, { authorization: `ApiKey ${k.json.encoded}` });
    await call('DELETE', '/_security/api_key', { ids: [k.json.id] });
  }],
  token: [1, async (call) => {
    const t = await call('POST', '/_security/oauth2/token', { grant_type: 'client_credentials' });
    if (t.status !== 200) return;
    await call('GET', '/_security/_authenticate', undefined, { authorization: `Bearer ${t.json.access_token}` });
    await call('DELETE', '/_security/oauth2/token', { token: t.json.access_token });
  }],
};

/** Reads every node's followers and event loop. */
export async function nodeHealth(urls: string[], auth: string): Promise<Pick<SoakReport, 'followers' | 'stalls' | 'loopMaxMs'>> {
  const followers: FollowerRow[] = [];
  const loopMaxMs: Record<string, number> = {};
  for (const url of urls) {
    try {
      const res = await fetch(`${url}/_nodes/_local/stats/log_followers,event_loop`, { headers: { authorization: auth }, signal: AbortSignal.timeout(10_000) });
      const body = (await res.json()) as { nodes: Record<string, { name: string; log_followers: FollowerRow[]; event_loop: { delay: { max_in_millis: number } } }> };
      for (const n of Object.values(body.nodes)) {
        for (const f of n.log_followers) followers.push({ node: `${n.name} ${url}`, stream: f.stream, position: f.position, stalls: f.stalls, restarts: f.restarts, resets: f.resets });
        loopMaxMs[url] = n.event_loop.delay.max_in_millis;
      }
    } catch {
      loopMaxMs[url] = -1;
    }
  }
  return { followers, stalls: followers.reduce((a, f) => a + f.stalls, 0), loopMaxMs };
}

export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  const report: SoakReport = { seconds: o.seconds, requests: 0, byKind: {}, failures: [], followers: [], stalls: 0, loopMaxMs: {} };
  const fail = (what: string) => report.failures.length < 200 && report.failures.push(what);
  const calls = o.urls.map((u) => caller(u, o.auth, fail));
  for (const index of INDICES) await calls[0]('PUT', `/${index}`, { settings: { number_of_shards: 2 }, mappings: { properties: { n: { type: 'long' }, t: { type: 'text' } } } });
  const kinds = Object.entries(steps);
  const total = kinds.reduce((a, [, [w]]) => a + w, 0);
  const deadline = Date.now() + o.seconds * 1_000;
  const tick = o.onTick && setInterval(() => o.onTick!(report), o.tickMs ?? 10_000);
  const worker = async (w: number) => {
    const r = rng((o.seed ?? 1) * 1_000 + w);
    for (let i = 0; Date.now() < deadline; i++) {
      let pick = r() * total;
      const [kind, [, step]] = kinds.find(([, [weight]]) => (pick -= weight) < 0) ?? kinds[0];
      const k = (report.byKind[kind] ??= { n: 0, failed: 0, maxMs: 0 });
      const before = report.failures.length;
      const start = Date.now();
      await step(calls[(w + i) % calls.length], r, w);
      k.n++;
      k.maxMs = Math.max(k.maxMs, Date.now() - start);
      if (report.failures.length > before) k.failed++;
      report.requests++;
    }
  };
  try {
    await Promise.all(Array.from({ length: o.concurrency ?? 3 }, (_, w) => worker(w)));
  } finally {
    if (tick) clearInterval(tick);
  }
  Object.assign(report, await nodeHealth(o.urls, o.auth));
  return report;
}

/** The report as lines for a terminal. */
export function formatSoak(r: SoakReport): string {
  const lines = [`${r.requests} steps in ${r.seconds} s; follower stalls: ${r.stalls}; 5xx/no answer: ${r.failures.length}`];
  for (const [k, v] of Object.entries(r.byKind)) lines.push(`  ${k.padEnd(8)} ${String(v.n).padStart(6)} steps, ${v.failed} failed, slowest ${v.maxMs} ms`);
  for (const f of r.followers) lines.push(`  ${f.node.padEnd(36)} ${f.stream.padEnd(8)} position ${f.position}, stalls ${f.stalls}, restarts ${f.restarts}, resets ${f.resets}`);
  for (const [u, ms] of Object.entries(r.loopMaxMs)) lines.push(`  event loop max delay (last minute) ${u}: ${ms} ms`);
  for (const f of r.failures.slice(0, 20)) lines.push(`  FAIL ${f}`);
  return lines.join('\n');
}
