/**
 * Issue 13 item 3: `_mget`, `POST /<index>/_update/<id>` and bulk `update` through the official
 * clients (v8, v9) and raw HTTP. Updates are read (real-time get) → merge → conditional index at
 * the coordinator, through the shard's normal write message, so they are in the document log like
 * every other write (checked across a restart).
 */
import { startTestNode, type TestNode } from '../../support/node';
import { shardFor } from '../../../actors/shard/engine';
import { calculateNumRoutingShards } from '../../../actors/shard/engine/base/routing';
import { bulkIndex, failure, raw } from '../search/helpers';

let t: TestNode;
/** The v8 or the v9 client (typed as v8: both take the same request shapes here). */
const cl = (v: 'es' | 'es9'): TestNode['es'] => t[v] as unknown as TestNode['es'];
const ndjson = (lines: unknown[]) => lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
const MAPPINGS = { properties: { n: { type: 'long' }, name: { type: 'keyword' }, nested: { type: 'object' } } };

/** An id and a routing value that land on different shards of a `shards`-shard index. */
function routedApart(shards: number): { id: string; routing: string } {
  for (let i = 0; ; i++) if (shardFor(`r${i}`, shards, calculateNumRoutingShards(shards)) !== shardFor(`d${i}`, shards, calculateNumRoutingShards(shards))) return { id: `d${i}`, routing: `r${i}` };
}

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'docs', settings: { number_of_shards: 3 }, mappings: MAPPINGS as never });
  await bulkIndex(t, 'docs', [1, 2, 3, 4, 5].map((n) => ({ id: n, n, name: `name${n}`, nested: { a: n, b: 'x' } })));
}, 120_000);
afterAll(async () => {
  await t?.stop();
});

describe('_mget', () => {
  for (const v of ['es', 'es9'] as const) {
    it(`${v}: gets docs by ids and by docs, found or not, a missing index as that doc's error`, async () => {
      const byIds = await cl(v).mget({ index: 'docs', ids: ['1', '3', 'nope'] });
      expect(byIds.docs).toEqual([
        { _index: 'docs', _id: '1', _version: 1, _seq_no: expect.any(Number), _primary_term: 1, found: true, _source: { id: 1, n: 1, name: 'name1', nested: { a: 1, b: 'x' } } },
        { _index: 'docs', _id: '3', _version: 1, _seq_no: expect.any(Number), _primary_term: 1, found: true, _source: { id: 3, n: 3, name: 'name3', nested: { a: 3, b: 'x' } } },
        { _index: 'docs', _id: 'nope', found: false },
      ]);
      const byDocs = await cl(v).mget({ docs: [{ _index: 'docs', _id: '2' }, { _index: 'missing', _id: '1' }] });
      expect(byDocs.docs[0]).toMatchObject({ _id: '2', found: true });
      expect(byDocs.docs[1]).toEqual({
        _index: 'missing',
        _id: '1',
        error: {
          root_cause: [{ type: 'index_not_found_exception', reason: 'no such index [missing]', 'resource.type': 'index_or_alias', 'resource.id': 'missing', index_uuid: '_na_', index: 'missing' }],
          type: 'index_not_found_exception',
          reason: 'no such index [missing]',
          'resource.type': 'index_or_alias',
          'resource.id': 'missing',
          index_uuid: '_na_',
          index: 'missing',
        },
      });
    });
  }

  it('sees a write at once (real-time get), without a refresh', async () => {
    await t.es.index({ index: 'docs', id: 'rt', document: { n: 42 } });
    const r = await t.es.mget({ index: 'docs', ids: ['rt'] });
    expect(r.docs[0]).toMatchObject({ found: true, _source: { n: 42 } });
  });

  it('filters _source by URL defaults, overridden per doc', async () => {
    const r = await raw(t, 'POST', '/docs/_mget?_source_includes=nested.*&_source_excludes=nested.b', {
      docs: [{ _id: '1' }, { _id: '2', _source: ['name'] }, { _id: '3', _source: false }, { _id: '4', _source: { includes: ['n*'], excludes: ['nested'] } }],
    });
    expect(r.json.docs.map((d: any) => d._source)).toEqual([{ nested: { a: 1 } }, { name: 'name2' }, undefined, { n: 4, name: 'name4' }]);
  });

  it('answers stored_fields as ES: no _source unless it is asked for, no fields for unstored ones', async () => {
    const r = await raw(t, 'POST', '/docs/_mget?stored_fields=name', { docs: [{ _id: '1' }, { _id: '2', stored_fields: ['_source'] }, { _id: '3', _source: true }] });
    expect(r.json.docs[0]).toEqual({ _index: 'docs', _id: '1', _version: 1, _seq_no: expect.any(Number), _primary_term: 1, found: true });
    expect(r.json.docs[1]._source.n).toBe(2);
    expect(r.json.docs[2]._source.n).toBe(3);
  });

  it('finds a routed doc only with its routing, and shows _routing', async () => {
    const { id, routing } = routedApart(3);
    await t.es.index({ index: 'docs', id, routing, document: { n: 7 } });
    const r = await raw(t, 'POST', '/_mget', { docs: [{ _index: 'docs', _id: id }, { _index: 'docs', _id: id, routing }] });
    expect(r.json.docs[0]).toEqual({ _index: 'docs', _id: id, found: false });
    expect(r.json.docs[1]).toEqual({ _index: 'docs', _id: id, _version: 1, _seq_no: expect.any(Number), _primary_term: 1, _routing: routing, found: true, _source: { n: 7 } });
    const viaUrl = await raw(t, 'GET', `/docs/_mget?routing=${routing}`, { ids: [id] });
    expect(viaUrl.json.docs[0].found).toBe(true);
  });

  it.each([
    ['/_mget', { ids: ['1'] }, 'action_request_validation_exception', 'Validation Failed: 1: index is missing for doc 0;'],
    ['/docs/_mget', { docs: [] }, 'action_request_validation_exception', 'Validation Failed: 1: no documents to get;'],
    ['/docs/_mget', { foo: ['1'] }, 'parsing_exception', 'unknown key [foo] for a START_ARRAY, expected [docs] or [ids]'],
    ['/docs/_mget', undefined, 'parse_exception', 'request body or source parameter is required'],
  ])('%s %j -> 400 %s', async (path, body, type, reason) => {
    const r = await raw(t, 'POST', path, body);
    expect([r.status, r.json.error.type, r.json.error.reason]).toEqual([400, type, reason]);
  });
});

