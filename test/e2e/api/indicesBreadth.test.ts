/**
 * Issue 24, indices and the requests ES refuses, through the official client: ES's YAML REST tests
 * indices.get_settings/10_basic, cat.indices/10_basic + 20_hidden, indices.get_mapping/
 * 50_wildcard_expansion (open indices), indices.put_mapping/10_basic, bulk/10_basic (require_alias),
 * bulk/12_noop, count/30_min_score, cluster.health/10_basic + 20_request_timeout ported case by
 * case; `include_defaults`, `flat_settings`, `_id` length, soft deletes.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { raw } from '../search/helpers';

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'test_1', settings: { number_of_shards: 5, number_of_replicas: 1 } });
  await t.es.indices.create({ index: 'test_2', settings: { number_of_shards: 3, number_of_replicas: 0 } });
});
afterAll(async () => {
  await t?.stop();
});

type Settings = Record<string, { settings: { index: Record<string, unknown> }; defaults?: Record<string, unknown> }>;
const only = <T extends object>(o: T, names: string[]) => Object.fromEntries(Object.entries(o).filter(([k]) => names.includes(k)));

describe('indices.get_settings/10_basic.yml', () => {
  it('Get /_settings', async () => {
    const r = (await t.es.indices.getSettings()) as Settings;
    expect(r.test_1.settings.index).toMatchObject({ number_of_shards: '5', number_of_replicas: '1' });
    expect(r.test_2.settings.index).toMatchObject({ number_of_shards: '3', number_of_replicas: '0' });
  });
  it('Get /{index}/_settings', async () => {
    const r = (await t.es.indices.getSettings({ index: 'test_1' })) as Settings;
    expect(r.test_1.settings.index).toMatchObject({ number_of_shards: '5', number_of_replicas: '1' });
    expect(r.test_2).toBeUndefined();
  });
  it.each(['_all', '*'])('Get /{index}/_settings/%s', async (name) => {
    const r = (await t.es.indices.getSettings({ index: 'test_1', name })) as Settings;
    expect(r.test_1.settings.index).toMatchObject({ number_of_shards: '5', number_of_replicas: '1' });
    expect(r.test_2).toBeUndefined();
  });
  it('Get /{index}/_settings/{name}', async () => {
    const r = (await t.es.indices.getSettings({ index: 'test_1', name: 'index.number_of_shards' })) as Settings;
    expect(r).toEqual({ test_1: { settings: { index: { number_of_shards: '5' } } } });
  });
  it('Get /{index}/_settings/{name,name}', async () => {
    const r = (await t.es.indices.getSettings({ index: 'test_1', name: ['index.number_of_shards', 'index.number_of_replicas'] })) as Settings;
    expect(r).toEqual({ test_1: { settings: { index: { number_of_shards: '5', number_of_replicas: '1' } } } });
  });
  it('Get /{index}/_settings/{name*}', async () => {
    const r = (await t.es.indices.getSettings({ index: 'test_1', name: 'index.number_of_s*' })) as Settings;
    expect(r).toEqual({ test_1: { settings: { index: { number_of_shards: '5' } } } });
  });
  it.each([undefined, '_all', '*', 'test_1,test_2'])('Get /%s/_settings/{name}', async (index) => {
    const r = (await t.es.indices.getSettings({ ...(index ? { index } : {}), name: 'index.number_of_shards' })) as Settings;
    expect(only(r, ['test_1', 'test_2'])).toEqual({
      test_1: { settings: { index: { number_of_shards: '5' } } },
      test_2: { settings: { index: { number_of_shards: '3' } } },
    });
  });
  it('Get /index*/_settings/{name}', async () => {
    const r = (await t.es.indices.getSettings({ index: '*2', name: 'index.number_of_shards' })) as Settings;
    expect(r).toEqual({ test_2: { settings: { index: { number_of_shards: '3' } } } });
  });
  it('Get /_settings with local flag', async () => {
    const r = (await t.es.indices.getSettings({ local: true })) as Settings;
    expect(r.test_1).toBeTruthy();
    expect(r.test_2).toBeTruthy();
  });
  it('flat_settings and include_defaults', async () => {
    const flat = (await t.es.indices.getSettings({ index: 'test_2', name: 'index.number_of_*', flat_settings: true })) as unknown as Record<string, { settings: Record<string, string> }>;
    expect(flat.test_2.settings).toEqual({ 'index.number_of_replicas': '0', 'index.number_of_shards': '3' });
    const d = (await t.es.indices.getSettings({ index: 'test_2', include_defaults: true })) as Settings;
    expect(d.test_2.defaults).toMatchObject({ index: { max_result_window: '10000', max_terms_count: '65536', refresh_interval: '1s' } });
    // a set value is not repeated among the defaults
    expect((d.test_2.defaults!.index as Record<string, unknown>).number_of_shards).toBeUndefined();
    const one = (await t.es.indices.getSettings({ index: 'test_2', name: 'index.max_terms_count', include_defaults: true })) as Settings;
    expect(one.test_2).toEqual({ settings: {}, defaults: { index: { max_terms_count: '65536' } } });
  });
});

