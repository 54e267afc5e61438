/**
 * Issue 2 (foundation): indices, mappings, document APIs, bulk, refresh, count, the query DSL
 * subset, sorting, transport rules and both official clients.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { BOOK_MAPPINGS, books, sortedIds, tokens, type Book } from './corpus';
import { bulkIndex, failure, raw } from './helpers';

let t: TestNode;
const corpus = books(40);

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'books', settings: { number_of_shards: 1 }, mappings: BOOK_MAPPINGS as never });
  await bulkIndex(t, 'books', corpus);
});
afterAll(async () => {
  await t?.stop();
});

/** All ids matching a query, through the client (size big enough for the corpus). */
async function matching(index: string, query: unknown): Promise<string[]> {
  const r = await t.es.search({ index, query: query as never, size: 1000 });
  return r.hits.hits.map((h) => h._id!).sort((a, b) => Number(a) - Number(b));
}
const expected = (pred: (b: Book) => boolean) => sortedIds(corpus.filter(pred));

describe('index administration', () => {
  it('creates an index with explicit mappings and one shard, acknowledging it', async () => {
    const r = await raw(t, 'PUT', '/shelf1', { settings: { number_of_shards: 1, number_of_replicas: 0 }, mappings: BOOK_MAPPINGS });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ acknowledged: true, shards_acknowledged: true, index: 'shelf1' });
    const s = await t.es.indices.getSettings({ index: 'shelf1' });
    expect(s.shelf1.settings!.index!.number_of_shards).toBe('1');
    const m = await t.es.indices.getMapping({ index: 'shelf1' });
    expect(m.shelf1.mappings.properties).toEqual(BOOK_MAPPINGS.properties);
  });

  it('creates a three-shard index whose searches report three shards', async () => {
    await t.es.indices.create({ index: 'shelf3', settings: { number_of_shards: 3 }, mappings: BOOK_MAPPINGS as never });
    const s = await t.es.indices.getSettings({ index: 'shelf3' });
    expect(s.shelf3.settings!.index!.number_of_shards).toBe('3');
    await bulkIndex(t, 'shelf3', corpus);
    const r = await t.es.search({ index: 'shelf3', size: 0 });
    expect(r._shards).toEqual({ total: 3, successful: 3, skipped: 0, failed: 0 });
    expect(r.hits.total).toEqual({ value: corpus.length, relation: 'eq' });
  });

  it('refuses to create an index that already exists with resource_already_exists_exception', async () => {
    const r = await raw(t, 'PUT', '/books', {});
    expect(r.status).toBe(400);
    expect(r.json.status).toBe(400);
    expect(r.json.error.type).toBe('resource_already_exists_exception');
    expect(r.json.error.reason).toMatch(/^index \[books\/[^\]]+\] already exists$/);
    expect(r.json.error.root_cause[0].type).toBe('resource_already_exists_exception');
  });

  it('shows dynamically mapped fields in GET _mapping', async () => {
    await t.es.index({ index: 'dyn', id: '1', document: { name: 'Ann', count: 3, ratio: 0.5, ok: true, when: '2024-03-04T05:06:07Z' }, refresh: true });
    const m = await raw(t, 'GET', '/dyn/_mapping');
    expect(m.status).toBe(200);
    const p = m.json.dyn.mappings.properties;
    expect(p.name).toEqual({ type: 'text', fields: { keyword: { type: 'keyword', ignore_above: 256 } } });
    expect(p.count).toEqual({ type: 'long' });
    expect(p.ratio).toEqual({ type: 'float' });
    expect(p.ok).toEqual({ type: 'boolean' });
    expect(p.when).toEqual({ type: 'date' });
  });
});

