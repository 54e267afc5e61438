import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import pino from 'pino';
import { startEdge, type Edge } from '../../../actors/edge/httpEdge';
import { Router } from '../../../actors/edge/router';

/** Sends raw bytes and returns everything the server answers before closing. */
function raw(edge: Edge, bytes: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(edge.port, '127.0.0.1');
    let out = '';
    s.on('data', (d) => (out += d.toString('latin1')));
    s.on('error', reject);
    s.on('close', () => resolve(out));
    s.end(bytes);
  });
}

const bodyOf = (response: string) => JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));

describe('HTTP edge: bodies, parser errors and logs', () => {
  let edge: Edge;
  const logs: string[] = [];
  const SCROLL_ID = 'FGluY2x1ZGVfY29udGV4dF91dWlkDXF1ZXJ5QW5kRmV0Y2gBFkRTdXBlclNlY3JldElk';

  beforeAll(async () => {
    const router = new Router()
      .add('POST', '/echo', (req) => ({ body: { bytes: req.body?.length ?? 0, text: req.body?.toString('utf8').slice(0, 20) } }))
      .add('GET', '/_search/scroll/{scroll_id}', (req) => {
        throw new Error(`cannot continue ${req.params.scroll_id}`);
      })
      .add('POST', '/_search/scroll', (req) => {
        throw new Error(`cannot continue ${(req.json<{ scroll_id: string }>() ?? { scroll_id: '' }).scroll_id}`);
      });
    const sink = new Writable({ write: (c, _e, cb) => (logs.push(c.toString()), cb()) });
    edge = await startEdge({ host: '127.0.0.1', port: 0, router, log: pino({ level: 'info' }, sink), maxContentLength: 1024 * 1024 });
  });
  afterAll(() => edge.close());

  const post = (body: Buffer, encoding?: string) =>
    fetch(`${edge.url}/echo`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...(encoding ? { 'content-encoding': encoding } : {}) } });

  it('inflates gzip, zlib deflate and raw deflate bodies', async () => {
    const json = Buffer.from('{"hello":"world"}');
    for (const [enc, body] of [['gzip', gzipSync(json)], ['deflate', deflateSync(json)], ['deflate', deflateRawSync(json)]] as const) {
      const r = await post(body, enc);
      expect([enc, r.status, await r.json()]).toEqual([enc, 200, { bytes: json.length, text: '{"hello":"world"}' }]);
    }
  });

  it('caps the inflated size of a compressed body at http.max_content_length with ES’s 413', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024)); // 64 MiB of zeros in ~64 KiB
    expect(bomb.length).toBeLessThan(1024 * 1024);
    for (const [enc, body] of [['gzip', bomb], ['deflate', deflateSync(Buffer.alloc(64 * 1024 * 1024))]] as const) {
      const r = await post(body, enc);
      expect(r.status).toBe(413);
      expect(r.headers.get('x-elastic-product')).toBe('Elasticsearch');
      expect(await r.json()).toEqual({
        error: {
          root_cause: [{ type: 'content_too_long_exception', reason: 'entity content is too long [1048577] for the configured buffer limit [1048576]' }],
          type: 'content_too_long_exception',
          reason: 'entity content is too long [1048577] for the configured buffer limit [1048576]',
        },
        status: 413,
      });
    }
  });

  it('answers a plain body over the limit with an ES-shaped 413 and closes the connection', async () => {
    const r = await post(Buffer.alloc(1024 * 1024 + 1, 32));
    expect(r.status).toBe(413);
    expect(r.headers.get('connection')).toBe('close');
    expect(((await r.json()) as { error: { type: string } }).error.type).toBe('content_too_long_exception');
  });

  it('answers bodies that do not inflate with a 400, not a 500', async () => {
    const notGzip = await post(Buffer.from('{"plain":"json"}'), 'gzip');
    expect([notGzip.status, ((await notGzip.json()) as { error: unknown }).error]).toEqual([
      400,
      { root_cause: [{ type: 'decompression_exception', reason: 'Input is not in the GZIP format' }], type: 'decompression_exception', reason: 'Input is not in the GZIP format' },
    ]);
    const truncated = await post(gzipSync(Buffer.from('{"a":1}')).subarray(0, 12), 'gzip');
    expect([truncated.status, ((await truncated.json()) as { error: { type: string } }).error.type]).toEqual([400, 'decompression_exception']);
    const badDeflate = await post(Buffer.from([0x78, 0x9c, 0xff, 0xff, 0xff, 0x00]), 'deflate');
    const e = ((await badDeflate.json()) as { error: { type: string; reason: string; caused_by: { type: string } } }).error;
    expect([badDeflate.status, e.type, e.reason, e.caused_by.type]).toEqual([400, 'decompression_exception', 'decompression failure', 'data_format_exception']);
  });

  it('answers Node’s parser errors (oversized headers, unknown method, garbage) in ES’s shape', async () => {
    const big = await raw(edge, `GET /echo HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20000)}\r\n\r\n`);
    expect(big).toMatch(/^HTTP\/1\.1 400 /);
    expect(big).toMatch(/x-elastic-product: Elasticsearch/i);
    expect(bodyOf(big)).toEqual({
      error: {
        root_cause: [{ type: 'too_long_http_header_exception', reason: 'HTTP header is larger than 16384 bytes.' }],
        type: 'too_long_http_header_exception',
        reason: 'HTTP header is larger than 16384 bytes.',
      },
      status: 400,
    });
    const method = await raw(edge, 'FROB /echo HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(method).toMatch(/^HTTP\/1\.1 400 /);
    expect(bodyOf(method).error.reason).toBe('Unexpected http method: FROB');
    const garbage = await raw(edge, Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03, 0x0d, 0x0a, 0x0d, 0x0a]));
    expect(garbage).toMatch(/^HTTP\/1\.1 400 /);
    expect(bodyOf(garbage).status).toBe(400);
  });

  it('never logs a scroll id, whether it came in the path, the query string or the body', async () => {
    logs.length = 0;
    expect((await fetch(`${edge.url}/_search/scroll/${SCROLL_ID}?scroll=1m`)).status).toBe(500);
    const viaBody = await fetch(`${edge.url}/_search/scroll?scroll_id=${SCROLL_ID}`, {
      method: 'POST',
      body: JSON.stringify({ scroll_id: SCROLL_ID }),
      headers: { 'content-type': 'application/json' },
    });
    expect(viaBody.status).toBe(500);
    expect(logs).toHaveLength(2);
    for (const line of logs) {
      expect(line).not.toContain(SCROLL_ID);
      expect(line).not.toContain(SCROLL_ID.slice(0, 40));
      expect(line).toContain('<redacted>');
    }
    expect(JSON.parse(logs[0]).uri).toBe('/_search/scroll/<redacted>?scroll=1m');
    expect(JSON.parse(logs[1]).uri).toBe('/_search/scroll?scroll_id=<redacted>');
  });
});
