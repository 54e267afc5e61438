/**
 * Bad input to the APIs of issue 13 (aliases, templates, views, new aggregations) always gets an
 * ES-shaped 4xx, never a 5xx or a hang.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { raw } from '../search/helpers';

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'x', mappings: { properties: { k: { type: 'keyword' }, n: { type: 'long' }, d: { type: 'date' } } } });
  await t.es.index({ index: 'x', id: '1', document: { k: 'a', n: 1, d: '2024-01-01' }, refresh: true });
});
afterAll(async () => {
  await t?.stop();
});

const agg = (a: unknown) => ({ size: 0, aggs: { a } });
const CASES: Array<[string, string, unknown]> = [
  ['POST', '/_aliases', undefined],
  ['POST', '/_aliases', '[1,2]'],
  ['POST', '/_aliases', { actions: 'x' }],
  ['POST', '/_aliases', { actions: [{ add: 'x' }] }],
  ['POST', '/_aliases', { actions: [{ add: null }] }],
  ['POST', '/_aliases', { actions: [{ add: { index: 'x', alias: 'a' }, remove: { index: 'x', alias: 'a' } }] }],
  ['POST', '/_aliases', { actions: [{ add: { index: 'x', alias: 'a', filter: 'nope' } }] }],
  ['POST', '/_aliases', { actions: [{ add: { index: 'x', alias: 'a', routing: 'a,b' } }] }],
  ['POST', '/_aliases', { actions: [{ add: { index: 'x', alias: 'a', bogus: 1 } }] }],
  ['POST', '/_aliases', { actions: [{ remove_index: { index: 'nope' } }] }],
  ['POST', '/_aliases', { actions: [{ frobnicate: {} }] }],
  ['PUT', '/x/_alias/a', '[1]'],
  ['PUT', '/x/_alias/a', '"str"'],
  ['PUT', '/x/_alias/a%23b', {}],
  ['PUT', '/_index_template/t', undefined],
  ['PUT', '/_index_template/t', '[]'],
  ['PUT', '/_index_template/t', { index_patterns: ['t-*'], template: 'x' }],
  ['PUT', '/_index_template/t', { index_patterns: ['t-*'], template: { settings: 'x' } }],
  ['PUT', '/_index_template/t', { index_patterns: ['t-*'], template: { mappings: { properties: { a: { type: 'nope' } } } } }],
  ['PUT', '/_index_template/t', { index_patterns: ['t-*'], template: { aliases: { _bad: {} } } }],
  ['PUT', '/_index_template/t', { index_patterns: ['t-*'], priority: 'high' }],
  ['PUT', '/_index_template/t', { index_patterns: ['t-*'], priority: -1 }],
  ['PUT', '/_index_template/t', { index_patterns: ['t-*'], data_stream: {} }],
  ['PUT', '/_index_template/_t', { index_patterns: ['t-*'] }],
  ['PUT', '/_component_template/c', { template: 5 }],
  ['PUT', '/_component_template/c', {}],
  ['PUT', '/_template/l', { order: 'x', index_patterns: ['l-*'] }],
  ['PUT', '/_template/l', { index_patterns: ['l-*'], settings: { number_of_shards: 'many' } }],
  ['PUT', '/_template/l', { index_patterns: ['l-*'], mappings: 5 }],
  ['DELETE', '/_component_template/nope', undefined],
  ['GET', '/_component_template/nope', undefined],
  ['GET', '/_cat/indices?bytes=zz', undefined],
  ['GET', '/_cat/nodes?time=zz&h=uptime', undefined],
  ['GET', '/_cat/indices?s=docs.count:sideways', undefined],
  ['GET', '/_cat/indices?format=xml', undefined],
  ['GET', '/_cat/indices/nope', undefined],
  ['GET', '/_cluster/health?timeout=abc', undefined],
  ['GET', '/_cluster/health?level=everything', undefined],
  ['GET', '/_cluster/health?wait_for_nodes=lots', undefined],
  ['GET', '/_cluster/state/nope', undefined],
  ['GET', '/_cluster/state/metadata/nope', undefined],
  ['GET', '/_stats/nope', undefined],
  ['GET', '/_stats?level=x', undefined],
  ['GET', '/_nodes/stats/indices/nope', undefined],
  ['GET', '/_nodes/stats/jvm/docs', undefined],
  ['GET', '/_nodes/stats?level=x', undefined],
  ['GET', '/_nodes/_all/bogus', undefined],
  ['POST', '/x/_search', agg({ composite: {} })],
  ['POST', '/x/_search', agg({ composite: { sources: 'k' } })],
  ['POST', '/x/_search', agg({ composite: { sources: [] } })],
  ['POST', '/x/_search', agg({ composite: { sources: [{ a: 'k' }] } })],
  ['POST', '/x/_search', agg({ composite: { sources: [{ a: { terms: {} } }] } })],
  ['POST', '/x/_search', agg({ composite: { sources: [{ a: { terms: { field: 'k', order: 'up' } } }] } })],
  ['POST', '/x/_search', agg({ composite: { sources: [{ a: { histogram: { field: 'n' } } }] } })],
  ['POST', '/x/_search', agg({ composite: { sources: [{ a: { histogram: { field: 'n', interval: -2 } } }] } })],
  ['POST', '/x/_search', agg({ composite: { sources: [{ a: { histogram: { field: 'k', interval: 2 } } }] } })],
  ['POST', '/x/_search', agg({ composite: { sources: [{ a: { date_histogram: { field: 'd' } } }] } })],
  ['POST', '/x/_search', agg({ composite: { sources: [{ a: { date_histogram: { field: 'd', calendar_interval: '3d' } } }] } })],
  ['POST', '/x/_search', agg({ composite: { sources: [{ a: { date_histogram: { field: 'd', fixed_interval: '1d', time_zone: 'Europe/Paris' } } }] } })],
  ['POST', '/x/_search', agg({ composite: { sources: [{ a: { date_histogram: { field: 'd', fixed_interval: '1d' } } }], after: { a: 'yesterday' } } })],
  ['POST', '/x/_search', agg({ composite: { sources: [{ a: { terms: { field: 'k' } } }], after: 'a' } })],
  ['POST', '/x/_search', agg({ composite: { sources: [{ a: { terms: { field: 'k' } } }], after: { a: null } } })],
  ['POST', '/x/_search', agg({ composite: { sources: [{ a: { terms: { field: 'k' } } }], after: { a: [1] } } })],
  ['POST', '/x/_search', agg({ composite: { sources: [{ a: { terms: { field: 'k' } } }], size: 'lots' } })],
  ['POST', '/x/_search', agg({ percentiles: { field: 'n', percents: [101] } })],
  ['POST', '/x/_search', agg({ percentiles: { field: 'n', percents: 'all' } })],
  ['POST', '/x/_search', agg({ percentiles: { field: 'n', tdigest: 'x' } })],
  ['POST', '/x/_search', agg({ percentiles: { field: 'n', tdigest: { compression: 'x' } } })],
  ['POST', '/x/_search', agg({ percentiles: { field: 'n', hdr: { number_of_significant_value_digits: 9 } } })],
  ['POST', '/x/_search', agg({ percentiles: { field: 'k' } })],
  ['POST', '/x/_search', agg({ percentiles: {} })],
  ['POST', '/x/_search', agg({ cardinality: { field: 'n', precision_threshold: 'x' } })],
  ['POST', '/x/_search', agg({ cardinality: {} })],
];

it.each(CASES)('%s %s %j -> ES 4xx', async (method, path, body) => {
  const res = await raw(t, method, path, body);
  expect([res.status >= 400 && res.status < 500, res.status]).toEqual([true, res.status]);
  if (method !== 'HEAD' && res.json?.error !== undefined && typeof res.json.error === 'object') {
    expect(typeof res.json.error.type).toBe('string');
    expect(typeof res.json.error.reason).toBe('string');
    expect(res.json.status).toBe(res.status);
  }
});