describe('document APIs', () => {
  it('answers 201 created for a new document and 200 updated when it is overwritten', async () => {
    const a = await raw(t, 'PUT', '/docs/_doc/1', { v: 1 });
    expect(a.status).toBe(201);
    expect(a.json).toMatchObject({ _index: 'docs', _id: '1', _version: 1, result: 'created', _shards: { successful: 1, failed: 0 }, _primary_term: 1 });
    expect(typeof a.json._seq_no).toBe('number');
    const b = await raw(t, 'PUT', '/docs/_doc/1', { v: 2 });
    expect(b.status).toBe(200);
    expect(b.json).toMatchObject({ _index: 'docs', _id: '1', _version: 2, result: 'updated' });
    expect(b.json._seq_no).toBeGreaterThan(a.json._seq_no);
  });

  it('adds forced_refresh to a write made with refresh=true', async () => {
    const r = await raw(t, 'PUT', '/docs/_doc/fr?refresh=true', { v: 1 });
    expect(r.status).toBe(201);
    expect(r.json.forced_refresh).toBe(true);
  });

  it('assigns a 20-character id to a document posted without one', async () => {
    const r = await raw(t, 'POST', '/docs/_doc', { v: 3 });
    expect(r.status).toBe(201);
    expect(r.json._id).toMatch(/^[A-Za-z0-9_-]{20}$/);
  });

  it('rejects _create on an existing id with 409 version_conflict_engine_exception', async () => {
    await raw(t, 'PUT', '/docs/_doc/c1', { v: 1 });
    const r = await raw(t, 'PUT', '/docs/_create/c1', { v: 2 });
    expect(r.status).toBe(409);
    expect(r.json.status).toBe(409);
    expect(r.json.error.type).toBe('version_conflict_engine_exception');
    expect(r.json.error.reason).toBe('[c1]: version conflict, document already exists (current version [1])');
  });

  it('gets a stored document with found:true and its _source as sent', async () => {
    await raw(t, 'PUT', '/docs/_doc/g1', '{"a":1,"b":"x"}');
    const r = await raw(t, 'GET', '/docs/_doc/g1');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ _index: 'docs', _id: 'g1', _version: 1, found: true, _source: { a: 1, b: 'x' } });
  });

  it('answers 404 found:false for a missing document', async () => {
    const r = await raw(t, 'GET', '/docs/_doc/nope');
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ _index: 'docs', _id: 'nope', found: false });
  });

  it('deletes a document with 200 deleted, then answers 404 not_found without an error', async () => {
    await raw(t, 'PUT', '/docs/_doc/d1', { v: 1 });
    const a = await raw(t, 'DELETE', '/docs/_doc/d1');
    expect(a.status).toBe(200);
    expect(a.json).toMatchObject({ _index: 'docs', _id: 'd1', _version: 2, result: 'deleted' });
    const b = await raw(t, 'DELETE', '/docs/_doc/d1');
    expect(b.status).toBe(404);
    expect(b.json).toMatchObject({ _index: 'docs', _id: 'd1', result: 'not_found' });
    expect(b.json.error).toBeUndefined();
  });

  it('answers 404 index_not_found_exception when deleting from a missing index', async () => {
    const r = await raw(t, 'DELETE', '/nosuchindex/_doc/1');
    expect(r.status).toBe(404);
    expect(r.json.error.type).toBe('index_not_found_exception');
  });
});

describe('bulk', () => {
  it('reports per-item statuses and errors:true for mixed actions with one conflict', async () => {
    await raw(t, 'PUT', '/bulkx/_doc/existing?refresh=true', { v: 0 });
    const body =
      [
        { index: { _index: 'bulkx', _id: 'a' } },
        { v: 1 },
        { create: { _index: 'bulkx', _id: 'existing' } },
        { v: 2 },
        { delete: { _index: 'bulkx', _id: 'existing' } },
        { delete: { _index: 'bulkx', _id: 'never' } },
        { create: { _index: 'bulkx', _id: 'b' } },
        { v: 3 },
      ]
        .map((l) => JSON.stringify(l))
        .join('\n') + '\n';
    const r = await raw(t, 'POST', '/_bulk?refresh=true', body);
    expect(r.status).toBe(200);
    expect(r.json.errors).toBe(true);
    const items = r.json.items.map((it: Record<string, { status: number; result?: string; error?: { type: string } }>) => {
      const [action, v] = Object.entries(it)[0];
      return [action, v.status, v.result ?? v.error?.type];
    });
    expect(items).toEqual([
      ['index', 201, 'created'],
      ['create', 409, 'version_conflict_engine_exception'],
      ['delete', 200, 'deleted'],
      ['delete', 404, 'not_found'],
      ['create', 201, 'created'],
    ]);
    const conflict = r.json.items[1].create.error;
    expect(conflict).toMatchObject({ type: 'version_conflict_engine_exception', index: 'bulkx', shard: '0' });
    expect(typeof conflict.index_uuid).toBe('string');
  });

  it('reports errors:false when only a delete of a missing id comes back 404', async () => {
    const r = await raw(t, 'POST', '/_bulk', `${JSON.stringify({ delete: { _index: 'bulkx', _id: 'ghost' } })}\n`);
    expect(r.status).toBe(200);
    expect(r.json.errors).toBe(false);
    expect(r.json.items[0].delete.status).toBe(404);
  });

  it('rejects a bulk body without a trailing newline with 400', async () => {
    const r = await raw(t, 'POST', '/_bulk', `${JSON.stringify({ index: { _index: 'bulkx', _id: 'z' } })}\n{"v":1}`);
    expect(r.status).toBe(400);
    expect(r.json.error.type).toBe('illegal_argument_exception');
    expect(r.json.error.reason).toBe('The bulk request must be terminated by a newline [\\n]');
  });
});

