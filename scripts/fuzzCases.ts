/**
 * The bad-input fuzz's cases (scripts/fuzz.ts): each generator turns the PRNG and the fixtures
 * (indices, a live scroll id and PIT id, an API key) into one HTTP request or raw socket payload.
 * Destructive requests only ever name scratch indices and users, so the fixtures survive the run.
 */
import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { deep, DEPTHS, HUGE_NUMBERS, invalidUtf8, junk, Lit, mangle, randomB64, Rng, toJson } from './fuzzValues';
import { anyIndex, http, scratch, type Fixtures, type FuzzCase, type Gen } from './fuzzHttp';
import { admin, documents, randomRoute, security } from './fuzzAdminCases';
import { edges } from './fuzzEdgeCases';

export type { Fixtures, FuzzCase } from './fuzzHttp';

const SEARCH_FIELDS = [
  'from', 'size', 'sort', 'search_after', 'pit', 'slice', 'track_total_hits', 'track_scores', 'query', 'post_filter', 'aggs',
  'aggregations', '_source', 'timeout', 'terminate_after', 'min_score', 'version', 'seq_no_primary_term', 'stored_fields',
  'docvalue_fields', 'collapse', 'rescore', 'highlight', 'explain', 'profile', 'indices_boost', 'runtime_mappings', 'fields',
];
const URL_PARAMS = [
  'from', 'size', 'sort', 'scroll', 'track_total_hits', 'timeout', 'q', 'df', '_source', 'keep_alive', 'routing', 'preference',
  'search_type', 'rest_total_hits_as_int', 'allow_partial_search_results', 'typed_keys', 'request_cache', 'ignore_unavailable',
  'expand_wildcards', 'refresh', 'op_type', 'if_seq_no', 'if_primary_term', 'version', 'pretty', 'filter_path', 'scroll_id',
  'wait_for_status', 'master_timeout', 'default_operator', 'terminate_after', 'batched_reduce_size',
];
const URL_VALUES = ['', '-1', '0', '1', '10001', 'abc', 'true', 'false', '1e400', '9223372036854775808', '1m', '5', '2d', '%', '%zz', '%00', '_all', 'n:asc', 'n:sideways', 'x'.repeat(5000), '%F0%28%8C%BC'];

const validSearch = (r: Rng): Record<string, unknown> => ({
  query: r.pick([{ match_all: {} }, { match: { t: 'alpha beta' } }, { range: { n: { gte: 10 } } }, { bool: { filter: [{ term: { k: 'k1' } }] } }]),
  size: r.pick([0, 1, 5, 20]),
  ...(r.chance(0.5) ? { sort: [{ n: 'asc' }] } : {}),
  ...(r.chance(0.3) ? { aggs: { t: { terms: { field: 'k' } } } } : {}),
});

const paging: Gen = (r, f) => {
  const body: Record<string, unknown> = validSearch(r);
  const n = 1 + r.int(3);
  for (let i = 0; i < n; i++) body[r.pick(SEARCH_FIELDS)] = r.chance(0.15) ? { id: r.pick([f.pitId, junk(r)]), keep_alive: junk(r) } : junk(r);
  const path = body.pit ? '/_search' : `/${anyIndex(r, f)}/_search${r.chance(0.3) ? '?scroll=1m' : ''}`;
  return http('paging.body', f, r.pick(['GET', 'POST']), path, toJson(body));
};

const urlParams: Gen = (r, f) => {
  const params = Array.from({ length: 1 + r.int(3) }, () => `${r.pick(URL_PARAMS)}=${r.pick(URL_VALUES)}`).join('&');
  const path = r.pick([`/${anyIndex(r, f)}/_search`, '/_search', `/${anyIndex(r, f)}/_count`, '/_search/scroll', `/${r.pick(f.indices)}/_pit`, `/${r.pick(f.indices)}/_doc/1`, '/_cluster/health', `/${scratch(r)}/_doc/9`]);
  const method = path.endsWith('_pit') ? 'POST' : path.includes('_doc/9') ? 'PUT' : r.pick(['GET', 'POST']);
  return http('paging.url', f, method, `${path}?${params}`, method === 'PUT' ? '{"n":1}' : undefined);
};

