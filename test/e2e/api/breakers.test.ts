/**
 * Each circuit breaker trips with ES's 429 `circuit_breaking_exception` body when its limit is made
 * tiny through `PUT /_cluster/settings` (all of them are dynamic), `search.max_buckets` gives ES's
 * `too_many_buckets_exception`, `_nodes/stats/breaker` shows real figures and trip counts, and the
 * routes ES never lets trip (cluster settings, node stats) keep answering so limits can be undone.
 */
import { request } from 'node:http';
import v8 from 'node:v8';
import { startTestNode, type TestNode } from '../../support/node';

jest.setTimeout(60_000);

let t: TestNode;

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${t.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

const put = (settings: Record<string, unknown>) => call('PUT', '/_cluster/settings', { persistent: settings });
const breakerStats = async () => Object.values((await call('GET', '/_nodes/stats/breaker')).body.nodes as Record<string, any>)[0].breakers;

beforeAll(async () => {
  t = await startTestNode();
  await call('PUT', '/b', { settings: { number_of_shards: 1 }, mappings: { properties: { tag: { type: 'keyword' }, n: { type: 'long' } } } });
  const lines = Array.from({ length: 300 }, (_, i) => `{"index":{"_id":"${i}"}}\n{"tag":"t${i % 30}","n":${i}}\n`).join('');
  const res = await fetch(`${t.url}/b/_bulk?refresh=true`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: lines });
  expect(res.status).toBe(200);
});
afterAll(() => t.stop());

afterEach(async () => {
  // null removes a setting (back to ES's default)
  const keys = ['network.breaker.inflight_requests.limit', 'indices.breaker.request.limit', 'indices.breaker.total.limit', 'search.max_buckets'];
  expect((await put(Object.fromEntries(keys.map((k) => [k, null])))).status).toBe(200);
});

describe('_nodes/stats/breaker', () => {
  it("shows the node's limits from the V8 heap, what is in use and the trips", async () => {
    const b = await breakerStats();
    const heap = v8.getHeapStatistics().heap_size_limit;
    expect(Object.keys(b)).toEqual(['request', 'fielddata', 'inflight_requests', 'accounting', 'parent']);
    expect(b.request).toMatchObject({ limit_size_in_bytes: Math.trunc(heap * 0.6), estimated_size_in_bytes: 0, overhead: 1, tripped: 0 });
    expect(b.inflight_requests).toMatchObject({ limit_size_in_bytes: heap, overhead: 2 });
    expect(b.parent.limit_size_in_bytes).toBe(Math.trunc(heap * 0.95));
    expect(b.parent.estimated_size_in_bytes).toBeGreaterThan(10 * 1024 * 1024); // the heap in use (real memory)
    expect(b.parent.limit_size).toMatch(/^\d+(\.\d)?(mb|gb)$/);
  });
});

describe('in-flight requests breaker', () => {
  it('refuses a body that would pass network.breaker.inflight_requests.limit (overhead 2) with 429', async () => {
    expect((await put({ 'network.breaker.inflight_requests.limit': '1kb' })).body).toEqual({
      acknowledged: true, persistent: { network: { breaker: { inflight_requests: { limit: '1kb' } } } }, transient: {},
    });
    const body = JSON.stringify({ query: { match_all: {} }, _name: 'x'.repeat(600) }).slice(0, 600);
    const padded = `${body.slice(0, -1)}${' '.repeat(600 - body.length)}}`;
    expect(padded.length).toBe(600);
    const r = await call('POST', '/b/_search', padded);
    const reason = '[inflight_requests] Data too large, data for [<http_request>] would be [1200/1.1kb], which is larger than the limit of [1024/1kb]';
    expect([r.status, r.body]).toEqual([429, {
      error: {
        root_cause: [{ type: 'circuit_breaking_exception', reason, bytes_wanted: 1200, bytes_limit: 1024, durability: 'TRANSIENT' }],
        type: 'circuit_breaking_exception', reason, bytes_wanted: 1200, bytes_limit: 1024, durability: 'TRANSIENT',
      },
      status: 429,
    }]);
    expect((await call('POST', '/b/_search', { size: 0 })).status).toBe(200); // small bodies pass; nothing stays reserved
    const b = await breakerStats();
    // every body was given back once its response was sent (the stats request has none)
    expect([b.inflight_requests.tripped, b.inflight_requests.limit_size_in_bytes, b.inflight_requests.estimated_size_in_bytes]).toEqual([1, 1024, 0]);
  });

  it('counts a chunked body as it arrives, before buffering it, and closes the connection it did not read', async () => {
    await put({ 'network.breaker.inflight_requests.limit': '1kb' });
    const u = new URL(`${t.url}/b/_search`);
    const answer = await new Promise<{ status: number; connection?: string; body: string }>((resolve, reject) => {
      const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body: text }));
      });
      req.on('error', reject);
      req.write(`{"size":0,"_x":"${'a'.repeat(450)}`); // 400-ish bytes: 2 x 466 < 1024
      setTimeout(() => req.write('b'.repeat(500)), 50); // now past the limit
      setTimeout(() => req.end('"}'), 100);
    });
    expect([answer.status, answer.connection, JSON.parse(answer.body).error.type]).toEqual([429, 'close', 'circuit_breaking_exception']);
  });
});

