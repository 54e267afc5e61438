/**
 * Issue 21 item 2: with the nats-server gone, every request that needs it answers 503 within 2 s
 * (or succeeds from what the node holds), scroll and PIT included; every request kind is measured.
 * Then the server comes back on the same port and store and every kind works again, no restart.
 */
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import type { NatsConnection } from '@nats-io/transport-node';
import { startEmbeddedNats, type EmbeddedNats } from '../../../actors/embeddedNats';
import { startTestNode, ELASTIC_PASSWORD, type TestNode } from '../../support/node';
import { raw, type RawResponse } from '../../e2e/search/helpers';
import { poll } from '../../support/poll';

jest.setTimeout(120_000);

let t: TestNode;
let revived: EmbeddedNats | undefined;
const basic = { authorization: `Basic ${Buffer.from(`elastic:${ELASTIC_PASSWORD}`).toString('base64')}` };
const req = (method: string, path: string, body?: unknown, headers: Record<string, string> = basic) => raw(t, method, path, body, headers);

/** Ids made before the outage, for the requests that continue or end something. */
const fx: Record<string, string> = {};

beforeAll(async () => {
  t = await startTestNode({ security: true });
  expect((await req('PUT', '/o', { settings: { number_of_shards: 2 } })).status).toBe(200);
  const lines = Array.from({ length: 40 }, (_, i) => `{"index":{"_index":"o","_id":"${i}"}}\n{"n":${i}}\n`).join('');
  expect((await req('POST', '/_bulk?refresh=true', lines)).json.errors).toBe(false);
  const scroll = await req('POST', '/o/_search?scroll=5m', { size: 2 });
  fx.scroll = scroll.json._scroll_id;
  fx.scroll2 = (await req('POST', '/o/_search?scroll=5m', { size: 2 })).json._scroll_id;
  fx.pit = (await req('POST', '/o/_pit?keep_alive=5m')).json.id;
  fx.pit2 = (await req('POST', '/o/_pit?keep_alive=5m')).json.id;
  const key = await req('POST', '/_security/api_key', { name: 'k1' });
  fx.apiKey = key.json.encoded;
  fx.keyId = key.json.id;
  const tok = await req('POST', '/_security/oauth2/token', { grant_type: 'password', username: 'elastic', password: ELASTIC_PASSWORD });
  fx.token = tok.json.access_token;
  fx.refresh = tok.json.refresh_token;
  // warm the credential caches, as a running node has them
  expect((await req('GET', '/_security/_authenticate', undefined, { authorization: `ApiKey ${fx.apiKey}` })).status).toBe(200);
  expect((await req('GET', '/_security/_authenticate', undefined, { authorization: `Bearer ${fx.token}` })).status).toBe(200);
});

afterAll(async () => {
  await t.es.close();
  await t.es9.close();
  await t.sys.stop();
  await revived?.stop();
  await rm(t.nats.dir, { recursive: true, force: true });
  await rm(t.dataDir, { recursive: true, force: true });
});

type Probe = [name: string, method: string, path: string, body?: unknown, headers?: Record<string, string>];

/** Every kind of request, and what each may answer while NATS is down (a status it may succeed with). */
const probes = (): Array<Probe & { ok?: number[] }> => [
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
  ['get token', 'POST', '/_security/oauth2/token', { grant_type: 'password', username: 'elastic', password: ELASTIC_PASSWORD }],
  ['refresh token', 'POST', '/_security/oauth2/token', { grant_type: 'refresh_token', refresh_token: fx.refresh }],
  ['put user', 'PUT', '/_security/user/u1', { password: 'u1-password', roles: ['viewer'] }],
  ['put role', 'PUT', '/_security/role/r1', { cluster: ['monitor'] }],
];

async function timed(p: Probe): Promise<{ res?: RawResponse; ms: number; err?: string }> {
  const [, method, path, body, headers] = p;
  const start = Date.now();
  try {
    const res = await Promise.race([
      req(method, path, body, headers ?? basic),
      new Promise<never>((_, rej) => setTimeout(() => rej(new Error('no answer in 15 s')), 15_000)),
    ]);
    return { res, ms: Date.now() - start };
  } catch (e) {
    return { ms: Date.now() - start, err: (e as Error).message };
  }
}

it('answers every request kind within 2 s while NATS is down (503 or a success from what the node holds), then serves them all again', async () => {
  const nc = (t.sys.ctx as { nc: NatsConnection }).nc;
  const disconnected = (async () => {
    for await (const s of nc.status()) if (s.type === 'disconnect') return;
  })();
  t.nats.proc.kill('SIGKILL');
  await once(t.nats.proc, 'exit');
  await disconnected;

  const report: string[] = [];
  const slow: string[] = [];
  for (const p of probes()) {
    const { res, ms, err } = await timed(p);
    const status = res?.status;
    const bulkStatus = p[0] === 'bulk' ? res?.json?.items?.[0]?.index?.status : undefined;
    report.push(`${p[0].padEnd(28)} ${String(status ?? err).padEnd(5)} ${bulkStatus ? `item ${bulkStatus} ` : ''}${ms} ms ${status && status >= 500 ? res?.json?.error?.type ?? '' : ''}`);
    const fine = status !== undefined && (status < 500 ? status !== 408 : status === 503) && ms < 2_000;
    if (!fine) slow.push(`${p[0]}: ${status ?? err} after ${ms} ms ${res?.text.slice(0, 200) ?? ''}`);
  }
  console.log(`while NATS is down:\n${report.join('\n')}`);
  expect(slow).toEqual([]);

  const back = Date.now();
  revived = await startEmbeddedNats(t.nats.dir, { port: Number(t.nats.url.split(':').pop()) });
  await poll(async () => (await req('PUT', '/o/_doc/after?refresh=true', { n: 100 })).status === 201, 20_000, 'writes back');
  const recovered = Date.now() - back;
  const after: string[] = [];
  const times: string[] = [];
  for (const p of probes()) {
    const { res, ms, err } = await timed(p);
    times.push(`${p[0]} ${res?.status ?? err} ${ms} ms`);
    // every kind served again, at once (a log follower stuck after the reconnect made some take seconds)
    if (!res || res.status >= 500 || ms > 1_000) after.push(`${p[0]}: ${res?.status ?? err} after ${ms} ms ${res?.text.slice(0, 200) ?? ''}`);
  }
  const followers = (await req('GET', '/_nodes/_local/stats/log_followers')).json.nodes[t.sys.ctx.node.id].log_followers;
  console.log(`NATS back: first write acknowledged after ${recovered} ms; then ${times.join(', ')}\n${JSON.stringify(followers)}`);
  expect(after).toEqual([]);
  expect(followers.map((f: { stream: string; stalls: number }) => [f.stream, f.stalls])).toEqual(followers.map((f: { stream: string }) => [f.stream, 0]));
});
