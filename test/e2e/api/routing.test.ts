/**
 * Routing discipline (issue 13 item 1) and the compatibility header (item 8): a first path segment
 * starting with `_` names an API, never an index; index names are validated with ES's texts;
 * `compatible-with` 7 and 8 (and 9, for the v9 client) are served, anything else is refused.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { raw } from '../search/helpers';

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'books' });
  await t.es.index({ index: 'books', id: '1', document: { title: 'a' }, refresh: true });
});
afterAll(async () => {
  await t?.stop();
});

/** ES API names (rest-api-spec), implemented here or not: none of them may ever read as an index. */
const API_NAMES = [
  '_field_caps', '_rank_eval', '_render', '_scripts', '_snapshot', '_ingest', '_ml', '_xpack', '_license', '_features',
  '_resolve', '_sql', '_eql', '_query', '_transform', '_rollup', '_ilm', '_slm', '_ccr', '_watcher', '_migration', '_fleet',
  '_enrich', '_graph', '_autoscaling', '_dangling', '_flush', '_forcemerge', '_cache', '_segments', '_recovery',
  '_shard_stores', '_validate', '_explain', '_termvectors', '_mtermvectors', '_analyze', '_open', '_close', '_shrink',
  '_split', '_clone', '_rollover', '_msearch', '_mget', '_reindex', '_update_by_query', '_delete_by_query', '_tasks',
  '_nodes', '_cat', '_stats', '_cluster', '_alias', '_aliases', '_template', '_index_template', '_data_stream', '_search',
  '_count', '_bulk', '_pit', '_refresh', '_mapping', '_settings', '_security', '_doc', '_create', '_update', '_source',
  '_nope', '_foo', '_x_y_z',
];
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'HEAD'];

it('never answers an underscore path as an index: every unrouted one is 400 no handler or 405 with Allow', async () => {
  let checked = 0;
  for (const name of API_NAMES) {
    for (const path of [`/${name}`, `/${name}/x`, `/${name}/_search`, `/${name}/_doc/1`, `/${name}/x/y/z`]) {
      for (const method of METHODS) {
        const m = t.sys.router.match(method, path);
        const res = await raw(t, method, path);
        const what = `${method} ${path} -> ${res.status} ${res.text.slice(0, 200)}`;
        if (m.kind === 'found') {
          // A real API (maybe another helper's): it answers what it answers, but never with the
          // underscore segment bound to a path parameter.
          expect([what, m.route.pattern.startsWith('/{')]).toEqual([what, false]);
          continue;
        }
        expect([what, res.text.includes('index_not_found_exception')]).toEqual([what, false]);
        checked++;
        if (m.kind === 'none') {
          expect([what, res.status]).toEqual([what, 400]);
          if (method !== 'HEAD') expect(res.json).toEqual({ error: `no handler found for uri [${path}] and method [${method}]`, status: 400 });
        } else {
          expect([what, res.status]).toEqual([what, 405]);
          expect(res.headers.get('allow')).toBe(m.allowed.join(','));
          if (method !== 'HEAD') {
            expect(res.json).toEqual({ error: `Incorrect HTTP method for uri [${path}] and method [${method}], allowed: [${m.allowed.join(', ')}]`, status: 405 });
          }
        }
      }
    }
  }
  expect(checked).toBeGreaterThan(500);
});

it('keeps the query string in the no-handler message, as ES prints the uri', async () => {
  const res = await raw(t, 'GET', '/_nope?pretty=true&x=1');
  expect(res.status).toBe(400);
  expect(res.json).toEqual({ error: 'no handler found for uri [/_nope?pretty=true&x=1] and method [GET]', status: 400 });
});

it('answers a wrong method on a known API with 405 and the Allow header', async () => {
  const res = await raw(t, 'GET', '/_bulk');
  expect(res.status).toBe(405);
  expect(res.headers.get('allow')).toBe('POST,PUT');
  expect(res.json).toEqual({ error: 'Incorrect HTTP method for uri [/_bulk] and method [GET], allowed: [POST, PUT]', status: 405 });
});

it('still treats _all as every index', async () => {
  const res = await raw(t, 'GET', '/_all/_search');
  expect(res.status).toBe(200);
  expect(res.json.hits.total.value).toBe(1);
  expect((await raw(t, 'GET', '/_all/_count')).json.count).toBe(1);
});

describe('index names', () => {
  const cases: Array<[string, string]> = [
    ['Books', 'must be lowercase'],
    ['a*b', 'must not contain the following characters [ , ", *, \\, <, |, ,, >, /, ?]'],
    ['a"b', 'must not contain the following characters [ , ", *, \\, <, |, ,, >, /, ?]'],
    ['a#b', "must not contain '#'"],
    ['a:b', "must not contain ':'"],
    ['-ab', "must not start with '_', '-', or '+'"],
    ['+ab', "must not start with '_', '-', or '+'"],
    ['x'.repeat(256), 'index name is too long, (256 > 255)'],
  ];
  it.each(cases)('refuses to create [%s] with invalid_index_name_exception', async (name, why) => {
    const res = await raw(t, 'PUT', `/${encodeURIComponent(name)}`);
    expect(res.status).toBe(400);
    expect(res.json.error.type).toBe('invalid_index_name_exception');
    expect(res.json.error.reason).toBe(`Invalid index name [${name}], ${why}`);
    expect(res.json.error).toMatchObject({ index_uuid: '_na_', index: name });
  });

  it('refuses an auto-created index with a bad name through the document API and bulk', async () => {
    const doc = await raw(t, 'PUT', '/Upper/_doc/1', { a: 1 });
    expect(doc.status).toBe(400);
    expect(doc.json.error.reason).toBe('Invalid index name [Upper], must be lowercase');
    const bulk = await raw(t, 'POST', '/_bulk', `${JSON.stringify({ index: { _index: 'a#b', _id: '1' } })}\n{"a":1}\n`);
    expect(bulk.status).toBe(200);
    expect(bulk.json.items[0].index).toMatchObject({ status: 400, error: { type: 'invalid_index_name_exception', reason: "Invalid index name [a#b], must not contain '#'" } });
  });

  it('answers an underscore index name at the root as an unknown API, not as a name to validate', async () => {
    const res = await raw(t, 'PUT', '/_books');
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'no handler found for uri [/_books] and method [PUT]', status: 400 });
  });
});