describe('request breaker', () => {
  it("trips a shard's hit arrays: all shards failed with ES's cause, 429", async () => {
    await put({ 'indices.breaker.request.limit': '1kb' });
    const r = await call('POST', '/b/_search', { size: 100 });
    expect(r.status).toBe(429);
    expect(r.body.error).toMatchObject({ type: 'search_phase_execution_exception', reason: 'all shards failed', phase: 'query' });
    expect(r.body.error.root_cause).toEqual([{
      type: 'circuit_breaking_exception',
      reason: '[request] Data too large, data for [<search_hits>] would be [13600/13.2kb], which is larger than the limit of [1024/1kb]',
      bytes_wanted: 13600, bytes_limit: 1024, durability: 'TRANSIENT',
    }]);
  });

  it('trips an aggregation as its buckets are built (<agg [name]>)', async () => {
    await put({ 'indices.breaker.request.limit': '1kb' });
    const r = await call('POST', '/b/_search', { size: 0, aggs: { tags: { terms: { field: 'tag', size: 100 } } } });
    expect(r.status).toBe(429);
    expect(r.body.error.root_cause[0].reason).toMatch(/^\[request\] Data too large, data for \[<agg \[tags\]>\] would be \[\d+\/[\d.]+kb\], which is larger than the limit of \[1024\/1kb\]$/);
    const b = await breakerStats();
    expect(b.request.tripped).toBeGreaterThanOrEqual(1);
    expect(b.request.estimated_size_in_bytes).toBe(0); // every reservation was given back
  });
});

describe('parent breaker', () => {
  it('trips on the real heap in use, yet cluster settings and node stats still answer', async () => {
    expect((await put({ 'indices.breaker.total.limit': '1mb' })).status).toBe(200);
    const r = await call('GET', '/b/_search');
    expect(r.status).toBe(429);
    expect(r.body.error.type).toBe('circuit_breaking_exception');
    // the real heap in use is the test process's (mb or gb, as ES prints it)
    expect(r.body.error.reason).toMatch(
      /^\[parent\] Data too large, data for \[<http_request>\] would be \[(\d+)\/[\d.]+[kmg]?b\], which is larger than the limit of \[1048576\/1mb\], real usage: \[\1\/[\d.]+[kmg]?b\], new bytes reserved: \[0\/0b\], usages \[request=0\/0b, fielddata=0\/0b, inflight_requests=\d+\/[\d.]+k?b, accounting=0\/0b\]$/,
    );
    expect(r.body.error).toMatchObject({ bytes_limit: 1048576, durability: 'TRANSIENT' });
    const b = await breakerStats(); // never trips (ES: canTripCircuitBreaker false)
    expect(b.parent.tripped).toBeGreaterThanOrEqual(1);
  });
});

describe('search.max_buckets', () => {
  it('is a dynamic cluster setting counted on the shard: too_many_buckets_exception, 400', async () => {
    await put({ 'search.max_buckets': 10 });
    expect((await call('GET', '/_cluster/settings')).body.persistent).toEqual({ search: { max_buckets: '10' } });
    const r = await call('POST', '/b/_search', { size: 0, aggs: { tags: { terms: { field: 'tag', size: 20 } } } });
    expect(r.status).toBe(400);
    expect(r.body.error.type).toBe('search_phase_execution_exception');
    expect(r.body.error.root_cause).toEqual([{
      type: 'too_many_buckets_exception',
      reason: 'Trying to create too many buckets. Must be less than or equal to: [10] but this number of buckets was exceeded. This limit can be set by changing the [search.max_buckets] cluster level setting.',
      max_buckets: 10,
    }]);
    await put({ 'search.max_buckets': null });
    expect((await call('POST', '/b/_search', { size: 0, aggs: { tags: { terms: { field: 'tag', size: 20 } } } })).status).toBe(200);
  });
});

describe('bad values', () => {
  it.each([
    ['indices.breaker.request.limit', '150%', 'percentage should be in [0-100], got [150]'],
    ['indices.breaker.total.limit', '12', 'failed to parse setting [indices.breaker.total.limit] with value [12] as a size in bytes: unit is missing or unrecognized'],
    ['indices.breaker.request.overhead', -1, 'Failed to parse value [-1] for setting [indices.breaker.request.overhead] must be >= 0.0'],
    ['search.max_buckets', 'many', 'Failed to parse value [many] for setting [search.max_buckets]'],
    ['indices.breaker.total.use_real_memory', 'yes', 'Failed to parse value [yes] as only [true] or [false] are allowed.'],
  ])('refuses %s = %s with a 400', async (key, value, reason) => {
    const r = await put({ [key]: value });
    expect([r.status, r.body.error.type, r.body.error.reason]).toEqual([400, 'illegal_argument_exception', reason]);
  });
});