const malformed: Gen = (r, f) => {
  const [method, path, body] = r.pick<[string, string, string]>([
    ['POST', `/${r.pick(f.indices)}/_search`, toJson(validSearch(r))],
    ['POST', '/_search/scroll', toJson({ scroll: '1m', scroll_id: f.scrollId })],
    ['DELETE', '/_pit', toJson({ id: f.pitId })],
    ['PUT', `/${scratch(r)}`, toJson({ settings: { number_of_shards: 1 }, mappings: { properties: { a: { type: 'long' } } } })],
    ['PUT', `/${r.pick(f.indices)}/_doc/m${r.int(50)}`, toJson({ n: 1, k: 'k2', t: 'text' })],
    ['PUT', `/${r.pick(f.indices)}/_mapping`, toJson({ properties: { extra: { type: 'keyword' } } })],
    ['PUT', '/_cluster/settings', toJson({ persistent: { 'search.max_keep_alive': '24h' } })],
    ['POST', '/_security/api_key', toJson({ name: 'k', expiration: '1d' })],
    ['POST', '/_security/oauth2/token', toJson({ grant_type: 'password', username: 'elastic', password: 'x' })],
    ['POST', `/${r.pick(f.indices)}/_count`, toJson({ query: { match_all: {} } })],
  ]);
  return http('json.malformed', f, method, path, mangle(r, body));
};

/** Where deep nesting goes: every place a body is parsed. */
const deepNesting: Gen = (r, f) => {
  const d = deep(r.pick(DEPTHS), r.pick([1, 'x', null, {}]), r.pick(['array', 'object', 'mixed'] as const));
  const boolChain = (n: number) => {
    let q: unknown = { match_all: {} };
    for (let i = 0; i < n; i++) q = { bool: { must: [q] } };
    return q;
  };
  const aggChain = (n: number) => {
    let a: Record<string, unknown> = { leaf: { max: { field: 'n' } } };
    for (let i = 0; i < n; i++) a = { [`a${i}`]: { terms: { field: 'k' }, aggs: a } };
    return a;
  };
  const [method, path, body] = r.pick<[string, string, unknown]>([
    ['POST', `/${r.pick(f.indices)}/_search`, { query: d }],
    ['POST', `/${r.pick(f.indices)}/_search`, { query: boolChain(r.pick([29, 30, 31, 200, 400])) }],
    ['POST', `/${r.pick(f.indices)}/_search`, { size: 0, aggs: aggChain(r.pick([5, 50, 300, 400])) }],
    ['POST', `/${r.pick(f.indices)}/_search`, { aggs: d }],
    ['POST', `/${r.pick(f.indices)}/_search`, { sort: d }],
    ['POST', `/${r.pick(f.indices)}/_search`, { sort: [{ n: 'asc' }], search_after: d }],
    ['POST', `/${r.pick(f.indices)}/_search`, { _source: d }],
    ['PUT', `/${r.pick(f.indices)}/_doc/deep${r.int(3)}`, { o: d }],
    ['PUT', `/${scratch(r)}/_doc/deep`, { o: d }],
    ['PUT', `/${scratch(r)}`, { mappings: { properties: { o: { properties: d } } } }],
    ['PUT', `/${scratch(r)}`, { settings: d }],
    ['PUT', `/${r.pick(f.indices)}/_mapping`, { properties: d }],
    ['PUT', '/_cluster/settings', { persistent: d }],
    ['POST', '/_search/scroll', { scroll: '1m', scroll_id: d }],
    ['DELETE', '/_pit', { id: d }],
    ['POST', '/_security/api_key', { name: 'deep', metadata: d }],
    ['POST', '/_security/_query/api_key', { query: d }],
  ]);
  return http('deep', f, method, path, toJson(body));
};

