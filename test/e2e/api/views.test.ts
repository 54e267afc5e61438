/**
 * Operators' and tools' views (issue 13 item 6): `_cat/*`, `_nodes` info and stats (every section
 * esrally and other tools read), `_stats`, `_cluster/state`, `_cluster/stats` and health waits,
 * through the official v8 and v9 clients and raw HTTP. Expected figures are computed here from
 * what the test indexed.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { bulkIndex, raw } from '../search/helpers';

let t: TestNode;
const A = Array.from({ length: 25 }, (_, i) => ({ id: `a${i}`, n: i, body: 'x'.repeat(i) }));
const B = Array.from({ length: 7 }, (_, i) => ({ id: `b${i}`, n: i }));
const bytesOf = (docs: object[]) => docs.reduce((a, d) => a + Buffer.byteLength(JSON.stringify(d)), 0);

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'alpha', settings: { number_of_shards: 3, number_of_replicas: 1 } });
  await t.es.indices.create({ index: 'beta', settings: { number_of_shards: 1, number_of_replicas: 0 } });
  await bulkIndex(t, 'alpha', A);
  await bulkIndex(t, 'beta', B);
  await t.es.delete({ index: 'beta', id: 'b0', refresh: true });
  await t.es.indices.putAlias({ index: 'alpha', name: 'first', is_write_index: true });
  await t.es.indices.putTemplate({ name: 'legacy1', index_patterns: ['l-*'], order: 3 });
  await t.es.indices.putIndexTemplate({ name: 'v2', index_patterns: ['v-*'], priority: 7 });
});
afterAll(async () => {
  await t?.stop();
});

describe('_cat', () => {
  it('lists indices with health, counts and sizes (v8 cat.indices, json)', async () => {
    const rows = await t.es.cat.indices({ format: 'json', bytes: 'b', s: 'index' });
    expect(rows.map((r) => [r.index, r.health, r.status, r.pri, r.rep, r['docs.count'], r['docs.deleted'], r['pri.store.size']])).toEqual([
      ['alpha', 'yellow', 'open', '3', '1', '25', '0', String(bytesOf(A))],
      ['beta', 'green', 'open', '1', '0', '6', '1', String(bytesOf(B))],
    ]);
  });

  it('prints an aligned text table with a header, chosen columns and sorting (v9 cat.indices)', async () => {
    const text = await t.es9.cat.indices({ v: true, h: ['index', 'docs.count', 'health'], s: ['docs.count:desc'] });
    expect(text).toBe(['index docs.count health', 'alpha         25 yellow', 'beta           6 green', ''].join('\n'));
    const res = await raw(t, 'GET', '/_cat/indices?h=i,dc&s=i:desc');
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.text).toBe('beta   6\nalpha 25\n');
  });

  it('prints sizes in human units and in the unit asked for', async () => {
    const bytes = bytesOf(A);
    const human = bytes >= 1024 ? `${(Math.round((bytes / 1024) * 10) / 10).toString()}kb` : `${bytes}b`;
    expect((await raw(t, 'GET', '/_cat/indices/alpha?h=pri.store.size')).text).toBe(`${human}\n`);
    expect((await raw(t, 'GET', '/_cat/indices/alpha?h=pri.store.size&bytes=b')).text).toBe(`${bytes}\n`);
  });

  it('explains its columns with help', async () => {
    const help = await raw(t, 'GET', '/_cat/indices?help');
    expect(help.text.split('\n')[0]).toMatch(/^health +\| h +\| current health status$/);
  });

  it('answers an unknown sort column with ES error', async () => {
    const res = await raw(t, 'GET', '/_cat/indices?s=nope');
    expect(res.status).toBe(400);
    expect(res.json.error.reason).toBe('Unable to sort by unknown sort key `nope`');
  });

  it('reports cluster health (cat.health)', async () => {
    const [row] = await t.es.cat.health({ format: 'json' });
    expect(row).toMatchObject({ cluster: 'elasticsearch', status: 'yellow', 'node.total': '1', shards: '4', pri: '4', unassign: '3', active_shards_percent: '57.1%' });
    const text = (await t.es9.cat.health({ ts: false, v: true })) as unknown as string;
    expect(text.split('\n')[0].trim().split(/\s+/)[0]).toBe('cluster');
  });

  it('counts documents (cat.count)', async () => {
    expect((await t.es.cat.count({ format: 'json' }))[0].count).toBe('31');
    expect((await t.es9.cat.count({ index: 'beta', format: 'json' }))[0].count).toBe('6');
  });

  it('lists nodes with heap, ram, role and master (cat.nodes)', async () => {
    const [n] = await t.es.cat.nodes({ format: 'json', h: ['ip', 'heap.percent', 'node.role', 'master', 'name', 'id'], full_id: true });
    expect(n).toMatchObject({ ip: '127.0.0.1', 'node.role': 'dim', master: '*', id: t.sys.ctx.node.id, name: t.sys.ctx.node.name });
    expect(Number(n['heap.percent'])).toBeGreaterThanOrEqual(0);
  });

  it('lists every shard copy, replicas unassigned on one node (cat.shards)', async () => {
    const rows = await t.es.cat.shards({ format: 'json', index: 'alpha', h: ['index', 'shard', 'prirep', 'state', 'docs'] });
    expect(rows).toHaveLength(6);
    expect(rows.filter((r) => r.prirep === 'p').every((r) => r.state === 'STARTED')).toBe(true);
    expect(rows.filter((r) => r.prirep === 'r').every((r) => r.state === 'UNASSIGNED' && r.docs === null)).toBe(true);
    expect(rows.filter((r) => r.prirep === 'p').reduce((a, r) => a + Number(r.docs), 0)).toBe(25);
  });

  it('lists aliases and templates (cat.aliases, cat.templates)', async () => {
    expect(await t.es.cat.aliases({ format: 'json' })).toEqual([
      { alias: 'first', index: 'alpha', filter: '-', 'routing.index': '-', 'routing.search': '-', is_write_index: 'true' },
    ]);
    const tpl = await t.es9.cat.templates({ format: 'json', s: 'name' });
    expect(tpl).toEqual([
      { name: 'legacy1', index_patterns: '[l-*]', order: '3', version: null, composed_of: '' },
      { name: 'v2', index_patterns: '[v-*]', order: '7', version: null, composed_of: '[]' },
    ]);
  });
});

describe('_nodes', () => {
  it('describes the node (v8 nodes.info), filtered by node and metric', async () => {
    const id = t.sys.ctx.node.id;
    const info = await t.es.nodes.info();
    expect(Object.keys(info.nodes)).toEqual([id]);
    expect(info.nodes[id]).toMatchObject({ name: t.sys.ctx.node.name, host: '127.0.0.1', roles: ['data', 'ingest', 'master'] });
    expect(info.nodes[id].jvm?.mem?.heap_max_in_bytes).toBeGreaterThan(0);
    const jvmOnly = await t.es9.nodes.info({ node_id: '_local', metric: 'jvm' });
    expect(Object.keys(jvmOnly.nodes[id]).includes('os')).toBe(false);
    expect(jvmOnly.nodes[id].jvm).toBeDefined();
    for (const path of ['/_nodes/_all', '/_nodes/_master', `/_nodes/${id}`, '/_nodes/jvm,os', '/_nodes/_all/info/os']) {
      const res = await raw(t, 'GET', path);
      expect([path, res.status, Object.keys(res.json.nodes)]).toEqual([path, 200, [id]]);
    }
    expect(Object.keys((await raw(t, 'GET', '/_nodes/nope')).json.nodes)).toEqual([]);
  });

  it('gives every section of node stats that tools read (v8 nodes.stats)', async () => {
    const stats = await t.es.nodes.stats();
    const n = Object.values(stats.nodes)[0] as Record<string, any>;
    for (const k of ['indices', 'os', 'process', 'jvm', 'thread_pool', 'fs', 'transport', 'http', 'breakers', 'ingest']) expect([k, n[k] !== undefined]).toEqual([k, true]);
    expect(n.indices.docs).toEqual({ count: 31, deleted: 1, total_size_in_bytes: bytesOf(A) + bytesOf(B) });
    expect(n.indices.store.size_in_bytes).toBe(bytesOf(A) + bytesOf(B));
    expect(n.indices.indexing).toMatchObject({ index_total: 32, delete_total: 1 });
    expect(n.indices.search.query_total).toBeGreaterThanOrEqual(0);
    expect(n.jvm.mem.heap_used_in_bytes).toBeGreaterThan(0);
    expect(n.jvm.mem.heap_max_in_bytes).toBeGreaterThanOrEqual(n.jvm.mem.heap_used_in_bytes);
    expect(n.jvm.gc.collectors.young.collection_count).toBeGreaterThanOrEqual(0);
    expect(n.jvm.gc.collectors.old.collection_time_in_millis).toBeGreaterThanOrEqual(0);
    expect(n.os.mem.total_in_bytes).toBeGreaterThan(0);
    expect(n.process.open_file_descriptors).toBeGreaterThan(0);
    expect(n.http.current_open).toBeGreaterThanOrEqual(1);
    expect(n.thread_pool.search).toMatchObject({ threads: expect.any(Number), queue: 0, rejected: 0 });
    expect(n.breakers.parent.limit_size_in_bytes).toBeGreaterThan(0);
    expect(n.ingest.total).toEqual({ count: 0, time_in_millis: 0, current: 0, failed: 0 });
  });

  it('filters node stats by metric and index metric, and counts GCs that happen', async () => {
    const jvm = await t.es9.nodes.stats({ metric: 'jvm' });
    const node = Object.values(jvm.nodes)[0] as Record<string, unknown>;
    expect(node.jvm).toBeDefined();
    expect(node.indices).toBeUndefined();
    expect(node.os).toBeUndefined();
    const ingest = (await raw(t, 'GET', '/_nodes/stats/ingest')).json;
    expect(Object.values(ingest.nodes as Record<string, Record<string, unknown>>)[0].ingest).toBeDefined();
    const docsOnly = (await raw(t, 'GET', '/_nodes/stats/indices/docs,store')).json;
    expect(Object.keys((Object.values(docsOnly.nodes)[0] as { indices: object }).indices)).toEqual(['docs', 'store']);
    const bad = await raw(t, 'GET', '/_nodes/stats/jvmm');
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ type: 'illegal_argument_exception', reason: 'request [/_nodes/stats/jvmm] contains unrecognized metric: [jvmm]' });
    const gcBefore = (Object.values((await raw(t, 'GET', '/_nodes/stats/jvm')).json.nodes)[0] as any).jvm.gc.collectors;
    for (let i = 0; i < 30; i++) new Array(100_000).fill({ i }); // young garbage
    await new Promise((r) => setTimeout(r, 50));
    const gcAfter = (Object.values((await raw(t, 'GET', '/_nodes/stats/jvm')).json.nodes)[0] as any).jvm.gc.collectors;
    expect(gcAfter.young.collection_count + gcAfter.old.collection_count).toBeGreaterThan(gcBefore.young.collection_count + gcBefore.old.collection_count);
  });

  it('answers nodes usage and hot threads', async () => {
    const usage = await t.es.nodes.usage();
    expect(Object.keys(usage.nodes)).toEqual([t.sys.ctx.node.id]);
    const hot = await raw(t, 'GET', '/_nodes/hot_threads');
    expect(hot.status).toBe(200);
    expect(hot.text).toContain(`{${t.sys.ctx.node.id}}`);
  });

  it('reports node stats per index with level=indices', async () => {
    const res = (await raw(t, 'GET', '/_nodes/stats/indices/docs?level=indices')).json;
    const n = Object.values(res.nodes)[0] as { indices: { indices: Record<string, { docs: { count: number } }> } };
    expect(n.indices.indices.alpha.docs.count).toBe(25);
    expect(n.indices.indices.beta.docs.count).toBe(6);
  });
});

describe('_stats', () => {
  it('answers GET /_stats/_all?level=shards as esrally asks', async () => {
    const res = await raw(t, 'GET', '/_stats/_all?level=shards');
    expect(res.status).toBe(200);
    expect(res.json._shards).toEqual({ total: 7, successful: 4, failed: 0 });
    expect(res.json._all.primaries.docs.count).toBe(31);
    expect(Object.keys(res.json.indices.alpha.shards).sort()).toEqual(['0', '1', '2']);
    const shardDocs = Object.values(res.json.indices.alpha.shards as Record<string, Array<{ docs: { count: number }; routing: { primary: boolean } }>>).map((c) => c[0].docs.count);
    expect(shardDocs.reduce((a, b) => a + b, 0)).toBe(25);
    expect(res.json.indices.alpha.shards['0'][0].routing).toMatchObject({ state: 'STARTED', primary: true, node: t.sys.ctx.node.id });
  });

  it('gives index stats through the clients (indices.stats), by metric and index', async () => {
    const s8 = await t.es.indices.stats({ index: 'beta', metric: 'docs' });
    expect(s8.indices!.beta.primaries!.docs).toEqual({ count: 6, deleted: 1, total_size_in_bytes: bytesOf(B) });
    expect(s8.indices!.beta.primaries!.store).toBeUndefined();
    const s9 = await t.es9.indices.stats({ index: 'first' });
    expect(Object.keys(s9.indices!)).toEqual(['alpha']);
    expect((await raw(t, 'GET', '/_stats?level=cluster')).json.indices).toBeUndefined();
    expect((await raw(t, 'GET', '/_stats/bogus')).status).toBe(400);
  });
});

describe('_cluster', () => {
  it('answers cluster.state by metric, and /_cluster/state/master_node', async () => {
    const id = t.sys.ctx.node.id;
    const master = await raw(t, 'GET', '/_cluster/state/master_node');
    expect(master.status).toBe(200);
    expect(master.json).toEqual({ cluster_name: 'elasticsearch', cluster_uuid: t.sys.ctx.node.clusterUuid, master_node: id });
    const full = (await t.es.cluster.state()) as Record<string, any>;
    expect(full.master_node).toBe(id);
    expect(Object.keys(full.nodes)).toEqual([id]);
    expect(Object.keys(full.metadata.indices).sort()).toEqual(['alpha', 'beta']);
    expect(full.metadata.indices.alpha.aliases).toEqual(['first']);
    expect(full.metadata.templates.legacy1.index_patterns).toEqual(['l-*']);
    expect(full.metadata.index_template.index_template.v2.priority).toBe(7);
    expect(full.routing_table.indices.alpha.shards['0'].map((c: { primary: boolean; state: string }) => [c.primary, c.state])).toEqual([[true, 'STARTED'], [false, 'UNASSIGNED']]);
    expect(full.routing_nodes.unassigned).toHaveLength(3);
    const meta = (await t.es9.cluster.state({ metric: 'metadata', index: 'beta' })) as Record<string, any>;
    expect(Object.keys(meta.metadata.indices)).toEqual(['beta']);
    expect(meta.routing_table).toBeUndefined();
    expect((await raw(t, 'GET', '/_cluster/state/nope')).status).toBe(400);
  });

  it('answers cluster.stats', async () => {
    const st = (await t.es.cluster.stats()) as Record<string, any>;
    expect(st.status).toBe('yellow');
    expect(st.indices.count).toBe(2);
    expect(st.indices.docs.count).toBe(31);
    expect(st.nodes.count.total).toBe(1);
    expect(st.nodes.jvm.mem.heap_used_in_bytes).toBeGreaterThan(0);
  });

  it('waits for a status it cannot reach, then answers 408 with timed_out: true', async () => {
    const t0 = Date.now();
    const res = await raw(t, 'GET', '/_cluster/health?wait_for_status=green&timeout=1s');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    expect(res.status).toBe(408);
    expect(res.json).toMatchObject({ status: 'yellow', timed_out: true, unassigned_shards: 3 });
    const yellow = await raw(t, 'GET', '/_cluster/health?wait_for_status=yellow&timeout=1s');
    expect([yellow.status, yellow.json.timed_out]).toEqual([200, false]);
  });

  it('answers as soon as the status is reached while waiting', async () => {
    const waiting = raw(t, 'GET', '/_cluster/health/alpha?wait_for_status=green&timeout=20s');
    await new Promise((r) => setTimeout(r, 200));
    await t.es.indices.putSettings({ index: 'alpha', settings: { number_of_replicas: 0 } });
    const res = await waiting;
    expect([res.status, res.json.status, res.json.timed_out]).toEqual([200, 'green', false]);
    await t.es.indices.putSettings({ index: 'alpha', settings: { number_of_replicas: 1 } });
  });

  it('waits for nodes and for indices, with ES statuses', async () => {
    expect((await raw(t, 'GET', '/_cluster/health?wait_for_nodes=1&timeout=1s')).status).toBe(200);
    expect((await raw(t, 'GET', '/_cluster/health?wait_for_nodes=>=1&timeout=1s')).status).toBe(200);
    const two = await raw(t, 'GET', '/_cluster/health?wait_for_nodes=2&timeout=300ms');
    expect([two.status, two.json.timed_out]).toEqual([408, true]);
    const missing = await raw(t, 'GET', '/_cluster/health/nope?timeout=300ms');
    expect([missing.status, missing.json.status, missing.json.timed_out]).toEqual([408, 'red', true]);
    expect((await raw(t, 'GET', '/_cluster/health?wait_for_status=purple')).status).toBe(400);
  });

  it('details health per index and per shard (v8 cluster.health level)', async () => {
    const h = await t.es.cluster.health({ level: 'shards' });
    expect(h.indices!.alpha).toMatchObject({ status: 'yellow', number_of_shards: 3, active_primary_shards: 3, unassigned_shards: 3 });
    expect(Object.keys(h.indices!.alpha.shards!)).toEqual(['0', '1', '2']);
    expect(h.indices!.beta.status).toBe('green');
    const i = await t.es9.cluster.health({ level: 'indices' });
    expect(i.indices!.alpha.shards).toBeUndefined();
  });
});