describe('refresh', () => {
  beforeAll(async () => {
    await t.es.indices.create({ index: 'norefresh', settings: { number_of_shards: 1, refresh_interval: '-1' } });
  });

  it('keeps a document out of search until _refresh, then shows it', async () => {
    await raw(t, 'PUT', '/norefresh/_doc/1', { v: 1 });
    expect((await t.es.count({ index: 'norefresh' })).count).toBe(0);
    const r = await raw(t, 'POST', '/norefresh/_refresh');
    expect(r.status).toBe(200);
    expect(r.json._shards.failed).toBe(0);
    expect((await t.es.count({ index: 'norefresh' })).count).toBe(1);
  });

  it('makes a document searchable at once when written with refresh=true', async () => {
    const before = (await t.es.count({ index: 'norefresh' })).count;
    await raw(t, 'PUT', '/norefresh/_doc/2?refresh=true', { v: 2 });
    expect((await t.es.count({ index: 'norefresh' })).count).toBe(before + 1);
    const r = await t.es.search({ index: 'norefresh', query: { ids: { values: ['2'] } } });
    expect(r.hits.hits.map((h) => h._id)).toEqual(['2']);
  });
});

describe('count and queries', () => {
  it('counts every document of an index with ES count shape', async () => {
    const r = await raw(t, 'GET', '/books/_count');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ count: corpus.length, _shards: { total: 1, successful: 1, skipped: 0, failed: 0 } });
  });

  it('counts documents matching a query', async () => {
    const r = await t.es.count({ index: 'books', query: { term: { in_stock: true } } });
    expect(r.count).toBe(corpus.filter((b) => b.in_stock).length);
  });

  it('matches analysed text with match (any token)', async () => {
    expect(await matching('books', { match: { title: 'FOX river' } })).toEqual(expected((b) => tokens(b.title).some((w) => w === 'fox' || w === 'river')));
  });

  it('matches every token with match operator and', async () => {
    expect(await matching('books', { match: { title: { query: 'quick fox', operator: 'and' } } })).toEqual(
      expected((b) => tokens(b.title).includes('quick') && tokens(b.title).includes('fox')),
    );
  });

  it('matches exact keywords with term', async () => {
    expect(await matching('books', { term: { tag: 'beta' } })).toEqual(expected((b) => b.tag === 'beta'));
  });

  it('matches any of several keywords with terms', async () => {
    expect(await matching('books', { terms: { tag: ['alpha', 'omega'] } })).toEqual(expected((b) => b.tag === 'alpha' || b.tag === 'omega'));
  });

  it('matches numeric ranges with range', async () => {
    expect(await matching('books', { range: { year: { gte: 2000, lt: 2010 } } })).toEqual(expected((b) => b.year !== undefined && b.year >= 2000 && b.year < 2010));
  });

  it('matches date ranges with range', async () => {
    expect(await matching('books', { range: { published: { gt: '2018-06-30', lte: '2021-12-31' } } })).toEqual(
      expected((b) => b.published !== undefined && b.published > '2018-06-30' && b.published <= '2021-12-31'),
    );
  });

  it('combines must, filter, should and must_not in bool', async () => {
    const q = {
      bool: {
        filter: [{ range: { price: { gte: 10 } } }],
        must_not: [{ term: { tag: 'gamma' } }],
        should: [{ term: { in_stock: true } }, { match: { title: 'dog' } }],
        minimum_should_match: 1,
      },
    };
    expect(await matching('books', q)).toEqual(expected((b) => b.price >= 10 && b.tag !== 'gamma' && (b.in_stock || tokens(b.title).includes('dog'))));
  });

  it('treats a should-only bool as requiring one clause', async () => {
    expect(await matching('books', { bool: { should: [{ term: { tag: 'delta' } }, { range: { year: { lt: 1995 } } }] } })).toEqual(
      expected((b) => b.tag === 'delta' || (b.year !== undefined && b.year < 1995)),
    );
  });

  it('finds documents having a field with exists', async () => {
    expect(await matching('books', { exists: { field: 'tag' } })).toEqual(expected((b) => b.tag !== undefined));
  });

  it('finds documents by _id with ids', async () => {
    expect(await matching('books', { ids: { values: ['3', '17', '999'] } })).toEqual(['3', '17']);
  });
});