describe('_data_stream', () => {
  it('answers a name that is not a data stream with 404 index_not_found_exception', async () => {
    for (const name of ['nope', 'books']) {
      const res = await raw(t, 'GET', `/_data_stream/${name}`);
      expect(res.status).toBe(404);
      expect(res.json.error).toMatchObject({ type: 'index_not_found_exception', reason: `no such index [${name}]` });
    }
  });

  it('lists no data streams', async () => {
    expect((await raw(t, 'GET', '/_data_stream')).json).toEqual({ data_streams: [] });
    expect((await raw(t, 'GET', '/_data_stream/logs-*')).json).toEqual({ data_streams: [] });
    const v8 = await t.es.indices.getDataStream();
    expect(v8.data_streams).toEqual([]);
  });

  it('refuses to create one without a data-stream template', async () => {
    const res = await raw(t, 'PUT', '/_data_stream/logs-x');
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ type: 'illegal_argument_exception', reason: 'no matching index template found for data stream [logs-x]' });
  });
});

describe('compatible-with', () => {
  const vnd = (n: string | number) => `application/vnd.elasticsearch+json; compatible-with=${n}`;
  it.each([7, 8, 9])('serves compatible-with=%s', async (n) => {
    const res = await raw(t, 'POST', '/books/_search', { size: 1 }, { accept: vnd(n), 'content-type': vnd(n) });
    expect(res.status).toBe(200);
    expect(res.json.hits.total.value).toBe(1);
    expect((await raw(t, 'GET', '/', undefined, { accept: vnd(n) })).status).toBe(200);
  });

  it.each([6, 10, 0])('refuses Accept compatible-with=%s with media_type_header_exception', async (n) => {
    const res = await raw(t, 'GET', '/books/_search', undefined, { accept: vnd(n) });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({
      error: {
        root_cause: [{ type: 'media_type_header_exception', reason: 'Invalid media-type value on headers [Accept, Content-Type]' }],
        type: 'media_type_header_exception',
        reason: 'Invalid media-type value on headers [Accept, Content-Type]',
        caused_by: { type: 'status_exception', reason: `Accept version must be either version 8 or 7, but found ${n}. Accept=${vnd(n)}` },
      },
      status: 400,
    });
  });

  it('refuses an unknown Content-Type version on a request with a body', async () => {
    const res = await raw(t, 'POST', '/books/_search', { size: 1 }, { accept: vnd(8), 'content-type': vnd(5) });
    expect(res.status).toBe(400);
    expect(res.json.error.caused_by.reason).toBe(`Content-Type version must be either version 8 or 7, but found 5. Content-Type=${vnd(5)}`);
  });

  it('refuses differing versions on Accept and Content-Type', async () => {
    const res = await raw(t, 'POST', '/books/_search', { size: 1 }, { accept: vnd(7), 'content-type': vnd(8) });
    expect(res.status).toBe(400);
    expect(res.json.error.type).toBe('media_type_header_exception');
    expect(res.json.error.caused_by.reason).toBe(
      'A compatible version is required on both Content-Type and Accept headers if either one has requested a compatible version ' +
        `and the compatible versions must match. Accept=${vnd(7)}, Content-Type=${vnd(8)}`,
    );
  });

  it('refuses a compatible version on one header only when there is a body', async () => {
    const res = await raw(t, 'POST', '/books/_search', { size: 1 }, { accept: vnd(8), 'content-type': 'application/json' });
    expect(res.status).toBe(400);
    expect(res.json.error.caused_by.reason).toBe(
      `A compatible version is required on both Content-Type and Accept headers if either one has requested a compatible version. Accept=${vnd(8)}, Content-Type=application/json`,
    );
  });

  it('refuses a version that is not a number', async () => {
    const res = await raw(t, 'GET', '/', undefined, { accept: vnd('x') });
    expect(res.status).toBe(400);
    expect(res.json.error.type).toBe('media_type_header_exception');
  });

  it('checks the headers before routing, as ES does', async () => {
    const res = await raw(t, 'GET', '/_nope', undefined, { accept: vnd(6) });
    expect(res.status).toBe(400);
    expect(res.json.error.type).toBe('media_type_header_exception');
  });

  it('keeps the official v8 and v9 clients working', async () => {
    expect((await t.es.search({ index: 'books' })).hits.hits).toHaveLength(1);
    expect((await t.es9.search({ index: 'books' })).hits.hits).toHaveLength(1);
  });
});