describe('cat.indices/20_hidden.yml and 10_basic.yml', () => {
  const catText = async ({ index, ...params }: Record<string, string>) => {
    const q = new URLSearchParams(params).toString();
    const r = await raw(t, 'GET', `/_cat/indices${index ? `/${encodeURIComponent(index)}` : ''}${q ? `?${q}` : ''}`);
    return { status: r.status, text: r.text };
  };
  const row = (name: string) => new RegExp(`^green\\s+open\\s+${name.replace('.', '\\.')}\\s+[a-zA-Z0-9=/_+\\\\-]{22}\\s+1\\s+0\\s+0\\s+0\\s+\\d+(\\.\\d+)?(kb|b)\\s+\\d+(\\.\\d+)?(kb|b)\\s+\\d+(\\.\\d+)?(kb|b)\\s*$`);
  afterEach(async () => {
    await t.es.indices.delete({ index: 'index1,.index1', ignore_unavailable: true, expand_wildcards: 'all' });
  });
  it('hidden index', async () => {
    await t.es.indices.create({ index: 'index1', settings: { number_of_shards: 1, number_of_replicas: 0, index: { hidden: true } } });
    expect((await catText({ index: 'i*' })).text).toBe('');
    expect((await catText({ index: 'i*', expand_wildcards: 'all' })).text).toMatch(row('index1'));
  });
  it('dot-hidden index and dot-prefixed pattern', async () => {
    await t.es.indices.create({ index: '.index1', settings: { number_of_shards: 1, number_of_replicas: 0, index: { hidden: true } } });
    expect((await catText({ index: 'test_*,.i*' })).text).toMatch(/\.index1/);
    expect((await catText({ index: '.i*' })).text).toMatch(row('.index1'));
    expect((await catText({})).text).not.toMatch(/index1/);
  });
  it('hidden index with a visible alias', async () => {
    await t.es.indices.create({ index: 'index1', settings: { number_of_shards: 1, number_of_replicas: 0, index: { hidden: true } }, aliases: { alias1: {} } });
    expect((await catText({ index: 'i*' })).text).toBe('');
    expect((await catText({ index: 'i*', expand_wildcards: 'open,hidden' })).text).toMatch(row('index1'));
    expect((await catText({ index: 'alias1' })).text).toMatch(row('index1'));
  });
  it('hidden index with a hidden alias', async () => {
    await t.es.indices.create({ index: 'index1', settings: { number_of_shards: 1, number_of_replicas: 0, index: { hidden: true } }, aliases: { alias1: { is_hidden: true } } });
    expect((await catText({ index: 'i*' })).text).toBe('');
    expect((await catText({ index: 'a*' })).text).toBe('');
    expect((await catText({ index: 'i*', expand_wildcards: 'all' })).text).toMatch(row('index1'));
    expect((await catText({ index: 'alias1' })).text).toMatch(row('index1'));
  });
  it('hidden index, dot-hidden alias and dot pattern', async () => {
    await t.es.indices.create({ index: 'index1', settings: { number_of_shards: 1, number_of_replicas: 0, index: { hidden: true } }, aliases: { '.alias1': { is_hidden: true } } });
    expect((await catText({})).text).not.toMatch(/index1/);
    expect((await catText({ index: '.*' })).text).toMatch(/green\s+open\s+index1\s/);
  });
  it('a hidden index is left out of searches over wildcards but found by name', async () => {
    await t.es.indices.create({ index: 'index1', settings: { number_of_shards: 1, number_of_replicas: 0, index: { hidden: true } } });
    await t.es.index({ index: 'index1', id: '1', document: { a: 1 }, refresh: true });
    expect((await t.es.search({ index: 'ind*' })).hits.hits).toHaveLength(0);
    expect((await t.es.search({ index: 'ind*', expand_wildcards: 'all' })).hits.hits).toHaveLength(1);
    expect((await t.es.search({ index: 'index1' })).hits.hits).toHaveLength(1);
  });
  it('invalid health parameter', async () => {
    const r = await raw(t, 'GET', '/_cat/indices?health=invalid-health-value');
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ type: 'illegal_argument_exception', reason: 'unknown cluster health status [invalid-health-value]' });
  });
  it('health filter', async () => {
    const h = await raw(t, 'GET', '/_cat/indices?health=yellow&h=index');
    expect(h.text.trim()).toBe('test_1');
    const g = await raw(t, 'GET', '/_cat/indices?health=green&h=index&s=index');
    expect(g.text.trim().split(/\s+/)).toEqual(['test_2']);
  });
});

