/**
 * Index templates (issue 13 item 5): composable `_index_template` (priority, patterns,
 * template.settings/mappings/aliases, composed_of with `_component_template`) and legacy
 * `_template` (order), applied on explicit and automatic index creation, kept across restarts.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { raw } from '../search/helpers';
import { restartFromLog } from './restart';

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode();
});
afterAll(async () => {
  await t?.stop();
});

const shardsOf = async (index: string) => Number((await t.es.indices.getSettings({ index }))[index].settings!.index!.number_of_shards);

describe('composable index templates', () => {
  it('applies settings, mappings and aliases of the matching template to an auto-created index (v8 putIndexTemplate)', async () => {
    expect(
      await t.es.indices.putIndexTemplate({
        name: 'logs',
        index_patterns: ['logs-*'],
        priority: 10,
        template: {
          settings: { number_of_shards: 3, 'index.max_result_window': 500 },
          mappings: { properties: { level: { type: 'keyword' }, at: { type: 'date' } } },
          aliases: { 'all-logs': {} },
        },
        _meta: { owner: 'ops' },
      }),
    ).toEqual({ acknowledged: true });
    await t.es.index({ index: 'logs-1', document: { level: 'warn', at: '2024-01-01T00:00:00Z', msg: 'x' }, refresh: true });
    expect(await shardsOf('logs-1')).toBe(3);
    const mapping = await t.es.indices.getMapping({ index: 'logs-1' });
    expect(mapping['logs-1'].mappings.properties).toMatchObject({ level: { type: 'keyword' }, at: { type: 'date' } });
    expect(await t.es.indices.getAlias({ name: 'all-logs' })).toEqual({ 'logs-1': { aliases: { 'all-logs': {} } } });
    const agg = await t.es.search({ index: 'all-logs', size: 0, aggs: { l: { terms: { field: 'level' } } } });
    expect((agg.aggregations!.l as { buckets: Array<{ key: string }> }).buckets.map((b) => b.key)).toEqual(['warn']);
  });

  it('lets the request override template settings and merges its mappings (v9)', async () => {
    await t.es9.indices.create({ index: 'logs-2', settings: { number_of_shards: 1 }, mappings: { properties: { extra: { type: 'long' } } } });
    expect(await shardsOf('logs-2')).toBe(1);
    const props = (await t.es9.indices.getMapping({ index: 'logs-2' }))['logs-2'].mappings.properties!;
    expect(Object.keys(props).sort()).toEqual(['at', 'extra', 'level']);
  });

  it('picks the template of highest priority', async () => {
    await t.es.indices.putIndexTemplate({ name: 'logs-special', index_patterns: ['logs-special-*'], priority: 20, template: { settings: { number_of_shards: 2 } } });
    await t.es.indices.create({ index: 'logs-special-1' });
    expect(await shardsOf('logs-special-1')).toBe(2);
    expect(await t.es.indices.existsAlias({ index: 'logs-special-1', name: 'all-logs' })).toBe(false);
  });

  it('refuses two templates with overlapping patterns and the same priority', async () => {
    const res = await raw(t, 'PUT', '/_index_template/clash', { index_patterns: ['logs-a*'], priority: 10 });
    expect(res.status).toBe(400);
    expect(res.json.error.type).toBe('illegal_argument_exception');
    expect(res.json.error.reason).toBe(
      'index template [clash] has index patterns [logs-a*] matching patterns from existing templates [logs] with patterns (logs => [logs-*]) ' +
        'that have the same priority [10], multiple index templates may not match during index creation, please use a different priority',
    );
  });

  it('checks concurrent template puts one after the other: overlapping same-priority templates cannot both win', async () => {
    const res = await Promise.all(Array.from({ length: 8 }, (_, i) => raw(t, 'PUT', `/_index_template/race-${i}`, { index_patterns: [`race-${i}*`, 'race-all-*'], priority: 50 })));
    expect(res.map((r) => r.status).sort()).toEqual([200, ...Array(7).fill(400)]);
    await raw(t, 'DELETE', '/_index_template/race-*');
  });

  it('gets templates by name and pattern, 404 for a missing name', async () => {
    const one = await t.es.indices.getIndexTemplate({ name: 'logs' });
    expect(one.index_templates).toEqual([
      {
        name: 'logs',
        index_template: {
          index_patterns: ['logs-*'],
          template: {
            settings: { index: { number_of_shards: '3', max_result_window: '500' } },
            mappings: { properties: { level: { type: 'keyword' }, at: { type: 'date' } } },
            aliases: { 'all-logs': {} },
          },
          composed_of: [],
          priority: 10,
          _meta: { owner: 'ops' },
        },
      },
    ]);
    expect((await raw(t, 'GET', '/_index_template/logs*')).json.index_templates.map((x: { name: string }) => x.name)).toEqual(['logs', 'logs-special']);
    const missing = await raw(t, 'GET', '/_index_template/nope');
    expect(missing.status).toBe(404);
    expect(missing.json.error).toMatchObject({ type: 'resource_not_found_exception', reason: 'index template matching [nope] not found' });
    expect(await t.es.indices.existsIndexTemplate({ name: 'logs' })).toBe(true);
    expect(await t.es.indices.existsIndexTemplate({ name: 'nope' })).toBe(false);
  });

  it('composes component templates in order, and refuses unknown ones', async () => {
    const bad = await raw(t, 'PUT', '/_index_template/composed', { index_patterns: ['metrics-*'], composed_of: ['base'] });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({
      type: 'invalid_index_template_exception',
      reason: 'index_template [composed] invalid, cause [index template [composed] specifies component templates [base] that do not exist]',
    });
    await t.es.cluster.putComponentTemplate({ name: 'base', template: { settings: { number_of_shards: 2 }, mappings: { properties: { host: { type: 'keyword' } } } } });
    await t.es.cluster.putComponentTemplate({ name: 'more', template: { mappings: { properties: { cpu: { type: 'double' } } } } });
    await t.es.indices.putIndexTemplate({ name: 'composed', index_patterns: ['metrics-*'], composed_of: ['base', 'more'], template: { settings: { number_of_shards: 4 } } });
    await t.es.index({ index: 'metrics-1', document: { host: 'a', cpu: 0.5 }, refresh: true });
    expect(await shardsOf('metrics-1')).toBe(4);
    expect(Object.keys((await t.es.indices.getMapping({ index: 'metrics-1' }))['metrics-1'].mappings.properties!).sort()).toEqual(['cpu', 'host']);
    const inUse = await raw(t, 'DELETE', '/_component_template/base');
    expect(inUse.status).toBe(400);
    expect(inUse.json.error.reason).toBe('component templates [base] cannot be removed as they are still in use by index templates [composed]');
  });

  it('deletes a template; deleting a missing one is 404', async () => {
    await t.es.indices.putIndexTemplate({ name: 'tmp', index_patterns: ['tmp-*'] });
    expect(await t.es.indices.deleteIndexTemplate({ name: 'tmp' })).toEqual({ acknowledged: true });
    const again = await raw(t, 'DELETE', '/_index_template/tmp');
    expect(again.status).toBe(404);
    expect(again.json.error).toMatchObject({ type: 'index_template_missing_exception', reason: 'index_template [tmp] missing' });
  });

  it('validates the template body', async () => {
    const noPatterns = await raw(t, 'PUT', '/_index_template/x', { priority: 1 });
    expect(noPatterns.status).toBe(400);
    const badSetting = await raw(t, 'PUT', '/_index_template/x', { index_patterns: ['x-*'], template: { settings: { number_of_shards: 0 } } });
    expect(badSetting.status).toBe(400);
    expect(badSetting.json.error.type).toBe('invalid_index_template_exception');
    const unknown = await raw(t, 'PUT', '/_index_template/x', { index_patterns: ['x-*'], bogus: 1 });
    expect(unknown.status).toBe(400);
    const create = await raw(t, 'PUT', '/_index_template/logs?create=true', { index_patterns: ['zzz-*'] });
    expect(create.json.error).toMatchObject({ type: 'illegal_argument_exception', reason: 'index template [logs] already exists' });
  });
});

describe('through the v9 client', () => {
  it('puts, gets and checks a composable template and a component template', async () => {
    await t.es9.cluster.putComponentTemplate({ name: 'c9', template: { mappings: { properties: { k9: { type: 'keyword' } } } } });
    expect(await t.es9.indices.putIndexTemplate({ name: 't9', index_patterns: ['nine-*'], composed_of: ['c9'], priority: 3, template: { settings: { number_of_shards: 2 } } })).toEqual({ acknowledged: true });
    const got = await t.es9.indices.getIndexTemplate({ name: 't9' });
    expect(got.index_templates[0]).toMatchObject({ name: 't9', index_template: { index_patterns: ['nine-*'], composed_of: ['c9'], priority: 3 } });
    expect(await t.es9.indices.existsIndexTemplate({ name: 't9' })).toBe(true);
    await t.es9.index({ index: 'nine-1', document: { k9: 'x' }, refresh: true });
    expect(await shardsOf('nine-1')).toBe(2);
    expect((await t.es9.indices.getMapping({ index: 'nine-1' }))['nine-1'].mappings.properties).toEqual({ k9: { type: 'keyword' } });
    expect((await t.es9.cluster.getComponentTemplate({ name: 'c9' })).component_templates[0].name).toBe('c9');
  });
});

describe('legacy templates', () => {
  it('merges matching legacy templates by order and applies them on creation', async () => {
    await t.es.indices.putTemplate({ name: 'old-base', index_patterns: ['old-*'], order: 0, settings: { number_of_shards: 2 }, mappings: { properties: { a: { type: 'keyword' } } }, aliases: { 'old-all': {} } });
    await t.es.indices.putTemplate({ name: 'old-top', index_patterns: ['old-x*'], order: 5, settings: { number_of_shards: 3 }, mappings: { properties: { b: { type: 'long' } } } });
    await t.es.indices.create({ index: 'old-x1' });
    expect(await shardsOf('old-x1')).toBe(3);
    expect(Object.keys((await t.es.indices.getMapping({ index: 'old-x1' }))['old-x1'].mappings.properties!).sort()).toEqual(['a', 'b']);
    expect(await t.es.indices.existsAlias({ index: 'old-x1', name: 'old-all' })).toBe(true);
    await t.es.index({ index: 'old-y1', document: { a: 'q' }, refresh: true });
    expect(await shardsOf('old-y1')).toBe(2);
  });

  it('renders legacy templates as GET /_template shows them, 404 with {} when missing', async () => {
    const res = await raw(t, 'GET', '/_template/old-base');
    expect(res.json).toEqual({
      'old-base': {
        order: 0,
        index_patterns: ['old-*'],
        settings: { index: { number_of_shards: '2' } },
        mappings: { properties: { a: { type: 'keyword' } } },
        aliases: { 'old-all': {} },
      },
    });
    const missing = await raw(t, 'GET', '/_template/nope');
    expect([missing.status, missing.json]).toEqual([404, {}]);
    expect(Object.keys((await t.es.indices.getTemplate()) as object).sort()).toEqual(['old-base', 'old-top']);
    const del = await raw(t, 'DELETE', '/_template/nope');
    expect(del.json.error).toMatchObject({ type: 'index_template_missing_exception', reason: 'index_template [nope] missing' });
  });

  it('yields to a matching composable template', async () => {
    await t.es.indices.putIndexTemplate({ name: 'old-v2', index_patterns: ['old-z*'], template: { settings: { number_of_shards: 5 } } });
    await t.es.indices.create({ index: 'old-z1' });
    expect(await shardsOf('old-z1')).toBe(5);
    expect(await t.es.indices.existsAlias({ index: 'old-z1', name: 'old-all' })).toBe(false);
  });
});

describe('restart', () => {
  const all = async () => [(await raw(t, 'GET', '/_index_template')).json, (await raw(t, 'GET', '/_template')).json, (await raw(t, 'GET', '/_component_template')).json];

  it('keeps every template through a snapshot (the clean shutdown takes one)', async () => {
    const before = await all();
    await t.restart();
    expect(t.sys.services.cluster.startResult?.snapshotSeq).toBeDefined();
    expect(t.sys.services.cluster.startResult?.ops).toBe(0);
    expect(await all()).toEqual(before);
  });

  it('keeps every template through a replay of the whole document log', async () => {
    const before = await all();
    await restartFromLog(t);
    expect(t.sys.services.cluster.startResult?.snapshotSeq).toBeUndefined();
    expect(await all()).toEqual(before);
    await t.es.index({ index: 'logs-after', document: { level: 'x' }, refresh: true });
    expect(await shardsOf('logs-after')).toBe(3);
  });
});