const numbers: Gen = (r, f) => {
  const n = () => new Lit(r.pick(HUGE_NUMBERS));
  const [method, path, body] = r.pick<[string, string, unknown]>([
    ['POST', `/${r.pick(f.indices)}/_search`, { from: n(), size: n() }],
    ['POST', `/${r.pick(f.indices)}/_search`, { sort: [{ n: 'asc' }], search_after: [n()] }],
    ['POST', '/_search', { pit: { id: f.pitId }, slice: { id: n(), max: n() }, sort: ['_shard_doc'] }],
    ['POST', `/${r.pick(f.indices)}/_search?scroll=1m`, { slice: { id: n(), max: n() }, size: n() }],
    ['POST', `/${r.pick(f.indices)}/_search`, { track_total_hits: n(), min_score: n(), terminate_after: n() }],
    ['POST', `/${r.pick(f.indices)}/_search`, { query: { range: { n: { gte: n(), lt: n() } } } }],
    ['POST', `/${r.pick(f.indices)}/_search`, { query: { term: { n: n() } }, aggs: { h: { histogram: { field: 'n', interval: n() } } } }],
    ['PUT', `/${r.pick(f.indices)}/_doc/num${r.int(5)}`, { n: n(), d: n(), b: n(), k: n() }],
    ['PUT', `/${scratch(r)}`, { settings: { number_of_shards: n(), number_of_replicas: n(), max_result_window: n() } }],
    ['PUT', `/${r.pick(f.indices)}/_settings`, { index: { max_result_window: n(), refresh_interval: n() } }],
    ['PUT', '/_cluster/settings', { transient: { 'search.max_open_scroll_context': n() } }],
  ]);
  return http('numbers', f, method, path, toJson(body));
};

const longStrings: Gen = (r, f) => {
  const s = 'y'.repeat(r.pick([256, 4096, 40000, 300_000]));
  const [method, path, body] = r.pick<[string, string, unknown]>([
    ['PUT', `/${r.pick(f.indices)}/_doc/${s.slice(0, 600)}`, { n: 1 }],
    ['PUT', `/${r.pick(f.indices)}/_doc/long${r.int(3)}`, { k: s, t: s, [s.slice(0, 3000)]: 1 }],
    ['PUT', `/${scratch(r)}/_doc/long`, { [s]: s }],
    ['PUT', `/${s.slice(0, 300)}`, {}],
    ['POST', `/${r.pick(f.indices)}/_search`, { query: { match: { t: s } } }],
    ['POST', `/${r.pick(f.indices)}/_search`, { query: { term: { k: s } }, sort: [{ [s.slice(0, 2000)]: 'asc' }] }],
    ['POST', '/_search/scroll', { scroll: '1m', scroll_id: s }],
    ['DELETE', '/_pit', { id: s }],
    ['POST', `/${r.pick(f.indices)}/_pit?keep_alive=${s.slice(0, 1000)}`, undefined],
    ['POST', '/_security/api_key', { name: s }],
  ]);
  return http('strings', f, method, path, body === undefined ? undefined : toJson(body));
};

const badUtf8: Gen = (r, f) => {
  const valid = Buffer.from(toJson({ query: { match: { t: 'xx' } }, size: 1 }));
  const at = r.int(valid.length);
  const body = Buffer.concat([valid.subarray(0, at), invalidUtf8(r), valid.subarray(at)]);
  const doc = Buffer.concat([Buffer.from('{"k":"'), invalidUtf8(r), Buffer.from('","t":"a'), invalidUtf8(r), Buffer.from('"}')]);
  return r.pick([
    () => http('utf8', f, 'POST', `/${r.pick(f.indices)}/_search`, body),
    () => http('utf8', f, 'PUT', `/${r.pick(f.indices)}/_doc/u${r.int(5)}`, doc),
    () => http('utf8', f, 'POST', '/_bulk', Buffer.concat([Buffer.from(`{"index":{"_index":"${r.pick(f.indices)}"}}\n`), doc, Buffer.from('\n')]), { 'content-type': 'application/x-ndjson' }),
    () => http('utf8', f, 'GET', `/${r.pick(f.indices)}/_doc/%FF%FE`),
    () => http('utf8', f, 'GET', `/_search/scroll/%C0%AF${f.scrollId.slice(3)}`),
    () => http('utf8', f, 'POST', '/_search/scroll', Buffer.concat([Buffer.from('{"scroll_id":"'), invalidUtf8(r), Buffer.from('"}')])),
  ])();
};