describe('indices.get_mapping/50_wildcard_expansion.yml (open indices)', () => {
  beforeAll(async () => {
    for (const [i, f] of [['test-xxx', 'foo'], ['test-xxy', 'foo2'], ['test-yyy', 'foo4']]) {
      await t.es.indices.create({ index: i, settings: { number_of_replicas: 0 }, mappings: { properties: { [f]: { type: 'keyword' } } } });
    }
  });
  it('defaults, open, all, open,closed', async () => {
    for (const ew of [undefined, 'open', 'all', ['open', 'closed']] as Array<undefined | 'open' | 'all' | Array<'open' | 'closed'>>) {
      const r = await t.es.indices.getMapping({ index: 'test-x*', ...(ew ? { expand_wildcards: ew } : {}) });
      expect(Object.keys(r).sort()).toEqual(['test-xxx', 'test-xxy']);
      expect(r['test-xxx'].mappings.properties).toEqual({ foo: { type: 'keyword' } });
    }
  });
  it('expand_wildcards=none: nothing, or 404 without ignore_unavailable', async () => {
    const ok = await raw(t, 'GET', '/test-x*/_mapping?expand_wildcards=none&ignore_unavailable=true');
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({});
    const strict = await raw(t, 'GET', '/test-x*/_mapping?expand_wildcards=none&allow_no_indices=false&ignore_unavailable=true');
    expect(strict.status).toBe(404);
    const missing = await raw(t, 'GET', '/test-x*/_mapping?expand_wildcards=none&allow_no_indices=true&ignore_unavailable=false');
    expect(missing.status).toBe(404);
    expect(missing.json.error.type).toBe('index_not_found_exception');
  });
});

describe('requests ES refuses', () => {
  it('a mapping field named "" (indices.put_mapping/10_basic)', async () => {
    await t.es.indices.create({ index: 'pm' });
    const r = await raw(t, 'PUT', '/pm/_mapping', { properties: { '': { type: 'keyword' } } });
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/illegal_argument_exception/);
    expect(r.json.error.reason).toBe('Failed to parse mapping: field name cannot be an empty string');
    const blank = await raw(t, 'PUT', '/pm2', { mappings: { properties: { a: { properties: { '  ': { type: 'keyword' } } } } } });
    expect(blank.status).toBe(400);
    expect(blank.json.error).toMatchObject({ type: 'mapper_parsing_exception', reason: 'Failed to parse mapping: field name cannot contain only whitespaces' });
  });
  it('a put_mapping body wrapped in _doc (indices.put_mapping/10_basic)', async () => {
    const r = await raw(t, 'PUT', '/pm/_mapping', { _doc: { properties: { field: { type: 'keyword' } } } });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ type: 'illegal_argument_exception', reason: 'Types cannot be provided in put mapping requests' });
  });
  it('an _id longer than 512 bytes', async () => {
    const id = 'é'.repeat(257); // 514 bytes
    const r = await raw(t, 'PUT', `/ids/_doc/${encodeURIComponent(id)}`, { a: 1 });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ type: 'action_request_validation_exception', reason: `Validation Failed: 1: id [${id}] is too long, must be no longer than 512 bytes but was: 514;` });
    const ok = await raw(t, 'PUT', `/ids/_doc/${'a'.repeat(512)}`, { a: 1 });
    expect(ok.status).toBe(201);
    const b = await raw(t, 'POST', '/_bulk', `{"index":{"_index":"ids","_id":"${'b'.repeat(513)}"}}\n{"a":1}\n{"index":{"_index":"ids","_id":"x"}}\n{"a":1}\n`);
    expect(b.status).toBe(400);
    expect(b.json.error.reason).toMatch(/is too long, must be no longer than 512 bytes but was: 513;$/);
    const u = await raw(t, 'POST', `/ids/_update/${'c'.repeat(600)}`, { doc: { a: 2 } });
    expect(u.status).toBe(400);
    expect(u.json.error.reason).toMatch(/but was: 600;$/);
  });
  it('index.soft_deletes.enabled: false', async () => {
    const r = await raw(t, 'PUT', '/soft', { settings: { 'index.soft_deletes.enabled': false } });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({
      type: 'illegal_argument_exception',
      reason: 'Creating indices with soft-deletes disabled is no longer supported. Please do not specify a value for setting [index.soft_deletes.enabled].',
    });
    expect(await t.es.indices.exists({ index: 'soft' })).toBe(false);
    expect((await raw(t, 'PUT', '/soft', { settings: { 'index.soft_deletes.enabled': true } })).status).toBe(200);
  });
});

