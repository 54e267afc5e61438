import { IndexMapping, ShardStore, type LoggedOp } from '../../../../../actors/shard/engine';
import { ids, search, shardWith } from '../engineFixture';

const newStore = (mapping = new IndexMapping()) =>
  new ShardStore({ index: 'idx', shardId: 0, mapping, settings: () => ({ maxResultWindow: 10000, maxSlicesPerScroll: 1024 }) });

describe('ShardStore writes', () => {
  it('assigns seqNo per shard from 0 and version per id from 1', () => {
    const s = newStore();
    const a = s.write({ op: 'index', id: 'a', source: '{"x":1}' });
    const b = s.write({ op: 'index', id: 'b', source: '{"x":2}' });
    const a2 = s.write({ op: 'index', id: 'a', source: '{"x":3}' });
    expect([a, b, a2].map((o) => o.ok && [o.result, o.seqNo, o.version])).toEqual([['created', 0, 1], ['created', 1, 1], ['updated', 2, 2]]);
  });

  it('continues version counting across delete and re-create', () => {
    const s = newStore();
    s.write({ op: 'index', id: 'a', source: '{}' });
    const del = s.write({ op: 'delete', id: 'a' });
    const again = s.write({ op: 'create', id: 'a', source: '{}' });
    expect([del, again].map((o) => o.ok && [o.result, o.version])).toEqual([['deleted', 2], ['created', 3]]);
  });

  it('answers a delete of a missing id with not_found but still sequences and logs it', () => {
    const s = newStore();
    const o = s.write({ op: 'delete', id: 'nope' });
    expect(o).toMatchObject({ ok: true, result: 'not_found', version: 1, seqNo: 0, logged: { op: 'delete', id: 'nope', seqNo: 0, version: 1 } });
    expect(s.write({ op: 'index', id: 'nope', source: '{}' })).toMatchObject({ result: 'created', version: 2, seqNo: 1 });
  });

  it('rejects create on a live id with 409 version_conflict_engine_exception', () => {
    const s = newStore();
    s.write({ op: 'index', id: '1', source: '{}' });
    s.write({ op: 'index', id: '1', source: '{}' });
    expect(s.write({ op: 'create', id: '1', source: '{}' })).toEqual({
      ok: false, status: 409,
      error: { type: 'version_conflict_engine_exception', reason: '[1]: version conflict, document already exists (current version [2])' },
    });
  });

  it('checks if_seq_no / if_primary_term', () => {
    const s = newStore();
    s.write({ op: 'index', id: '1', source: '{}' });
    expect(s.write({ op: 'index', id: '1', source: '{}', ifSeqNo: 0, ifPrimaryTerm: 1 })).toMatchObject({ ok: true, result: 'updated' });
    expect(s.write({ op: 'index', id: '1', source: '{}', ifSeqNo: 0, ifPrimaryTerm: 1 })).toMatchObject({
      ok: false, status: 409,
      error: { reason: '[1]: version conflict, required seqNo [0], primary term [1]. current document has seqNo [1] and primary term [1]' },
    });
    expect(s.write({ op: 'delete', id: 'zz', ifSeqNo: 3, ifPrimaryTerm: 1 })).toMatchObject({
      status: 409, error: { reason: '[zz]: version conflict, required seqNo [3], primary term [1]. but no document was found' },
    });
  });

  it('returns mapping errors as 400 outcomes without consuming a seqNo', () => {
    const s = newStore(new IndexMapping({ properties: { age: { type: 'long' } } }));
    const bad = s.write({ op: 'index', id: '1', source: '{"age":"abc"}' });
    expect(bad).toMatchObject({
      ok: false, status: 400,
      error: { type: 'mapper_parsing_exception', reason: "failed to parse field [age] of type [long] in document with id '1'. Preview of field's value: 'abc'" },
    });
    expect(s.write({ op: 'index', id: '1', source: '{"age":1}' })).toMatchObject({ seqNo: 0, version: 1 });
  });

  it('keeps _source as the exact text received', () => {
    const s = newStore();
    const src = '{ "b" : 1.50,\n "a":[ 1 ,2] }';
    s.write({ op: 'index', id: 'x', source: src });
    expect(s.get('x')).toEqual({ source: src, version: 1, seqNo: 0, primaryTerm: 1 });
  });

  it('gets in real time, without a refresh, and forgets deleted docs', () => {
    const s = newStore();
    s.write({ op: 'index', id: 'x', source: '{}', routing: 'r1' });
    expect(s.get('x')).toMatchObject({ version: 1, routing: 'r1' });
    s.write({ op: 'delete', id: 'x' });
    expect(s.get('x')).toBeUndefined();
  });

  it('replays the log into an identical shard', () => {
    const a = newStore();
    const log: LoggedOp[] = [];
    const writes = [
      { op: 'index', id: '1', source: '{"t":"hello world","n":1}' },
      { op: 'index', id: '2', source: '{"t":"bye","n":2}' },
      { op: 'delete', id: '1' },
      { op: 'delete', id: 'missing' },
      { op: 'create', id: '1', source: '{"t":"again","n":3}' },
      { op: 'create', id: '2', source: '{}' }, // conflict: not logged
    ] as const;
    for (const w of writes) {
      const o = a.write({ ...w });
      if (o.ok && o.logged) log.push(o.logged);
    }
    const b = newStore();
    log.forEach((op) => b.applyLogged(op));
    a.refresh();
    b.refresh();
    const req = { sort: [{ field: 'n', order: 'asc' as const }] };
    expect(search(b, req)).toEqual(search(a, req));
    expect(b.get('1')).toEqual(a.get('1'));
    expect(b.stats()).toEqual(a.stats());
    expect(b.write({ op: 'index', id: 'missing', source: '{}' })).toMatchObject({ version: 2, seqNo: 5 });
  });

  it('rejects an op whose seqNo is not after the last one', () => {
    const s = newStore();
    s.applyLogged({ op: 'index', id: 'a', seqNo: 0, version: 1, source: '{}' });
    expect(() => s.applyLogged({ op: 'index', id: 'b', seqNo: 0, version: 1, source: '{}' })).toThrow();
  });
});

