/**
 * What the fuzz aims at: two indices with data, a live scroll, a cleared scroll, a PIT and an API
 * key, created through the node's own REST API before the run.
 */
import type { Fixtures } from './fuzzCases';

async function call(url: string, auth: string, method: string, path: string, body?: unknown, ndjson = false): Promise<any> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: auth, 'content-type': ndjson ? 'application/x-ndjson' : 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`fixture ${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

/** Creates the fixtures (indices `fz1`, `fz2`) on a node; `auth` is a superuser's Authorization value. */
export async function setupFixtures(url: string, auth: string): Promise<Fixtures> {
  // a previous run's fixtures (and scratch indices) go first
  await fetch(`${url}/fz1,fz2,fzx-*,edgefz-*?ignore_unavailable=true`, { method: 'DELETE', headers: { authorization: auth } }).catch(() => undefined);
  await call(url, auth, 'PUT', '/fz1', {
    settings: { number_of_shards: 2 },
    mappings: {
      properties: { n: { type: 'long' }, k: { type: 'keyword' }, t: { type: 'text' }, d: { type: 'date' }, b: { type: 'boolean' }, o: { properties: { x: { type: 'long' } } } },
    },
  });
  await call(url, auth, 'PUT', '/fz2', { settings: { number_of_shards: 1 }, mappings: { dynamic: 'strict', properties: { n: { type: 'long' }, k: { type: 'keyword' }, t: { type: 'text' } } } });
  const words = ['alpha', 'beta', 'gamma', 'delta', 'xx'];
  const lines: string[] = [];
  for (let i = 0; i < 300; i++) {
    const doc = { n: i, k: `k${i % 7}`, t: `${words[i % 5]} ${words[(i * 3) % 5]}`, d: 1_700_000_000_000 + i * 60_000, b: i % 2 === 0, o: { x: i } };
    lines.push(JSON.stringify({ index: { _index: 'fz1', _id: String(i) } }), JSON.stringify(doc));
    if (i < 50) lines.push(JSON.stringify({ index: { _index: 'fz2', _id: String(i) } }), JSON.stringify({ n: i, k: `k${i % 3}`, t: words[i % 5] }));
  }
  await call(url, auth, 'POST', '/_bulk?refresh=true', `${lines.join('\n')}\n`, true);
  const scroll = await call(url, auth, 'POST', '/fz1/_search?scroll=30m', { size: 3, sort: ['_doc'] });
  const cleared = await call(url, auth, 'POST', '/fz2/_search?scroll=30m', { size: 3 });
  await call(url, auth, 'DELETE', '/_search/scroll', { scroll_id: cleared._scroll_id });
  const pit = await call(url, auth, 'POST', '/fz1/_pit?keep_alive=30m');
  const key = await call(url, auth, 'POST', '/_security/api_key', { name: 'fuzz' }).catch(() => ({ encoded: Buffer.from('none:none').toString('base64') }));
  return { auth, indices: ['fz1', 'fz2'], scrollId: scroll._scroll_id, clearedScrollId: cleared._scroll_id, pitId: pit.id, apiKey: key.encoded };
}
