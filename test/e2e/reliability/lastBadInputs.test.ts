/**
 * Issue 21 item 5, the last bad inputs the fuzz found: `q=` without `df`, a parse error that must be
 * a 400 (never a shard failure), an empty `_id` and an unknown `pipeline` (ES's 400s, never a hang),
 * an `Expect` the server does not know (an ES-shaped body, not an empty one), and credentials
 * checked before a compressed body is read, let alone inflated.
 */
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { ELASTIC_PASSWORD, startTestNode, type TestNode } from '../../support/node';
import { raw } from '../search/helpers';

jest.setTimeout(60_000);

let t: TestNode;
const basic = (pw: string) => ({ authorization: `Basic ${Buffer.from(`elastic:${pw}`).toString('base64')}` });
const req = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => raw(t, method, path, body, { ...basic(ELASTIC_PASSWORD), ...headers });

beforeAll(async () => {
  t = await startTestNode({ security: true });
  expect((await req('PUT', '/lb', { mappings: { properties: { title: { type: 'text' }, n: { type: 'long' } } } })).status).toBe(200);
  expect((await req('PUT', '/lb/_doc/1?refresh=true', { title: 'quick brown fox', n: 7 })).status).toBe(201);
});
afterAll(() => t.stop());

it('searches every field for q= without df, a long one included, and answers a parse error with 400', async () => {
  const long = await req('GET', `/_search?q=${'q'.repeat(250)}`);
  expect([long.status, long.json.hits.total.value]).toEqual([200, 0]);
  const hit = await req('GET', '/lb/_search?q=brown');
  expect(hit.json.hits.hits.map((h: { _id: string }) => h._id)).toEqual(['1']);
  const bad = await req('GET', '/lb/_search?q=title:(fox');
  expect([bad.status, bad.json.error.type, bad.json.error.root_cause[0].type]).toEqual([400, 'search_phase_execution_exception', 'query_shard_exception']);
  expect(JSON.stringify(bad.json)).not.toMatch(/no_shard_available|unavailable_shards/);
});

it('fails a bulk item with an empty _id with ES’s 400, at once, whatever the content type and pipeline', async () => {
  const start = Date.now();
  const res = await req('PUT', '/_bulk?pipeline=x', '{"index":{"_index":"lb","_id":""}}\n{"a":1}\n{"create":{"_index":"lb","_id":""}}\n{"a":2}\n', { 'content-type': 'application/json' });
  expect(Date.now() - start).toBeLessThan(2_000);
  expect(res.status).toBe(200);
  expect(res.json.items.map((i: Record<string, { status: number; error: { type: string; reason: string } }>) => {
    const v = Object.values(i)[0];
    return [v.status, v.error.type, v.error.reason];
  })).toEqual([
    [400, 'illegal_argument_exception', 'if _id is specified it must not be empty'],
    [400, 'illegal_argument_exception', 'if _id is specified it must not be empty'],
  ]);
  const plain = await req('POST', '/_bulk', '{"index":{"_index":"lb","_id":""}}\n{"a":1}\n');
  expect(plain.json.items[0].index.status).toBe(400);
  expect((await req('GET', '/lb/_count')).json.count).toBe(1);
});

it('refuses a pipeline that does not exist as ES does (none exist here), and takes _none', async () => {
  const bulk = await req('POST', '/_bulk?pipeline=x', '{"index":{"_index":"lb","_id":"p1"}}\n{"a":1}\n{"index":{"_index":"lb","_id":"p2","pipeline":"y"}}\n{"a":1}\n{"delete":{"_index":"lb","_id":"nope"}}\n');
  expect(bulk.json.items.map((i: Record<string, { status: number; error?: { reason: string } }>) => [Object.values(i)[0].status, Object.values(i)[0].error?.reason])).toEqual([
    [400, 'pipeline with id [x] does not exist'],
    [400, 'pipeline with id [y] does not exist'],
    [404, undefined],
  ]);
  const doc = await req('PUT', '/lb/_doc/p3?pipeline=z', { a: 1 });
  expect([doc.status, doc.json.error.type, doc.json.error.reason]).toEqual([400, 'illegal_argument_exception', 'pipeline with id [z] does not exist']);
  expect((await req('PUT', '/lb/_doc/p4?pipeline=_none', { a: 1 })).status).toBe(201);
  expect((await req('POST', '/_bulk?pipeline=_none', '{"index":{"_index":"nopipe","_id":"1"}}\n{"a":1}\n')).json.errors).toBe(false);
  expect((await req('POST', '/_bulk?pipeline=x', '{"index":{"_index":"never","_id":"1"}}\n{"a":1}\n')).json.errors).toBe(true);
  expect((await req('GET', '/never')).status).toBe(404); // the failed items created no index
});

it.each(['something-else', '100-continue, x'])('answers an unsupported Expect (%s) with an ES-shaped 417', async (expectation) => {
  const port = Number(new URL(t.url).port);
  const out = await new Promise<string>((resolve) => {
    const s = connect(port, '127.0.0.1');
    let text = '';
    s.on('data', (d) => (text += d));
    s.on('close', () => resolve(text));
    s.write(`GET / HTTP/1.1\r\nHost: x\r\nExpect: ${expectation}\r\n\r\n`);
    setTimeout(() => s.end(), 1_000);
  });
  expect(out).toMatch(/^HTTP\/1\.1 417 /);
  const body = JSON.parse(out.slice(out.indexOf('\r\n\r\n') + 4));
  expect(body).toMatchObject({ status: 417, error: { type: 'illegal_argument_exception', reason: `unsupported expectation [${expectation}]` } });
});

it('answers Expect: 100-continue with 100 Continue, then the request once its body follows', async () => {
  const port = Number(new URL(t.url).port);
  const body = '{"size":0}';
  const auth = basic(ELASTIC_PASSWORD).authorization;
  const out = await new Promise<string>((resolve) => {
    const s = connect(port, '127.0.0.1');
    let text = '';
    s.on('data', (d) => {
      text += d;
      if (/^HTTP\/1\.1 100 Continue\r\n\r\n$/.test(text)) s.write(body);
      if (/\r\n\r\n\{.*\}$/s.test(text.slice(text.indexOf('HTTP/1.1 200')))) s.end();
    });
    s.on('close', () => resolve(text));
    s.write(`POST /lb/_search HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`);
    setTimeout(() => s.end(), 3_000);
  });
  expect(out).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
});

it('checks credentials before it reads a compressed body: a wrong password with a gzip bomb gets 401, the right one 413', async () => {
  const bomb = gzipSync(Buffer.alloc(200 * 1024 * 1024, 0x20)); // 200 MB of spaces, ~200 KB on the wire
  const headers = { 'content-type': 'application/json', 'content-encoding': 'gzip' };
  const send = async (h: Record<string, string>) => {
    const r = await fetch(`${t.url}/lb/_search`, { method: 'POST', headers: { ...h, ...headers }, body: bomb });
    return [r.status, ((await r.json()) as { error: { type: string } }).error.type];
  };
  expect(await send(basic('wrong-password'))).toEqual([401, 'security_exception']);
  expect(await send({})).toEqual([401, 'security_exception']);
  expect(await send(basic(ELASTIC_PASSWORD))).toEqual([413, 'content_too_long_exception']);
});