describe('sorting', () => {
  type Key = 'year' | 'tag' | 'published';
  const orderOf = (key: Key, order: 'asc' | 'desc', missing: '_first' | '_last') =>
    [...corpus]
      .sort((a, b) => {
        const va = a[key];
        const vb = b[key];
        if (va === undefined || vb === undefined) {
          if (va === vb) return a.id - b.id;
          const aMissing = va === undefined ? -1 : 1;
          return missing === '_first' ? aMissing : -aMissing;
        }
        const c = va < vb ? -1 : va > vb ? 1 : 0;
        return (order === 'asc' ? c : -c) || a.id - b.id;
      })
      .map((b) => String(b.id));

  for (const key of ['year', 'tag', 'published'] as Key[]) {
    for (const order of ['asc', 'desc'] as const) {
      for (const missing of ['_first', '_last'] as const) {
        it(`sorts ${key} ${order} with missing ${missing}, ties broken by id`, async () => {
          const r = await t.es.search({ index: 'books', size: 100, sort: [{ [key]: { order, missing } }, { id: 'asc' }] as never });
          expect(r.hits.hits.map((h) => h._id)).toEqual(orderOf(key, order, missing));
        });
      }
    }
  }

  it('sorts missing values last by default', async () => {
    const r = await t.es.search({ index: 'books', size: 100, sort: [{ year: 'desc' }, { id: 'asc' }] as never });
    expect(r.hits.hits.map((h) => h._id)).toEqual(orderOf('year', 'desc', '_last'));
  });

  it('emits dates as epoch millis and keywords as strings in hit sort values', async () => {
    const r = await t.es.search({ index: 'books', size: 100, sort: [{ published: 'asc' }, { tag: 'asc' }, { id: 'asc' }] as never, query: { bool: { filter: [{ exists: { field: 'published' } }, { exists: { field: 'tag' } }] } } });
    for (const h of r.hits.hits) {
      const b = corpus.find((x) => String(x.id) === h._id)!;
      expect(h.sort).toEqual([Date.parse(`${b.published}T00:00:00Z`), b.tag, b.id]);
    }
  });

  it('returns null scores when sorting on a field', async () => {
    const r = await t.es.search({ index: 'books', size: 3, sort: [{ id: 'asc' }] as never });
    expect(r.hits.max_score).toBeNull();
    expect(r.hits.hits.every((h) => h._score === null)).toBe(true);
  });
});

describe('transport and errors', () => {
  it('sends X-elastic-product on successful and failed responses', async () => {
    const ok = await raw(t, 'GET', '/books/_search');
    expect(ok.headers.get('x-elastic-product')).toBe('Elasticsearch');
    const ko = await raw(t, 'GET', '/missing-index/_search');
    expect(ko.headers.get('x-elastic-product')).toBe('Elasticsearch');
  });

  it('answers a search on an unknown index with 404 index_not_found_exception and its metadata', async () => {
    const r = await raw(t, 'GET', '/missing-index/_search');
    expect(r.status).toBe(404);
    const shape = { type: 'index_not_found_exception', reason: 'no such index [missing-index]', 'resource.type': 'index_or_alias', 'resource.id': 'missing-index', index_uuid: '_na_', index: 'missing-index' };
    expect(r.json).toEqual({ error: { root_cause: [shape], ...shape }, status: 404 });
  });

  it('answers an unknown route with 400 and a plain string error', async () => {
    const r = await raw(t, 'GET', '/books/_foo');
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ error: 'no handler found for uri [/books/_foo] and method [GET]', status: 400 });
  });

  it('answers a wrong method with 405 and a plain string error', async () => {
    const r = await raw(t, 'GET', '/books/_pit');
    expect(r.status).toBe(405);
    expect(r.json).toEqual({ error: 'Incorrect HTTP method for uri [/books/_pit] and method [GET], allowed: [POST]', status: 405 });
  });

  it('answers malformed JSON with 400 and a parse error', async () => {
    const r = await raw(t, 'POST', '/books/_search', '{"query": {"match_all": {}');
    expect(r.status).toBe(400);
    expect(['x_content_parse_exception', 'parsing_exception', 'json_parse_exception']).toContain(r.json.error.type);
    expect(r.json.status).toBe(400);
  });

  it('answers an unknown query name with 400 parsing_exception', async () => {
    const e = await failure(t.es.search({ index: 'books', query: { foo: {} } as never }));
    expect(e.status).toBe(400);
    expect(e.body.error.type).toBe('parsing_exception');
    expect(e.body.error.reason).toBe('unknown query [foo]');
  });

  it('serves a basic search through the v9 client', async () => {
    const r = await t.es9.search({ index: 'books', query: { term: { tag: 'alpha' } }, size: 100, sort: [{ id: 'asc' }] as never });
    expect(r.hits.hits.map((h) => h._id)).toEqual(expected((b) => b.tag === 'alpha'));
    expect(r.hits.total).toEqual({ value: corpus.filter((b) => b.tag === 'alpha').length, relation: 'eq' });
  });
});