const bulk: Gen = (r, f) => {
  const idx = r.pick(f.indices);
  const action = () => r.pick(['index', 'create', 'update', 'delete', 'upsert', '', 'INDEX']);
  const meta = () => r.pick<unknown>([
    { [action()]: { _index: idx, _id: String(r.int(20)) } },
    { [action()]: { _index: junk(r), _id: junk(r), routing: junk(r) } },
    { [action()]: {} },
    { [action()]: junk(r) },
    { index: { _index: idx }, delete: { _id: '1' } },
    junk(r),
  ]);
  const source = () => r.pick<unknown>([{ n: r.int(10), k: 'k1' }, junk(r), { n: junk(r), k: junk(r), d: junk(r) }, { doc: { n: 1 } }]);
  const lines: string[] = [];
  for (let i = 0, n = 1 + r.int(6); i < n; i++) {
    lines.push(r.chance(0.1) ? mangle(r, toJson(meta())) : toJson(meta()));
    if (r.chance(0.85)) lines.push(r.chance(0.1) ? mangle(r, toJson(source())) : toJson(source()));
  }
  let text = lines.join(r.pick(['\n', '\n', '\r\n', '\n\n']));
  if (r.chance(0.8)) text += '\n';
  if (r.chance(0.05)) text = r.pick(['', '\n', '\n\n\n', ' ', '{}\n', '[]\n']);
  return http('bulk', f, r.pick(['POST', 'PUT']), r.pick(['/_bulk', `/${idx}/_bulk`, `/${scratch(r)}/_bulk`]) + r.pick(['', '?refresh=true', '?refresh=wait_for', '?refresh=bad']), text, {
    'content-type': 'application/x-ndjson',
  });
};

/** A real id with damage: flipped characters, truncation, extension, re-encoding. */
function forge(r: Rng, id: string): string {
  switch (r.int(8)) {
    case 0: return id.slice(0, r.int(id.length));
    case 1: {
      const i = r.int(id.length);
      return id.slice(0, i) + r.pick(['A', '_', '-', '=', '/', '+', '!']) + id.slice(i + 1);
    }
    case 2: return id + randomB64(r, r.int(40));
    case 3: return randomB64(r, r.pick([1, 8, 33, 100, 2000]));
    case 4: return Buffer.from(id, 'base64url').toString('base64');
    case 5: return Buffer.from(toJson(junk(r))).toString('base64url');
    case 6: return r.pick(['', '_all', '*', 'null', '%', '..', 'FGluY2x1ZGVfY29udGV4dF91dWlk']);
    default: return id.split('').reverse().join('');
  }
}

const forgedIds: Gen = (r, f) => {
  const base = r.pick([f.scrollId, f.pitId, f.clearedScrollId]);
  const id = r.chance(0.15) ? base : forge(r, base);
  const enc = encodeURIComponent(id);
  return r.pick([
    () => http('ids', f, r.pick(['GET', 'POST']), '/_search/scroll', toJson({ scroll: r.pick(['1m', junk(r)]), scroll_id: id })),
    () => http('ids', f, 'GET', `/_search/scroll/${enc}?scroll=1m`),
    () => http('ids', f, 'GET', `/_search/scroll?scroll_id=${enc}&scroll=${r.pick(['1m', '2d', 'x'])}`),
    () => http('ids', f, 'DELETE', `/_search/scroll/${enc},${encodeURIComponent(forge(r, id))}`),
    () => http('ids', f, 'DELETE', '/_search/scroll', toJson({ scroll_id: r.pick([id, [id, junk(r)], junk(r)]) })),
    () => http('ids', f, 'POST', '/_search', toJson({ pit: { id, keep_alive: r.pick(['1m', junk(r)]) }, size: 2, sort: [{ n: 'asc' }] })),
    () => http('ids', f, 'DELETE', '/_pit', toJson({ id: r.pick([id, junk(r)]) })),
    () => http('ids', f, 'GET', `/_contexts/${enc}`),
  ])();
};

const junkAuth: Gen = (r, f) => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const value = r.pick([
    `Basic ${randomB64(r, 12)}`, `Basic ${b64('nocolon')}`, `Basic ${b64(':')}`, `Basic ${b64('elastic:wrong')}`, 'Basic', 'Basic =',
    `Basic ${b64(`${'u'.repeat(5000)}:p`)}`, `Bearer ${randomB64(r, 40)}`, 'Bearer', `Bearer ${'x'.repeat(8000)}`,
    `ApiKey ${randomB64(r, 30)}`, `ApiKey ${b64(`${randomB64(r, 10)}:${randomB64(r, 10)}`)}`, `ApiKey ${forge(r, f.apiKey)}`, 'ApiKey :',
    `Negotiate ${randomB64(r, 20)}`, 'basic ZWxhc3RpYzo=', `Basic ${b64('elastic:\u00ff\u0000')}`, `${f.auth}, ${f.auth}`, '\t', 'ApiKey ===',
  ]);
  // (never a password change: a forged header may still be a valid API key of the superuser)
  const path = r.pick(['/', '/_security/_authenticate', `/${r.pick(f.indices)}/_search`, '/_security/api_key', '/_security/oauth2/token', '/_pit', '/_nodes/stats']);
  const c = http('auth', f, path === '/_security/oauth2/token' ? 'POST' : 'GET', path, path.includes('token') ? toJson({ grant_type: 'client_credentials' }) : undefined);
  if (c.kind === 'http') c.headers.authorization = value;
  if (c.kind === 'http' && r.chance(0.1)) c.headers['es-secondary-authorization'] = value;
  return c;
};