describe('bulk/10_basic.yml require_alias', () => {
  beforeAll(async () => {
    await t.es.indices.create({ index: 'backing_index', aliases: { test_require_alias: {} } });
  });
  const notAlias = (i: string) => `no such index [${i}] and [require_alias] request flag is [true] and [${i}] is not an alias`;
  it('per request item', async () => {
    const r = await t.es.bulk({
      refresh: true,
      operations: [
        { index: { _index: 'new_index_not_created', require_alias: true } }, { f: 1 },
        { index: { _index: 'new_index_created' } }, { f: 2 },
        { index: { _index: 'test_require_alias', require_alias: true } }, { f: 3 },
        { create: { _index: 'test_require_alias' } }, { f: 4 },
      ],
    });
    expect(r.errors).toBe(true);
    expect(r.items[0].index).toMatchObject({ status: 404, error: { type: 'index_not_found_exception', reason: notAlias('new_index_not_created') } });
    expect(r.items[1].index!.result).toBe('created');
    expect(r.items[2].index!.result).toBe('created');
    expect(r.items[3].create!.result).toBe('created');
    expect(await t.es.indices.exists({ index: 'new_index_not_created' })).toBe(false);
  });
  it('on the request, overridden per item', async () => {
    const r = await t.es.bulk({
      refresh: true,
      require_alias: true,
      operations: [
        { index: { _index: 'new_index_not_created2' } }, { f: 1 },
        { index: { _index: 'new_index_created2', require_alias: false } }, { f: 2 },
        { index: { _index: 'test_require_alias' } }, { f: 3 },
      ],
    });
    expect(r.items[0].index).toMatchObject({ status: 404, error: { type: 'index_not_found_exception', reason: notAlias('new_index_not_created2') } });
    expect(r.items[1].index!.result).toBe('created');
    expect(r.items[2].index!.result).toBe('created');
    expect(await t.es.indices.exists({ index: 'new_index_not_created2' })).toBe(false);
  });
  it('index and update APIs', async () => {
    const r = await raw(t, 'PUT', '/backing_index/_doc/1?require_alias=true', { a: 1 });
    expect(r.status).toBe(404);
    expect(r.json.error.reason).toBe(notAlias('backing_index'));
    expect((await raw(t, 'PUT', '/test_require_alias/_doc/1?require_alias=true', { a: 1 })).status).toBe(201);
    const u = await raw(t, 'POST', '/nope/_update/1?require_alias=true', { doc: { a: 1 }, doc_as_upsert: true });
    expect(u.status).toBe(404);
    expect(await t.es.indices.exists({ index: 'nope' })).toBe(false);
  });
  it('reindex', async () => {
    const bad = await raw(t, 'POST', '/_reindex?require_alias=true&refresh=true', { source: { index: 'backing_index' }, dest: { index: 'reindexed' } });
    expect(bad.status).toBe(404);
    expect(bad.json.error.reason).toBe(notAlias('reindexed'));
    const ok = await raw(t, 'POST', '/_reindex?require_alias=true&refresh=true', { source: { index: 'new_index_created' }, dest: { index: 'test_require_alias' } });
    expect(ok.status).toBe(200);
    expect(ok.json.created).toBeGreaterThan(0);
  });
});

