/**
 * Issue 24, fetch options and documents through the official client: ES's YAML REST tests
 * search/10_source_filtering (docvalue_fields, stored_fields), index/35_external_version and
 * get/90_versions ported case by case; `fields`, GET `_source=false` / `stored_fields` /
 * `realtime=false`, bulk `if_seq_no` and versions, and the same options through PIT, scroll and
 * search_after.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { failure, raw } from '../search/helpers';

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'sf', mappings: { properties: { bigint: { type: 'keyword' }, tag: { type: 'keyword', store: true } } } });
  await raw(t, 'PUT', '/sf/_doc/1', '{ "include": { "field1": "v1", "field2": "v2" }, "count": 1, "bigint": 72057594037927936, "d": 3.14, "tag": "x" }');
  await t.es.indices.refresh();
});
afterAll(async () => {
  await t?.stop();
});

describe('search/10_source_filtering.yml', () => {
  it('docvalue_fields', async () => {
    const r = await t.es.search({ index: 'sf', docvalue_fields: ['count'] });
    expect(r.hits.hits[0].fields).toEqual({ count: [1] });
  });
  it('multiple docvalue_fields', async () => {
    const r = await t.es.search({ index: 'sf', docvalue_fields: ['count', 'include.field1.keyword'] });
    expect(r.hits.hits[0].fields).toEqual({ count: [1], 'include.field1.keyword': ['v1'] });
  });
  it('docvalue_fields as url param', async () => {
    const r = await raw(t, 'GET', '/sf/_search?docvalue_fields=count');
    expect(r.json.hits.hits[0].fields.count).toEqual([1]);
  });
  it('docvalue_fields with explicit format', async () => {
    const r = await t.es.search({ index: 'sf', docvalue_fields: [{ field: 'count', format: '#.0' }] });
    expect(r.hits.hits[0].fields!.count).toEqual(['1.0']);
  });
  it('docvalue_fields - double', async () => {
    const r = await t.es.search({ index: 'sf', docvalue_fields: ['d'] });
    const d = r.hits.hits[0].fields!.d[0] as number;
    expect(d).toBeGreaterThanOrEqual(3.14);
    expect(d).toBeLessThan(3.141);
  });
  it('fields in body: stored_fields without _source drop the source', async () => {
    const r = await t.es.search({ index: 'sf', stored_fields: ['include.field2'] });
    expect(r.hits.hits[0]._source).toBeUndefined();
  });
  it('fields in body with source', async () => {
    const r = await t.es.search({ index: 'sf', stored_fields: ['include.field2', '_source'] });
    expect((r.hits.hits[0]._source as { include: { field2: string } }).include.field2).toBe('v2');
  });
  it('_source include on bigint keeps every digit', async () => {
    const r = await raw(t, 'POST', '/sf/_search', { _source: { includes: 'bigint' } });
    expect(r.text).toContain('"bigint":72057594037927936');
  });
});

describe('fields (retrieval from _source through the mapping)', () => {
  it('returns mapped values, multi-fields, patterns', async () => {
    const r = await t.es.search({ index: 'sf', fields: ['include.*', 'count'], _source: false });
    expect(r.hits.hits[0].fields).toEqual({
      'include.field1': ['v1'], 'include.field1.keyword': ['v1'], 'include.field2': ['v2'], 'include.field2.keyword': ['v2'], count: [1],
    });
    expect(r.hits.hits[0]._source).toBeUndefined();
  });
});

describe('GET options', () => {
  it('_source=false, _source_includes, stored_fields', async () => {
    const off = await t.es.get({ index: 'sf', id: '1', _source: false });
    expect(off._source).toBeUndefined();
    expect(off.found).toBe(true);
    const inc = await t.es.get({ index: 'sf', id: '1', _source_includes: 'include.field1' });
    expect(inc._source).toEqual({ include: { field1: 'v1' } });
    const stored = await t.es.get({ index: 'sf', id: '1', stored_fields: 'tag,count' });
    expect(stored._source).toBeUndefined();
    expect(stored.fields).toEqual({ tag: ['x'] }); // only `store: true` fields
  });
  it('realtime=false reads what the last refresh made searchable', async () => {
    await t.es.index({ index: 'rt', id: '1', document: { v: 1 }, refresh: true });
    await t.es.index({ index: 'rt', id: '2', document: { v: 2 } });
    await t.es.index({ index: 'rt', id: '1', document: { v: 3 } });
    expect((await t.es.get({ index: 'rt', id: '2' }))._source).toEqual({ v: 2 });
    const notYet = await failure(t.es.get({ index: 'rt', id: '2', realtime: false }));
    expect(notYet.status).toBe(404);
    expect((await t.es.get({ index: 'rt', id: '1', realtime: false }))._source).toEqual({ v: 1 });
    expect((await t.es.get({ index: 'rt', id: '1', realtime: false, refresh: true }))._source).toEqual({ v: 3 });
  });
  it('_mget honours per-doc stored_fields, _source and realtime', async () => {
    const r = await t.es.mget({ index: 'sf', docs: [{ _id: '1', _source: ['count'] }, { _id: '1', stored_fields: ['tag'] }], realtime: false });
    expect((r.docs[0] as { _source: unknown })._source).toEqual({ count: 1 });
    expect((r.docs[1] as { fields: unknown; _source?: unknown }).fields).toEqual({ tag: ['x'] });
    expect((r.docs[1] as { _source?: unknown })._source).toBeUndefined();
  });
});

describe('index/35_external_version.yml', () => {
  it('External version', async () => {
    const put = (version: number) => t.es.index({ index: 'ev', id: '1', document: { foo: 'bar' }, version_type: 'external', version });
    expect((await put(0))._version).toBe(0);
    expect((await put(5))._version).toBe(5);
    const same = await failure(put(5));
    expect(same.status).toBe(409);
    expect(same.body.error.reason).toBe('[1]: version conflict, current version [5] is higher or equal to the one provided [5]');
    expect((await failure(put(0))).status).toBe(409);
    expect((await put(6))._version).toBe(6);
  });
  it('external_gte accepts the same version; deletes keep theirs as a tombstone', async () => {
    const put = (version: number, type: 'external' | 'external_gte' = 'external_gte') => t.es.index({ index: 'ev', id: '2', document: { a: 1 }, version_type: type, version });
    expect((await put(3))._version).toBe(3);
    expect((await put(3))._version).toBe(3);
    const lower = await failure(put(2));
    expect(lower.body.error.reason).toBe('[2]: version conflict, current version [3] is higher than the one provided [2]');
    const del = await t.es.delete({ index: 'ev', id: '2', version: 7, version_type: 'external' });
    expect([del.result, del._version]).toEqual(['deleted', 7]);
    expect((await failure(put(7, 'external'))).status).toBe(409);
    expect((await put(8, 'external'))._version).toBe(8);
  });
  it('refuses internal versioning as a concurrency control and external creates, with validation texts', async () => {
    const internal = await failure(t.es.index({ index: 'ev', id: '3', document: {}, version: 1 }));
    expect(internal.body.error.reason).toBe('Validation Failed: 1: internal versioning can not be used for optimistic concurrency control. Please use `if_seq_no` and `if_primary_term` instead;');
    const create = await failure(t.es.create({ index: 'ev', id: '3', document: {}, version: 1, version_type: 'external' }));
    expect(create.body.error.reason).toBe('Validation Failed: 1: create operations only support internal versioning. use index instead;');
    const noVersion = await failure(raw(t, 'PUT', '/ev/_doc/3?version_type=external', { a: 1 }).then((r) => (r.status >= 400 ? Promise.reject({ meta: { statusCode: r.status, body: r.json } }) : r)));
    expect(noVersion.body.error.reason).toBe('Validation Failed: 1: illegal version value [-3] for version type [EXTERNAL];');
  });
});

describe('get/90_versions.yml', () => {
  beforeAll(async () => {
    await t.es.index({ index: 'gv', id: '1', document: { foo: 'bar' } });
    await t.es.index({ index: 'gv', id: '1', document: { foo: 'bar' } });
  });
  it.each<[number, string | undefined, boolean]>([
    [2, undefined, true], [1, undefined, false],
    [2, 'external', true], [10, 'external', false], [1, 'external', false],
    [2, 'external_gte', true], [10, 'external_gte', false], [1, 'external_gte', false],
  ])('get version %d (%s): found=%s else 409', async (version, type, ok) => {
    const call = t.es.get({ index: 'gv', id: '1', version, ...(type ? { version_type: type as 'external' } : {}) });
    if (ok) expect((await call)._id).toBe('1');
    else {
      const e = await failure(call);
      expect(e.status).toBe(409);
      expect(e.body.error.reason).toBe(`[1]: version conflict, current version [2] is different than the one provided [${version}]`);
    }
  });
});

describe('bulk compare-and-set and versions', () => {
  it('applies if_seq_no / if_primary_term and external versions per item', async () => {
    const first = await t.es.index({ index: 'bc', id: '1', document: { v: 1 }, refresh: true });
    const r = await t.es.bulk({
      operations: [
        { index: { _index: 'bc', _id: '1', if_seq_no: first._seq_no, if_primary_term: first._primary_term } }, { v: 2 },
        { index: { _index: 'bc', _id: '1', if_seq_no: first._seq_no, if_primary_term: first._primary_term } }, { v: 3 },
        { index: { _index: 'bc', _id: '2', version: 10, version_type: 'external' } }, { v: 1 },
        { delete: { _index: 'bc', _id: '2', version: 9, version_type: 'external' } },
      ],
    });
    expect(r.items.map((i) => Object.values(i)[0].status)).toEqual([200, 409, 201, 409]);
    expect(r.items[2].index!._version).toBe(10);
  });
  it('refuses a bulk with an internal version as ES validates the whole request', async () => {
    const e = await failure(t.es.bulk({ operations: [{ index: { _index: 'bc', _id: '1', version: 3 } }, { v: 1 }] }));
    expect(e.status).toBe(400);
    expect(e.body.error.type).toBe('action_request_validation_exception');
  });
});

describe('fetch options in PIT, scroll and search_after', () => {
  beforeAll(async () => {
    await t.es.indices.create({ index: 'pg', settings: { number_of_shards: 2 }, mappings: { properties: { n: { type: 'integer' }, tag: { type: 'keyword' } } } });
    await t.es.bulk({ refresh: true, operations: Array.from({ length: 20 }, (_, i) => [{ index: { _index: 'pg', _id: String(i) } }, { n: i, tag: `t${i % 3}` }]).flat() });
  });
  it('docvalue_fields and named queries through a PIT with search_after', async () => {
    const { id } = await t.es.openPointInTime({ index: 'pg', keep_alive: '1m' });
    const body = { pit: { id, keep_alive: '1m' }, size: 7, sort: [{ n: 'asc' as const }], docvalue_fields: ['tag'], query: { bool: { should: [{ range: { n: { gte: 0, _name: 'all' } } }] } } };
    const seen: string[] = [];
    let after: unknown[] | undefined;
    for (;;) {
      const r = await t.es.search({ ...body, ...(after ? { search_after: after as never } : {}) });
      if (!r.hits.hits.length) break;
      for (const h of r.hits.hits) {
        expect(h.fields!.tag).toEqual([`t${Number(h._id) % 3}`]);
        expect(h.matched_queries).toEqual(['all']);
        seen.push(h._id!);
      }
      after = r.hits.hits[r.hits.hits.length - 1].sort;
    }
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
    await t.es.closePointInTime({ id });
  });
  it('fields and a multi_match query in a sliced scroll', async () => {
    const ids: string[] = [];
    for (const slice of [0, 1]) {
      const query = { bool: { should: ['t1', 't2'].map((q) => ({ multi_match: { query: q, fields: ['tag', 'n'], lenient: true } })) } };
      let r = await t.es.search({ index: 'pg', scroll: '1m', size: 4, slice: { id: String(slice), max: 2 }, fields: ['n'], query });
      while (r.hits.hits.length) {
        for (const h of r.hits.hits) {
          expect(h.fields!.n).toEqual([Number(h._id)]);
          ids.push(h._id!);
        }
        r = await t.es.scroll({ scroll_id: r._scroll_id!, scroll: '1m' });
      }
      await t.es.clearScroll({ scroll_id: r._scroll_id! });
    }
    expect(ids.sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: 20 }, (_, i) => i).filter((i) => i % 3 !== 0).map(String));
  });
});