const bombs = new Map<string, Buffer>();
/** `mb` MiB of one byte, gzipped (kept: compressing 120 MiB each time would dominate the run). */
function bomb(mb: number, fill: number): Buffer {
  const key = `${mb}/${fill}`;
  let b = bombs.get(key);
  if (!b) bombs.set(key, (b = gzipSync(Buffer.alloc(mb * 1024 * 1024, fill), { level: 9 })));
  return b;
}

const compressed: Gen = (r, f) => {
  const json = Buffer.from(toJson(validSearch(r)));
  const [enc, body] = r.pick<[string, Buffer]>([
    ['gzip', gzipSync(json)],
    ['deflate', deflateSync(json)],
    ['deflate', deflateRawSync(json)],
    ['gzip', gzipSync(json).subarray(0, 10 + r.int(10))],
    ['gzip', json],
    ['deflate', Buffer.from([0x78, 0x9c, 1, 2, 3, 4])],
    ['gzip', gzipSync(gzipSync(json))],
    ['gzip', bomb(r.pick([1, 16, 120]), r.pick([0, 0x20]))], // bombs around the 100 MB cap
    ['br', json],
    ['gzip, deflate', json],
  ]);
  return http('compressed', f, 'POST', r.pick([`/${r.pick(f.indices)}/_search`, '/_bulk', `/${r.pick(f.indices)}/_doc`]), body, { 'content-encoding': enc });
};

const rawSocket: Gen = (r, f) => {
  const bytes = r.pick<() => string | Buffer>([
    () => Buffer.from(Array.from({ length: 1 + r.int(300) }, () => r.int(256))),
    () => Buffer.from([0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03]),
    () => 'GET /\r\n\r\n',
    () => `FOO / HTTP/1.1\r\nHost: x\r\nAuthorization: ${f.auth}\r\n\r\n`,
    () => `GET /${'a'.repeat(20000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    () => `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(70000)}\r\n\r\n`,
    () => 'GET / HTTP/1.1\r\nNoColonHeader\r\n\r\n',
    () => `POST /_search HTTP/1.1\r\nHost: x\r\nAuthorization: ${f.auth}\r\nContent-Length: 100\r\n\r\n{"size":`,
    () => `POST /_search HTTP/1.1\r\nHost: x\r\nAuthorization: ${f.auth}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
    () => `POST /_search HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\n{}`,
    () => `GET / HTTP/1.1\r\nHost: x\r\nAuthorization: ${f.auth}\r\n\r\n`.repeat(20),
    () => `GET / HTTP/9.9\r\nHost: x\r\n\r\n`,
    () => `GET /_search HTTP/1.1\r\nHost: x\r\nAuthorization: ${f.auth}\r\nContent-Length: -1\r\n\r\n`,
    () => '\r\n\r\n\r\n',
  ])();
  return { kind: 'raw', label: 'raw', bytes: Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes, 'latin1') };
};

/** Generators and their weights. */
export const GENERATORS: Array<[Gen, number]> = [
  [paging, 15], [urlParams, 8], [malformed, 10], [deepNesting, 6], [numbers, 6], [longStrings, 3], [badUtf8, 4], [bulk, 8],
  [forgedIds, 8], [junkAuth, 6], [compressed, 3], [rawSocket, 4], [randomRoute, 10], [documents, 6], [admin, 4], [security, 4],
  [edges, 4],
];

const TOTAL = GENERATORS.reduce((a, [, w]) => a + w, 0);

/** The `i`-th case of a run: a function of (seed, i) only, so any case can be replayed alone. */
export function caseAt(seed: number, i: number, f: Fixtures): FuzzCase {
  const r = new Rng((seed * 0x9e3779b1) ^ Math.imul(i + 1, 0x85ebca6b));
  let x = r.int(TOTAL);
  for (const [g, w] of GENERATORS) {
    if (x < w) return g(r, f);
    x -= w;
  }
  return paging(r, f);
}
