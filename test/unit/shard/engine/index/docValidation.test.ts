import { IndexMapping, ShardStore, type LoggedOp, type WriteOutcome } from '../../../../../actors/shard/engine';
import { parseQuery } from '../../../../../actors/shard/engine/request/queryDsl';
import { search, ids } from '../engineFixture';

const newStore = (mapping = new IndexMapping()) =>
  new ShardStore({ index: 'idx', shardId: 0, mapping, settings: () => ({ maxResultWindow: 10000, maxSlicesPerScroll: 1024 }) });

const nestObjects = (names: string[], leaf: unknown): unknown => names.reduceRight<unknown>((acc, n) => ({ [n]: acc }), leaf);

describe('document validation happens before the store changes', () => {
  it('refuses a keyword term over 32,766 UTF-8 bytes with Lucene’s immense-term error', () => {
    const s = newStore(new IndexMapping({ properties: { k: { type: 'keyword' } } }));
    const value = '€'.repeat(10923); // 3 bytes each: 32,769 bytes in 10,923 chars
    const o = s.write({ op: 'index', id: '1', source: JSON.stringify({ k: value }) });
    expect(o).toEqual({
      ok: false,
      status: 400,
      error: {
        type: 'illegal_argument_exception',
        reason:
          'Document contains at least one immense term in field="k" (whose UTF8 encoding is longer than the max length 32766), all of which were skipped.  ' +
          "Please correct the analyzer to not produce such terms.  The prefix of the first immense term is: '[" +
          Array(10).fill('-30, -126, -84').join(', ') +
          "]...', original message: bytes can be at most 32766 in length; got 32769",
        meta: { caused_by: { type: 'max_bytes_length_exceeded_exception', reason: 'bytes can be at most 32766 in length; got 32769' } },
      },
    });
    expect(s.write({ op: 'index', id: '2', source: JSON.stringify({ k: 'x'.repeat(32766) }) })).toMatchObject({ ok: true, seqNo: 0 });
  });

  it('indexes a single 8 MiB token, refuses it in a keyword field, and keeps the neighbours intact', () => {
    const s = newStore(new IndexMapping({ properties: { k: { type: 'keyword' } } }));
    const huge = 'x'.repeat(8 * 1024 * 1024);
    const outcomes: WriteOutcome[] = [
      s.write({ op: 'index', id: 'before', source: '{"t":"alpha","k":"a"}' }),
      s.write({ op: 'index', id: 'bad', source: JSON.stringify({ t: 'beta', k: huge }) }),
      s.write({ op: 'index', id: 'text', source: JSON.stringify({ t: huge }) }),
      s.write({ op: 'index', id: 'after', source: '{"t":"gamma","k":"c"}' }),
    ];
    expect(outcomes.map((o) => (o.ok ? o.result : o.status))).toEqual(['created', 400, 'created', 'created']);
    s.refresh();
    expect(s.get('after')?.source).toBe('{"t":"gamma","k":"c"}');
    expect(s.get('bad')).toBeUndefined();
    expect(ids(search(s, { query: { match: { t: { query: 'gamma' } } } }))).toEqual(['after']);
    expect(ids(search(s, { query: { term: { k: { value: 'c' } } } }))).toEqual(['after']);
    expect(ids(search(s, { query: { match: { t: { query: 'x'.repeat(255) } } } }))).toEqual(['text']);
  });

  it('refuses a dynamic object deeper than index.mapping.depth.limit (20) and keeps the mapping unchanged', () => {
    const m = new IndexMapping();
    const s = newStore(m);
    const names = Array.from({ length: 21 }, (_, i) => `o${i}`);
    // 19 objects below the root: the deepest is at depth 20, the limit
    const ok = s.write({ op: 'index', id: 'ok', source: JSON.stringify(nestObjects(names.slice(0, 20), 1)) });
    expect(ok.ok).toBe(true);
    const before = JSON.stringify(m.toJSON());
    const deep = names.map((n) => n.replace('o', 'p'));
    const bad = s.write({ op: 'index', id: 'deep', source: JSON.stringify({ fresh: 1, ...(nestObjects(deep, 1) as object) }) });
    expect(bad).toEqual({
      ok: false,
      status: 400,
      error: { type: 'illegal_argument_exception', reason: `Limit of mapping depth [20] has been exceeded due to object field [${deep.slice(0, 20).join('.')}]` },
    });
    expect(JSON.stringify(m.toJSON())).toBe(before); // `fresh` was added, then undone
  });

  it('refuses a document nested deeper than 1,000 levels as a parse failure', () => {
    const s = newStore();
    const src = `{"a":${'['.repeat(1000)}1${']'.repeat(1000)}}`;
    const o = s.write({ op: 'index', id: '1', source: src });
    expect(o).toMatchObject({
      ok: false,
      status: 400,
      error: {
        type: 'mapper_parsing_exception',
        reason: 'failed to parse',
        meta: {
          caused_by: {
            type: 'x_content_parse_exception',
            reason: '[1:1005] Document nesting depth (1001) exceeds the maximum allowed (1000, from `StreamReadConstraints.getMaxNestingDepth()`)',
          },
        },
      },
    });
    expect(s.write({ op: 'index', id: '2', source: `{"a":${'['.repeat(999)}1${']'.repeat(999)}}` })).toMatchObject({ ok: true });
  });

  it('refuses explicit mappings deeper than the depth limit', () => {
    const props = (depth: number): Record<string, unknown> =>
      depth === 0 ? { leaf: { type: 'keyword' } } : { [`o${depth}`]: { properties: props(depth - 1) } };
    expect(() => new IndexMapping({ properties: props(19) })).not.toThrow();
    expect(() => new IndexMapping({ properties: props(20) })).toThrow(/^Limit of mapping depth \[20\] has been exceeded due to object field \[o20\.o19\..*\.o1\]$/);
  });

  it('keeps the store equal to a replay of its log through random writes with injected failures', () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const mapping = () => new IndexMapping({ properties: { n: { type: 'long' }, k: { type: 'keyword' }, s: { type: 'object', dynamic: 'strict', properties: { a: { type: 'long' } } } } });
    const live = newStore(mapping());
    const logged: LoggedOp[] = [];
    const failures = new Set<number>();
    const goods = [
      (i: number) => ({ n: i, k: `k${i % 7}`, t: `word${i % 5} common` }),
      (i: number) => ({ [`dyn${i % 9}`]: i % 2 ? 'text value' : i, nested: { x: i } }),
      (i: number) => ({ s: { a: i }, k: ['a', 'b'][i % 2] }),
    ];
    const bads = [
      (i: number) => ({ [`new${i}`]: 1, n: 'not a number' }), // adds a dynamic field, then fails
      (i: number) => ({ [`grow${i}`]: { z: 1 }, k: 'y'.repeat(40000) }), // immense term after a new object
      (i: number) => ({ [`strict${i}`]: 1, s: { b: 1 } }), // strict object
      (i: number) => ({ [`deep${i}`]: nestObjects(Array.from({ length: 25 }, (_, j) => `d${j}`), 1) }),
      () => '{"broken": ',
    ];
    for (let i = 0; i < 400; i++) {
      const bad = rnd(4) === 0;
      const id = `id${rnd(60)}`;
      const op = rnd(10) === 0 ? 'delete' : 'index';
      // one accepted document is a single 8 MiB token (the analyzer used to throw half-way through indexing it)
      const body = i === 123 ? { t: 'h'.repeat(8 * 1024 * 1024) } : bad ? bads[rnd(bads.length)](i) : goods[rnd(goods.length)](i);
      const o = s(live, op, id, body);
      if (o.ok) logged.push(o.logged!);
      else failures.add(i);
      if (rnd(20) === 0) live.refresh();
    }
    expect(failures.size).toBeGreaterThan(50);
    const replay = newStore(mapping());
    for (const op of logged) replay.applyLogged(op);
    live.refresh();
    replay.refresh();
    expect(JSON.stringify(replay.mapping.toJSON())).toBe(JSON.stringify(live.mapping.toJSON()));
    expect([...replay.activeBuffer().ids]).toEqual([...live.activeBuffer().ids]);
    expect([...replay.activeBuffer().sources]).toEqual([...live.activeBuffer().sources]);
    expect(replay.maxSeqNo()).toBe(live.maxSeqNo());
    expect([...replay.activeBuffer().columns.keys()].sort()).toEqual([...live.activeBuffer().columns.keys()].sort());
    for (const q of [{ match_all: {} }, { match: { t: { query: 'common' } } }, { term: { k: { value: 'k3' } } }, { range: { n: { gte: 100 } } }, { exists: { field: 'nested.x' } }]) {
      expect(search(replay, { query: q, sort: [{ field: '_doc', order: 'asc' }] }).hits.map((h) => h._id)).toEqual(
        search(live, { query: q, sort: [{ field: '_doc', order: 'asc' }] }).hits.map((h) => h._id),
      );
    }
  });
});

function s(store: ShardStore, op: 'index' | 'delete', id: string, body: unknown): WriteOutcome {
  if (op === 'delete') return store.write({ op, id });
  return store.write({ op, id, source: typeof body === 'string' ? body : JSON.stringify(body) });
}

describe('query nesting', () => {
  const nest = (depth: number) => {
    let q: Record<string, unknown> = { match_all: {} };
    for (let i = 1; i < depth; i++) q = { bool: { must: [q] } };
    return q;
  };

  it('accepts 30 nested queries and refuses 31 as ES (indices.query.bool.max_nested_depth)', () => {
    expect(() => parseQuery(nest(30))).not.toThrow();
    expect(() => parseQuery(nest(31))).toThrow(
      'The nested depth of the query exceeds the maximum nested depth for queries set in [indices.query.bool.max_nested_depth]',
    );
    expect(() => parseQuery(nest(5000))).toThrow(/nested depth/);
    expect(() => parseQuery(nest(3))).not.toThrow(); // the counter unwinds after an error
  });
});
