/**
 * Aliases (issue 13 item 5): the `_alias`/`_aliases` APIs through the official clients and raw
 * HTTP, aliases as search/PIT/scroll/count/document/bulk targets, the write-index rules, and
 * aliases surviving a restart (log replay and snapshot).
 */
import { startTestNode, type TestNode } from '../../support/node';
import { bulkIndex, raw } from '../search/helpers';
import { restartFromLog } from './restart';

let t: TestNode;

const docs = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i}`, n: i, src: prefix }));

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'jan', settings: { number_of_shards: 2 } });
  await t.es.indices.create({ index: 'feb' });
  await bulkIndex(t, 'jan', docs('j', 30));
  await bulkIndex(t, 'feb', docs('f', 20));
});
afterAll(async () => {
  await t?.stop();
});

describe('alias APIs through the official clients', () => {
  it('puts, gets, checks and deletes an alias (v8)', async () => {
    expect(await t.es.indices.putAlias({ index: 'jan', name: 'q1' })).toEqual({ acknowledged: true });
    expect(await t.es.indices.getAlias({ name: 'q1' })).toEqual({ jan: { aliases: { q1: {} } } });
    expect(await t.es.indices.existsAlias({ name: 'q1' })).toBe(true);
    expect(await t.es.indices.existsAlias({ name: 'q9' })).toBe(false);
    expect(await t.es.indices.existsAlias({ index: 'feb', name: 'q1' })).toBe(false);
    expect(await t.es.indices.deleteAlias({ index: 'jan', name: 'q1' })).toEqual({ acknowledged: true });
    expect(await t.es.indices.existsAlias({ name: 'q1' })).toBe(false);
  });

  it('updates aliases atomically with add and remove actions (v9)', async () => {
    const res = await t.es9.indices.updateAliases({
      actions: [
        { add: { index: 'jan', alias: 'year', is_write_index: true } },
        { add: { indices: ['feb'], alias: 'year' } },
        { add: { index: 'feb', alias: 'tmp', routing: '7', filter: { term: { src: 'f' } } } },
      ],
    });
    expect(res.acknowledged).toBe(true);
    expect(await t.es9.indices.getAlias({ index: 'feb' })).toEqual({
      feb: { aliases: { tmp: { filter: { term: { src: 'f' } }, index_routing: '7', search_routing: '7' }, year: {} } },
    });
    expect(await t.es9.indices.getAlias({ name: 'year' })).toEqual({ feb: { aliases: { year: {} } }, jan: { aliases: { year: { is_write_index: true } } } });
    await t.es9.indices.updateAliases({ actions: [{ remove: { index: 'feb', alias: 'tmp' } }] });
    expect(await t.es9.indices.existsAlias({ name: 'tmp' })).toBe(false);
  });

  it('lists every index with its aliases on GET /_alias and GET /_aliases', async () => {
    for (const path of ['/_alias', '/_aliases']) {
      const res = await raw(t, 'GET', path);
      expect(res.status).toBe(200);
      expect(res.json.jan.aliases).toEqual({ year: { is_write_index: true } });
      expect(res.json.feb.aliases).toEqual({ year: {} });
    }
  });

  it('answers GET /<idx>/_alias/* as elasticdump reads it, only indices that have aliases', async () => {
    await t.es.indices.create({ index: 'bare' });
    expect((await raw(t, 'GET', '/jan/_alias/*')).json).toEqual({ jan: { aliases: { year: { is_write_index: true } } } });
    const res = await raw(t, 'GET', '/bare/_alias/*');
    expect([res.status, res.json]).toEqual([200, {}]);
    expect((await raw(t, 'GET', '/bare/_alias')).json).toEqual({ bare: { aliases: {} } });
    await t.es.indices.delete({ index: 'bare' });
  });

  it('answers an explicitly named missing alias with ES 404 body listing what was found', async () => {
    const res = await raw(t, 'GET', '/_alias/year,nope');
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: 'alias [nope] missing', status: 404, feb: { aliases: { year: {} } }, jan: { aliases: { year: { is_write_index: true } } } });
    const two = await raw(t, 'GET', '/_alias/nope,zzz');
    expect(two.json).toEqual({ error: 'aliases [nope,zzz] missing', status: 404 });
    expect((await raw(t, 'GET', '/_alias/nope*')).status).toBe(200);
  });

  it('refuses to remove an alias that does not exist with aliases_not_found_exception', async () => {
    const res = await raw(t, 'POST', '/_aliases', { actions: [{ remove: { index: 'jan', alias: 'ghost' } }] });
    expect(res.status).toBe(404);
    expect(res.json.error).toMatchObject({ type: 'aliases_not_found_exception', reason: 'aliases [ghost] missing' });
    const del = await raw(t, 'DELETE', '/jan/_alias/ghost');
    expect(del.status).toBe(404);
  });

  it('validates alias names and actions with ES errors', async () => {
    const under = await raw(t, 'PUT', '/jan/_alias/_x');
    expect(under.json.error).toMatchObject({ type: 'invalid_alias_name_exception', reason: "Invalid alias name [_x]: must not start with '_', '-', or '+'" });
    const same = await raw(t, 'PUT', '/jan/_alias/feb');
    expect(same.status).toBe(400);
    expect(same.json.error).toMatchObject({ type: 'invalid_alias_name_exception', reason: 'Invalid alias name [feb], an index or data stream exists with the same name as the alias' });
    const noIndex = await raw(t, 'POST', '/_aliases', { actions: [{ add: { alias: 'x' } }] });
    expect(noIndex.json.error).toMatchObject({ type: 'illegal_argument_exception', reason: 'One of [index] or [indices] is required' });
    const noAlias = await raw(t, 'POST', '/_aliases', { actions: [{ add: { index: 'jan' } }] });
    expect(noAlias.json.error.reason).toBe('One of [alias] or [aliases] is required');
    const missingIndex = await raw(t, 'POST', '/_aliases', { actions: [{ add: { index: 'nope', alias: 'x' } }] });
    expect(missingIndex.status).toBe(404);
    expect(missingIndex.json.error.type).toBe('index_not_found_exception');
    const twoWriters = await raw(t, 'POST', '/_aliases', { actions: [{ add: { index: 'feb', alias: 'year', is_write_index: true } }] });
    expect(twoWriters.status).toBe(400);
    expect(twoWriters.json.error.reason).toBe('alias [year] has more than one write index [feb,jan]');
    const asIndex = await raw(t, 'PUT', '/year');
    expect(asIndex.json.error).toMatchObject({ type: 'invalid_index_name_exception', reason: 'Invalid index name [year], already exists as alias' });
  });

  it('applies concurrent alias changes one after the other: two write indices cannot both win', async () => {
    const names = Array.from({ length: 8 }, (_, i) => `w${i}`);
    for (const n of names) await t.es.indices.create({ index: n });
    const res = await Promise.all(names.map((n) => raw(t, 'POST', '/_aliases', { actions: [{ add: { index: n, alias: 'race', is_write_index: true } }] })));
    expect(res.map((r) => r.status).sort()).toEqual([200, ...Array(7).fill(400)]);
    expect(Object.keys(await t.es.indices.getAlias({ name: 'race' }))).toHaveLength(1);
    await t.es.indices.delete({ index: names.join(',') });
  });

  it('applies nothing of a request when one action fails', async () => {
    const res = await raw(t, 'POST', '/_aliases', { actions: [{ add: { index: 'jan', alias: 'half' } }, { remove: { index: 'jan', alias: 'ghost' } }] });
    expect(res.status).toBe(404);
    expect(await t.es.indices.existsAlias({ name: 'half' })).toBe(false);
  });
});

describe('aliases as targets', () => {
  it('searches, counts, pages a PIT and a scroll through an alias over two indices', async () => {
    const hits = await t.es.search({ index: 'year', size: 100 });
    expect((hits.hits.total as { value: number }).value).toBe(50);
    expect(new Set(hits.hits.hits.map((h) => h._index))).toEqual(new Set(['jan', 'feb']));
    expect((await t.es.count({ index: 'year' })).count).toBe(50);
    expect((await t.es.count({ index: 'ye*' })).count).toBe(50);
    expect((await t.es.count({ index: 'year,-feb' })).count).toBe(30);

    const pit = await t.es.openPointInTime({ index: 'year', keep_alive: '1m' });
    const seen = new Set<string>();
    let after: unknown[] | undefined;
    for (;;) {
      const page = await t.es.search({ pit: { id: pit.id, keep_alive: '1m' }, size: 7, sort: [{ n: 'asc' }], ...(after ? { search_after: after as never } : {}) });
      if (!page.hits.hits.length) break;
      for (const h of page.hits.hits) seen.add(`${h._index}/${h._id}`);
      after = page.hits.hits[page.hits.hits.length - 1].sort;
    }
    expect(seen.size).toBe(50);
    await t.es.closePointInTime({ id: pit.id });

    let page = await t.es.search({ index: 'year', scroll: '1m', size: 9 });
    const scrolled = new Set(page.hits.hits.map((h) => `${h._index}/${h._id}`));
    while (page.hits.hits.length) {
      page = await t.es.scroll({ scroll_id: page._scroll_id!, scroll: '1m' });
      for (const h of page.hits.hits) scrolled.add(`${h._index}/${h._id}`);
    }
    expect(scrolled.size).toBe(50);
    await t.es.clearScroll({ scroll_id: page._scroll_id! });
  });

  it('writes through an alias to its write index (documents and bulk), reads through a single-index alias', async () => {
    const put = await t.es.index({ index: 'year', id: 'w1', document: { n: 1000, src: 'w' }, refresh: true });
    expect(put._index).toBe('jan');
    const bulk = await t.es.bulk({ refresh: true, operations: [{ index: { _index: 'year', _id: 'w2' } }, { n: 1001 }, { delete: { _index: 'year', _id: 'w1' } }] });
    expect(bulk.errors).toBe(false);
    expect(bulk.items.map((i) => Object.values(i)[0]!._index)).toEqual(['jan', 'jan']);
    await t.es.indices.putAlias({ index: 'feb', name: 'febonly' });
    await t.es.index({ index: 'febonly', id: 'x1', document: { n: 1 }, refresh: true });
    expect((await t.es.get({ index: 'febonly', id: 'x1' }))._index).toBe('feb');
    const many = await raw(t, 'GET', '/year/_doc/w2');
    expect(many.status).toBe(400);
    expect(many.json.error.reason).toBe("alias [year] has more than one index associated with it [feb, jan], can't execute a single index op");
  });

  it("refuses a write to an alias over several indices without a write index, with ES's error", async () => {
    await t.es.indices.updateAliases({ actions: [{ add: { indices: ['jan', 'feb'], alias: 'both' } }] });
    const reason =
      'no write index is defined for alias [both]. The write index may be explicitly disabled using is_write_index=false or the ' +
      'alias points to multiple indices without one being designated as a write index';
    const res = await raw(t, 'PUT', '/both/_doc/1', { a: 1 });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ type: 'illegal_argument_exception', reason });
    const bulk = await raw(t, 'POST', '/_bulk', `${JSON.stringify({ index: { _index: 'both', _id: '1' } })}\n{"a":1}\n`);
    expect(bulk.json.errors).toBe(true);
    expect(bulk.json.items[0].index).toMatchObject({ status: 400, error: { type: 'illegal_argument_exception', reason } });
    expect(t.sys.services.cluster.get('both')).toBeUndefined(); // never auto-created as an index
  });

  it('uses the index routing of an alias for writes', async () => {
    await t.es.indices.create({ index: 'routed', settings: { number_of_shards: 4 } });
    await t.es.indices.putAlias({ index: 'routed', name: 'r7', routing: '7' });
    await t.es.index({ index: 'r7', id: 'doc', document: { a: 1 }, refresh: true });
    const direct = await t.es.get({ index: 'routed', id: 'doc', routing: '7' });
    expect(direct.found).toBe(true);
    expect((await t.es.get({ index: 'r7', id: 'doc' })).found).toBe(true);
  });

  it('creates an index with aliases from its body and shows them in GET /<index>', async () => {
    await t.es.indices.create({ index: 'mar', aliases: { spring: {}, q1w: { is_write_index: true } } });
    const got = await t.es.indices.get({ index: 'mar' });
    expect(got.mar.aliases).toEqual({ q1w: { is_write_index: true }, spring: {} });
    expect(await t.es.indices.existsAlias({ name: 'spring' })).toBe(true);
  });

  it('refuses to delete indices through an alias name', async () => {
    const res = await raw(t, 'DELETE', '/year');
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({
      type: 'illegal_argument_exception',
      reason: 'The provided expression [year] matches an alias, specify the corresponding concrete indices instead.',
    });
    expect(await t.es.indices.exists({ index: 'jan' })).toBe(true);
  });

  it('removes an index with remove_index, and its aliases with it', async () => {
    await t.es.indices.create({ index: 'gone', aliases: { gonealias: {} } });
    await t.es.indices.updateAliases({ actions: [{ remove_index: { index: 'gone' } }] });
    expect(await t.es.indices.exists({ index: 'gone' })).toBe(false);
    expect(await t.es.indices.existsAlias({ name: 'gonealias' })).toBe(false);
  });
});

describe('alias filters', () => {
  beforeAll(async () => {
    await t.es.indices.create({ index: 'colors', settings: { number_of_shards: 3 } });
    await bulkIndex(t, 'colors', Array.from({ length: 40 }, (_, i) => ({ id: `c${i}`, n: i, color: ['red', 'blue', 'green', 'red'][i % 4] })));
    await t.es.indices.updateAliases({
      actions: [
        { add: { index: 'colors', alias: 'reds', filter: { term: { color: 'red' } } } },
        { add: { index: 'colors', alias: 'blues', filter: { term: { color: 'blue' } } } },
        { add: { index: 'colors', alias: 'plain' } },
      ],
    });
  });

  it('restricts searches and counts through a filtered alias to what the filter lets through', async () => {
    const reds = await t.es.search({ index: 'reds', size: 100 });
    expect((reds.hits.total as { value: number }).value).toBe(20);
    expect(reds.hits.hits.every((h) => (h._source as { color: string }).color === 'red')).toBe(true);
    expect((await t.es.count({ index: 'reds' })).count).toBe(20);
    expect((await t.es.count({ index: 'reds', query: { range: { n: { lt: 10 } } } })).count).toBe(5);
  });

  it('ORs the filters of several aliases and drops them when the index or an unfiltered alias is named', async () => {
    expect((await t.es.count({ index: 'reds,blues' })).count).toBe(30);
    expect((await t.es.count({ index: 'reds,colors' })).count).toBe(40);
    expect((await t.es.count({ index: 'reds,plain' })).count).toBe(40);
    expect((await t.es.count({ index: 'col*' })).count).toBe(40);
  });

  it('refuses a filter that is not a valid query when the alias is added', async () => {
    const res = await raw(t, 'PUT', '/colors/_alias/broken', { filter: { nope: {} } });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ type: 'illegal_argument_exception', reason: 'failed to parse filter for alias [broken]' });
    expect(res.json.error.caused_by.type).toBe('parsing_exception');
  });

  it('refuses a scroll or a PIT through a filtered alias instead of answering unfiltered', async () => {
    const scroll = await raw(t, 'POST', '/reds/_search?scroll=1m', { size: 5 });
    expect(scroll.status).toBe(400);
    const pit = await raw(t, 'POST', '/reds/_pit?keep_alive=1m');
    expect(pit.status).toBe(400);
    expect((await raw(t, 'POST', '/plain/_pit?keep_alive=1m')).status).toBe(200);
  });
});

describe('restart', () => {
  const snapshotOf = () => raw(t, 'GET', '/_alias');
  it('rebuilds aliases from the document log', async () => {
    const before = (await snapshotOf()).json;
    await restartFromLog(t);
    expect(t.sys.services.cluster.startResult?.snapshotSeq).toBeUndefined();
    expect((await snapshotOf()).json).toEqual(before);
    expect((await t.es.count({ index: 'year' })).count).toBe(52);
  });

  it('rebuilds aliases from a snapshot that covers their facts', async () => {
    await t.es.indices.putAlias({ index: 'mar', name: 'snapshotted' });
    const taken = await t.sys.services.cluster.snapshots.take('request');
    expect(taken).toBeDefined();
    const before = (await snapshotOf()).json;
    await t.restart();
    expect(t.sys.services.cluster.startResult?.snapshotSeq).toBe(taken!.seq);
    expect(t.sys.services.cluster.startResult?.ops).toBe(0); // nothing after the snapshot: aliases came from it
    expect((await snapshotOf()).json).toEqual(before);
    expect(await t.es.indices.existsAlias({ name: 'snapshotted' })).toBe(true);
  });
});