describe('ShardStore MVCC searchers', () => {
  it('shows nothing before the first refresh and flags pending writes', () => {
    const s = newStore();
    s.write({ op: 'index', id: 'a', source: '{}' });
    expect(s.pendingRefresh()).toBe(true);
    expect(search(s).totalHits).toBe(0);
    s.refresh();
    expect(s.pendingRefresh()).toBe(false);
    expect(search(s).totalHits).toBe(1);
  });

  it('keeps an old searcher exactly as it was through updates, deletes, appends and refreshes', () => {
    const s = shardWith({ a: { n: 1, t: 'red fox' }, b: { n: 2, t: 'red dog' }, c: { n: 3, t: 'blue fox' } });
    const old = s.acquireSearcher();
    const q = (searcher = old) => s.query(searcher, { query: { match: { t: 'red fox' } }, from: 0, size: 10, trackTotalHits: true, shardIndex: 0 });
    const before = q();
    s.write({ op: 'delete', id: 'a' });
    s.write({ op: 'index', id: 'b', source: '{"n":20,"t":"green"}' });
    s.write({ op: 'index', id: 'd', source: '{"n":4,"t":"red red fox"}' });
    s.refresh();
    expect(q()).toEqual(before);
    expect(q(s.acquireSearcher()).hits.map((h) => h._id)).toEqual(['d', 'c']);
  });

  it('resolves ids to the version a searcher sees', () => {
    const s = shardWith({ a: { v: 1 } });
    const old = s.acquireSearcher();
    s.write({ op: 'index', id: 'a', source: '{"v":2}' });
    s.refresh();
    const oldHit = s.query(old, { query: { ids: { values: ['a'] } }, from: 0, size: 10, trackTotalHits: true, shardIndex: 0 }).hits[0];
    const newHit = search(s, { query: { ids: { values: ['a'] } } }).hits[0];
    expect([s.source(oldHit.doc), s.source(newHit.doc)]).toEqual(['{"v":1}', '{"v":2}']);
  });

  it('acquires a searcher in O(1) as a plain {maxDoc, seqNo}', () => {
    const s = shardWith({ a: {}, b: {} });
    s.write({ op: 'delete', id: 'a' });
    s.refresh();
    expect(s.acquireSearcher()).toEqual({ maxDoc: 2, seqNo: 2 });
    expect(s.stats()).toEqual({ docs: 1, deleted: 1, maxDoc: 2 });
    expect(s.count(s.acquireSearcher())).toBe(1);
  });

  it('implements DocValuesReader for aggregations', () => {
    const s = shardWith({ a: { k: ['y', 'x'], n: [3, 1], d: '2020-01-01', b: true, big: 9223372036854775807n.toString() } }, {
      properties: { k: { type: 'keyword' }, n: { type: 'long' }, d: { type: 'date' }, b: { type: 'boolean' }, big: { type: 'long' }, ns: { type: 'date_nanos' } },
    });
    s.write({ op: 'index', id: 'z', source: '{"ns":"2019-10-21T08:30:04.828733Z"}' });
    const b = s.activeBuffer();
    expect([b.values('k', 0), b.values('n', 0), b.values('d', 0), b.values('b', 0), b.values('big', 0), b.values('ns', 1)]).toEqual([
      ['x', 'y'], [1, 3], [Date.UTC(2020, 0, 1)], [true], [9223372036854775807n], [1571646604828733000n],
    ]);
    expect([b.fieldType('k'), b.fieldType('nope')]).toEqual(['keyword', undefined]);
    expect(ids(search(s))).toEqual(['a']);
  });

  it('collects req.aggs over the matching docs (query and slice, not post_filter) as a partial state', () => {
    const s = shardWith({ a: { k: 'x', n: 1 }, b: { k: 'y', n: 2 }, c: { k: 'x', n: 3 } }, { properties: { k: { type: 'keyword' }, n: { type: 'long' } } });
    const seen: number[][] = [];
    const r = s.query(s.acquireSearcher(), {
      query: { range: { n: { gte: 2 } } }, postFilter: { term: { k: 'y' } }, aggs: { any: {} }, from: 0, size: 10, trackTotalHits: true, shardIndex: 0,
    }, { collectAggs: (docs) => seen.push([...docs]) && 'partial' });
    expect([seen, r.aggs, ids(r)]).toEqual([[[1, 2]], 'partial', ['b']]);
    const built = search(s, { aggs: { mx: { max: { field: 'n' } } } });
    expect(built.aggs).toBeDefined();
  });
});