describe('bulk/12_noop.yml', () => {
  it('counts no-op updates', async () => {
    await t.es.indices.create({ index: 'noop', settings: { number_of_shards: 1 } });
    await t.es.bulk({ refresh: true, operations: [{ create: { _index: 'noop', _id: '1' } }, { foo: 'bar' }, { create: { _index: 'noop', _id: '2' } }, { foo: 'bar' }] });
    let st = await t.es.indices.stats({ index: 'noop' });
    expect(st._all.total!.indexing!.index_total).toBe(2);
    expect(st._all.total!.indexing!.noop_update_total).toBe(0);
    const r = await t.es.bulk({ operations: [{ update: { _index: 'noop', _id: '1' } }, { doc: { foo: 'bar' } }, { update: { _index: 'noop', _id: '2' } }, { doc: { foo: 'bar' } }] });
    expect(r.items.map((i) => i.update!.result)).toEqual(['noop', 'noop']);
    st = await t.es.indices.stats({ index: 'noop' });
    expect(st._all.total!.indexing!.index_total).toBe(2);
    expect(st._all.total!.indexing!.noop_update_total).toBe(2);
    expect(st._all.primaries!.indexing!.noop_update_total).toBe(2);
  });
});

describe('count/30_min_score.yml and 20_query_string.yml', () => {
  beforeAll(async () => {
    await t.es.indices.create({ index: 'test_count_min_score', settings: { number_of_shards: 1 }, mappings: { properties: { number: { type: 'integer' } } } });
    await t.es.index({ index: 'test_count_min_score', id: '1', document: { field: 'foo bar' } });
    await t.es.index({ index: 'test_count_min_score', id: '2', document: { field: 'foo bar bar bar bar' } });
    await t.es.indices.refresh({ index: 'test_count_min_score' });
  });
  it.each([[0.2, 1], [0.1, 2], [0.5, 0]])('min_score %s counts %s', async (min, n) => {
    expect((await t.es.count({ index: 'test_count_min_score', q: 'field:foo', min_score: min })).count).toBe(n);
  });
  it('query_string parameters', async () => {
    const c = (p: Record<string, unknown>) => t.es.count({ index: 'test_count_min_score', ...p }).then((r) => r.count);
    expect(await c({ q: 'bar', df: 'field' })).toBe(2);
    expect(await c({ q: 'field:foo field:xyz' })).toBe(2);
    expect(await c({ q: 'field:foo field:xyz', default_operator: 'AND' })).toBe(0);
    expect(await c({ q: 'field:BA*' })).toBe(2);
    expect(await c({ q: 'number:foo', lenient: true })).toBe(0);
  });
});

describe('cluster.health/10_basic.yml and 20_request_timeout.yml', () => {
  it('wait_for_active_shards and wait_for_no_relocating_shards', async () => {
    for (const w of ['1', 'all']) {
      const r = await raw(t, 'GET', `/_cluster/health/test_2?wait_for_active_shards=${w}&wait_for_no_relocating_shards=true&timeout=5s`);
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ timed_out: false, initializing_shards: 0, unassigned_shards: 0, unassigned_primary_shards: 0 });
      expect(r.json.active_primary_shards).toBeGreaterThan(0);
    }
    const ni = await t.es.cluster.health({ wait_for_no_initializing_shards: true });
    expect(ni.initializing_shards).toBe(0);
  });
  it('times out waiting for nodes or active shards', async () => {
    const n = await raw(t, 'GET', '/_cluster/health?wait_for_nodes=10&timeout=1ms');
    expect(n.status).toBe(408);
    expect(n.json.timed_out).toBe(true);
    const a = await raw(t, 'GET', '/_cluster/health?wait_for_active_shards=500&timeout=1ms');
    expect(a.status).toBe(408);
    expect(a.json.timed_out).toBe(true);
    const ok = await raw(t, 'GET', '/_cluster/health?wait_for_active_shards=500&timeout=1ms&return_200_for_cluster_health_timeout=true');
    expect(ok.status).toBe(200);
    expect(ok.json.timed_out).toBe(true);
  });
  it('expand_wildcards=none matches no index, without an error', async () => {
    const r = await raw(t, 'GET', '/_cluster/health/test_*?level=indices&expand_wildcards=none');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: 'green', active_shards: 0, indices: {} });
  });
});