describe('_update', () => {
  for (const v of ['es', 'es9'] as const) {
    it(`${v}: merges a partial doc, returns _source when asked, and a second identical update is a noop`, async () => {
      const id = `u-${v}`;
      await cl(v).index({ index: 'docs', id, document: { n: 1, name: 'a', nested: { a: 1, b: 'x' } } });
      const r = await cl(v).update({ index: 'docs', id, doc: { name: 'b', nested: { b: 'y' } }, _source: true } as never);
      expect(r).toEqual({
        _index: 'docs',
        _id: id,
        _version: 2,
        result: 'updated',
        _shards: { total: 2, successful: 1, failed: 0 },
        _seq_no: expect.any(Number),
        _primary_term: 1,
        get: { _seq_no: r._seq_no, _primary_term: 1, found: true, _source: { n: 1, name: 'b', nested: { a: 1, b: 'y' } } },
      });
      const again = await cl(v).update({ index: 'docs', id, doc: { name: 'b' } });
      expect(again).toEqual({ _index: 'docs', _id: id, _version: 2, result: 'noop', _shards: { total: 0, successful: 0, failed: 0 }, _seq_no: r._seq_no, _primary_term: 1 });
      const forced = await cl(v).update({ index: 'docs', id, doc: { name: 'b' }, detect_noop: false });
      expect([forced.result, forced._version]).toEqual(['updated', 3]);
      expect((await cl(v).get({ index: 'docs', id }))._source).toEqual({ n: 1, name: 'b', nested: { a: 1, b: 'y' } });
    });

    it(`${v}: upserts a missing doc (doc_as_upsert, upsert) with 201, and refuses one without upsert with ES's 404`, async () => {
      const a = await cl(v).update({ index: 'docs', id: `up1-${v}`, doc: { n: 10 }, doc_as_upsert: true });
      expect([a.result, a._version]).toEqual(['created', 1]);
      const b = await cl(v).update({ index: 'docs', id: `up2-${v}`, doc: { n: 11 }, upsert: { n: 0, name: 'fresh' } });
      expect(b.result).toBe('created');
      expect((await cl(v).get({ index: 'docs', id: `up2-${v}` }))._source).toEqual({ n: 0, name: 'fresh' });
      const c = await cl(v).update({ index: 'docs', id: `up2-${v}`, doc: { n: 11 }, upsert: { n: 0 } });
      expect(c.result).toBe('updated');
      expect((await cl(v).get({ index: 'docs', id: `up2-${v}` }))._source).toEqual({ n: 11, name: 'fresh' });
      const f = await failure(cl(v).update({ index: 'docs', id: 'never', doc: { n: 1 } }));
      expect(f.status).toBe(404);
      expect(f.body.error).toMatchObject({ type: 'document_missing_exception', reason: '[never]: document missing', index: 'docs', shard: String(shardFor('never', 3, calculateNumRoutingShards(3))) });
      expect(f.body.error.root_cause[0].type).toBe('document_missing_exception');
    });
  }

  it('answers 201 with a Location header for a created doc and 200 for an update', async () => {
    const a = await raw(t, 'POST', '/docs/_update/loc?routing=x', { doc: { n: 1 }, doc_as_upsert: true });
    expect(a.status).toBe(201);
    expect(a.headers.get('location')).toBe('/docs/_doc/loc?routing=x');
    const b = await raw(t, 'POST', '/docs/_update/loc?routing=x', { doc: { n: 2 } });
    expect([b.status, b.headers.get('location')]).toEqual([200, null]);
  });

  it('auto-creates a missing index, then answers the missing doc (as ES)', async () => {
    const r = await raw(t, 'POST', '/fresh-idx/_update/1', { doc: { n: 1 } });
    expect(r.status).toBe(404);
    expect(r.json.error.type).toBe('document_missing_exception');
    expect((await raw(t, 'HEAD', '/fresh-idx')).status).toBe(200);
  });

  it('applies if_seq_no / if_primary_term to what it read; a stale pair is ES\'s 409', async () => {
    const w = await t.es.index({ index: 'docs', id: 'cas', document: { n: 1 } });
    const ok = await raw(t, 'POST', `/docs/_update/cas?if_seq_no=${w._seq_no}&if_primary_term=1`, { doc: { n: 2 } });
    expect(ok.status).toBe(200);
    const stale = await raw(t, 'POST', `/docs/_update/cas?if_seq_no=${w._seq_no}&if_primary_term=1`, { doc: { n: 3 } });
    expect(stale.status).toBe(409);
    expect(stale.json.error.type).toBe('version_conflict_engine_exception');
    expect(stale.json.error.reason).toBe(
      `[cas]: version conflict, required seqNo [${w._seq_no}], primary term [1]. current document has seqNo [${ok.json._seq_no}] and primary term [1]`,
    );
    const missing = await raw(t, 'POST', '/docs/_update/cas-none?if_seq_no=0&if_primary_term=1', { doc: { n: 3 } });
    // ES's UpdateHelper looks at the get first: a missing document is a 404 (issue 22 table)
    expect(missing.status).toBe(404);
    expect(missing.json.error.type).toBe('document_missing_exception');
    expect(missing.json.error.reason).toBe('[cas-none]: document missing');
  });

  it('retries on conflict: concurrent updates of different fields all land (retry_on_conflict)', async () => {
    await t.es.index({ index: 'docs', id: 'race', document: { n: 0 } });
    const K = 12;
    const res = await Promise.all(Array.from({ length: K }, (_, i) => raw(t, 'POST', '/docs/_update/race?retry_on_conflict=50', { doc: { [`f${i}`]: i } })));
    expect(res.map((r) => r.status)).toEqual(Array(K).fill(200));
    const doc = await t.es.get({ index: 'docs', id: 'race' });
    expect(doc._version).toBe(K + 1);
    expect(doc._source).toEqual({ n: 0, ...Object.fromEntries(Array.from({ length: K }, (_, i) => [`f${i}`, i])) });
  });

  it('refuses a script as a node without scripting does, only when the script would run', async () => {
    const r = await raw(t, 'POST', '/docs/_update/1', { script: { source: 'ctx._source.n += 1' } });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({
      error: {
        root_cause: [{ type: 'illegal_argument_exception', reason: 'failed to execute script' }],
        type: 'illegal_argument_exception',
        reason: 'failed to execute script',
        caused_by: { type: 'illegal_argument_exception', reason: 'cannot execute [inline] scripts' },
      },
      status: 400,
    });
    // a missing doc with an upsert is created from the upsert; the script does not run (UpdateHelper)
    const created = await raw(t, 'POST', '/docs/_update/script-upsert', { script: 'ctx._source.n += 1', upsert: { n: 1 } });
    expect([created.status, created.json.result]).toEqual([201, 'created']);
    const scripted = await raw(t, 'POST', '/docs/_update/script-upsert2', { script: 'x', upsert: { n: 1 }, scripted_upsert: true });
    expect(scripted.status).toBe(400);
    expect(scripted.json.error.caused_by.reason).toBe('cannot execute [inline] scripts');
  });

  it.each([
    [{}, 'action_request_validation_exception', 'Validation Failed: 1: script or doc is missing;'],
    [{ doc: {}, script: 'x' }, 'action_request_validation_exception', "Validation Failed: 1: can't provide both script and doc;"],
    [{ docs: {} }, 'x_content_parse_exception', '[1:2] [UpdateRequest] unknown field [docs] did you mean [doc]?'],
  ])('refuses %j with %s', async (body, type, reason) => {
    const r = await raw(t, 'POST', '/docs/_update/1', body);
    expect([r.status, r.json.error.type, r.json.error.reason]).toEqual([400, type, reason]);
  });

  it('refuses compare-and-set with retries or an upsert, all messages at once', async () => {
    const r = await raw(t, 'POST', '/docs/_update/1?if_seq_no=1&if_primary_term=1&retry_on_conflict=2', { doc: {}, upsert: {} });
    expect(r.json.error.reason).toBe("Validation Failed: 1: compare and write operations can not be retried;2: upsert requests don't support `if_seq_no` and `if_primary_term`;");
  });

  it('answers a doc the mapping refuses with the shard\'s 400', async () => {
    const r = await raw(t, 'POST', '/docs/_update/2', { doc: { n: 'not a number' } });
    expect(r.status).toBe(400);
  });

  it('refreshes with refresh=true (forced_refresh) so a search sees the update', async () => {
    const r = await raw(t, 'POST', '/docs/_update/5?refresh=true', { doc: { name: 'refreshed' } });
    expect(r.json.forced_refresh).toBe(true);
    const s = await t.es.search({ index: 'docs', query: { term: { name: 'refreshed' } } });
    expect(s.hits.hits.map((h) => h._id)).toEqual(['5']);
  });
});

describe('bulk update', () => {
  it('keeps bulk order per doc: index, update, delete, upsert of the same id in one request', async () => {
    const r = await raw(t, 'POST', '/docs/_bulk', ndjson([
      { index: { _id: 'b1' } }, { n: 1, name: 'first' },
      { update: { _id: 'b1' } }, { doc: { name: 'second' } },
      { update: { _id: 'b1' } }, { doc: { name: 'second' } },
      { delete: { _id: 'b1' } },
      { update: { _id: 'b1' } }, { doc: { n: 9 }, doc_as_upsert: true },
      { update: { _id: 'b1', _source: true } }, { doc: { name: 'last' } },
    ]));
    expect(r.status).toBe(200);
    expect(r.json.errors).toBe(false);
    const items = r.json.items.map((i: any) => Object.entries(i)[0]).map(([k, v]: any) => [k, v.result, v.status, v._version]);
    expect(items).toEqual([
      ['index', 'created', 201, 1],
      ['update', 'updated', 200, 2],
      ['update', 'noop', 200, 2],
      ['delete', 'deleted', 200, 3],
      ['update', 'created', 201, 4],
      ['update', 'updated', 200, 5],
    ]);
    expect(r.json.items[5].update.get).toEqual({ _seq_no: r.json.items[5].update._seq_no, _primary_term: 1, found: true, _source: { n: 9, name: 'last' } });
  });

  it('fails only the items that fail (missing doc, stale if_seq_no, script), as ES bodies', async () => {
    await t.es.index({ index: 'docs', id: 'b2', document: { n: 1 }, refresh: true });
    const r = await raw(t, 'POST', '/_bulk', ndjson([
      { update: { _index: 'docs', _id: 'no-such-doc' } }, { doc: { n: 1 } },
      { update: { _index: 'docs', _id: 'b2', if_seq_no: 99999, if_primary_term: 1 } }, { doc: { n: 2 } },
      { update: { _index: 'docs', _id: 'b2' } }, { script: { source: 'ctx._source.n++' } },
      { update: { _index: 'docs', _id: 'b2', retry_on_conflict: 3 } }, { doc: { n: 3 } },
    ]));
    expect(r.json.errors).toBe(true);
    const [missing, stale, script, ok] = r.json.items.map((i: any) => i.update);
    expect(missing).toEqual({
      _index: 'docs',
      _id: 'no-such-doc',
      status: 404,
      error: { type: 'document_missing_exception', reason: '[no-such-doc]: document missing', index_uuid: expect.any(String), shard: String(shardFor('no-such-doc', 3, calculateNumRoutingShards(3))), index: 'docs' },
    });
    expect([stale.status, stale.error.type]).toEqual([409, 'version_conflict_engine_exception']);
    expect([script.status, script.error.reason, script.error.caused_by.reason]).toEqual([400, 'failed to execute script', 'cannot execute [inline] scripts']);
    expect([ok.status, ok.result]).toEqual([200, 'updated']);
  });

  it('refuses the whole bulk for an invalid or malformed update line, as BulkRequest validation does', async () => {
    const invalid = await raw(t, 'POST', '/docs/_bulk', ndjson([{ index: { _id: 'v1' } }, { n: 1 }, { update: { _id: 'v1' } }, {}]));
    expect([invalid.status, invalid.json.error.reason]).toEqual([400, 'Validation Failed: 1: script or doc is missing;']);
    const malformed = await raw(t, 'POST', '/docs/_bulk', ndjson([{ update: { _id: 'v1' } }, { doc: 5 }]));
    expect([malformed.status, malformed.json.error.type]).toEqual([400, 'x_content_parse_exception']);
    const badRetry = await raw(t, 'POST', '/docs/_bulk', ndjson([{ update: { _id: 'v1', retry_on_conflict: 'x' } }, { doc: {} }]));
    expect([badRetry.status, badRetry.json.error.type, badRetry.json.error.reason]).toEqual([400, 'number_format_exception', 'For input string: "x"']);
    expect((await raw(t, 'GET', '/docs/_doc/v1')).status).toBe(404); // nothing was written
  });

  for (const v of ['es', 'es9'] as const) {
    it(`${v}: client.bulk and helpers.bulk send update actions`, async () => {
      const r = await cl(v).bulk({
        operations: [{ update: { _index: 'docs', _id: `hb-${v}` } }, { doc: { n: 1 }, doc_as_upsert: true }, { update: { _index: 'docs', _id: `hb-${v}` } }, { doc: { name: 'x' } }],
      });
      expect(r.errors).toBe(false);
      const stats = await cl(v).helpers.bulk({
        datasource: [{ key: `hb-${v}`, name: 'y' }, { key: `hb2-${v}`, n: 5 }],
        onDocument: (d: { key: string }) => [{ update: { _index: 'docs', _id: d.key } }, { doc_as_upsert: true }],
        refresh: 'true',
      } as never);
      expect([stats.total, stats.successful, stats.failed]).toEqual([2, 2, 0]);
      const got = await cl(v).mget({ index: 'docs', ids: [`hb-${v}`, `hb2-${v}`] });
      expect(got.docs.map((d: any) => d._source)).toEqual([{ n: 1, name: 'y', key: `hb-${v}` }, { key: `hb2-${v}`, n: 5 }]);
    });
  }

  it('auto-creates an index once when concurrent bulks race to create it', async () => {
    for (let round = 0; round < 4; round++) {
      const res = await Promise.all(
        Array.from({ length: 16 }, (_, i) => raw(t, 'POST', '/_bulk', ndjson([{ index: { _index: `raced${round}`, _id: String(i) } }, { n: i }]))),
      );
      expect(res.map((r) => [r.status, r.json.errors])).toEqual(Array(16).fill([200, false]));
    }
  });
});

describe('updates are event-sourced', () => {
  it('survives a restart: the log replays the merged document and its version', async () => {
    await t.es.index({ index: 'docs', id: 'persist', document: { n: 1, name: 'a' } });
    await t.es.update({ index: 'docs', id: 'persist', doc: { name: 'b' } });
    await raw(t, 'POST', '/_bulk', ndjson([{ update: { _index: 'docs', _id: 'persist' } }, { doc: { n: 2 } }]));
    await t.restart();
    const doc = await t.es.get({ index: 'docs', id: 'persist' });
    expect([doc._version, doc._source]).toEqual([3, { n: 2, name: 'b' }]);
  });
});
